/**
 * DTDR-G, the default method. The files, in the order a step flows through them:
 * layout (signal and context names) → tool-side (what depends on tools alone) → evidence (what
 * demonstrations teach) → signals (one step's signal matrix) → combine (the gate's weighted sum)
 * → retriever (probabilities, calibration group, then the step rules: rule.ts, step-rules.ts,
 * rules/). Fitting: options → fit (settings, cross-fitting; its rounds in cross-fit, on worker
 * threads where given) → gate (training the gate, temperature) → calibration and groups (the one
 * calibration scheme). Afterwards: learning (online), with-tools (tools added or removed) and state (files).
 */
export { GatedRetriever } from './retriever.js';
export { CONTEXTS, SIGNALS, type SignalName } from './layout.js';
export type { ExperimentalGatedSettings, GatedOptions } from './options.js';
export type { FoldWorkers } from './cross-fit.js';
export type { GatedDiagnostics, GatedState } from './state.js';
export { priorGate, toolsOnlyGate } from './combine.js';

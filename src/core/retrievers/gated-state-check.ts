/**
 * DTDR-G's saved state, validated before `GatedRetriever.fromState` builds anything from it: every
 * number finite and in range, every shape consistent with the tools and the encoder dimension,
 * every label within [0, tools + 1). A file that fails is refused with a DtdrError('artifact')
 * naming the field (`state.temperature`, `state.evidence.graphs[2][0][1][0][0]`, …); a valid
 * file is only read, so it loads exactly as before.
 */
import { MAX_PLAN_STEPS } from '../limits.js';
import type { ToolSpec } from '../types.js';
import { array, int, labelWeights, num, numbers, object, optNum, stateError, vectors } from '../living/validate.js';
import type { GatedState } from './gated.js';
import { checkGraphState } from './graph.js';
import { LinearHead, ReplayBuffer } from './linear-head.js';

/** A saved history length: at most the longest plan (MAX_PLAN_STEPS); trained models use 1–5. */
const MAX_HISTORY = MAX_PLAN_STEPS;

/** Throws a DtdrError('artifact') for the first thing in `state` a trained DTDR-G could not have written. */
export function checkGatedState(state: unknown, tools: readonly ToolSpec[], dimension: number): asserts state is GatedState {
  const s = object('state', state) as unknown as GatedState & Record<string, unknown>;
  const L = tools.length + 1;
  int('encoder.dimension', dimension, 1, 1_000_000);
  optNum('state.historyLength', s.historyLength, { min: 0, max: MAX_HISTORY, integer: true });
  optNum('state.neighbours', s.neighbours, { min: 0, max: 1_000_000_000, integer: true });
  if (s.without !== undefined) array('state.without', s.without).forEach((w, i) => typeof w === 'string' || stateError(`state.without[${i}]`, 'must name a signal'));
  numbers('state.theta', s.theta);
  optNum('state.temperature', s.temperature, { min: 1e-6, max: 1e6 });
  optNum('state.target', s.target, { min: 0, max: 1, exclusive: true });
  optNum('state.confidentAbove', s.confidentAbove, { min: 0, max: 1 });
  if (s.thresholds !== undefined) {
    const th = object('state.thresholds', s.thresholds);
    num01('state.thresholds.confident', th.confident);
    num01('state.thresholds.unsure', th.unsure);
  }
  vectors('state.toolVectors', s.toolVectors, tools.length, dimension);
  if (s.calibration !== undefined && s.calibration !== null) {
    const c = object('state.calibration', s.calibration);
    numbers('state.calibration.confident', c.confident, undefined, { min: 0, max: 1 });
    numbers('state.calibration.unsure', c.unsure, undefined, { min: 0, max: 1 });
  }
  if (s.diagnostics !== undefined) object('state.diagnostics', s.diagnostics);
  if (s.evidence === null || s.evidence === undefined) return;
  const e = object('state.evidence', s.evidence) as unknown as NonNullable<GatedState['evidence']>;
  const l = int('state.historyLength', s.historyLength, 0, MAX_HISTORY);
  const k = vectors('state.evidence.centroids', e.centroids, undefined, dimension).length;
  array('state.evidence.graphs', e.graphs, k).forEach((g, i) => checkGraphState(l, g, L, `state.evidence.graphs[${i}]`));
  optNum('state.evidence.globalHistory', e.globalHistory, { min: 0, max: MAX_HISTORY, integer: true });
  checkGraphState(Number(e.globalHistory) || l, e.global, L, 'state.evidence.global');
  array('state.evidence.bags', e.bags, k).forEach((b, i) => labelWeights(`state.evidence.bags[${i}]`, b, L));
  if (e.vocabulary !== undefined) {
    const v = numbers('state.evidence.vocabulary', e.vocabulary, undefined, { min: 0, max: L - 1, integer: true });
    if (new Set(v).size !== v.length) stateError('state.evidence.vocabulary', 'lists a label twice');
  }
  if (e.head) LinearHead.checkState(e.head, 'state.evidence.head');
  const head = e.head ?? undefined;
  if (e.sizes !== undefined) numbers('state.evidence.sizes', e.sizes, undefined, { min: 0 });
  ReplayBuffer.fromState(e.replay, { field: 'state.evidence.replay', dim: dimension, sparseSize: head?.sparseSize ?? 2 ** 32, classes: L });
}

function num01(field: string, v: unknown): void {
  num(field, v, { min: 0, max: 1 });
}

/**
 * The first stage of DTDR-G's fit (fit.ts): options resolved, the tool side built, the fold schemes
 * and l and K chosen (settings.ts), and the cross-fitting setup every round shares; a model of the
 * tools alone is finished here.
 */
import { DtdrError } from '../../base/errors.js';
import type { Plan, ToolSpec } from '../../base/types.js';
import { packRows } from '../kernels/rows.js';
import type { LinearHeadOptions } from '../linear-head.js';
import type { TrainingProgress } from '../types.js';
import { toolsOnlyGate } from './combine.js';
import type { CrossFitSetup } from './cross-fit.js';
import { planMemo } from './evidence-fit.js';
import { emptyCalibration } from './groups.js';
import { HEAD, SIGNALS } from './layout.js';
import { resolveGatedOptions, type GatedOptions } from './options.js';
import { chooseSettings, foldSchemes } from './settings.js';
import type { GatedParts } from './state.js';
import { ToolSide } from './tool-side.js';

/** A fit's options, settings and cross-fitting setup, as every later stage of the fit reads them. */
export type Prepared = ReturnType<typeof prepareSettings>;

/** Options, settings (l and K on a held-out fold) and the cross-fitting setup; a tools-only model at once. */
export function prepareFit(
  tools: ToolSpec[],
  plans: Plan[],
  queries: Float32Array[],
  toolVectors: Float32Array[],
  options: GatedOptions,
  onProgress?: (p: TrainingProgress) => void,
): Prepared | { parts: GatedParts } {
  const dim = toolVectors[0]?.length ?? queries[0]?.length ?? 0;
  if (tools.length === 0) throw new DtdrError('data', 'no tools to retrieve', { hint: 'give at least one tool' });
  const resolved = resolveGatedOptions(options);
  const { target, confidentAbove, neighbours, lexicalOrder, without } = resolved;
  const side = new ToolSide(tools, packRows(toolVectors, dim), dim, lexicalOrder);
  if (plans.length === 0) {
    const gate = { theta: toolsOnlyGate(), temperature: 1, target, confidentAbove, neighbours };
    // Kept for the first runs it learns (learning.ts), which make the model demonstration-trained.
    const prior = resolved.unseenPrior > 0 ? { unseenPrior: resolved.unseenPrior } : {};
    const rest = { withoutSignals: without, calibration: emptyCalibration(), addedTools: [], rules: {}, ...prior };
    return { parts: { side, evidence: undefined, ...gate, ...rest } };
  }
  return prepareSettings(tools, plans, queries, side, dim, resolved, options, onProgress);
}

function prepareSettings(
  tools: ToolSpec[],
  plans: Plan[],
  queries: Float32Array[],
  side: ToolSide,
  dim: number,
  resolved: ReturnType<typeof resolveGatedOptions>,
  options: GatedOptions,
  onProgress?: (p: TrainingProgress) => void,
) {
  const { neighbours, without, foldHeadSteps, foldPlans } = resolved;
  const seed = options.seed ?? 0;
  const withoutIdx = new Set(without.map((s) => SIGNALS.indexOf(s)));
  const headOption: LinearHeadOptions | false | undefined = withoutIdx.has(HEAD) ? false : options.head;
  const folding = foldSchemes(plans, side, resolved, options, seed);
  const { defaultFolds, gateSchemes, folds, schemes, foldOf } = folding;
  const report = (phase: string, fraction: number) => onProgress?.({ phase, fraction });
  // Every fit below counts the same plans into its graphs: their orders and keys are built once.
  const memo = planMemo(side);
  const fold = { foldOf, defaultFolds, foldPlans, neighbours, withoutIdx, seed, memo };
  const chosen = chooseSettings(plans, queries, side, dim, options, fold);
  const { l, clustering, all } = chosen;
  report('settings', 1);
  const setup: CrossFitSetup = {
    tools,
    toolVectors: side.toolVectors,
    dim,
    lexicalOrder: resolved.lexicalOrder,
    plans,
    queries: all,
    centroids: clustering.centroids,
    k: clustering.k,
    assignment: Uint32Array.from(clustering.assignment),
    historyLength: l,
    seed,
    neighbours,
    without: [...withoutIdx],
    head: headOption,
    foldHeadSteps,
    foldPlans,
    folds,
    thresholdFolds: defaultFolds,
    schemes,
    gateSchemes: gateSchemes.length,
    wholeSoftmaxUpTo: resolved.wholeSoftmaxUpTo,
  };
  // Every later stage reads the options, the fold schemes and the settings chosen from here.
  return { ...resolved, ...folding, ...chosen, tools, plans, queries, side, seed, headOption, memo, report, setup };
}

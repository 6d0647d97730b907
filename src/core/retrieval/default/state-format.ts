/**
 * GatedState, DTDR-G's saved and versioned form, and its check (`checkGatedState`): every number
 * finite and in range, every shape consistent with the tools and the encoder dimension, every label
 * within [0, tools + 1). Apart from state.ts (the conversions) so the file format reads on its own.
 */
import { MAX_PLAN_STEPS } from '../../base/limits.js';
import { array, int, labelWeights, num, numbers, object, optNum, stateError, vectors } from '../../base/validate.js';
import { checkGraphState } from '../graph.js';
import type { ToolSpec } from '../../base/types.js';
import { LinearHead, type LinearHeadState } from '../linear-head.js';
import { ReplayBuffer, type ReplayState } from '../replay-buffer.js';
import type { CombinationsState } from './rules/new-combinations.js';
import { checkCoverageState, type CoverageState } from './coverage.js';
import { STEP_RULE_NAMES, STEP_RULES } from './step-rules.js';
import { checkNoveltyState, type NoveltyState } from './novelty.js';
import type { SignalName } from './layout.js';
import type { SliceAtFit } from './groups.js';
import { checkSequenceScoresState, type SequenceScoresState } from './sequence-scores.js';

/** What a DTDR-G fit measured on its held-out steps and chose (a model's `diagnostics`; absent for other methods). */
export interface GatedDiagnostics {
  /** Cross-fitting folds, and how they were drawn (whole plans, whole tool sequences, or both). */
  folds: number;
  foldBy: 'plan' | 'sequence' | 'plan+sequence';
  /**
   * Which held-out steps set the conformal thresholds (absent in files written before it: those of foldBy's first
   * scheme).
   */
  thresholdsFrom?: 'plan' | 'sequence';
  /** Held-out steps the gate, temperature and thresholds were fitted on. */
  heldOutSteps: number;
  /** Held-out top-1 expected calibration error before and after temperature scaling, and with isotonic regression. */
  ece: { raw: number; temperature: number; isotonic: number };
  /** The softmax temperature fitted on them. */
  temperature: number;
  /** Conformal thresholds for confident and unsure steps. */
  thresholds: { confident: number; unsure: number };
  /** The history length l and the cluster count K chosen. */
  historyLength: number;
  clusters: number;
  /** Held-out MRR of the candidate settings tried for l and K. */
  selection: { historyLength: Record<string, number>; clusters: Record<string, number> };
}

export interface GatedState {
  historyLength: number;
  neighbours: number;
  /** GatedOptions.lexicalOrder (absent in files written before it: 0, every request term weighs the same). */
  lexicalOrder?: number;
  without: SignalName[];
  theta: number[];
  temperature: number;
  target: number;
  confidentAbove: number;
  /** GatedParts.unseenPrior (absent: 0). */
  unseenPrior?: number;
  /** GatedParts.withoutRules (absent: none): a rule left out stays out when the model loads. */
  withoutRules?: string[];
  thresholds: { confident: number; unsure: number };
  toolVectors: number[][];
  evidence: null | {
    centroids: number[][];
    graphs: [string, [number, number][]][][];
    global: [string, [number, number][]][];
    /** Context length the pooled graph keeps (max(l, 3)). */
    globalHistory: number;
    bags: [number, number][][];
    head: LinearHeadState | null;
    vocabulary: number[];
    /** Demonstrations per cluster (absent in files written before online learning). */
    sizes?: number[];
    replay?: ReplayState;
  };
  /** Held-out conformal scores per group (absent in older files: learning then uses new scores only). */
  calibration?: { confident: number[]; unsure: number[] };
  /** Calibration.bySize: held-out coverage of the k most probable labels (absent in files written before it). */
  coverageBySize?: number[];
  /**
   * Per-group held-out scores and thresholds (absent in files written before them: the two pools alone). Loading
   * takes the thresholds from the scores, as fit and learn compute them; the saved ones are checked, not used.
   */
  groups?: { scores: Record<string, number[]>; thresholds: Record<string, number>; newToolRank: number };
  /**
   * How many scores each calibration list has been given in all, for its bounded sample (absent until the first
   * `learn`).
   */
  scoreCounts?: Record<string, number>;
  /**
   * Where the thresholds come from held-out new sequences: the sequences the model knows and held-out steps kept for
   * them (sequence-scores.ts; absent otherwise, and in files written before it: learning scores every step).
   */
  sequences?: SequenceScoresState;
  /** Calibration.sliceAtFit: the fit's demonstrations called `called` of `tools` tools, under half (absent: not). */
  sliceAtFit?: SliceAtFit;
  /** Label indices of the tools added after training (absent: none). */
  addedTools?: number[];
  /** Request coverage's word–tool alignment (absent in files written before it: no coverage rule). */
  coverage?: CoverageState;
  /** Requests the novelty score compares with (absent in files written before it: every request familiar). */
  novelty?: NoveltyState;
  /**
   * Tools the demonstrations combine, and the new-combination rule's switch (absent in files written before it: no such
   * rule).
   */
  combinations?: CombinationsState;
  // Files written while the sequence-words rule was shipped may also hold `sequenceWords`: loading ignores it, and the
  // model saves without it (docs/first-day.md, the ablation).
  diagnostics?: GatedDiagnostics;
}

/**
 * Step rules a model file may still name in `withoutRules` though they were deleted (docs/first-day.md, the ablation):
 * left out anyway.
 */
export const DELETED_RULES: readonly string[] = [
  'novel-request',
  'description-peers',
  'unseen-continuations',
  'sequence-words',
];

/** A saved history length: at most the longest plan (MAX_PLAN_STEPS); trained models use 1–5. */
const MAX_HISTORY = MAX_PLAN_STEPS;

/** Throws a DtdrError('artifact') for the first thing in `state` a trained DTDR-G could not have written. */
export function checkGatedState(
  state: unknown,
  tools: readonly ToolSpec[],
  dimension: number,
): asserts state is GatedState {
  const s = object('state', state) as unknown as GatedState & Record<string, unknown>;
  const L = tools.length + 1;
  int('encoder.dimension', dimension, 1, 1_000_000);
  optNum('state.historyLength', s.historyLength, { min: 0, max: MAX_HISTORY, integer: true });
  optNum('state.neighbours', s.neighbours, { min: 0, max: 1_000_000_000, integer: true });
  if (s.without !== undefined)
    array('state.without', s.without).forEach(
      (w, i) => typeof w === 'string' || stateError(`state.without[${i}]`, 'must name a signal'),
    );
  numbers('state.theta', s.theta);
  optNum('state.temperature', s.temperature, { min: 1e-6, max: 1e6 });
  optNum('state.target', s.target, { min: 0, max: 1, exclusive: true });
  optNum('state.confidentAbove', s.confidentAbove, { min: 0, max: 1 });
  optNum('state.unseenPrior', s.unseenPrior, { min: 0, max: 1e9 });
  if (s.withoutRules !== undefined)
    array('state.withoutRules', s.withoutRules).forEach(
      (r, i) =>
        STEP_RULE_NAMES.includes(r as string) ||
        DELETED_RULES.includes(r as string) ||
        stateError(`state.withoutRules[${i}]`, 'must name a step rule'),
    );
  if (s.thresholds !== undefined) {
    const th = object('state.thresholds', s.thresholds);
    num('state.thresholds.confident', th.confident, { min: 0, max: 1 });
    num('state.thresholds.unsure', th.unsure, { min: 0, max: 1 });
  }
  vectors('state.toolVectors', s.toolVectors, tools.length, dimension);
  if (s.calibration !== undefined && s.calibration !== null) {
    const c = object('state.calibration', s.calibration);
    numbers('state.calibration.confident', c.confident, undefined, { min: 0, max: 1 });
    numbers('state.calibration.unsure', c.unsure, undefined, { min: 0, max: 1 });
  }
  if (s.scoreCounts !== undefined) {
    const counts = object('state.scoreCounts', s.scoreCounts);
    for (const [name, n] of Object.entries(counts))
      if (!Number.isSafeInteger(n) || (n as number) < 0)
        stateError(`state.scoreCounts.${name}`, 'must be a count (an integer ≥ 0)');
  }
  if (s.sequences !== undefined) checkSequenceScoresState('state.sequences', s.sequences);
  if (s.sliceAtFit !== undefined) {
    const slice = object('state.sliceAtFit', s.sliceAtFit);
    const fitTools = int('state.sliceAtFit.tools', slice.tools, 1, Number.MAX_SAFE_INTEGER);
    int('state.sliceAtFit.called', slice.called, 0, fitTools);
    int('state.sliceAtFit.runs', slice.runs, 1, Number.MAX_SAFE_INTEGER);
    int('state.sliceAtFit.learned', slice.learned, 0, Number.MAX_SAFE_INTEGER);
  }
  if (s.diagnostics !== undefined) object('state.diagnostics', s.diagnostics);
  if (s.coverage !== undefined) checkCoverageState('state.coverage', s.coverage, tools.length);
  if (s.novelty !== undefined) checkNoveltyState('state.novelty', s.novelty, dimension);
  for (const rule of STEP_RULES) rule.validate?.(s, L);
  if (s.evidence === null || s.evidence === undefined) return;
  const e = object('state.evidence', s.evidence) as unknown as NonNullable<GatedState['evidence']>;
  const l = int('state.historyLength', s.historyLength, 0, MAX_HISTORY);
  const k = vectors('state.evidence.centroids', e.centroids, undefined, dimension).length;
  array('state.evidence.graphs', e.graphs, k).forEach((g, i) =>
    checkGraphState(l, g, L, `state.evidence.graphs[${i}]`),
  );
  optNum('state.evidence.globalHistory', e.globalHistory, { min: 0, max: MAX_HISTORY, integer: true });
  checkGraphState(Number(e.globalHistory) || l, e.global, L, 'state.evidence.global');
  array('state.evidence.bags', e.bags, k).forEach((b, i) => labelWeights(`state.evidence.bags[${i}]`, b, L));
  if (e.vocabulary !== undefined) {
    const v = numbers('state.evidence.vocabulary', e.vocabulary, undefined, { min: 0, max: L - 1, integer: true });
    if (new Set(v).size !== v.length) stateError('state.evidence.vocabulary', 'lists a label twice');
  }
  if (e.head) LinearHead.checkState(e.head, 'state.evidence.head');
  if (e.sizes !== undefined) numbers('state.evidence.sizes', e.sizes, undefined, { min: 0 });
  ReplayBuffer.fromState(e.replay, {
    field: 'state.evidence.replay',
    dim: dimension,
    sparseSize: e.head?.sparseSize ?? 2 ** 32,
    classes: L,
  });
}

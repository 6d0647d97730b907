/* eslint-disable max-lines -- 463 lines: to split by concern */
/**
 * DTDR-G in memory and in files: GatedParts (what a fitted model holds), GatedState (its saved,
 * versioned form) and the two conversions. Loading checks every field before use
 * (`checkGatedState`): every number finite and in range, every shape consistent with the tools and
 * the encoder dimension, every label within [0, tools + 1); a valid file is only read, so it loads
 * exactly as before.
 */
import { DtdrError } from '../../base/errors.js';
import { MAX_PLAN_STEPS } from '../../base/limits.js';
import { array, int, labelWeights, num, numbers, object, optNum, stateError, vectors } from '../../base/validate.js';
import { checkGraphState } from '../graph.js';
import type { ToolSpec } from '../../base/types.js';
import { startCount } from '../dependency.js';
import { DependencyGraph } from '../graph.js';
import { LinearHead, type LinearHeadState } from '../linear-head.js';
import { ReplayBuffer, type ReplayState } from '../replay-buffer.js';
import { headSparseSize, type Evidence } from './evidence.js';
import { MAX_CURVE_SIZE, type Calibration } from './groups.js';
import type { CombinationsState } from './rules/new-combinations.js';
import {
  checkCoverageState,
  coverageFromState,
  coverageState,
  type CoverageModel,
  type CoverageState,
} from './coverage.js';
import type { SavedState } from './rule.js';
import { STEP_RULE_NAMES, STEP_RULES, type RuleStates } from './step-rules.js';
import { checkNoveltyState, noveltyFromState, noveltyState, type Novelty, type NoveltyState } from './novelty.js';
import { G, KNOWN_HISTORY, S, SIGNALS, type SignalName } from './layout.js';
import { ToolSide } from './tool-side.js';
import {
  checkSequenceScoresState,
  sequenceScoresFromState,
  sequenceScoresState,
  type SequenceScoresState,
} from './sequence-scores.js';

/**
 * What a fitted DTDR-G holds: the tool side, the evidence (none for tools alone), the gate, calibration and thresholds.
 */
export interface GatedParts {
  side: ToolSide;
  evidence: Evidence | undefined;
  theta: Float64Array;
  temperature: number;
  target: number;
  confidentAbove: number;
  neighbours: number;
  withoutSignals: SignalName[];
  diagnostics?: GatedDiagnostics;
  /**
   * Held-out conformal scores and thresholds per pool and per group (groups.ts), kept so learning
   * can pool new ones. Models fitted before the fine groups hold the pools alone and rank as they did.
   */
  calibration: Calibration;
  /**
   * Tools added after training (Dtdr.addTools), by label index: while no demonstration calls one, it joins the sets of
   * requests that ask for it.
   */
  addedTools: number[];
  /**
   * Request coverage (coverage.ts): the word–tool alignment fitted on the demonstrations and the
   * descriptions, tools added later aside (their rows come from their descriptions at load).
   * Absent in models fitted before it: no coverage rule.
   */
  coverage?: CoverageModel;
  /** Each step rule's state by rule name (step-rules.ts); a rule without one (models fitted before it) is silent. */
  rules: RuleStates;
  /**
   * A sample of the demonstrations' requests and how near each lies to the others (novelty.ts). Absent in older files:
   * every request is familiar.
   */
  novelty?: Novelty;
  /** ExperimentalGatedSettings.unseenPrior as fitted (absent: 0, Good–Turing alone, as in files written before it). */
  unseenPrior?: number;
  /** Step rules left out (ExperimentalGatedSettings.withoutRules; absent: none). */
  withoutRules?: string[];
}

/** What a DTDR-G fit measured on its held-out steps and chose (`Dtdr.diagnostics`; absent for other methods). */
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
  /** Per-group held-out scores and thresholds (absent in files written before them: the two pools alone). */
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

/** The model as its saved state (numbers rounded where the format says so). */
export function gatedState(p: GatedParts): GatedState {
  const ev = p.evidence;
  const d = p.side.dim;
  const rows = (a: Float32Array, count: number) =>
    Array.from({ length: count }, (_, i) => Array.from(a.subarray(i * d, (i + 1) * d)));
  const out: GatedState = {
    historyLength: p.evidence?.historyLength ?? 0,
    neighbours: p.neighbours,
    lexicalOrder: p.side.lexicalOrder,
    without: p.withoutSignals,
    theta: Array.from(p.theta),
    temperature: p.temperature,
    target: p.target,
    confidentAbove: p.confidentAbove,
    ...(p.unseenPrior ? { unseenPrior: p.unseenPrior } : {}),
    ...(p.withoutRules?.length ? { withoutRules: [...p.withoutRules] } : {}),
    thresholds: { ...p.calibration.thresholds.pools },
    toolVectors: rows(p.side.toolVectors, p.side.tools.length),
    evidence: ev
      ? {
          centroids: rows(ev.centroids, ev.k),
          graphs: ev.graphs.map((g) => g.state()),
          global: ev.global.state(),
          globalHistory: ev.global.maxHistory,
          bags: ev.bags.map((b) => [...b].map(([k, v]) => [k, +v.toFixed(6)] as [number, number])),
          head: ev.head ? ev.head.state() : null,
          vocabulary: [...ev.vocabulary.keys()],
          sizes: [...ev.sizes],
          replay: ev.replay.state(),
        }
      : null,
    calibration: { ...p.calibration.pools },
    ...(p.calibration.groups
      ? { groups: { scores: p.calibration.groups, thresholds: p.calibration.thresholds.groups, newToolRank: 0 } }
      : {}),
    ...(p.calibration.bySize ? { coverageBySize: [...p.calibration.bySize] } : {}),
    ...(p.calibration.seen ? { scoreCounts: { ...p.calibration.seen } } : {}),
    ...(p.calibration.sequences ? { sequences: sequenceScoresState(p.calibration.sequences) } : {}),
    ...(p.addedTools.length ? { addedTools: p.addedTools } : {}),
    ...(p.coverage ? { coverage: coverageState(p.coverage) } : {}),
    ...(p.novelty ? { novelty: noveltyState(p.novelty) } : {}),
  };
  for (const rule of STEP_RULES) {
    const state = p.rules[rule.name];
    if (state !== undefined) rule.save(state, out as unknown as SavedState);
  }
  if (p.diagnostics) out.diagnostics = p.diagnostics;
  return out;
}

/** A saved state back in memory, checked: a bad field is a DtdrError naming it. */
export function gatedParts(tools: ToolSpec[], dim: number, s: GatedState): GatedParts {
  checkGatedState(s, tools, dim);
  const fail = (field: string, message: string): never => {
    throw new DtdrError('artifact', message, { field: `state.${field}` });
  };
  if (!s || typeof s !== 'object') fail('', 'missing dtdr-g state');
  if (!Array.isArray(s.theta) || s.theta.length !== S * G || s.theta.some((v) => !Number.isFinite(v)))
    fail('theta', `gate must have ${S * G} finite weights`);
  if (
    !Array.isArray(s.toolVectors) ||
    s.toolVectors.length !== tools.length ||
    s.toolVectors.some((v) => !Array.isArray(v) || v.length !== dim)
  )
    fail('toolVectors', 'one vector per tool of the encoder dimension expected');
  const without = Array.isArray(s.without) ? s.without.filter((x): x is SignalName => SIGNALS.includes(x)) : [];
  // Files written before the lexical signal weighed order of mention have no lexicalOrder: 0 ranks as they did.
  const lexicalOrder = s.lexicalOrder ?? 0;
  if (typeof lexicalOrder !== 'number' || !(lexicalOrder >= 0 && Number.isFinite(lexicalOrder)))
    fail('lexicalOrder', 'lexicalOrder must be a finite number ≥ 0');
  const side = new ToolSide(tools, Float32Array.from(s.toolVectors.flat()), dim, lexicalOrder);
  const ev = s.evidence ? evidenceFromState(s, tools, dim, fail) : undefined;
  const th = s.thresholds ?? { confident: 0, unsure: 0 };
  const pools =
    s.calibration && Array.isArray(s.calibration.confident) && Array.isArray(s.calibration.unsure)
      ? { confident: s.calibration.confident.map(Number), unsure: s.calibration.unsure.map(Number) }
      : { confident: [], unsure: [] };
  const groups = s.groups !== undefined ? groupsFromState(s.groups, fail) : undefined;
  const bySize = s.coverageBySize;
  if (
    bySize !== undefined &&
    (!Array.isArray(bySize) ||
      bySize.length > MAX_CURVE_SIZE ||
      bySize.some((v, k) => typeof v !== 'number' || !(v >= 0 && v <= 1) || (k > 0 && v < bySize[k - 1])))
  )
    fail('coverageBySize', `coverageBySize must be at most ${MAX_CURVE_SIZE} non-decreasing numbers in [0, 1]`);
  const addedTools = s.addedTools ?? [];
  if (!Array.isArray(addedTools) || addedTools.some((f) => !Number.isInteger(f) || f < 0 || f >= tools.length))
    fail('addedTools', 'addedTools must list tool indices');
  // One calibration in memory: the saved pools (`thresholds`, `calibration`) and, where saved, the groups.
  const calibration: Calibration = {
    pools,
    ...(groups ? { groups: groups.scores } : {}),
    thresholds: { pools: { confident: th.confident, unsure: th.unsure }, groups: groups?.thresholds ?? {} },
    ...(bySize ? { bySize: [...bySize] } : {}),
  };
  // A rule deleted since the file was written is out anyway.
  const live = (s.withoutRules ?? []).filter((r) => !DELETED_RULES.includes(r));
  return {
    side,
    evidence: ev,
    calibration: {
      ...calibration,
      ...(s.scoreCounts ? { seen: { ...s.scoreCounts } } : {}),
      ...(s.sequences ? { sequences: sequenceScoresFromState(s.sequences) } : {}),
    },
    addedTools: [...addedTools],
    ...(s.coverage ? { coverage: coverageFromState(s.coverage) } : {}),
    ...(s.novelty ? { novelty: noveltyFromState(s.novelty, dim) } : {}),
    rules: loadRules(s),
    theta: Float64Array.from(s.theta),
    temperature: Number(s.temperature) || 1,
    target: Number(s.target) || 0.95,
    confidentAbove: Number(s.confidentAbove ?? 0.5),
    ...(s.unseenPrior ? { unseenPrior: s.unseenPrior } : {}),
    ...(live.length ? { withoutRules: live } : {}),
    neighbours: Number(s.neighbours) || 5,
    withoutSignals: without,
    diagnostics: s.diagnostics,
  };
}

/** Each step rule's state from a checked file (models with evidence only: tools alone have no rules). */
function loadRules(s: GatedState): RuleStates {
  const out: RuleStates = {};
  if (!s.evidence) return out;
  for (const rule of STEP_RULES) {
    if (s.withoutRules?.includes(rule.name)) continue;
    const state: unknown = rule.load(s as unknown as SavedState);
    if (state !== undefined) out[rule.name] = state;
  }
  return out;
}

/**
 * Step rules a model file may still name in `withoutRules` though they were deleted (docs/first-day.md, the ablation):
 * left out anyway.
 */
const DELETED_RULES: readonly string[] = [
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
    num01('state.thresholds.confident', th.confident);
    num01('state.thresholds.unsure', th.unsure);
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
  const head = e.head ?? undefined;
  if (e.sizes !== undefined) numbers('state.evidence.sizes', e.sizes, undefined, { min: 0 });
  ReplayBuffer.fromState(e.replay, {
    field: 'state.evidence.replay',
    dim: dimension,
    sparseSize: head?.sparseSize ?? 2 ** 32,
    classes: L,
  });
}

function num01(field: string, v: unknown): void {
  num(field, v, { min: 0, max: 1 });
}

/** The saved evidence (clusters, graphs, bags, head), checked against the tools and the encoder dimension. */
function evidenceFromState(
  s: GatedState,
  tools: ToolSpec[],
  dim: number,
  fail: (field: string, message: string) => never,
): Evidence {
  const e = s.evidence!;
  const l = Number(s.historyLength);
  if (!Number.isInteger(l) || l < 1) fail('historyLength', 'history length must be a positive integer');
  if (!Array.isArray(e.centroids) || e.centroids.some((c) => !Array.isArray(c) || c.length !== dim))
    fail('evidence.centroids', 'centroids must match the encoder dimension');
  if (!Array.isArray(e.graphs) || e.graphs.length !== e.centroids.length)
    fail('evidence.graphs', 'one graph per cluster expected');
  if (!Array.isArray(e.bags) || e.bags.length !== e.centroids.length)
    fail('evidence.bags', 'one tool list per cluster expected');
  const L = tools.length + 1;
  const vocabulary = new Map((e.vocabulary ?? []).map((label, slot) => [label, slot]));
  if ([...vocabulary.keys()].some((i) => !Number.isInteger(i) || i < 0 || i >= L))
    fail('evidence.vocabulary', 'history vocabulary must list label indices');
  let head: LinearHead | undefined;
  if (e.head) {
    head = LinearHead.fromState(e.head);
    if (head.dim !== dim || head.classes !== L || head.sparseSize !== headSparseSize(l, vocabulary))
      fail('evidence.head', `head is ${head.dim}→${head.classes}, expected ${dim}→${L}`);
  }
  const ev: Evidence = {
    historyLength: l,
    k: e.centroids.length,
    centroids: Float32Array.from(e.centroids.flat()),
    graphs: e.graphs.map((g) => DependencyGraph.fromState(l, g)),
    global: DependencyGraph.fromState(Number(e.globalHistory) || Math.max(l, KNOWN_HISTORY), e.global),
    bags: e.bags.map((b) => new Map(b)),
    head,
    vocabulary,
    sizes: [],
    replay: ReplayBuffer.fromState(e.replay),
  };
  const graphs = ev.graphs;
  ev.sizes = Array.isArray(e.sizes) && e.sizes.length === graphs.length ? e.sizes.map(Number) : graphs.map(startCount);
  return ev;
}

/** The saved calibration groups (scores and thresholds per group), checked. */
function groupsFromState(
  g: NonNullable<GatedState['groups']>,
  fail: (field: string, message: string) => never,
): NonNullable<GatedState['groups']> {
  if (
    !g ||
    typeof g !== 'object' ||
    !g.scores ||
    typeof g.scores !== 'object' ||
    !g.thresholds ||
    typeof g.thresholds !== 'object'
  )
    fail('groups', 'groups must hold scores and thresholds per group');
  for (const [group, v] of Object.entries(g.scores))
    numbers(`state.groups.scores.${group}`, v, undefined, { min: 0, max: 1 });
  if (Object.values(g.thresholds).some((v) => typeof v !== 'number' || !(v >= 0 && v <= 1)))
    fail('groups.thresholds', "each group's threshold must be a number in [0, 1]");
  if (!Number.isInteger(g.newToolRank) || g.newToolRank < 0)
    fail('groups.newToolRank', 'newToolRank must be an integer ≥ 0');
  return {
    scores: Object.fromEntries(Object.entries(g.scores).map(([k, v]) => [k, v.map(Number)])),
    thresholds: { ...g.thresholds },
    newToolRank: g.newToolRank,
  };
}

/**
 * DTDR-G in memory and in files: GatedParts (what a fitted model holds) and the two conversions to
 * and from GatedState, its saved form (state-format.ts). Loading first checks every field there
 * (`checkGatedState`); a valid file is only read, so it loads exactly as before.
 */
import { DtdrError } from '../../base/errors.js';
import { numbers } from '../../base/validate.js';
import type { ToolSpec } from '../../base/types.js';
import { startCount } from '../dependency.js';
import { DependencyGraph } from '../graph.js';
import { LinearHead } from '../linear-head.js';
import { ReplayBuffer } from '../replay-buffer.js';
import { headSparseSize, type Evidence } from './evidence.js';
import { groupThresholdsOf, MAX_CURVE_SIZE, type Calibration, type SliceAtFit } from './groups.js';
import { coverageFromState, coverageState, type CoverageModel } from './coverage.js';
import type { SavedState } from './rule.js';
import { STEP_RULES, type RuleStates } from './step-rules.js';
import { noveltyFromState, noveltyState, type Novelty } from './novelty.js';
import { G, KNOWN_HISTORY, S, SIGNALS, type SignalName } from './layout.js';
import { ToolSide } from './tool-side.js';
import { sequenceScoresFromState, sequenceScoresState } from './sequence-scores.js';
import { checkGatedState, DELETED_RULES, type GatedDiagnostics, type GatedState } from './state-format.js';

export type { GatedDiagnostics, GatedState } from './state-format.js';

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
    ...(p.calibration.sliceAtFit ? { sliceAtFit: { ...p.calibration.sliceAtFit } } : {}),
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
  // checkGatedState has checked the shapes it can alone: finite numbers, the tool vectors, the evidence's arrays.
  if (s.theta.length !== S * G) fail('theta', `gate must have ${S * G} finite weights`);
  const without = Array.isArray(s.without) ? s.without.filter((x): x is SignalName => SIGNALS.includes(x)) : [];
  // Files written before the lexical signal weighed order of mention have no lexicalOrder: 0 ranks as they did.
  const lexicalOrder = s.lexicalOrder ?? 0;
  if (typeof lexicalOrder !== 'number' || !(lexicalOrder >= 0 && Number.isFinite(lexicalOrder)))
    fail('lexicalOrder', 'lexicalOrder must be a finite number ≥ 0');
  const side = new ToolSide(tools, Float32Array.from(s.toolVectors.flat()), dim, lexicalOrder);
  const ev = s.evidence ? evidenceFromState(s, tools, dim, fail) : undefined;
  const th = s.thresholds ?? { confident: 0, unsure: 0 };
  const pools = s.calibration
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
  const target = Number(s.target) || 0.95;
  // One calibration in memory: the saved pools (`thresholds`, `calibration`) and, where saved, the groups. The
  // groups' thresholds come from their saved scores, as fit and learn compute them (the same values for a file
  // written now): a file written before the confident groups' training-conditional threshold ranks with it.
  const calibration: Calibration = {
    pools,
    ...(groups ? { groups: groups.scores } : {}),
    thresholds: {
      pools: { confident: th.confident, unsure: th.unsure },
      groups: groupThresholdsOf(groups?.scores, target),
    },
    ...(bySize ? { bySize: [...bySize] } : {}),
    ...(s.scoreCounts ? { seen: { ...s.scoreCounts } } : {}),
    ...(s.sequences ? { sequences: sequenceScoresFromState(s.sequences) } : {}),
    ...(s.sliceAtFit ? { sliceAtFit: sliceAtFit(s.sliceAtFit) } : {}),
  };
  // A rule deleted since the file was written is out anyway.
  const live = (s.withoutRules ?? []).filter((r) => !DELETED_RULES.includes(r));
  return {
    side,
    evidence: ev,
    calibration,
    addedTools: [...addedTools],
    ...(s.coverage ? { coverage: coverageFromState(s.coverage) } : {}),
    ...(s.novelty ? { novelty: noveltyFromState(s.novelty, dim) } : {}),
    rules: loadRules(s),
    theta: Float64Array.from(s.theta),
    temperature: Number(s.temperature) || 1,
    target,
    confidentAbove: Number(s.confidentAbove ?? 0.5),
    ...(s.unseenPrior ? { unseenPrior: s.unseenPrior } : {}),
    ...(live.length ? { withoutRules: live } : {}),
    neighbours: Number(s.neighbours) || 5,
    withoutSignals: without,
    diagnostics: s.diagnostics,
  };
}

/** A checked file's slice when fitted, its four fields alone. */
const sliceAtFit = ({ called, tools, runs, learned }: SliceAtFit): SliceAtFit => ({ called, tools, runs, learned });

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

/** The saved evidence (clusters, graphs, bags, head), checked against the tools and the encoder dimension. */
function evidenceFromState(
  s: GatedState,
  tools: ToolSpec[],
  dim: number,
  fail: (field: string, message: string) => never,
): Evidence {
  const e = s.evidence!;
  const l = s.historyLength;
  if (l < 1) fail('historyLength', 'history length must be a positive integer');
  const L = tools.length + 1;
  const vocabulary = new Map((e.vocabulary ?? []).map((label, slot) => [label, slot]));
  let head: LinearHead | undefined;
  if (e.head) {
    head = LinearHead.fromState(e.head);
    if (head.dim !== dim || head.classes !== L || head.sparseSize !== headSparseSize(l, vocabulary))
      fail('evidence.head', `head is ${head.dim}→${head.classes}, expected ${dim}→${L}`);
  }
  const graphs = e.graphs.map((g) => DependencyGraph.fromState(l, g));
  return {
    historyLength: l,
    k: e.centroids.length,
    centroids: Float32Array.from(e.centroids.flat()),
    graphs,
    global: DependencyGraph.fromState(Number(e.globalHistory) || Math.max(l, KNOWN_HISTORY), e.global),
    bags: e.bags.map((b) => new Map(b)),
    head,
    vocabulary,
    sizes: e.sizes?.length === graphs.length ? e.sizes.map(Number) : graphs.map(startCount),
    replay: ReplayBuffer.fromState(e.replay),
  };
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

/**
 * DTDR-G's calibration: one group-conditional ("Mondrian") split-conformal scheme. A step's group is
 * decided from what is known at rank time, as a typed value:
 *
 * - `history`: `seen` or `new` — some demonstration has the last calls in a row (from the plan's
 *   start when there are fewer than three), or none;
 * - `support`: `many`, `few` or `none` — demonstrated steps of the top-ranked label (≥ 20, 1–19, < 1);
 * - `level`: `high` or `low` — the top label's calibrated probability against `confidentAbove`.
 *
 * Groups nest in two levels. The coarse level has two pools: `confident` (seen history, high level,
 * any support) and `unsure` (every other step). Each group and each pool keeps its held-out scores
 * (the probability of the best acceptable label) and gets its threshold from one function,
 * `groupThreshold`. A step's threshold is the lower of its group's and its pool's (its pool's alone
 * where the group is too thin for one); a step is confident only in a `seen/many/high` or
 * `seen/few/high` group with at least MIN_CONFIDENT held-out scores. Models fitted before the fine
 * level hold only the pools, and tools-only models one unsure pool: their steps are calibrated by
 * the pools alone (confident: the `confident` pool), so they rank as they always did.
 */
import { seededRandom, shuffleInPlace } from '../../base/random.js';

/** One demonstration's held-out steps: each step's score and calibration group (an index into GROUP_KEYS). */
export interface HeldOutPlan {
  scores: number[];
  groups: number[];
}

/**
 * The sequences a model knows, by hash, each with the held-out demonstrations kept for it (maybe none): see
 * sequence-scores.ts.
 */
export type SequenceScores = Map<number, HeldOutPlan[]>;

/** Held-out scores a group or pool needs for its own conformal threshold. */
export const MIN_SCORES = 20;
/** Held-out scores a group needs before its steps may be called confident. */
export const MIN_CONFIDENT = 50;
/** Demonstrated steps from which a label counts as `many`. */
export const MANY_DEMONSTRATIONS = 20;
/** Held-out scores kept per group, at most (a seeded sample beyond it), so saved models stay small. */
export const MAX_GROUP_SCORES = 4000;

/** A slice when fitted (Calibration.sliceAtFit). */
export interface SliceAtFit {
  called: number;
  tools: number;
  runs: number;
  learned: number;
}

/** A step's calibration group. */
export interface CalibrationGroup {
  history: 'seen' | 'new';
  support: 'many' | 'few' | 'none';
  level: 'high' | 'low';
}

/** The coarse level: the pool a group belongs to. */
export type Pool = 'confident' | 'unsure';

/** Thresholds in use: one per pool, one per group of the fine level. */
export interface Thresholds {
  pools: Record<Pool, number>;
  groups: Record<string, number>;
}

/** What a fitted model keeps for calibration: held-out scores per pool and per group, and the thresholds in use. */
export interface Calibration {
  pools: Record<Pool, number[]>;
  /** Per group key (`groupKey`); absent in models fitted before the fine level. */
  groups?: Record<string, number[]>;
  thresholds: Thresholds;
  /**
   * How many scores each list has been given in all (`confident`, `unsure`, `group:<key>`), for
   * the bounded uniform sample online learning keeps (score-sample.ts); absent until the first learn.
   */
  seen?: Record<string, number>;
  /**
   * Where the thresholds come from held-out steps of new tool sequences (thresholdsFrom `sequence`):
   * the sequences the model knows, each with held-out steps of its demonstrations scored while it
   * was new, so that learning adds what those folds would (sequence-scores.ts). Absent where the
   * thresholds come from random folds (every learned step is scored as it comes) and in files
   * written before it (likewise).
   */
  sequences?: SequenceScores;
  /**
   * Held-out coverage of the k most probable labels, k = 1, 2, … (coverageBySize): what a set cut to k holds
   * (selection's small-app cut). Absent in files written before it: no cut.
   */
  bySize?: number[];
  /**
   * Where the demonstrations of the fit called under half the tools (a slice, calibrate-step.ts): how many they
   * called, of how many, how many runs the fit had and how many have been learned since. Until the runs learned
   * since are as many as the fit's, the model stays a slice (runs folded in have not yet outweighed the held-out
   * steps the slice gave). Absent otherwise, and in files written before it.
   */
  sliceAtFit?: SliceAtFit;
}

export function demonstrationBucket(count: number): CalibrationGroup['support'] {
  return count >= MANY_DEMONSTRATIONS ? 'many' : count >= 1 ? 'few' : 'none';
}

/** The group of a step of a demonstration-trained model. */
export function stepGroup(known: boolean, topCount: number, topHigh: boolean): CalibrationGroup {
  return STEP_GROUPS[known ? 'seen' : 'new'][demonstrationBucket(topCount)][topHigh ? 'high' : 'low'];
}

/** A group's name in rankings, reports and model files: `history/support/level`. */
export function groupKey(g: CalibrationGroup): string {
  const key = KEYS[g.history]?.[g.support]?.[g.level];
  return typeof key === 'string' ? key : `${g.history}/${g.support}/${g.level}`;
}

const HISTORY = ['seen', 'new'] as const;
const SUPPORT = ['many', 'few', 'none'] as const;
const LEVEL = ['high', 'low'] as const;

type Table<T> = {
  [H in CalibrationGroup['history']]: { [S in CalibrationGroup['support']]: { [L in CalibrationGroup['level']]: T } };
};
/** Each of the twelve groups' value of `make`, made once: a step looks its group and key up, never builds them. */
function byGroup<T>(make: (g: CalibrationGroup) => T): Table<T> {
  const table: Record<string, Record<string, Record<string, T>>> = {};
  for (const history of HISTORY)
    for (const support of SUPPORT)
      for (const level of LEVEL) ((table[history] ??= {})[support] ??= {})[level] = make({ history, support, level });
  return table as Table<T>;
}
const KEYS: Partial<Table<string>> = byGroup((g) => `${g.history}/${g.support}/${g.level}`);
const STEP_GROUPS = byGroup((g): CalibrationGroup => Object.freeze(g));
/** Every group's name, in a fixed order (a group's code in saved held-out steps). */
export const GROUP_KEYS: readonly string[] = HISTORY.flatMap((h) =>
  SUPPORT.flatMap((s) => LEVEL.map((l) => groupKey(STEP_GROUPS[h][s][l]))),
);

/** A group from its name; undefined for anything else (`tools-only`, say). */
export function parseGroup(key: string): CalibrationGroup | undefined {
  if (!GROUP_KEYS.includes(key)) return undefined;
  const [history, support, level] = key.split('/');
  return { history, support, level } as CalibrationGroup;
}

/** The pool a group belongs to. */
export function poolOf(g: CalibrationGroup): Pool {
  return g.history === 'seen' && g.level === 'high' ? 'confident' : 'unsure';
}

/**
 * How sure a confident step's threshold is of its coverage. The split-conformal threshold covers on average over
 * draws of the held-out steps; with the 50–300 held-out scores of a model's first hundreds of runs, one draw's
 * confident sets hold the needed tool in under 95% of steps in three to four draws of ten (UltraTool's 300 random
 * runs, seed 2: 22 of 340 confident steps missed). The groups whose steps are called confident cover with
 * probability 0.9 over the draw instead (a training-conditional, "PAC", conformal threshold). 0.9 is the usual
 * value in the literature, not tuned.
 */
export const CONFIDENT_COVERAGE_CONFIDENCE = 0.9;

/**
 * The one threshold function, at fit time and as runs are learned. Split-conformal threshold for "the set holds an
 * acceptable tool": with s_i the probability of the best acceptable label of held-out step i, the set {f : p(f) ≥ q}
 * where q is the k-th smallest s_i covers a new exchangeable step with probability ≥ target when k is
 * ⌊(n+1)(1−target)⌋. For a group whose steps are called confident (`sure`), k is also at most the largest with
 * P(Binomial(n, 1−target) ≥ k) ≥ CONFIDENT_COVERAGE_CONFIDENCE: then, with that probability over the held-out steps,
 * the set's coverage is ≥ target (the k-th smallest of n uniforms is under 1−target exactly when at least k of them
 * are). 0 (keep everything) below MIN_SCORES scores, or with too few for the target.
 */
export function groupThreshold(scores: readonly number[], target: number, sure = false): number {
  if (scores.length < MIN_SCORES) return 0;
  const sorted = Float64Array.from(scores).sort();
  const n = sorted.length;
  const k = Math.floor((n + 1) * (1 - target));
  const rank = sure ? Math.min(k, surelyCoveringRank(n, 1 - target, CONFIDENT_COVERAGE_CONFIDENCE)) : k;
  return rank < 1 ? 0 : sorted[rank - 1];
}

/** The largest k with P(Binomial(n, miss) ≥ k) ≥ confidence (0 when there is none): the CDF summed up in log space. */
function surelyCoveringRank(n: number, miss: number, confidence: number): number {
  let logTerm = n * Math.log1p(-miss); // log P(X = 0)
  let cdf = Math.exp(logTerm); // P(X ≤ k)
  let k = 0;
  const odds = Math.log(miss / (1 - miss));
  // P(X ≤ k) ≤ 1 − confidence says P(X ≥ k + 1) ≥ confidence: k + 1 will do.
  while (k < n && cdf <= 1 - confidence) {
    k++;
    logTerm += Math.log((n - k + 1) / k) + odds;
    cdf += Math.exp(logTerm);
  }
  return k;
}

/**
 * Every pool's and group's threshold for a coverage target: training-conditional for the groups whose steps are
 * called confident, split-conformal for the pools and every other group.
 */
export function thresholdsOf(c: Pick<Calibration, 'pools' | 'groups'>, target: number): Thresholds {
  return {
    pools: { confident: groupThreshold(c.pools.confident, target), unsure: groupThreshold(c.pools.unsure, target) },
    groups: groupThresholdsOf(c.groups, target),
  };
}

/** Each group's threshold from its held-out scores: fit, learn (the groups it touched) and load derive them here. */
export function groupThresholdsOf(groups: Calibration['groups'], target: number): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [key, list] of Object.entries(groups ?? {}))
    out[key] = groupThreshold(list, target, confidentKey(key, list.length));
  return out;
}

/** Whether the group named `key`, with `scores` held-out scores, calls its steps confident (confidentGroup). */
function confidentKey(key: string, scores: number): boolean {
  const group = parseGroup(key);
  return group !== undefined && confidentGroupOf(group, scores);
}

/** A step's threshold: the lower of its group's and its pool's (its pool's where the group has none). */
export function stepThreshold(t: Thresholds, g: CalibrationGroup): number {
  const pool = t.pools[poolOf(g)];
  const own = t.groups[groupKey(g)] ?? 0;
  return own > 0 && pool > 0 ? Math.min(own, pool) : pool;
}

/** Whether a step of this group may be called confident, given the held-out scores. */
export function confidentGroup(c: Calibration, g: CalibrationGroup): boolean {
  return confidentGroupOf(g, c.groups?.[groupKey(g)]?.length ?? 0);
}

/** confidentGroup's rule: the confident pool, support not `none`, at least MIN_CONFIDENT held-out scores. */
const confidentGroupOf = (g: CalibrationGroup, scores: number): boolean =>
  poolOf(g) === 'confident' && g.support !== 'none' && scores >= MIN_CONFIDENT;

/** Whether any step may be called confident: some group that may be has the held-out scores for it. */
export function mayBeConfident(c: Calibration): boolean {
  return CONFIDENT_GROUPS.some((g) => confidentGroup(c, g));
}
/** The groups whose steps may be confident: confidentGroup's rule (the confident pool, support not `none`). */
const CONFIDENT_GROUPS = [STEP_GROUPS.seen.many.high, STEP_GROUPS.seen.few.high];

/**
 * The calibration from held-out steps (in order): pools keep every score, groups at most
 * MAX_GROUP_SCORES (a sample drawn with `seed`). Pool thresholds come from the scores as computed,
 * group thresholds from the stored (single-precision) ones, as learning recomputes them.
 */
export function fitCalibration(
  steps: readonly { group: CalibrationGroup; score: number }[],
  target: number,
  seed: number,
): Calibration {
  const pools: Record<Pool, number[]> = { confident: [], unsure: [] };
  const groups: Record<string, number[]> = {};
  for (const { group, score } of steps) {
    pools[poolOf(group)].push(score);
    (groups[groupKey(group)] ??= []).push(Math.fround(score));
  }
  for (const key of Object.keys(groups)) groups[key] = capScores(groups[key], MAX_GROUP_SCORES, seed);
  const thresholds = thresholdsOf({ pools, groups }, target);
  return {
    pools: { confident: pools.confident.map(Math.fround), unsure: pools.unsure.map(Math.fround) },
    groups,
    thresholds,
  };
}

/** Set sizes the held-out coverage curve (Calibration.bySize) runs to, at most. */
export const MAX_CURVE_SIZE = 64;

/**
 * The held-out coverage of the k most probable labels, k = 1 … min(labels, MAX_CURVE_SIZE): the share of held-out
 * steps whose best acceptable label ranks k-th or better (`ranks`: 1-based; beyond the candidates: labels + 1).
 */
export function coverageBySize(ranks: readonly number[], labels: number): number[] {
  const n = Math.min(labels, MAX_CURVE_SIZE);
  const counts = new Array<number>(n).fill(0);
  for (const r of ranks) if (r >= 1 && r <= n) counts[r - 1]++;
  let sum = 0;
  return counts.map((c) => +((sum += c) / Math.max(1, ranks.length)).toFixed(4));
}

/** At most `cap` of a group's scores (a seeded sample), so saved models stay small. */
export function capScores(list: number[], cap: number, seed: number): number[] {
  return list.length <= cap ? list : shuffleInPlace([...list], seededRandom(seed)).slice(0, cap);
}

/** The calibration of a model with no held-out steps (tools alone): empty pools, no threshold. */
export function emptyCalibration(): Calibration {
  return { pools: { confident: [], unsure: [] }, thresholds: { pools: { confident: 0, unsure: 0 }, groups: {} } };
}

/**
 * Held-out scores by tool sequence, for online learning where the thresholds come from new sequences.
 *
 * Data that repeats its tool sequences gets its conformal thresholds from folds that hold out whole
 * sequences (fit.ts, `thresholdsFrom: 'sequence'`): every scored demonstration's steps as ranked
 * by a model that never saw its sequence, each demonstration once, so each sequence weighs as
 * often as it occurs. Learning adds to those scores (score-sample.ts) what such folds would add:
 * a learned demonstration whose sequence the model has not seen is scored as it comes (it is such
 * a step), and its held-out steps are kept for its sequence; a repeat, whose sequence the model
 * has seen, adds the held-out steps kept for its sequence — a demonstration of that sequence
 * scored while it was new — so the sequence keeps weighing as often as it occurs. Scoring repeats
 * as the model sees them set the thresholds for repeats (on the demo world's new combinations,
 * coverage fell below the fit's); adding only each new sequence's first demonstration weighed every
 * sequence once, rare ones as much as common ones, and widened the sets.
 *
 * Bounded: at most MAX_SEQUENCES sequences and PLANS_PER_SEQUENCE demonstrations each. A sequence
 * the fit saw but did not score (in the gate's half, or beyond the scored cap) is known with none
 * kept: its repeats add nothing, as the fit's own sample holds such sequences as often as the
 * scored half does. Once the set is full no sequence is new for certain: an unknown one adds nothing.
 */
import { sequenceKey } from '../../plans/plan.js';
import { hashString } from '../../base/random.js';
import type { Plan } from '../../base/types.js';
import { MAX_PLAN_STEPS } from '../../base/limits.js';
import { numbers, object, stateError } from '../../base/validate.js';
import { GROUP_KEYS, groupKey, type CalibrationGroup, type HeldOutPlan, type SequenceScores } from './groups.js';

/** Distinct tool sequences a model keeps, at most (31-bit hashes). */
export const MAX_SEQUENCES = 65_536;
/** Held-out demonstrations kept per sequence, at most (a repeat adds one of them, chosen by its id). */
export const PLANS_PER_SEQUENCE = 8;

/**
 * The saved form, columnar: sequence i (hashes ascending) keeps plans[i] demonstrations, taken in
 * order from `steps` (each one's step count), whose steps are in `scores` and `groups`.
 */
export interface SequenceScoresState {
  hashes: number[];
  plans: number[];
  steps: number[];
  scores: number[];
  groups: number[];
}

/** A tool sequence's 31-bit FNV-1a hash (an int32 section in binary models). */
export function sequenceHash(key: string): number {
  return hashString(key) & 0x7fffffff;
}

const planHash = (plan: Plan) => sequenceHash(sequenceKey(plan));

/** A group's code in a HeldOutPlan. */
export const groupCode = (g: CalibrationGroup): number => GROUP_KEYS.indexOf(groupKey(g));

/** Keeps `plan` for sequence `hash` where there is room (the sequence itself counts against MAX_SEQUENCES). */
function keep(store: SequenceScores, hash: number, plan: HeldOutPlan | undefined): void {
  let kept = store.get(hash);
  if (kept === undefined) {
    if (store.size >= MAX_SEQUENCES) return;
    store.set(hash, (kept = []));
  }
  if (plan && plan.scores.length > 0 && kept.length < PLANS_PER_SEQUENCE) kept.push(plan);
}

/**
 * The fit's store: every demonstration's sequence (the first MAX_SEQUENCES met), each with the
 * held-out steps of its first scored demonstrations. `heldOut`: the threshold scheme's scored
 * steps in order, each with its demonstration's index.
 */
export function fitSequenceScores(
  plans: readonly Plan[],
  heldOut: readonly { plan: number; score: number; group: CalibrationGroup }[],
): SequenceScores {
  const byPlan = new Map<number, HeldOutPlan>();
  for (const { plan, score, group } of heldOut) {
    let steps = byPlan.get(plan);
    if (!steps) byPlan.set(plan, (steps = { scores: [], groups: [] }));
    steps.scores.push(Math.fround(score));
    steps.groups.push(groupCode(group));
  }
  const store: SequenceScores = new Map();
  for (const [plan, steps] of byPlan) keep(store, planHash(plans[plan]), steps);
  for (const plan of plans) keep(store, planHash(plan), undefined);
  return store;
}

/**
 * What each learned demonstration adds to the calibration: `score` (its steps scored as they come:
 * its sequence is new to the model), a kept demonstration of its sequence to add instead, or
 * nothing. Call `remember` with the scored ones' held-out steps once they are scored.
 */
export function learnedScores(
  store: SequenceScores,
  plans: readonly Plan[],
): { add: ('score' | HeldOutPlan | undefined)[]; remember: (i: number, steps: HeldOutPlan) => void } {
  const full = store.size >= MAX_SEQUENCES;
  const hashes = plans.map(planHash);
  const add = plans.map((plan, i) => {
    const kept = store.get(hashes[i]);
    if (kept === undefined) return full ? undefined : ('score' as const);
    return kept.length > 0 ? kept[sequenceHash(plan.id) % kept.length] : undefined;
  });
  return { add, remember: (i, steps) => keep(store, hashes[i], steps) };
}

export function sequenceScoresState(store: SequenceScores): SequenceScoresState {
  const out: SequenceScoresState = { hashes: [], plans: [], steps: [], scores: [], groups: [] };
  for (const hash of [...store.keys()].sort((a, b) => a - b)) {
    const kept = store.get(hash)!;
    out.hashes.push(hash);
    out.plans.push(kept.length);
    for (const plan of kept) {
      out.steps.push(plan.scores.length);
      out.scores.push(...plan.scores);
      out.groups.push(...plan.groups);
    }
  }
  return out;
}

/** Throws a DtdrError('artifact') for the first thing in a saved store a fit or learning could not have written. */
export function checkSequenceScoresState(field: string, v: unknown): asserts v is SequenceScoresState {
  const s = object(field, v);
  const hashes = numbers(`${field}.hashes`, s.hashes, undefined, { min: 0, max: 0x7fffffff, integer: true });
  if (hashes.length > MAX_SEQUENCES) stateError(`${field}.hashes`, `must list at most ${MAX_SEQUENCES} sequences`);
  if (hashes.some((h, i) => i > 0 && h <= hashes[i - 1])) stateError(`${field}.hashes`, 'must rise strictly');
  const plans = numbers(`${field}.plans`, s.plans, hashes.length, { min: 0, max: PLANS_PER_SEQUENCE, integer: true });
  const count = plans.reduce((a, b) => a + b, 0);
  const steps = numbers(`${field}.steps`, s.steps, count, { min: 1, max: MAX_PLAN_STEPS + 1, integer: true });
  const total = steps.reduce((a, b) => a + b, 0);
  numbers(`${field}.scores`, s.scores, total, { min: 0, max: 1 });
  numbers(`${field}.groups`, s.groups, total, { min: 0, max: GROUP_KEYS.length - 1, integer: true });
}

/** A checked saved store back in memory. */
export function sequenceScoresFromState(s: SequenceScoresState): SequenceScores {
  const store: SequenceScores = new Map();
  let plan = 0;
  let step = 0;
  s.hashes.forEach((hash, i) => {
    const kept: HeldOutPlan[] = [];
    for (let k = 0; k < s.plans[i]; k++, plan++) {
      const n = s.steps[plan];
      kept.push({ scores: s.scores.slice(step, step + n), groups: s.groups.slice(step, step + n) });
      step += n;
    }
    store.set(hash, kept);
  });
  return store;
}

/**
 * DTDR-G's calibration groups (group-conditional, "Mondrian", split-conformal prediction). A step's
 * group is decided from what is known at rank time:
 *
 * - `seen` or `new`: some demonstration has the last calls in a row (from the plan's start when
 *   there are fewer than three), or none;
 * - `many`, `few` or `none`: demonstrated steps of the top-ranked label (≥ 20, 1–19, < 1);
 * - `high` or `low`: the top label's calibrated probability against `confidentAbove`;
 * - `tools-only`: a model trained without demonstrations (one group).
 *
 * Each group gets its own held-out conformal scores and threshold. A step is confident only in a
 * `seen/many/high` or `seen/few/high` group with at least MIN_CONFIDENT held-out scores; a group
 * with fewer than MIN_SCORES scores has no threshold (0): its sets widen by probability mass.
 */
import { seededRandom, shuffleInPlace } from '../../base/random.js';
import { conformalThreshold } from './gate.js';

/** Held-out scores a group needs for its own conformal threshold. */
export const MIN_SCORES = 20;
/** Held-out scores a group needs before its steps may be called confident. */
export const MIN_CONFIDENT = 50;
/** Demonstrated steps from which a label counts as `many`. */
export const MANY_DEMONSTRATIONS = 20;

/** What a fitted model keeps per group: held-out scores (probability of the best acceptable label) and thresholds. */
export interface GroupCalibration {
  scores: Record<string, number[]>;
  thresholds: Record<string, number>;
  /**
   * Never-demonstrated tools within this rank of the request's description match (by embedding or
   * lexically) join the set and make the step unsure: the rank that held the needed tool in the
   * coverage target's share of held-out steps, treating every tool as if it had no demonstrations.
   * 0 when there were too few steps to say.
   */
  newToolRank: number;
}

export function demonstrationBucket(count: number): 'many' | 'few' | 'none' {
  return count >= MANY_DEMONSTRATIONS ? 'many' : count >= 1 ? 'few' : 'none';
}

/** The group of a step of a demonstration-trained model. */
export function stepGroup(known: boolean, topCount: number, topHigh: boolean): string {
  return `${known ? 'seen' : 'new'}/${demonstrationBucket(topCount)}/${topHigh ? 'high' : 'low'}`;
}

/** Whether a group's steps may be called confident, given its held-out scores. */
export function confidentGroup(group: string, calibration: GroupCalibration): boolean {
  return (group === 'seen/many/high' || group === 'seen/few/high') && (calibration.scores[group]?.length ?? 0) >= MIN_CONFIDENT;
}

/** Each group's split-conformal threshold for the target (0 below MIN_SCORES scores). */
export function mondrianThresholds(scores: Record<string, number[]>, target: number): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [group, list] of Object.entries(scores)) out[group] = list.length >= MIN_SCORES ? conformalThreshold(list, target) : 0;
  return out;
}

/** The smallest rank r such that at least `target` of the held-out ranks are ≤ r (0 below MIN_SCORES ranks). */
export function rankQuantile(ranks: readonly number[], target: number): number {
  if (ranks.length < MIN_SCORES) return 0;
  const sorted = [...ranks].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((sorted.length + 1) * target) - 1)];
}

/** At most `cap` of a group's scores (a seeded sample), so saved models stay small. */
export function capScores(list: number[], cap: number, seed: number): number[] {
  return list.length <= cap ? list : shuffleInPlace([...list], seededRandom(seed)).slice(0, cap);
}

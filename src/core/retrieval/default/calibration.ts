/**
 * DTDR-G's calibration and conformal thresholds: held-out steps' probabilities under a gate and
 * temperature (their groups and thresholds: groups.ts), isotonic ECE for the diagnostics,
 * and the cap on how many held-out plans are scored.
 */
import { seededRandom, shuffleInPlace } from '../../base/random.js';
import { deficits, DESCRIPTIONS_GATE, shrinkInPlace } from './shrinkage.js';
import { ENDS } from './layout.js';
import {
  applyIsotonic,
  expectedCalibrationError,
  fitIsotonic,
  stepProbabilities,
  widestStep,
  type GateData,
} from './gate.js';

/**
 * Held-out plans scored per cross-fitting scheme, at most (the demo set's 3,000 and UltraTool's 3,027 are all scored).
 */
export const MAX_SCORED_PLANS = 9000;

/**
 * Held-out plans scored per scheme for a tool set of `labels` labels: MAX_SCORED_PLANS up to
 * 2,000 labels, fewer beyond, so that scoring (every signal over every label, per step) costs no
 * more than at 2,000 labels: 1,125 plans (about 4,500 steps) at 16,000 tools. Seal-Tools (4,077
 * labels, 490 demonstrations) and the smaller sets score every plan as before.
 */
export function maxScoredPlans(labels: number): number {
  return Math.min(MAX_SCORED_PLANS, Math.round((MAX_SCORED_PLANS * 2000) / Math.max(1, labels)));
}

/** `indices` when there are at most `cap` of them, else a seeded sample of `cap`, in their original order. */
export function scoredSubset(indices: number[], cap: number, seed: number): number[] {
  const keep = Math.floor(cap);
  if (indices.length <= keep) return indices;
  return shuffleInPlace([...indices], seededRandom(seed))
    .slice(0, keep)
    .sort((a, b) => a - b);
}

/**
 * Each held-out step's probabilities under the gate and temperature: the best acceptable label's
 * (the conformal score), the top label's, whether it is acceptable, and where it is. With `counts`
 * (demonstrated steps of each candidate, in the step's candidate order), the probabilities are
 * shrunk toward the descriptions' as at rank time (shrinkage.ts), so thresholds fit what ranks.
 */
export function calibrationScores(
  theta: Float64Array,
  temperature: number,
  data: GateData,
  counts?: (step: number) => ArrayLike<number>,
  unseen = 1,
) {
  const n = data.offsets.length - 1;
  const [best, top, topCorrect, topAt, ranks]: number[][] = [[], [], [], [], []];
  const [S, W] = [data.signals, widestStep(data)];
  const [a, aT, buffer, bufferT, deficitBuffer] = [S, S, W, W, W].map((size) => new Float64Array(size));
  for (let i = 0; i < n; i++) {
    const p = stepProbabilities(theta, data, i, temperature, a, buffer);
    const from = data.offsets[i];
    if (counts) {
      const pT = stepProbabilities(DESCRIPTIONS_GATE, data, i, 1, aT, bufferT);
      let end = -1;
      for (let k = 0; k < p.length && end < 0; k++)
        if (data.values[(data.offsets[i] + k) * data.signals + ENDS] === 1) end = k;
      shrinkInPlace(p, pT, deficits(counts(i), p.length, deficitBuffer), p.length, end, unseen);
    }
    let [b, t, tk] = [0, 0, 0];
    for (let k = 0; k < p.length; k++) {
      if (data.accept[from + k] && p[k] > b) b = p[k];
      if (p[k] > t) [t, tk] = [p[k], k];
    }
    // The best acceptable label's rank (1 = first; ties count against it; none: beyond every candidate).
    let r = 1;
    for (let k = 0; k < p.length; k++) if (!data.accept[from + k] && p[k] >= b) r++;
    ranks.push(b > 0 ? r : p.length + 1);
    best.push(b);
    top.push(t);
    topCorrect.push(data.accept[from + tk]);
    topAt.push(tk);
  }
  return { best, top, topCorrect, topAt, ranks };
}

/** ECE of isotonic calibration, measured by 2-fold cross-validation on the calibration steps. */
export function isotonicEce(top: number[], correct: number[]): number {
  const idx = top.map((_, i) => i);
  const a = idx.filter((i) => i % 2 === 0);
  const b = idx.filter((i) => i % 2 === 1);
  const [mapped, outcome]: number[][] = [[], []];
  const at = (values: number[], steps: number[]) => steps.map((i) => values[i]);
  for (const [fitOn, applyTo] of [
    [a, b],
    [b, a],
  ]) {
    const map = fitIsotonic(at(top, fitOn), at(correct, fitOn));
    for (const i of applyTo) {
      mapped.push(applyIsotonic(map, top[i]));
      outcome.push(correct[i]);
    }
  }
  return expectedCalibrationError(mapped, outcome);
}

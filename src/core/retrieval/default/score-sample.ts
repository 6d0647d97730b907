/**
 * DTDR-G's conformal scores under online learning, in bounded memory and time. Every call of
 * `learn` adds held-out scores; keeping them all makes the model and each call grow without end.
 * Each score list (the two legacy groups and every Mondrian group) is instead a uniform sample of
 * every score it was given — reservoir sampling (Algorithm R) of at most MAX_SAMPLED_SCORES,
 * with a hash of the score's position as the draw, so the same calls give the same model. A
 * uniform sample of exchangeable scores is exchangeable, so its conformal quantile keeps the
 * coverage guarantee (with the sampling error of MAX_SAMPLED_SCORES scores: about ±0.004 at
 * 95 %), through the one threshold function (groups.ts). Only the lists a call touched are sorted
 * again, and typed-array sorts are native.
 * Which scores a learned step adds, where the thresholds were fitted on new tool sequences:
 * sequence-scores.ts.
 */
import { capScores } from './groups.js';

/** Scores kept per list (the fit keeps at most 4,000 per Mondrian group). */
export const MAX_SAMPLED_SCORES = 4000;

/** A deterministic uniform number in [0, 1) from a position and a list's salt. */
function draw(position: number, salt: number): number {
  let x = Math.imul(position ^ 0x9e3779b9, 0x85ebca6b) ^ Math.imul(salt + 1, 0xc2b2ae35);
  x ^= x >>> 16;
  x = Math.imul(x, 0x7feb352d);
  x ^= x >>> 15;
  x = Math.imul(x, 0x846ca68b);
  x ^= x >>> 16;
  return (x >>> 0) / 4294967296;
}

/** A short salt from a list's name, so lists draw different slots. */
const saltOf = (name: string): number => {
  let h = 0;
  for (let i = 0; i < name.length; i++) h = Math.imul(h, 31) + name.charCodeAt(i);
  return h >>> 0;
};

/**
 * Adds `score` to `sample`, a uniform sample of the `seen` scores given before it; returns the new
 * count. A list longer than the cap (saved before this bound) is first thinned to a seeded sample.
 */
export function addSampledScore(
  sample: number[],
  seen: number,
  score: number,
  name: string,
  cap = MAX_SAMPLED_SCORES,
): number {
  if (sample.length > cap) sample.splice(0, sample.length, ...capScores(sample, cap, saltOf(name)));
  if (sample.length < cap) sample.push(score);
  else {
    const slot = Math.floor(draw(seen, saltOf(name)) * (seen + 1));
    if (slot < cap) sample[slot] = score;
  }
  return seen + 1;
}

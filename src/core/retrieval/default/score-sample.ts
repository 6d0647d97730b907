/**
 * DTDR-G's conformal scores under online learning, in bounded memory and time. Every call of
 * `learn` adds held-out scores; keeping them all makes the model and each call grow without end.
 * Each score list (the two legacy groups and every Mondrian group) is instead a uniform sample of
 * every score it was given — reservoir sampling (Algorithm R) of at most MAX_SAMPLED_SCORES,
 * with a hash of the score's position as the draw, so the same calls give the same model. A
 * uniform sample of exchangeable scores is exchangeable, so its conformal quantile keeps the
 * coverage guarantee (with the sampling error of MAX_SAMPLED_SCORES scores: about ±0.004 at
 * 95 %). Only the lists a call touched are sorted again, and typed-array sorts are native.
 *
 * A learned step's score belongs in the lists only when it is exchangeable with the fit's held-out
 * scores. Thresholds fitted on folds by sequence hold out whole tool sequences (data that repeats
 * its sequences: the set must hold the needed tool for a combination no demonstration shows), so
 * only the steps of a sequence the model had not seen are such scores; a repeat, scored by a model
 * that has seen its sequence many times, would raise the thresholds toward what repeats need and
 * lose the guarantee for new combinations. Such models keep their demonstrations' sequences as a
 * bounded set of hashes (`newSequences`).
 */
import { seededRandom, shuffleInPlace } from '../../base/random.js';
import { MIN_SCORES } from './groups.js';

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
  if (sample.length > cap) {
    const kept = shuffleInPlace([...sample], seededRandom(saltOf(name))).slice(0, cap);
    sample.length = 0;
    sample.push(...kept);
  }
  if (sample.length < cap) sample.push(score);
  else {
    const slot = Math.floor(draw(seen, saltOf(name)) * (seen + 1));
    if (slot < cap) sample[slot] = score;
  }
  return seen + 1;
}

/**
 * The split-conformal threshold of `scores` for `target` (as conformalThreshold, by a native sort); 0 below MIN_SCORES
 * scores.
 */
export function sampledThreshold(scores: readonly number[], target: number, minimum = MIN_SCORES): number {
  if (scores.length < minimum) return 0;
  const sorted = Float64Array.from(scores).sort();
  const k = Math.floor((sorted.length + 1) * (1 - target));
  return k < 1 ? 0 : sorted[k - 1];
}

/**
 * Distinct tool sequences a model remembers for its calibration, at most (a sorted list of 31-bit
 * hashes: 256 KB at the cap). Beyond it no sequence is new for certain, and learning leaves the
 * thresholds of a model calibrated by sequence as they are.
 */
export const MAX_SEQUENCES = 65_536;

/** A tool sequence's (`sequenceKey`) 31-bit FNV-1a hash: an int32 section in binary models. */
export function sequenceHash(key: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < key.length; i++) h = Math.imul(h ^ key.charCodeAt(i), 0x01000193);
  return (h >>> 0) & 0x7fffffff;
}

/** The sorted, distinct hashes of the demonstrations' tool sequences, at most `cap` (the first met). */
export function sequenceSet(keys: readonly string[], cap = MAX_SEQUENCES): Uint32Array {
  const set = new Set<number>();
  for (const key of keys) {
    if (set.size >= cap) break;
    set.add(sequenceHash(key));
  }
  return Uint32Array.from(set).sort();
}

/** Whether the sorted `set` holds `hash` (by halving). */
function holds(set: Uint32Array, hash: number): boolean {
  let lo = 0;
  let hi = set.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    if (set[mid] === hash) return true;
    if (set[mid] < hash) lo = mid + 1;
    else hi = mid - 1;
  }
  return false;
}

/**
 * Which of the new demonstrations (their `sequenceKey`s) combine tools in a sequence the model has
 * never seen — the held-out steps of thresholds fitted by sequence — and the set with their
 * sequences joined (the same array when nothing joined). A full set can tell no sequence new.
 */
export function newSequences(
  set: Uint32Array,
  keys: readonly string[],
  cap = MAX_SEQUENCES,
): { isNew: boolean[]; set: Uint32Array } {
  const full = set.length >= cap;
  const hashes = keys.map(sequenceHash);
  const isNew = hashes.map((h) => !full && !holds(set, h));
  const joined = [...new Set(hashes.filter((_, i) => isNew[i]))].slice(0, cap - set.length);
  if (joined.length === 0) return { isNew, set };
  const out = new Uint32Array(set.length + joined.length);
  out.set(set);
  out.set(joined, set.length);
  return { isNew, set: out.sort() };
}

/**
 * Conformal novelty of a request: how its similarity to the nearest demonstration request
 * compares with the demonstrations' own nearest-neighbour similarities (each left out of its own
 * search). The share of demonstrations at least as far from their neighbours is a conformal
 * p-value: under exchangeable requests it is uniform, so a request from a feature the
 * demonstrations never showed (an app whose first runs come from a few features) gets a small one.
 *
 * A bounded, seeded sample of the requests is kept (reservoir), so the model and its cost stay
 * fixed however many demonstrations arrive.
 */
import { seededRandom } from '../../base/random.js';
import { dotAt } from '../kernels/rows.js';
import { numbers, object, int, stateError } from '../../base/validate.js';

/** Requests kept for the novelty score, at most. */
export const NOVELTY_SAMPLE = 128;
/** Below this p-value a request counts as outside the demonstrations: its steps are never confident. */
export const NOVEL_P = 0.05;

export interface Novelty {
  dim: number;
  /** Kept requests, unit vectors, `count` rows of `dim`. */
  rows: Float32Array;
  count: number;
  /** Requests offered to the reservoir so far. */
  seen: number;
  /** Each kept request's similarity to its nearest other kept request, ascending. */
  nearest: Float32Array;
}

export interface NoveltyState {
  rows: number[][];
  seen: number;
}

/** A novelty model with room for NOVELTY_SAMPLE requests, its rows still to fill and its `nearest` to refresh. */
function emptyNovelty(dim: number, count: number, seen: number): Novelty {
  return { dim, rows: new Float32Array(NOVELTY_SAMPLE * dim), count, seen, nearest: new Float32Array(0) };
}

/** Similarity of `q` to its nearest kept request, skipping row `skip`. */
function nearestSimilarity(n: Novelty, q: ArrayLike<number>, qi: number, skip = -1): number {
  let best = -Infinity;
  for (let r = 0; r < n.count; r++) {
    if (r === skip) continue;
    const s = dotAt(n.rows, r * n.dim, q, qi, n.dim);
    if (s > best) best = s;
  }
  return best;
}

function refreshNearest(n: Novelty): void {
  const near = new Float32Array(n.count);
  for (let r = 0; r < n.count; r++) near[r] = nearestSimilarity(n, n.rows, r * n.dim, r);
  n.nearest = near.sort();
}

/** The novelty model of the demonstrations' requests (unit vectors). */
export function fitNovelty(queries: readonly Float32Array[], dim: number, seed = 0): Novelty {
  const n = emptyNovelty(dim, 0, 0);
  offer(n, queries, seed);
  refreshNearest(n);
  return n;
}

/**
 * Reservoir sampling: every request offered so far is kept with the same chance. Returns whether the sample changed.
 */
function offer(n: Novelty, queries: readonly Float32Array[], seed: number): boolean {
  const random = seededRandom(seed + n.seen * 31 + 17);
  let changed = false;
  const kept = keptKeys(n);
  for (const q of queries) {
    const row = q.slice(0, n.dim);
    unitRow(row, 0, n.dim);
    const key = rowKey(row, 0, n.dim);
    // A request already kept (the same words, again) says nothing new of how far requests lie from each other: kept
    // twice, every kept request would have a twin at similarity 1, and any new wording would look unlike them all.
    if (kept.has(key)) continue;
    const replacing = n.count === NOVELTY_SAMPLE;
    const slot = n.count < NOVELTY_SAMPLE ? n.count++ : Math.floor(random() * (n.seen + 1));
    n.seen++;
    if (slot < NOVELTY_SAMPLE) {
      if (replacing) kept.delete(rowKey(n.rows, slot * n.dim, n.dim));
      n.rows.set(row, slot * n.dim);
      kept.add(key);
      changed = true;
    }
  }
  return changed;
}

/** A request vector's key (its float bits, hashed): equal vectors, equal keys. */
function rowKey(v: ArrayLike<number>, at: number, dim: number): number {
  const bits = new Uint32Array(Float32Array.from({ length: dim }, (_, j) => v[at + j]).buffer);
  let h = 0x811c9dc5;
  for (let j = 0; j < dim; j++) h = Math.imul(h ^ bits[j], 0x01000193);
  return h >>> 0;
}

/** The keys of the requests kept. */
const keys = new WeakMap<Novelty, Set<number>>();
function keptKeys(n: Novelty): Set<number> {
  let set = keys.get(n);
  if (!set) {
    set = new Set();
    for (let r = 0; r < n.count; r++) set.add(rowKey(n.rows, r * n.dim, n.dim));
    keys.set(n, set);
  }
  return set;
}

/**
 * Scales a kept request to unit length where it is not (to 1e-3): the similarities assume unit
 * vectors, and a saved model's rows are checked to be within ±1, so a vector from an encoder or an
 * embedding store that is not normalised (`[2, 0, …]`) must not make a model that will not load.
 * Unit vectors, every bundled encoder's, are kept to the bit.
 */
function unitRow(rows: Float32Array, at: number, dim: number): void {
  let norm = 0;
  for (let j = 0; j < dim; j++) norm += rows[at + j] * rows[at + j];
  norm = Math.sqrt(norm);
  if (norm > 0 && Number.isFinite(norm) && Math.abs(norm - 1) > 1e-3)
    for (let j = 0; j < dim; j++) rows[at + j] /= norm;
}

/** New demonstrations' requests join the sample. */
export function learnNovelty(n: Novelty, queries: readonly Float32Array[]): void {
  if (offer(n, queries, 0)) refreshNearest(n);
}

/**
 * The conformal p-value of a request: (1 + kept requests whose nearest-neighbour similarity is at
 * most this request's) / (kept + 1). 1 when fewer than two requests are kept (nothing to compare).
 * Exact below `upTo`; at or above it the answer is only "at least `upTo`": the search stops at the
 * first kept request close enough to prove it (most requests, which are like the demonstrations).
 */
export function noveltyPValue(n: Novelty, q: ArrayLike<number>, upTo = 1): number {
  if (n.count < 2) return 1;
  // p ≥ upTo once `enough` nearest values are ≤ the request's similarity, that is once it reaches nearest[enough − 1].
  const enough = Math.max(1, Math.ceil(upTo * (n.count + 1)) - 1);
  const proof = enough <= n.nearest.length ? n.nearest[enough - 1] : Infinity;
  let s = -Infinity;
  for (let r = 0; r < n.count; r++) {
    const v = dotAt(n.rows, r * n.dim, q, 0, n.dim);
    if (v > s) s = v;
    if (s >= proof) break;
  }
  // nearest is ascending: count the values ≤ s by binary search.
  let lo = 0;
  let hi = n.nearest.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (n.nearest[mid] <= s) lo = mid + 1;
    else hi = mid;
  }
  return (1 + lo) / (n.count + 1);
}

/**
 * Whether a request is unlike every demonstration: farther from the kept requests than each of them is from its
 * nearest (the smallest p-value there is), where that is rarer than NOVEL_P among exchangeable requests (at least
 * 1 / NOVEL_P requests kept). Such a request gets the tools-only answer. Exchangeable requests are flagged with
 * chance 1 / (kept + 1): 0.8% once 128 are kept. A looser level (NOVEL_P) cost UltraTool's full-data MRR 0.026,
 * the share of its familiar requests it flags.
 */
export function unlikeEvery(n: Novelty, pValue: number): boolean {
  return n.count + 1 > 1 / NOVEL_P && pValue * (n.count + 1) < 1.5;
}

export function noveltyState(n: Novelty): NoveltyState {
  return {
    rows: Array.from({ length: n.count }, (_, r) =>
      Array.from(n.rows.subarray(r * n.dim, (r + 1) * n.dim), (v) => +v.toFixed(6)),
    ),
    seen: n.seen,
  };
}

export function noveltyFromState(s: NoveltyState, dim: number): Novelty {
  const n = emptyNovelty(dim, s.rows.length, s.seen);
  s.rows.forEach((row, r) => n.rows.set(row, r * dim));
  refreshNearest(n);
  return n;
}

export function checkNoveltyState(field: string, state: unknown, dim: number): void {
  const s = object(field, state);
  const rows = s.rows;
  if (!Array.isArray(rows) || rows.length > NOVELTY_SAMPLE)
    stateError(`${field}.rows`, `must be an array of at most ${NOVELTY_SAMPLE} vectors`);
  (rows as unknown[]).forEach((row, i) => numbers(`${field}.rows[${i}]`, row, dim, { min: -1.0001, max: 1.0001 }));
  int(`${field}.seen`, s.seen, (rows as unknown[]).length, Number.MAX_SAFE_INTEGER);
}

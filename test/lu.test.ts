import { inverse, Matrix, solve } from 'ml-matrix';
import { describe, expect, it } from 'vitest';
import { luInverse, luSolve } from '../src/core/retrieval/kernels/lu.js';
import { seededRandom } from '../src/core/base/random.js';

/** A random n × m row-major matrix with entries in [-1, 1). */
function randomMatrix(n: number, m: number, random: () => number): Float64Array {
  return Float64Array.from({ length: n * m }, () => 2 * random() - 1);
}

/** XᵀX + λI for a random X: the kind of system the ridge warm start solves. */
function ridgeSystem(n: number, random: () => number): Float64Array {
  const x = randomMatrix(3 * n, n, random);
  const a = new Float64Array(n * n);
  for (let r = 0; r < 3 * n; r++)
    for (let i = 0; i < n; i++) for (let j = 0; j < n; j++) a[i * n + j] += x[r * n + i] * x[r * n + j];
  for (let i = 0; i < n; i++) a[i * n + i] += 0.1;
  return a;
}

const toMatrix = (a: Float64Array, n: number, m: number) => Matrix.from1DArray(n, m, Array.from(a));

describe('luSolve: LU with partial pivoting, bit for bit what ml-matrix computes', () => {
  it('solves a 2 × 2 system by hand: [[2, 1], [1, 3]]·x = [3, 5] → x = [0.8, 1.4]', () => {
    const x = luSolve(Float64Array.of(2, 1, 1, 3), 2, Float64Array.of(3, 5), 1);
    expect(x[0]).toBeCloseTo(0.8, 12);
    expect(x[1]).toBeCloseTo(1.4, 12);
  });

  it('pivots: a zero in the first diagonal place is no problem', () => {
    const x = luSolve(Float64Array.of(0, 1, 1, 0), 2, Float64Array.of(7, 9), 1);
    expect(Array.from(x)).toEqual([9, 7]);
  });

  it('equals ml-matrix solve() and inverse() exactly on ridge systems and general matrices', () => {
    const random = seededRandom(11);
    for (const [n, m] of [
      [1, 1],
      [5, 3],
      [17, 40],
      [101, 7],
    ]) {
      for (const a of [ridgeSystem(n, random), randomMatrix(n, n, random)]) {
        const b = randomMatrix(n, m, random);
        expect(Array.from(luSolve(a, n, b, m))).toEqual(solve(toMatrix(a, n, n), toMatrix(b, n, m)).to1DArray());
        expect(Array.from(luInverse(a, n))).toEqual(inverse(toMatrix(a, n, n)).to1DArray());
      }
    }
  });

  it('refuses a singular system with a DtdrError, not a wrong answer', () => {
    expect(() => luSolve(Float64Array.of(1, 2, 2, 4), 2, Float64Array.of(1, 1), 1)).toThrow(/singular/);
  });
});

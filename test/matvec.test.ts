/**
 * The float32 matrix × vector kernel: the WebAssembly SIMD version and its plain-JS twin (used
 * where an engine has no WebAssembly) give the same bits, so a model ranks identically everywhere.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { expSum, gateKernel, packMatrix } from '../src/core/retrieval/kernels/matvec.js';
import { usesWasmKernel } from '../src/core/retrieval/kernels/wasm-kernel.js';
import { gramRows, oneHotRows, sampledProducts, symmetricAccumulator } from '../src/core/retrieval/kernels/training.js';
import { dotAt } from '../src/core/retrieval/kernels/rows.js';
import { decodeBase64 } from '../src/core/retrieval/kernels/base64.js';

describe('decodeBase64 (the kernel ships as base64)', () => {
  it('decodes as Node does, at every padding, skipping whitespace', () => {
    expect([...decodeBase64('TWFu')]).toEqual([77, 97, 110]);
    expect([...decodeBase64('TWE=')]).toEqual([77, 97]);
    expect([...decodeBase64('TQ==\n')]).toEqual([77]);
    expect(() => decodeBase64('TW-u')).toThrow(/not base64: "-" at 2/);
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 300 }), (bytes) => {
        const text = Buffer.from(bytes).toString('base64');
        return Buffer.from(decodeBase64(text)).equals(Buffer.from(bytes));
      }),
    );
  });
});

describe('packMatrix', () => {
  it('runs on WebAssembly in Node', () => {
    expect(usesWasmKernel()).toBe(true);
  });

  it('WebAssembly and the JS twin agree bit for bit, and both are the float32 dot product (1,000 random cases)', () => {
    const float = fc.float({ min: -4, max: 4, noNaN: true, noDefaultInfinity: true });
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 9 }),
        fc.integer({ min: 1, max: 23 }),
        fc.array(float, { minLength: 9 * 23, maxLength: 9 * 23 }),
        fc.array(float, { minLength: 23, maxLength: 23 }),
        (rows, dim, values, v) => {
          const a = new Float32Array(rows);
          const b = new Float32Array(rows);
          packMatrix(values, rows, dim).times(v, a);
          packMatrix(values, rows, dim, true).times(v, b);
          for (let r = 0; r < rows; r++) {
            if (!Object.is(a[r], b[r])) return false;
            let exact = 0;
            for (let j = 0; j < dim; j++) exact += Math.fround(values[r * dim + j]) * Math.fround(v[j]);
            if (Math.abs(a[r] - exact) > 1e-4 * (1 + Math.abs(exact))) return false;
          }
          return true;
        },
      ),
      { numRuns: 1000, seed: 11 },
    );
  });

  it('keeps separate matrices apart', () => {
    const m1 = packMatrix([1, 0, 0, 1], 2, 2);
    const m2 = packMatrix([2, 2, 3, 3], 2, 2);
    const out = new Float64Array(2);
    m1.times([5, 7], out);
    expect(Array.from(out)).toEqual([5, 7]);
    m2.times([1, 1], out);
    expect(Array.from(out)).toEqual([4, 6]);
    m1.times([1, 2], out);
    expect(Array.from(out)).toEqual([1, 2]);
  });
});

describe('topByScore: the first k of the full order, without sorting everything', () => {
  it('equals the prefix of orderByScore, ties and tie-breaks included (2,000 random cases)', async () => {
    const { orderByScore, topByScore } = await import('../src/core/retrieval/ranking.js');
    const value = fc.oneof(
      fc.constantFrom(0, 0.5, 1, 1e-13, 0.25),
      fc.double({ min: 0, max: 1, noNaN: true }),
      fc.double({ min: -3, max: 3, noNaN: true }),
    );
    fc.assert(
      fc.property(
        fc.array(value, { minLength: 1, maxLength: 60 }),
        fc.integer({ min: 1, max: 15 }),
        fc.boolean(),
        (scores, k, useTie) => {
          const tie = useTie ? scores.map((_, i) => (i * 7) % 5) : undefined;
          const full = Array.from(orderByScore(scores, tie)).slice(0, k);
          return JSON.stringify(Array.from(topByScore(scores, k, tie))) === JSON.stringify(full);
        },
      ),
      { numRuns: 2000, seed: 12 },
    );
  });
});

describe('expSum: the softmax exponentials, the same bits on every engine', () => {
  const ulps = (a: number, b: number) =>
    b === 0 ? (a === 0 ? 0 : Infinity) : Math.abs(a - b) / (Math.abs(b) * 2 ** -52);

  it('WebAssembly and the JS twin agree bit for bit, outputs and sum, within 3 ulp of Math.exp (500 random vectors)', () => {
    const value = fc.oneof(
      fc.double({ min: -40, max: 0, noNaN: true }),
      fc.double({ min: -800, max: 0, noNaN: true }),
      fc.constantFrom(0, -0, -1e-300, -708.5, -745.2, -1000, -1e9),
    );
    fc.assert(
      fc.property(
        fc.array(value, { minLength: 1, maxLength: 41 }),
        fc.constantFrom(1, 1 / 0.7, 2.5),
        (values, scale) => {
          const n = values.length;
          const wasm = expSum(48, 1);
          const js = expSum(48, 1, true);
          wasm.inputs[0].set(values);
          js.inputs[0].set(values);
          const shift = Math.max(...values);
          const sum = wasm.run(0, n, shift, scale);
          if (!Object.is(sum, js.run(0, n, shift, scale))) return false;
          let even = 0;
          let odd = 0;
          for (let i = 0; i < n; i++) {
            if (!Object.is(wasm.output[i], js.output[i])) return false;
            const exact = Math.exp((values[i] - shift) * scale);
            if (exact > 1e-300 && ulps(wasm.output[i], exact) > 3) return false;
            if (i % 2 === 0) even += wasm.output[i];
            else odd += wasm.output[i];
          }
          return sum === even + odd;
        },
      ),
      { numRuns: 500, seed: 13 },
    );
  });

  it('is exact where a softmax needs it: exp(0) = 1, far below 0 gives 0, an odd length pads with nothing', () => {
    for (const jsOnly of [false, true]) {
      const e = expSum(3, 1, jsOnly);
      e.inputs[0].set([5, 5 - 2000, 5 - 1]);
      const sum = e.run(0, 3, 5, 1);
      expect(Array.from(e.output)).toEqual([1, 0, expect.closeTo(Math.exp(-1), 15)]);
      expect(sum).toBe(1 + e.output[2]);
    }
  });
});

describe("gateKernel: DTDR-G's per-step passes, the same bits on every engine", () => {
  // Values with full mantissas (fast-check's own doubles lean to edge cases, where sums round exactly).
  const float = fc.oneof(
    { arbitrary: fc.integer({ min: -(2 ** 30), max: 2 ** 30 }).map((i) => Math.fround(i / 2 ** 25)), weight: 9 },
    { arbitrary: fc.constantFrom(0, -0, Math.log(1e-3), -12), weight: 1 },
  );
  const weight = fc.oneof(
    { arbitrary: fc.integer({ min: -(2 ** 31), max: 2 ** 31 - 1 }).map((i) => (i / 2 ** 28) * Math.SQRT2), weight: 9 },
    { arbitrary: fc.constant(0), weight: 1 },
  );

  it('WebAssembly and the JS twin agree bit for bit: the eight-signal sum, its max, the clipped log-probabilities, the division (400 random steps, odd and even label counts)', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 23 }),
        fc.array(float, { minLength: 11 * 23, maxLength: 11 * 23 }),
        fc.array(weight, { minLength: 8, maxLength: 8 }),
        fc.double({ min: -5, max: 40, noNaN: true }),
        (labels, values, a, shift) => {
          const kernels = [gateKernel(labels, 11, 2), gateKernel(labels, 11, 2, true)];
          const best: number[] = [];
          for (const k of kernels) {
            k.x.set(values.slice(0, 11 * labels));
            k.inputs[1].set(values.slice(0, labels).map((v) => 2 * v));
            k.combine(a, 0);
            k.logClip(1, shift, 7);
            // Quotients with ties (ulp-close values), so the first of equal ones must win.
            k.output.set(
              values
                .slice(labels, 2 * labels)
                .map((v, f) => (f % 3 === 2 ? Math.abs(values[labels + f - 1]) : Math.abs(v))),
            );
            best.push(k.divide(labels, 3.7));
          }
          const [w, j] = kernels;
          // The division's best label: the first of the largest quotients, as a scan over them finds it.
          let scan = 0;
          for (let f = 1; f < labels; f++) if (j.output[f] > j.output[scan]) scan = f;
          if (best[0] !== scan || best[1] !== scan) return false;
          const same = (p: ArrayLike<number>, q: ArrayLike<number>) =>
            Array.from(p).every((v, i) => Object.is(v, q[i]));
          if (!same(w.inputs[0], j.inputs[0]) || !same(w.x, j.x) || !same(w.output, j.output)) return false;
          if (!Object.is(w.max(0, labels), j.max(0, labels))) return false;
          // The sum is the JS expression, term by term in signal order.
          for (let f = 0; f < labels; f++) {
            let z = 0;
            for (let s = 0; s < 8; s++) z += a[s] * Math.fround(values[s * labels + f]);
            if (!Object.is(z === 0 ? 0 : z, j.inputs[0][f] === 0 ? 0 : j.inputs[0][f])) return false;
          }
          return true;
        },
      ),
      { numRuns: 400, seed: 17 },
    );
  });

  it('the history-aware embedding row: WebAssembly and the JS twin agree bit for bit with the JS expression, write exactly their row, and take more rows than the kernel holds (300 random steps)', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 23 }),
        fc.integer({ min: 0, max: 10 }),
        fc.array(float, { minLength: 11 * 23, maxLength: 11 * 23 }),
        fc.array(weight, { minLength: 11, maxLength: 11 }),
        (labels, m, values, g) => {
          const rows = Array.from({ length: m }, (_, j) =>
            Float32Array.from(values.slice(((j % 7) + 4) * labels, ((j % 7) + 5) * labels)),
          );
          const scale = Math.abs(g[10]) + 0.5;
          const n = Math.max(1, labels - 1); // the tools: END's entry is left alone
          const kernels = [gateKernel(labels, 11, 2), gateKernel(labels, 11, 2, true)];
          for (const k of kernels) {
            k.x.set(values.slice(0, 11 * labels));
            k.residual(2, 3, rows, g, scale, n);
          }
          const [w, j] = kernels;
          if (!Array.from(w.x).every((v, i) => Object.is(v, j.x[i]))) return false;
          for (let f = 0; f < labels; f++) {
            let r = Math.fround(values[2 * labels + f]);
            for (let i = 0; i < m; i++) r -= g[i] * rows[i][f];
            const expected = f < n ? Math.fround(r * scale) : Math.fround(values[3 * labels + f]);
            if (!Object.is(j.x[3 * labels + f], expected)) return false;
          }
          return true;
        },
      ),
      { numRuns: 300, seed: 19 },
    );
  });

  it('the history-aware embedding row keeps the rows it was given last: the same rows again, in another order or fewer give what the JS twin gives', () => {
    const labels = 9;
    const row = (seed: number) => Float32Array.from({ length: labels - 1 }, (_, f) => Math.sin(seed * 7 + f) / 3);
    const [r0, r1, r2] = [row(1), row(2), row(3)];
    const w = gateKernel(labels, 11, 2);
    const j = gateKernel(labels, 11, 2, true);
    for (const k of [w, j]) k.x.set(Array.from({ length: 11 * labels }, (_, i) => Math.fround(Math.cos(i))));
    for (const [rows, g] of [
      [[r0], [0.5]],
      [
        [r0, r1],
        [0.5, -0.25],
      ],
      [
        [r1, r0, r2],
        [0.3, 0.1, -2],
      ],
      [[r2], [1.5]],
      [[r2], [1.5]],
    ] as const) {
      w.residual(2, 3, rows, g, 1.25, labels - 1);
      j.residual(2, 3, rows, g, 1.25, labels - 1);
      expect(Array.from(w.x)).toEqual(Array.from(j.x));
    }
  });

  it('clips at −12 and writes exactly its row, leaving the next row alone (odd label count)', () => {
    for (const jsOnly of [false, true]) {
      const k = gateKernel(3, 11, 2, jsOnly);
      k.x.fill(7);
      k.inputs[1].set([0, -20, -1]);
      k.logClip(1, 0.5, 7);
      expect(Array.from(k.x.subarray(21, 24))).toEqual([-0.5, -12, -1.5]);
      expect(k.x[24]).toBe(7);
      expect(k.x[20]).toBe(7);
      k.inputs[0].set([1, 3, 3]);
      expect(k.max(0, 3)).toBe(3);
    }
  });
});

describe('symmetricAccumulator: XᵀX for the ridge start, the same bits on every engine', () => {
  it('WebAssembly and the JS twin agree bit for bit, and both are XᵀX on and above the diagonal (300 random row sets, zeros included)', () => {
    const value = fc.oneof(fc.constant(0), fc.double({ min: -5, max: 5, noNaN: true }));
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 13 }),
        fc.array(fc.array(value, { minLength: 13, maxLength: 13 }), { minLength: 1, maxLength: 6 }),
        (n, rows) => {
          const [wasm, js] = [symmetricAccumulator(n), symmetricAccumulator(n, true)];
          for (const row of rows) {
            for (const acc of [wasm, js]) {
              for (let i = 0; i < n; i++) acc.x[i] = row[i];
              acc.add();
            }
          }
          for (let i = 0; i < n; i++) {
            for (let j = 0; j < n; j++) {
              if (!Object.is(wasm.sums[i * n + j], js.sums[i * n + j])) return false;
              let want = 0;
              if (j >= i) for (const row of rows) if (row[i] !== 0) want += row[i] * row[j];
              if (!Object.is(js.sums[i * n + j], want)) return false;
            }
          }
          return true;
        },
      ),
      { numRuns: 300, seed: 13 },
    );
  });
});

describe("sampledProducts: the sampled softmax's products, the same bits on every engine", () => {
  it('WebAssembly and the JS twin agree bit for bit on the logits and the gradient (300 random batches, feature counts 1–11)', () => {
    const value = fc.double({ min: -3, max: 3, noNaN: true });
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 11 }),
        fc.array(value, { minLength: 3 * 11 + 5 * 11, maxLength: 3 * 11 + 5 * 11 }),
        fc.array(fc.integer({ min: 0, max: 4 }), { minLength: 1, maxLength: 5 }),
        fc.integer({ min: 0, max: 5 }),
        value,
        (dim, values, labels, positives, correction) => {
          const cand = [...new Set(labels)];
          const [wasm, js] = [sampledProducts(3, dim, 5), sampledProducts(3, dim, 5, true)];
          for (const p of [wasm, js]) {
            for (let i = 0; i < 3 * dim; i++) p.X[i] = values[i];
            for (let i = 0; i < 5 * dim; i++) p.W[i] = values[3 * 11 + i];
            cand.forEach((c, k) => (p.cand[k] = c));
          }
          for (let row = 0; row < 3; row++) {
            wasm.dots(row, cand.length, positives, correction);
            js.dots(row, cand.length, positives, correction);
            for (let k = 0; k < cand.length; k++) {
              if (!Object.is(wasm.z[k], js.z[k])) return false;
              // a zero gradient entry is skipped by both
              if (k === row) wasm.z[k] = js.z[k] = 0;
            }
            wasm.accumulate(row, cand.length);
            js.accumulate(row, cand.length);
          }
          for (let i = 0; i < 5 * dim; i++) if (!Object.is(wasm.G[i], js.G[i])) return false;
          // the JS twin's logits are the dot products (plus the correction past the positives)
          js.dots(0, cand.length, positives, correction);
          return cand.every((c, k) => {
            let dot = 0;
            for (let d = 0; d < dim; d++) dot += js.W[c * dim + d] * js.X[d];
            return Math.abs(js.z[k] - dot - (k < positives ? 0 : correction)) <= 1e-9 * (1 + Math.abs(dot));
          });
        },
      ),
      { numRuns: 300, seed: 14 },
    );
  });
});

describe('gramRows: similarity rows, the same bits on every engine', () => {
  it('WebAssembly, the JS twin and float32(dotAt) agree bit for bit (300 random vector sets, dimensions 1–13)', () => {
    const float = fc.float({ min: -4, max: 4, noNaN: true, noDefaultInfinity: true });
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 7 }),
        fc.integer({ min: 1, max: 13 }),
        fc.array(float, { minLength: 7 * 13, maxLength: 7 * 13 }),
        (rows, dim, values) => {
          const v = Float32Array.from(values.slice(0, rows * dim));
          const [wasm, js] = [gramRows(v, rows, dim), gramRows(v, rows, dim, true)];
          for (let c = 0; c < rows; c++) {
            const [a, b] = [wasm.row(c), js.row(c)];
            for (let f = 0; f < rows; f++) {
              if (!Object.is(a[f], b[f])) return false;
              if (!Object.is(a[f], Math.fround(dotAt(v, c * dim, v, f * dim, dim)))) return false;
            }
          }
          return true;
        },
      ),
      { numRuns: 300, seed: 15 },
    );
  });
});

describe("oneHotRows: a full-softmax head's one-hot rows and their Adam steps, the same bits on every engine", () => {
  it('WebAssembly and the JS twin agree bit for bit over random steps (odd and even widths), and the kernel does what the twin says', () => {
    const value = fc.double({ min: -3, max: 3, noNaN: true });
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 4 }),
        fc.integer({ min: 1, max: 9 }),
        fc.array(fc.tuple(fc.nat(), fc.array(value, { minLength: 9, maxLength: 9 })), { minLength: 1, maxLength: 8 }),
        fc.array(value, { minLength: 36, maxLength: 36 }),
        (rows, n, steps, start) => {
          const [wasm, js] = [oneHotRows(rows, n), oneHotRows(rows, n, true)];
          for (const h of [wasm, js]) for (let k = 0; k < rows * n; k++) h.E[k] = start[k];
          let step = 0;
          for (const [pick, logits] of steps) {
            const row = pick % rows;
            step++;
            const lr = (0.01 * Math.sqrt(1 - 0.999 ** step)) / (1 - 0.9 ** step);
            for (const h of [wasm, js]) {
              for (let c = 0; c < n; c++) h.p[c] = logits[c];
              h.addToLogits(row);
              h.addToGradient(row);
              h.addToGradient((row + 1) % rows);
              h.adamRow(row, 1 / 3, 1e-5, lr, 0.9, 0.999, 1e-8);
            }
            // p = logits + E[row] (before the step), one sum per entry.
            for (let c = 0; c < n; c++) if (!Object.is(wasm.p[c], js.p[c])) return false;
          }
          for (const key of ['E', 'mE', 'vE', 'gE'] as const)
            for (let k = 0; k < rows * n; k++) if (!Object.is(wasm[key][k], js[key][k])) return false;
          return true;
        },
      ),
      { numRuns: 300, seed: 23 },
    );
  });
});

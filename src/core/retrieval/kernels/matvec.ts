/**
 * The inner loops of ranking: matrix × vector in float32 (cluster lookups, description
 * similarities, linear heads) and the softmax's exponentials over every label. A WebAssembly SIMD
 * kernel (f32x4 / f64x2; the product is ~10× the scalar JS loop on this machine, the exponentials
 * ~1.8× Math.exp) where the engine has WebAssembly, and a plain-JS twin elsewhere (Hermes,
 * QuickJS) that performs the kernel's operations in its order — so both give the same bits, and a
 * model ranks identically on every engine.
 */
import { MATVEC_WASM } from './matvec-wasm.js';
import { DtdrError } from '../../base/errors.js';

/**
 * Copies `v` into `last` unless it already holds the same values, and says whether it changed:
 * products kept for the last input (every step of a plan has the same request) are recomputed
 * only when it did. `last` starts as NaNs, which equal nothing.
 */
export function replaceIfChanged(last: Float64Array, v: ArrayLike<number>): boolean {
  let same = true;
  for (let j = 0; j < last.length && same; j++) same = last[j] === v[j];
  if (same) return false;
  for (let j = 0; j < last.length; j++) last[j] = v[j];
  return true;
}

/** A matrix of `rows` × `dim` float32 values, ready for products with vectors of length `dim`. */
export interface PackedMatrix {
  readonly rows: number;
  readonly dim: number;
  /** out[k] = Σ_j M[k, j] · v[j] (float32 arithmetic, 4 interleaved partial sums). */
  times(v: ArrayLike<number>, out: Float32Array | Float64Array): void;
  /** Replaces the matrix with the transpose of `source` (dim × rows, row-major): M[k, j] = source[j·rows + k]. */
  setTransposed(source: ArrayLike<number>): void;
}

function fillTransposed(m: Float32Array, source: ArrayLike<number>, rows: number, dim: number, width: number): void {
  for (let j = 0; j < dim; j++) {
    const from = j * rows;
    for (let k = 0; k < rows; k++) m[k * width + j] = source[from + k];
  }
}

interface Kernel {
  matvec(rows: number, q: number, n: number, d: number, out: number): void;
  outer(g: number, x: number, p: number, rows: number, cols: number): void;
  expsum(x: number, out: number, n: number, shift: number, scale: number): number;
  combine8(x: number, stride: number, a: number, z: number, n: number): void;
  maxf64(x: number, n: number): number;
  logclip(x: number, n: number, shift: number, out: number): void;
  divide(x: number, n: number, by: number): void;
  sampleddots(w: number, x: number, dim: number, cand: number, m: number, z: number, positives: number, correction: number): void;
  sampledaxpy(g: number, x: number, dim: number, cand: number, m: number, z: number): void;
  syrupper(a: number, x: number, n: number): void;
  gramrow(v: number, c: number, n: number, d: number, out: number): void;
}

let compiled: WebAssembly.Module | null | undefined;

/** The compiled kernel module, or null where WebAssembly (with SIMD) is not available. */
function kernelModule(): WebAssembly.Module | null {
  if (compiled !== undefined) return compiled;
  try {
    const wasm = (globalThis as { WebAssembly?: typeof WebAssembly }).WebAssembly;
    compiled = wasm && wasm.validate(MATVEC_WASM) ? new wasm.Module(MATVEC_WASM) : null;
  } catch {
    compiled = null; // compiling refused (e.g. a strict CSP): the JS twin is used
  }
  return compiled;
}

/** Whether ranking runs on the WebAssembly kernel here (for benchmarks and diagnostics). */
export function usesWasmKernel(): boolean {
  return kernelModule() !== null;
}

/**
 * One small kernel instance with its own memory of `bytes`: freed with whatever holds it (a
 * model's matrix, a head's gradient), so there is no shared heap to manage.
 */
function instantiate(module: WebAssembly.Module, bytes: number): { kernel: Kernel; buffer: ArrayBuffer } {
  const memory = new WebAssembly.Memory({ initial: Math.max(1, Math.ceil(bytes / 65536)) });
  return { kernel: new WebAssembly.Instance(module, { env: { memory } }).exports as unknown as Kernel, buffer: memory.buffer };
}

/** Copies `rows` × `dim` row-major values into rows of `width` (≥ dim) floats. */
function fillRows(m: Float32Array, values: ArrayLike<number>, rows: number, dim: number, width: number): void {
  for (let r = 0; r < rows; r++) for (let j = 0; j < dim; j++) m[r * width + j] = values[r * dim + j];
}

/** Rows padded to a multiple of 4 columns, so the kernel needs no remainder loop. */
const padded = (dim: number) => Math.ceil(dim / 4) * 4;

/** Packs `rows` × `dim` values (row-major) for fast products; `jsOnly` forces the JS twin (tests). */
export function packMatrix(values: ArrayLike<number>, rows: number, dim: number, jsOnly = false): PackedMatrix {
  const width = padded(dim);
  const module = jsOnly ? null : kernelModule();
  if (module) {
    // Memory: the matrix, then one query, then one output.
    const q = rows * width * 4;
    const o = q + width * 4;
    const { kernel: k, buffer } = instantiate(module, o + rows * 4);
    const m = new Float32Array(buffer, 0, rows * width);
    fillRows(m, values, rows, dim, width);
    const qv = new Float32Array(buffer, q, width);
    const ov = new Float32Array(buffer, o, rows);
    return {
      rows,
      dim,
      times(v, out) {
        for (let j = 0; j < dim; j++) qv[j] = v[j];
        k.matvec(0, q, rows, width, o);
        for (let r = 0; r < rows; r++) out[r] = ov[r];
      },
      setTransposed(source) {
        fillTransposed(m, source, rows, dim, width);
      },
    };
  }
  const m = new Float32Array(rows * width);
  fillRows(m, values, rows, dim, width);
  const q = new Float32Array(width);
  const f = Math.fround;
  return {
    rows,
    dim,
    times(v, out) {
      for (let j = 0; j < dim; j++) q[j] = v[j];
      for (let r = 0; r < rows; r++) {
        const at = r * width;
        let a0 = 0;
        let a1 = 0;
        let a2 = 0;
        let a3 = 0;
        for (let j = 0; j < width; j += 4) {
          a0 = f(a0 + f(m[at + j] * q[j]));
          a1 = f(a1 + f(m[at + j + 1] * q[j + 1]));
          a2 = f(a2 + f(m[at + j + 2] * q[j + 2]));
          a3 = f(a3 + f(m[at + j + 3] * q[j + 3]));
        }
        out[r] = f(f(a0 + a1) + f(a2 + a3));
      }
    },
    setTransposed(source) {
      fillTransposed(m, source, rows, dim, width);
    },
  };
}

/** A rows × cols float32 gradient that accumulates rank-1 updates g += x·pᵀ (the kernel's `outer`). */
export interface OuterAccumulator {
  /** The accumulated matrix, row-major with rows padded to a multiple of 4 columns (`stride`). */
  readonly grad: Float32Array;
  readonly stride: number;
  add(x: ArrayLike<number>, p: ArrayLike<number>): void;
  clear(): void;
}

export function outerAccumulator(rows: number, cols: number, jsOnly = false): OuterAccumulator {
  const stride = padded(cols);
  const module = jsOnly ? null : kernelModule();
  if (module) {
    // Memory: the gradient, then one x, then one p.
    const xAt = rows * stride * 4;
    const pAt = xAt + padded(rows) * 4;
    const { kernel: k, buffer } = instantiate(module, pAt + stride * 4);
    const grad = new Float32Array(buffer, 0, rows * stride);
    const xv = new Float32Array(buffer, xAt, rows);
    const pv = new Float32Array(buffer, pAt, stride);
    return {
      grad,
      stride,
      add(x, p) {
        for (let r = 0; r < rows; r++) xv[r] = x[r];
        for (let c = 0; c < cols; c++) pv[c] = p[c];
        k.outer(0, xAt, pAt, rows, stride);
      },
      clear: () => grad.fill(0),
    };
  }
  const grad = new Float32Array(rows * stride);
  const f = Math.fround;
  return {
    grad,
    stride,
    add(x, p) {
      for (let r = 0; r < rows; r++) {
        const xr = f(x[r]);
        const at = r * stride;
        for (let c = 0; c < cols; c++) grad[at + c] = f(grad[at + c] + f(xr * f(p[c])));
      }
    },
    clear: () => grad.fill(0),
  };
}

/**
 * exp((x − shift)·scale) over a vector, and its sum: the softmax over every label, which at
 * thousands of labels costs more than the scores themselves with Math.exp. The kernel (f64x2)
 * and its JS twin compute the same bits: t clamped at −1000, k = nearest(t·log2 e), r = t − k·ln 2
 * in two parts (Cody–Waite), exp(r) by its degree-12 Taylor polynomial in Estrin's scheme, scaled
 * by 2^⌊k/2⌋·2^(k−⌊k/2⌋): within 2 ulp of the exact value for t ≤ 0 (a softmax's), and the same
 * on every engine, where Math.exp is not.
 */
export interface ExpSum {
  /** Vectors of `length` doubles in the kernel's memory: the ones `run` reads. */
  readonly inputs: readonly Float64Array[];
  /** Where `run` writes, `length` doubles. */
  readonly output: Float64Array;
  /** output[i] = exp((inputs[which][i] − shift)·scale) for i < n (values ≤ shift); returns their sum (even and odd i summed apart, then added). */
  run(which: number, n: number, shift: number, scale: number): number;
}

/** The exponentials alone: the exp part of a gate kernel (one memory layout and one twin for both). */
export function expSum(length: number, inputs: number, jsOnly = false): ExpSum {
  return gateKernel(length, 8, inputs, jsOnly);
}

/**
 * DTDR-G's per-step passes over every label, beside the softmax exponentials: the gate's dense sum
 * of eight signal rows, its max, the head's clipped log-probabilities and the final division.
 * The signal matrix and the vectors live in the kernel's memory; the kernel (f64x2) and the JS
 * twin compute the same bits (the same operations in the same order, no fused multiply-add).
 */
export interface GateKernel extends ExpSum {
  /** The signal-major matrix, `signals` rows of `labels` floats. */
  readonly x: Float32Array;
  /** inputs[which][f] = 0 + Σ_{s<8} a[s]·x[s·labels + f] for every label (rows 0–7 of x). */
  combine(a: ArrayLike<number>, which: number): void;
  /** The largest of inputs[which][0 .. n), the first of equal ones. */
  max(which: number, n: number): number;
  /** x[row·labels + f] = max(−12, inputs[which][f] − shift) for every label. */
  logClip(which: number, shift: number, row: number): void;
  /** output[i] /= by for i < n. */
  divide(n: number, by: number): void;
}

export function gateKernel(labels: number, signals: number, inputs: number, jsOnly = false): GateKernel {
  if (signals < 8) throw new DtdrError('options', 'the gate kernel sums eight signal rows');
  const slot = (labels + 2) & ~1;
  const module = jsOnly ? null : kernelModule();
  if (module) {
    // Memory: x (f32, padded to 16 bytes), then the f64 inputs and the output, then 8 weights.
    const xBytes = Math.ceil((signals * labels * 4) / 16) * 16;
    const weights = xBytes + (inputs + 1) * slot * 8;
    const { kernel: k, buffer } = instantiate(module, weights + 64);
    const views = Array.from({ length: inputs }, (_, i) => new Float64Array(buffer, xBytes + i * slot * 8, slot));
    const out = xBytes + inputs * slot * 8;
    const a = new Float64Array(buffer, weights, 8);
    const at = (which: number) => xBytes + which * slot * 8;
    return {
      x: new Float32Array(buffer, 0, signals * labels),
      inputs: views.map((v) => v.subarray(0, labels)),
      output: new Float64Array(buffer, out, labels),
      run(which, n, shift, scale) {
        views[which][n] = -Infinity; // the pad of an odd n contributes exp(−∞) = 0
        return k.expsum(at(which), out, n, shift, scale);
      },
      combine(weights8, which) {
        for (let s = 0; s < 8; s++) a[s] = weights8[s];
        k.combine8(0, labels, weights, at(which), labels);
      },
      max(which, n) {
        views[which][n] = -Infinity;
        return k.maxf64(at(which), n);
      },
      logClip(which, shift, row) {
        k.logclip(at(which), labels, shift, row * labels * 4);
      },
      divide(n, by) {
        k.divide(out, n, by);
      },
    };
  }
  const x = new Float32Array(signals * labels);
  const ins = Array.from({ length: inputs }, () => new Float64Array(labels));
  const output = new Float64Array(labels);
  const exp = expSumOver(ins, output);
  return {
    x,
    inputs: ins,
    output,
    run: exp,
    combine(a, which) {
      const z = ins[which];
      const a0 = a[0], a1 = a[1], a2 = a[2], a3 = a[3], a4 = a[4], a5 = a[5], a6 = a[6], a7 = a[7];
      const L = labels;
      for (let f = 0; f < L; f++) {
        z[f] = 0 + a0 * x[f] + a1 * x[L + f] + a2 * x[2 * L + f] + a3 * x[3 * L + f] + a4 * x[4 * L + f] + a5 * x[5 * L + f] + a6 * x[6 * L + f] + a7 * x[7 * L + f];
      }
    },
    max(which, n) {
      const z = ins[which];
      let max = -Infinity;
      for (let f = 0; f < n; f++) if (z[f] > max) max = z[f];
      return max;
    },
    logClip(which, shift, row) {
      const z = ins[which];
      const from = row * labels;
      for (let f = 0; f < labels; f++) x[from + f] = Math.max(-12, z[f] - shift);
    },
    divide(n, by) {
      for (let i = 0; i < n; i++) output[i] /= by;
    },
  };
}

/** The JS twin of the exp kernel over `inputs`, writing `output`. */
function expSumOver(inputs: Float64Array[], output: Float64Array): ExpSum['run'] {
  return (which, n, shift, scale) => {
    const x = inputs[which];
    let even = 0;
    let odd = 0;
    for (let i = 0; i < n; i++) {
      const e = (output[i] = expTwin((x[i] - shift) * scale));
      if (i % 2 === 0) even += e;
      else odd += e;
    }
    return even + odd;
  };
}

const LOG2E = 1.4426950408889634;
const LN2_HI = 0.6931471803691238; // ln 2's leading bits: k·LN2_HI is exact for the k here
const LN2_LO = 1.9082149292705877e-10;
const TIES_EVEN = 6755399441055744; // 1.5·2^52: x + it − it rounds x to the nearest integer, ties to even
/** 1/n! for n = 2 … 12 (C[n]). */
const C = [1, 1, 1 / 2, 1 / 6, 1 / 24, 1 / 120, 1 / 720, 1 / 5040, 1 / 40320, 1 / 362880, 1 / 3628800, 1 / 39916800, 1 / 479001600];
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

/**
 * XᵀX of rows added one at a time, upper triangle only (the ridge start of the linear heads):
 * sums[i·n + j] += x[i]·x[j] for j ≥ i where x[i] ≠ 0, in f64. The kernel (f64x2) and the JS twin
 * do the same products and sums in the same order per entry, so both give the same bits.
 */
export interface SymmetricAccumulator {
  /** The row to add next; fill it, then call `add`. */
  readonly x: Float64Array;
  /** n × n, row-major; only j ≥ i is summed. */
  readonly sums: Float64Array;
  add(): void;
}

export function symmetricAccumulator(n: number, jsOnly = false): SymmetricAccumulator {
  const module = jsOnly ? null : kernelModule();
  if (module) {
    const { kernel: k, buffer } = instantiate(module, (n * n + n) * 8);
    const sums = new Float64Array(buffer, 0, n * n);
    const x = new Float64Array(buffer, n * n * 8, n);
    return { x, sums, add: () => k.syrupper(0, n * n * 8, n) };
  }
  const sums = new Float64Array(n * n);
  const x = new Float64Array(n);
  return {
    x,
    sums,
    add() {
      for (let i = 0; i < n; i++) {
        const xi = x[i];
        if (xi === 0) continue;
        const base = i * n;
        for (let j = i; j < n; j++) sums[base + j] += xi * x[j];
      }
    },
  };
}

/**
 * The products of a sampled softmax (linear-head-sampled.ts) over `examples` rows of `dim` f64
 * features and `classes` labels, in one memory: `X` (examples × dim), the class-major weights `W`
 * and their gradient `G` (classes × dim each), the batch's labels `cand` and their values `z`.
 * The kernel (f64x2) and the JS twin compute the same bits.
 */
export interface SampledProducts {
  readonly X: Float64Array;
  readonly W: Float64Array;
  readonly G: Float64Array;
  readonly cand: Uint32Array;
  readonly z: Float64Array;
  /**
   * z[k] = ((k < positives ? 0 : correction) + (s0 + s1)) + (s2 + s3) for k < m, with s_r the sum
   * of W[cand[k]]·X[row] over features d ≡ r (mod 4) (the remainder added to s0 last).
   */
  dots(row: number, m: number, positives: number, correction: number): void;
  /** G[cand[k]] += z[k]·X[row] for k < m where z[k] ≠ 0. */
  accumulate(row: number, m: number): void;
}

export function sampledProducts(examples: number, dim: number, classes: number, jsOnly = false): SampledProducts {
  const module = jsOnly ? null : kernelModule();
  const xBytes = examples * dim * 8;
  const wBytes = classes * dim * 8;
  const bytes = xBytes + 2 * wBytes + classes * 16;
  // wasm32 memory stops at 4 GiB (and engines may refuse less): beyond, the JS twin.
  if (module && bytes < 2 ** 31) {
    let made: ReturnType<typeof instantiate> | undefined;
    try {
      made = instantiate(module, bytes);
    } catch {
      made = undefined;
    }
    if (made) {
      const { kernel: k, buffer } = made;
      const [wAt, gAt, zAt] = [xBytes, xBytes + wBytes, xBytes + 2 * wBytes];
      const candAt = zAt + classes * 8;
      const rowBytes = dim * 8;
      return {
        X: new Float64Array(buffer, 0, examples * dim),
        W: new Float64Array(buffer, wAt, classes * dim),
        G: new Float64Array(buffer, gAt, classes * dim),
        z: new Float64Array(buffer, zAt, classes),
        cand: new Uint32Array(buffer, candAt, classes),
        dots: (row, m, positives, correction) => k.sampleddots(wAt, row * rowBytes, dim, candAt, m, zAt, positives, correction),
        accumulate: (row, m) => k.sampledaxpy(gAt, row * rowBytes, dim, candAt, m, zAt),
      };
    }
  }
  const X = new Float64Array(examples * dim);
  const W = new Float64Array(classes * dim);
  const G = new Float64Array(classes * dim);
  const z = new Float64Array(classes);
  const cand = new Uint32Array(classes);
  const D = dim;
  return {
    X, W, G, z, cand,
    dots(i, m, positives, correction) {
      const row = i * D;
      for (let k = 0; k < m; k++) {
        const w = cand[k] * D;
        let v0 = 0, v1 = 0, v2 = 0, v3 = 0;
        let d = 0;
        for (; d + 3 < D; d += 4) {
          v0 += W[w + d] * X[row + d];
          v1 += W[w + d + 1] * X[row + d + 1];
          v2 += W[w + d + 2] * X[row + d + 2];
          v3 += W[w + d + 3] * X[row + d + 3];
        }
        for (; d < D; d++) v0 += W[w + d] * X[row + d];
        z[k] = (k < positives ? 0 : correction) + (v0 + v1) + (v2 + v3);
      }
    },
    accumulate(i, m) {
      const row = i * D;
      for (let k = 0; k < m; k++) {
        const g = z[k];
        if (g === 0) continue;
        const w = cand[k] * D;
        let d = 0;
        for (; d + 3 < D; d += 4) {
          G[w + d] += g * X[row + d];
          G[w + d + 1] += g * X[row + d + 1];
          G[w + d + 2] += g * X[row + d + 2];
          G[w + d + 3] += g * X[row + d + 3];
        }
        for (; d < D; d++) G[w + d] += g * X[row + d];
      }
    },
  };
}

/**
 * Rows of the Gram matrix of `rows` f32 vectors of `dim` (DTDR-G's similarity rows): row(c)[f] =
 * f32(v_c · v_f), the products exact in f64 and summed as kmeans.ts dotAt does (four running sums
 * over j mod 4, the remainder into the first, then added left to right). Kernel and JS twin give the same bits.
 */
export interface GramRows {
  row(c: number): Float32Array;
}

export function gramRows(vectors: Float32Array, rows: number, dim: number, jsOnly = false): GramRows {
  const module = jsOnly ? null : kernelModule();
  if (module) {
    const vBytes = rows * dim * 4;
    const { kernel: k, buffer } = instantiate(module, vBytes + rows * 4);
    new Float32Array(buffer, 0, rows * dim).set(vectors.subarray(0, rows * dim));
    const out = new Float32Array(buffer, vBytes, rows);
    return {
      row(c) {
        k.gramrow(0, c, rows, dim, vBytes);
        return out.slice();
      },
    };
  }
  return {
    row(c) {
      const v = vectors;
      const d = dim;
      const out = new Float32Array(rows);
      const a = c * d;
      for (let f = 0; f < rows; f++) {
        const b = f * d;
        let d0 = 0, d1 = 0, d2 = 0, d3 = 0;
        let j = 0;
        for (; j + 3 < d; j += 4) {
          d0 += v[a + j] * v[b + j];
          d1 += v[a + j + 1] * v[b + j + 1];
          d2 += v[a + j + 2] * v[b + j + 2];
          d3 += v[a + j + 3] * v[b + j + 3];
        }
        for (; j < d; j++) d0 += v[a + j] * v[b + j];
        out[f] = d0 + d1 + d2 + d3;
      }
      return out;
    },
  };
}

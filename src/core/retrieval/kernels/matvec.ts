/**
 * The inner loops of ranking: matrix × vector in float32 (cluster lookups, description
 * similarities, linear heads) and the softmax's exponentials over every label. A WebAssembly SIMD
 * kernel (f32x4 / f64x2; the product is ~10× the scalar JS loop on this machine, the exponentials
 * ~1.8× Math.exp) where the engine has WebAssembly, and a plain-JS twin elsewhere (Hermes,
 * QuickJS) that performs the kernel's operations in its order — so both give the same bits, and a
 * model ranks identically on every engine.
 */
import { DtdrError } from '../../base/errors.js';
import { expTwin } from './exp.js';
import { instantiate, kernelModule } from './wasm-kernel.js';

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
  /** out = M · v[from .. from + dim) (`from` lets a trainer pass one row of a big matrix without a view per row). */
  times(v: ArrayLike<number>, out: Float32Array | Float64Array, from?: number): void;
  /** Replaces the matrix with the transpose of `source` (dim × rows, row-major): M[k, j] = source[j·rows + k]. */
  setTransposed(source: ArrayLike<number>): void;
}

function fillTransposed(m: Float32Array, source: ArrayLike<number>, rows: number, dim: number, width: number): void {
  for (let j = 0; j < dim; j++) {
    const from = j * rows;
    for (let k = 0; k < rows; k++) m[k * width + j] = source[from + k];
  }
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
      times(v, out, from = 0) {
        for (let j = 0; j < dim; j++) qv[j] = v[from + j];
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
    times(v, out, from = 0) {
      for (let j = 0; j < dim; j++) q[j] = v[from + j];
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
  /** g += x[from .. from + rows) · pᵀ. */
  add(x: ArrayLike<number>, p: ArrayLike<number>, from?: number): void;
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
      add(x, p, from = 0) {
        for (let r = 0; r < rows; r++) xv[r] = x[from + r];
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
    add(x, p, from = 0) {
      for (let r = 0; r < rows; r++) {
        const xr = f(x[from + r]);
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
  /**
   * output[i] = exp((inputs[which][i] − shift)·scale) for i < n (values ≤ shift); returns their sum (even and odd i
   * summed apart, then added).
   */
  run(which: number, n: number, shift: number, scale: number): number;
}

/** The exponentials alone: the exp part of a gate kernel (one memory layout and one twin for both). */
export function expSum(length: number, inputs: number, jsOnly = false): ExpSum {
  return gateKernel(length, 8, inputs, jsOnly);
}

/**
 * DTDR-G's per-step passes over every label, beside the softmax exponentials: the history-aware
 * embedding row, the gate's dense sum of eight signal rows, its max, the head's clipped
 * log-probabilities and the final division (which also finds the best label).
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
  /**
   * output[i] /= by for i < n; returns the first i of the largest quotient, as the scan
   * `if (output[i] > best)` from index 0 finds it (NaN never wins; index 0 when none beats −∞):
   * the softmax's best label from the pass that writes it.
   */
  divide(n: number, by: number): number;
  /**
   * x[to·labels + f] = f32((x[from·labels + f] − g[0]·rows[0][f] − g[1]·rows[1][f] − …) · scale)
   * for f < n, in f64 in that order: DTDR-G's history-aware embedding row, the called tools'
   * similarity rows taken off the plain one. The rows must not change once passed (the kernel
   * keeps copies of the last ones).
   */
  residual(
    from: number,
    to: number,
    rows: readonly Float32Array[],
    g: ArrayLike<number>,
    scale: number,
    n: number,
  ): void;
}

/**
 * Similarity rows the kernel's `residual` takes in its memory (64 KB a row at 16,000 labels): a
 * step after nine distinct calls or more takes the JS twin, the same bits.
 */
const RESIDUAL_ROWS = 8;

/** The JS twin of the kernel's `residual` (x a signal-major matrix of rows of `labels`). */
function residualTwin(
  x: Float32Array,
  labels: number,
  from: number,
  to: number,
  rows: readonly Float32Array[],
  g: ArrayLike<number>,
  scale: number,
  n: number,
): void {
  const a = from * labels;
  const b = to * labels;
  const m = rows.length;
  for (let f = 0; f < n; f++) {
    let r = x[a + f];
    for (let j = 0; j < m; j++) r -= g[j] * rows[j][f];
    x[b + f] = r * scale;
  }
}

/** The gate's per-step kernel over the signal rows: WebAssembly where it loads (unless jsOnly), else JavaScript. */
export function gateKernel(labels: number, signals: number, inputs: number, jsOnly = false): GateKernel {
  if (signals < 8) throw new DtdrError('options', 'the gate kernel sums eight signal rows');
  const module = jsOnly ? null : kernelModule();
  return module ? wasmGateKernel(module, labels, signals, inputs) : jsGateKernel(labels, signals, inputs);
}

/** The gate kernel in WebAssembly memory: the rows, inputs and weights laid out for the SIMD loops. */
function wasmGateKernel(
  module: NonNullable<ReturnType<typeof kernelModule>>,
  labels: number,
  signals: number,
  inputs: number,
): GateKernel {
  const slot = (labels + 2) & ~1;
  // Memory: x (f32, padded to 16 bytes), then the f64 inputs and the output, then 8 weights,
  // then RESIDUAL_ROWS similarity rows (f32) and their coefficients (f64).
  const xBytes = Math.ceil((signals * labels * 4) / 16) * 16;
  const weights = xBytes + (inputs + 1) * slot * 8;
  const rowsAt = weights + 64;
  const rowBytes = Math.ceil((labels * 4) / 16) * 16;
  const gammasAt = rowsAt + RESIDUAL_ROWS * rowBytes;
  const { kernel: k, buffer } = instantiate(module, gammasAt + RESIDUAL_ROWS * 8);
  const x = new Float32Array(buffer, 0, signals * labels);
  const rowViews = Array.from(
    { length: RESIDUAL_ROWS },
    (_, j) => new Float32Array(buffer, rowsAt + j * rowBytes, labels),
  );
  const gammas = new Float64Array(buffer, gammasAt, RESIDUAL_ROWS);
  const inSlot = new Array<Float32Array | undefined>(RESIDUAL_ROWS).fill(undefined);
  const slotLength = new Array<number>(RESIDUAL_ROWS).fill(0);
  const views = Array.from({ length: inputs }, (_, i) => new Float64Array(buffer, xBytes + i * slot * 8, slot));
  const out = xBytes + inputs * slot * 8;
  const a = new Float64Array(buffer, weights, 8);
  const at = (which: number) => xBytes + which * slot * 8;
  return {
    x,
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
      return k.divide(out, n, by);
    },
    residual(from, to, rows, g, scale, n) {
      if (rows.length > RESIDUAL_ROWS) return residualTwin(x, labels, from, to, rows, g, scale, n);
      for (let j = 0; j < rows.length; j++) {
        // A plan's later steps call the same tools first: a row already in its slot stays (rows are never changed in
        // place).
        if (inSlot[j] !== rows[j] || slotLength[j] !== n) {
          rowViews[j].set(rows[j].subarray(0, n));
          inSlot[j] = rows[j];
          slotLength[j] = n;
        }
        gammas[j] = g[j];
      }
      k.residual(from * labels * 4, to * labels * 4, rowsAt, rowBytes, rows.length, gammasAt, n, scale);
    },
  };
}

/** The gate kernel in plain JavaScript, the same operations in the same order (where WebAssembly is not). */
function jsGateKernel(labels: number, signals: number, inputs: number): GateKernel {
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
      const a0 = a[0],
        a1 = a[1],
        a2 = a[2],
        a3 = a[3],
        a4 = a[4],
        a5 = a[5],
        a6 = a[6],
        a7 = a[7];
      const L = labels;
      for (let f = 0; f < L; f++) {
        z[f] =
          0 +
          a0 * x[f] +
          a1 * x[L + f] +
          a2 * x[2 * L + f] +
          a3 * x[3 * L + f] +
          a4 * x[4 * L + f] +
          a5 * x[5 * L + f] +
          a6 * x[6 * L + f] +
          a7 * x[7 * L + f];
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
      let best = -Infinity;
      let arg = 0;
      for (let i = 0; i < n; i++) {
        const q = (output[i] /= by);
        if (q > best) {
          best = q;
          arg = i;
        }
      }
      return arg;
    },
    residual(from, to, rows, g, scale, n) {
      residualTwin(x, labels, from, to, rows, g, scale, n);
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

/**
 * The training-time kernels of the linear heads and DTDR-G's fit: XᵀX for the ridge start, the
 * sampled softmax's products, similarity rows and the full-softmax heads' one-hot rows, in f64 on the WebAssembly
 * module of wasm-kernel.ts
 * (f64x2), each with a JS twin that performs the same operations in the same order.
 */
import { dotAt } from './rows.js';
import { instantiate, kernelModule } from './wasm-kernel.js';

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
        dots: (row, m, positives, correction) =>
          k.sampleddots(wAt, row * rowBytes, dim, candAt, m, zAt, positives, correction),
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
    X,
    W,
    G,
    z,
    cand,
    dots(i, m, positives, correction) {
      const row = i * D;
      for (let k = 0; k < m; k++) {
        const w = cand[k] * D;
        let v0 = 0,
          v1 = 0,
          v2 = 0,
          v3 = 0;
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
 * f32(v_c · v_f), the products exact in f64 and summed as kmeans.ts dotAt does (the JS twin calls it) (four running
 * sums
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
      const out = new Float32Array(rows);
      for (let f = 0; f < rows; f++) out[f] = dotAt(vectors, c * dim, vectors, f * dim, dim);
      return out;
    },
  };
}

/**
 * The one-hot rows of a full-softmax head (linear-head-training.ts) and their Adam state, in one
 * memory: weights `E`, moments `mE` and `vE`, gradient sums `gE` (rows × n each) and the step's
 * logits `p` (n). The kernel (f64x2) and the JS twin do the same operations in the same order per
 * entry, so both train the same bits.
 */
export interface OneHotRows {
  readonly E: Float64Array;
  readonly mE: Float64Array;
  readonly vE: Float64Array;
  readonly gE: Float64Array;
  readonly p: Float64Array;
  /** p += E[row]. */
  addToLogits(row: number): void;
  /** gE[row] += p. */
  addToGradient(row: number): void;
  /** One Adam step on row's weights from its gradient sum: see the kernel's `adam`. */
  adamRow(row: number, scale: number, l2: number, lr: number, b1: number, b2: number, eps: number): void;
}

/** Bytes of one-hot state above which the JS twin is used: one WebAssembly memory holds at most 4 GiB. */
const ONE_HOT_KERNEL_BYTES = 2 ** 31;

export function oneHotRows(rows: number, n: number, jsOnly = false): OneHotRows {
  const size = rows * n;
  const module = jsOnly || 4 * size * 8 + n * 8 > ONE_HOT_KERNEL_BYTES ? null : kernelModule();
  if (module) {
    const bytes = size * 8;
    const { kernel: k, buffer } = instantiate(module, 4 * bytes + n * 8);
    const [E, mE, vE, gE] = [0, 1, 2, 3].map((i) => new Float64Array(buffer, i * bytes, size));
    const p = new Float64Array(buffer, 4 * bytes, n);
    const rowBytes = n * 8;
    return {
      E,
      mE,
      vE,
      gE,
      p,
      addToLogits: (row) => k.addvec(4 * bytes, row * rowBytes, n),
      addToGradient: (row) => k.addvec(3 * bytes + row * rowBytes, 4 * bytes, n),
      adamRow: (row, scale, l2, lr, b1, b2, eps) =>
        k.adam(
          row * rowBytes,
          bytes + row * rowBytes,
          2 * bytes + row * rowBytes,
          3 * bytes + row * rowBytes,
          n,
          scale,
          l2,
          lr,
          b1,
          1 - b1,
          b2,
          1 - b2,
          eps,
        ),
    };
  }
  const [E, mE, vE, gE] = [0, 1, 2, 3].map(() => new Float64Array(size));
  const p = new Float64Array(n);
  return {
    E,
    mE,
    vE,
    gE,
    p,
    addToLogits(row) {
      const e = row * n;
      for (let c = 0; c < n; c++) p[c] += E[e + c];
    },
    addToGradient(row) {
      const e = row * n;
      for (let c = 0; c < n; c++) gE[e + c] += p[c];
    },
    adamRow(row, scale, l2, lr, b1, b2, eps) {
      for (let k = row * n; k < (row + 1) * n; k++) {
        const g = gE[k] * scale + l2 * E[k];
        mE[k] = b1 * mE[k] + (1 - b1) * g;
        vE[k] = b2 * vE[k] + (1 - b2) * g * g;
        E[k] -= (lr * mE[k]) / (Math.sqrt(vE[k]) + eps);
      }
    },
  };
}

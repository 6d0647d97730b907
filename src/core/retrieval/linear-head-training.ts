/**
 * Training the linear head: the label support of its one-hot rows, standardisation, a ridge warm
 * start, the minibatch epochs (a generator that yields each epoch's loss), and the replay buffer
 * online learning rehearses from.
 */
import { DtdrError } from '../base/errors.js';
import { seededRandom, shuffleInPlace } from '../base/random.js';
import { luInverse, luSolve } from './kernels/lu.js';
import { outerAccumulator, packMatrix } from './kernels/matvec.js';
import { oneHotRows, symmetricAccumulator } from './kernels/training.js';
import {
  DENSE_ONE_HOT_LIMIT,
  LINEAR_HEAD_DEFAULTS,
  LinearHead,
  type LinearHeadData,
  type LinearHeadOptions,
  type SparseSupport,
} from './linear-head.js';

/**
 * The support of each one-hot row: the labels that followed its feature in `data` (every example
 * where it is active, its acceptable labels), merged with `from` (a trained head's support).
 */
export function targetSupport(data: LinearHeadData, from?: SparseSupport): SparseSupport {
  const rows = Array.from({ length: data.sparseSize }, () => new Set<number>());
  if (from)
    for (let r = 0; r < rows.length; r++)
      for (let j = from.start[r]; j < from.start[r + 1]; j++) rows[r].add(from.cols[j]);
  data.sparse?.forEach((active, i) => {
    for (const s of active) {
      for (const t of Array.from(data.targets[i])) rows[s].add(t);
      for (const t of Array.from(data.related?.[i] ?? [])) rows[s].add(t);
    }
  });
  const start = new Uint32Array(rows.length + 1);
  rows.forEach((set, r) => (start[r + 1] = start[r] + set.size));
  const cols = new Uint32Array(start[rows.length]);
  rows.forEach((set, r) => cols.set(Float64Array.from(Array.from(set)).sort(), start[r]));
  return { start, cols };
}

export function standardisation(dense: Float32Array[], dim: number) {
  const mean = new Float64Array(dim);
  const std = new Float64Array(dim);
  for (const x of dense) for (let d = 0; d < dim; d++) mean[d] += x[d];
  for (let d = 0; d < dim; d++) mean[d] /= dense.length;
  for (const x of dense) for (let d = 0; d < dim; d++) std[d] += (x[d] - mean[d]) ** 2;
  for (let d = 0; d < dim; d++) std[d] = Math.sqrt(std[d] / dense.length) || 1;
  return { mean, std };
}

/**
 * Ridge regression from standardised features to the soft targets: a good starting point. The
 * normal equations are accumulated in typed arrays (the targets are sparse: Xᵀ·Y touches only the
 * acceptable labels of each example); an LU solve (kernels/lu.ts) finishes the small (dim+1)² system.
 */
export function ridgeWarmStart(
  data: LinearHeadData,
  mean: Float64Array,
  std: Float64Array,
  dim: number,
  viaInverse = false,
): Float64Array {
  const C = data.classes;
  const D = dim + 1;
  const n = data.dense.length;
  // XᵀX's upper triangle in the f64x2 kernel (the same sums as the JS loop): most of a ridge start over 100,000 steps.
  const gram = symmetricAccumulator(D);
  const xtx = gram.sums;
  // Xᵀy by class (class c's D sums together): a step's few targets each add one contiguous row,
  // where a D × C layout strides by C per feature (a cache miss each at 16,000 labels).
  const xtyByClass = new Float64Array(C * D);
  const x = gram.x;
  for (let i = 0; i < n; i++) {
    const row = data.dense[i];
    for (let d = 0; d < dim; d++) x[d] = (row[d] - mean[d]) / std[d];
    x[dim] = 1;
    gram.add();
    const t = data.targets[i];
    const share = 1 / t.length;
    for (let k = 0; k < t.length; k++) {
      const row = t[k] * D;
      for (let a = 0; a < D; a++) xtyByClass[row + a] += x[a] * share;
    }
  }
  const A = new Float64Array(D * D);
  for (let a = 0; a < D; a++)
    for (let b = a; b < D; b++) {
      A[a * D + b] = xtx[a * D + b];
      A[b * D + a] = xtx[a * D + b];
    }
  for (let d = 0; d < dim; d++) A[d * D + d] += n * 1e-3;
  if (viaInverse) {
    // Over many labels: A⁻¹ once, then A⁻¹·(XᵀY) in typed arrays (a solve per label column took seconds at 16,000).
    const inv = luInverse(A, D);
    const scaled = Float64Array.from(inv, (v) => v * 8);
    const out = new Float64Array(D * C);
    // out[a][c] = Σ_b 8·inv[a][b]·xty[b][c], b ascending, zero factors skipped: each sum in one register.
    for (let a = 0; a < D; a++) {
      const f = a * D;
      for (let c = 0; c < C; c++) {
        const y = c * D;
        let v = 0;
        for (let b = 0; b < D; b++) if (scaled[f + b] !== 0) v += scaled[f + b] * xtyByClass[y + b];
        out[a * C + c] = v;
      }
    }
    return out;
  }
  const B = new Float64Array(D * C);
  for (let a = 0; a < D; a++) for (let c = 0; c < C; c++) B[a * C + c] = xtyByClass[c * D + a];
  const W = luSolve(A, D, B, C);
  // Regression outputs are probabilities; scale them into a useful logit range.
  return W.map((w) => w * 8);
}

export interface EpochReport {
  epoch: number;
  epochs: number;
  loss: number;
}

/** The options with their defaults and the data's sizes, shared by the full and the sampled trainer. */
export function headProblem(data: LinearHeadData, options: LinearHeadOptions) {
  const o = { ...LINEAR_HEAD_DEFAULTS, ...options };
  const n = data.dense.length;
  if (n === 0) throw new DtdrError('data', 'no training examples', { hint: 'give at least one demonstration' });
  return { o, n, dim: data.dense[0].length, C: data.classes, S: data.sparseSize };
}

/** Trains the head; yields the mean training loss after each epoch and returns the head. */
export function* trainLinearHead(
  data: LinearHeadData,
  options: LinearHeadOptions = {},
  init?: LinearHead,
): Generator<EpochReport, LinearHead> {
  const { o, n, dim, C, S } = headProblem(data, options);
  // Online learning continues from a trained head (its standardisation kept); else a ridge start.
  if (init && (init.dim !== dim || init.classes !== C || init.sparseSize !== S)) {
    throw new DtdrError('options', `cannot continue a ${init.dim}→${init.classes} head on ${dim}→${C} data`);
  }
  const { mean, std } = init ? { mean: init.mean, std: init.std } : standardisation(data.dense, dim);
  const W = init ? Float64Array.from(init.weights) : ridgeWarmStart(data, mean, std, dim);
  // A head keeps the one-hot layout it was trained with; a CSR support grows with new examples.
  const csr = init
    ? init.support !== undefined
    : o.sparseSupport === 'targets' || (o.sparseSupport === 'auto' && S * C > DENSE_ONE_HOT_LIMIT);
  const support = csr ? targetSupport(data, init?.support) : undefined;
  // Full one-hot rows live with their Adam state and the logits in the kernel's memory (training.ts).
  const oneHot = support ? undefined : oneHotRows(S, C);
  const E = initialSparseWeights(support, oneHot, init, S);
  /** Row r's weights are E[rowStart(r) .. rowStart(r + 1)): labels support.cols[j] with CSR, j − r·C in full rows. */
  const rowStart = support ? (r: number) => support.start[r] : (r: number) => r * C;

  const mW = new Float64Array(W.length),
    vW = new Float64Array(W.length);
  // dLoss/dW accumulated per batch as rank-1 updates in the float32 kernel.
  const gW = outerAccumulator(dim + 1, C);
  const mE = oneHot?.mE ?? new Float64Array(E.length),
    vE = oneHot?.vE ?? new Float64Array(E.length),
    gE = oneHot?.gE ?? new Float64Array(E.length);
  const touched = new Uint8Array(S); // sparse rows with a gradient in this batch
  const sparseRows = { support, oneHot, rowStart, touched, gE };
  const b1 = 0.9,
    b2 = 0.999,
    eps = 1e-8;
  let step = 0;
  const random = seededRandom(o.seed + 1);
  const indices = Array.from({ length: n }, (_, i) => i);
  const p = oneHot?.p ?? new Float64Array(C);
  // Standardise once: every epoch reads the same rows (bias column last).
  const D = dim + 1;
  const X = standardisedRows(data.dense, mean, std, dim);

  // The dense weights (bias row included) class-major in the matrix kernel, refreshed per batch.
  const kernelW = packMatrix(new Float32Array(C * D), C, D);
  for (let epoch = 1; epoch <= o.epochs; epoch++) {
    shuffleInPlace(indices, random);
    let lossSum = 0;
    for (let start = 0; start < n; start += o.batchSize) {
      const end = Math.min(n, start + o.batchSize);
      gW.clear();
      kernelW.setTransposed(W);
      for (let b = start; b < end; b++) {
        const i = indices[b];
        const row = i * D;
        // logits = x·W (+ the one-hot rows)
        // Four rows of W per pass: a quarter of the loads and stores of p.
        // Logits through the float32 kernel, as at ranking time (W is re-packed after each step).
        kernelW.times(X, p, row);
        const sp = data.sparse?.[i];
        if (sp && support) {
          for (let k = 0; k < sp.length; k++)
            for (let j = support.start[sp[k]]; j < support.start[sp[k] + 1]; j++) p[support.cols[j]] += E[j];
        } else if (sp) for (let k = 0; k < sp.length; k++) oneHot!.addToLogits(sp[k]);
        lossSum = softmaxGradient(p, C, data.targets[i], lossSum);
        gW.add(X, p, row);
        if (sp) sparseGradient(sp, p, sparseRows);
      }
      step++;
      const scale = 1 / (end - start);
      const lr = (o.learningRate * Math.sqrt(1 - b2 ** step)) / (1 - b1 ** step);
      adamDense(W, mW, vW, gW, { scale, l2: o.l2, lr, b1, b2, eps }, D, C);
      // Lazy Adam for the one-hot rows: only rows seen in this batch move.
      const sparseStep = { scale, l2: o.l2, lr, b1, b2, eps };
      for (let s = 0; s < S; s++) {
        if (!touched[s]) continue;
        touched[s] = 0;
        if (oneHot) oneHot.adamRow(s, scale, o.l2, lr, b1, b2, eps);
        else adamRange(E, mE, vE, gE, rowStart(s), rowStart(s + 1), sparseStep);
      }
    }
    yield { epoch, epochs: o.epochs, loss: lossSum / n };
  }
  // A copy of the one-hot rows: the kernel's memory (four such matrices) is freed with the trainer.
  return new LinearHead(dim, C, S, mean, std, W, oneHot ? Float64Array.from(E) : E, support);
}

/** The one-hot rows' starting weights (the kernel's full rows, or CSR values), carried over from `init`. */
function initialSparseWeights(
  support: SparseSupport | undefined,
  oneHot: ReturnType<typeof oneHotRows> | undefined,
  init: LinearHead | undefined,
  S: number,
): Float64Array {
  if (!support) {
    const E = oneHot!.E;
    if (init) E.set(init.sparseWeights);
    return E;
  }
  const E = new Float64Array(support.cols.length);
  if (init?.support) {
    // Carry the trained values over to their (possibly shifted) places in the grown rows.
    const old = init.support;
    for (let r = 0; r < S; r++) {
      let j = support.start[r];
      for (let i = old.start[r]; i < old.start[r + 1]; i++) {
        while (support.cols[j] !== old.cols[i]) j++;
        E[j] = init.sparseWeights[i];
      }
    }
  }
  return E;
}

/** The dense rows standardised, a bias column of ones last: n × (dim + 1), row-major. */
function standardisedRows(dense: Float32Array[], mean: Float64Array, std: Float64Array, dim: number): Float64Array {
  const D = dim + 1;
  const X = new Float64Array(dense.length * D);
  dense.forEach((x, i) => {
    for (let d = 0; d < dim; d++) X[i * D + d] = (x[d] - mean[d]) / std[d];
    X[i * D + dim] = 1;
  });
  return X;
}

/** One Adam step on the dense weights W (D × C, bias row last) from the batch's accumulated gradient. */
function adamDense(
  W: Float64Array,
  mW: Float64Array,
  vW: Float64Array,
  gW: ReturnType<typeof outerAccumulator>,
  h: { scale: number; l2: number; lr: number; b1: number; b2: number; eps: number },
  D: number,
  C: number,
): void {
  const { scale, l2, lr, b1, b2, eps } = h;
  const grad = gW.grad;
  const stride = gW.stride;
  for (let d = 0, k = 0; d < D; d++) {
    for (let c = 0; c < C; c++, k++) {
      const g = grad[d * stride + c] * scale + l2 * W[k];
      mW[k] = b1 * mW[k] + (1 - b1) * g;
      vW[k] = b2 * vW[k] + (1 - b2) * g * g;
      W[k] -= (lr * mW[k]) / (Math.sqrt(vW[k]) + eps);
    }
  }
}

/**
 * Softmax of the logits in p, in place, then p minus the soft targets (p becomes dLoss/dlogits);
 * the running loss with this example's cross-entropy taken off it.
 */
function softmaxGradient(p: Float64Array, C: number, t: ArrayLike<number>, lossSum: number): number {
  let max = -Infinity;
  for (let c = 0; c < C; c++) if (p[c] > max) max = p[c];
  let sum = 0;
  for (let c = 0; c < C; c++) sum += p[c] = Math.exp(p[c] - max);
  for (let c = 0; c < C; c++) p[c] /= sum;
  const share = 1 / t.length;
  for (let k = 0; k < t.length; k++) {
    lossSum -= share * Math.log(p[t[k]] + 1e-12);
    p[t[k]] -= share; // p is now dLoss/dlogits
  }
  return lossSum;
}

/** One Adam step on the weights E[from..to) (a CSR one-hot row, or any range) from their gradient. */
export function adamRange(
  E: Float64Array,
  mE: Float64Array,
  vE: Float64Array,
  gE: Float64Array,
  from: number,
  to: number,
  h: { scale: number; l2: number; lr: number; b1: number; b2: number; eps: number },
): void {
  const { scale, l2, lr, b1, b2, eps } = h;
  for (let k = from; k < to; k++) {
    const g = gE[k] * scale + l2 * E[k];
    mE[k] = b1 * mE[k] + (1 - b1) * g;
    vE[k] = b2 * vE[k] + (1 - b2) * g * g;
    E[k] -= (lr * mE[k]) / (Math.sqrt(vE[k]) + eps);
  }
}

/** The example's one-hot rows' gradient (dLoss/dlogits in p) added to gE; a row is zeroed at its first use. */
function sparseGradient(
  sp: ArrayLike<number>,
  p: Float64Array,
  rows: {
    support: SparseSupport | undefined;
    oneHot: ReturnType<typeof oneHotRows> | undefined;
    rowStart: (r: number) => number;
    touched: Uint8Array;
    gE: Float64Array;
  },
): void {
  const { support, oneHot, rowStart, touched, gE } = rows;
  for (let k = 0; k < sp.length; k++) {
    const e = rowStart(sp[k]);
    const to = rowStart(sp[k] + 1);
    if (!touched[sp[k]]) {
      touched[sp[k]] = 1;
      gE.fill(0, e, to);
    }
    if (support) for (let j = e; j < to; j++) gE[j] += p[support.cols[j]];
    else oneHot!.addToGradient(sp[k]);
  }
}

import { Matrix, solve } from 'ml-matrix';
import { expTwin, outerAccumulator, packMatrix, replaceIfChanged, type PackedMatrix } from './matvec.js';
import { DtdrError } from '../errors.js';
import { array, COORDINATE, numbers, object, optNum } from '../living/validate.js';
import { seededRandom, shuffleInPlace } from '../random.js';

/**
 * A one-layer softmax classifier over standardised dense features (an embedding) plus optional
 * sparse one-hot features (e.g. the last tools called), trained with Adam on soft targets
 * (uniform over the acceptable labels of a step). Warm-started from the ridge-regression
 * solution (ml-matrix), which cuts the epochs needed; the hot loops are plain typed arrays.
 */
export interface LinearHeadOptions {
  /** Passes over the training set. Default 8. */
  epochs?: number;
  /** Adam step size. Default 0.01. */
  learningRate?: number;
  /** Examples per Adam step. Default 128. */
  batchSize?: number;
  /** L2 penalty on the weights. Default 1e-5. */
  l2?: number;
  /** Shuffling seed. Default 0. */
  seed?: number;
  /**
   * Which labels a one-hot row can move. `'all'` (default): every label, a rows × labels matrix.
   * `'targets'`: only the labels of the training examples where the row's feature is active (their
   * targets and `related` labels), as CSR rows: memory and the per-step cost grow with what was
   * demonstrated, not with rows × labels (at 16,000 tools the full matrix is a gigabyte).
   * `'auto'`: `'all'` up to `DENSE_ONE_HOT_LIMIT` weights, `'targets'` beyond.
   */
  sparseSupport?: 'all' | 'targets' | 'auto';
}

export const LINEAR_HEAD_DEFAULTS: Required<LinearHeadOptions> = { epochs: 8, learningRate: 0.01, batchSize: 128, l2: 1e-5, seed: 0, sparseSupport: 'all' };

/**
 * The most one-hot weights `sparseSupport: 'auto'` keeps as a full matrix: 8M (64 MB as float64),
 * a few thousand tools. Full rows can also push down the labels a history makes unlikely, which
 * kept sets wider on new combinations in the demo (coverage 0.905 against 0.899 with CSR rows on
 * the compositional set), so they stay where they are affordable.
 */
export const DENSE_ONE_HOT_LIMIT = 8_000_000;

/** CSR columns of one-hot rows: row s holds the labels cols[start[s] .. start[s+1]), ascending. */
export interface SparseSupport {
  start: Uint32Array;
  cols: Uint32Array;
}

export interface LinearHeadData {
  dense: Float32Array[];
  /** Active sparse feature ids per example (one-hot positions), if any. */
  sparse?: Uint32Array[];
  sparseSize: number;
  /** Acceptable label indices per example; the target spreads evenly over them. */
  targets: ArrayLike<number>[];
  /** With `sparseSupport: 'targets'`: more labels per example its active one-hot rows may move (e.g. the rest of its plan). */
  related?: ArrayLike<number>[];
  classes: number;
}

export interface LinearHeadState {
  dim: number;
  classes: number;
  sparseSize: number;
  mean: number[];
  std: number[];
  /** (dim + 1) x classes, row-major; the last row is the bias. */
  weights: number[];
  /** sparseSize x classes, row-major; with `support`, one value per support column. */
  sparseWeights: number[];
  /** CSR support of the one-hot rows (`sparseSupport: 'targets'`); absent: every row is dense. */
  support?: { start: number[]; cols: number[] };
}

export class LinearHead {
  constructor(
    readonly dim: number,
    readonly classes: number,
    readonly sparseSize: number,
    readonly mean: Float64Array,
    readonly std: Float64Array,
    readonly weights: Float64Array,
    readonly sparseWeights: Float64Array,
    readonly support?: SparseSupport,
  ) {}

  /** Class-major copy of the dense weights in the float32 kernel (weights never change after construction). */
  private byClass?: PackedMatrix;
  private standardised?: Float64Array;
  /** The last dense input and its logits before the one-hot rows (x·W + b): every step of a plan has the same request. */
  private last?: { input: Float64Array; logits: Float64Array };

  private rowScratch = new Uint32Array(8);

  /** The largest logit `logits` wrote last (a softmax's shift, found in the same pass). */
  max = -Infinity;
  /**
   * With a CSR support, what the last `logits` call left for `logNormaliser`: the logits before
   * the one-hot rows (x·W + b, `base`) and their max, whether they were recomputed (a new
   * request), and the distinct labels the one-hot rows moved, `moved[0 .. movedCount)`.
   */
  private base?: Float64Array;
  private baseMax = -Infinity;
  private baseFresh = false;
  private moved?: Uint32Array;
  private movedCount = 0;
  private movedMark?: Uint8Array;

  /** Writes the logits of one example into `out` (length `classes`). */
  logits(dense: ArrayLike<number>, sparse: ArrayLike<number> | undefined, out: Float64Array): Float64Array {
    const { dim, classes: C, weights: W } = this;
    if (!this.byClass) {
      const t = new Float32Array(C * dim);
      for (let d = 0; d < dim; d++) for (let c = 0; c < C; c++) t[c * dim + d] = W[d * C + c];
      this.byClass = packMatrix(t, C, dim);
    }
    const last = (this.last ??= { input: new Float64Array(dim).fill(NaN), logits: new Float64Array(C) });
    this.baseFresh = replaceIfChanged(last.input, dense);
    if (this.baseFresh) {
      const x = (this.standardised ??= new Float64Array(dim));
      for (let d = 0; d < dim; d++) x[d] = (dense[d] - this.mean[d]) / this.std[d];
      this.byClass.times(x, last.logits);
      const bias = dim * C;
      let baseMax = -Infinity;
      for (let c = 0; c < C; c++) if ((last.logits[c] += W[bias + c]) > baseMax) baseMax = last.logits[c];
      this.baseMax = baseMax;
    }
    const base = last.logits;
    const E = this.sparseWeights;
    const n = sparse?.length ?? 0;
    if (this.support) return this.addSupportRows(base, sparse, out);
    // The one-hot rows in order: one pass over the classes, the same sums as one pass each.
    if (this.rowScratch.length < n) this.rowScratch = new Uint32Array(n);
    const rows = this.rowScratch;
    for (let k = 0; k < n; k++) rows[k] = sparse![k] * C;
    let max = -Infinity;
    for (let c = 0; c < C; c++) {
      let v = base[c];
      for (let k = 0; k < n; k++) v += E[rows[k] + c];
      out[c] = v;
      if (v > max) max = v;
    }
    this.max = max;
    return out;
  }

  /** out = base plus the CSR rows' values at their columns (in row order), noting the labels moved. */
  private addSupportRows(base: Float64Array, sparse: ArrayLike<number> | undefined, out: Float64Array): Float64Array {
    const { start, cols } = this.support!;
    const E = this.sparseWeights;
    const C = this.classes;
    out.set(base.subarray(0, C));
    const mark = (this.movedMark ??= new Uint8Array(C));
    const moved = (this.moved ??= new Uint32Array(C));
    for (let i = 0; i < this.movedCount; i++) mark[moved[i]] = 0;
    let count = 0;
    const n = sparse?.length ?? 0;
    for (let k = 0; k < n; k++) {
      const s = sparse![k];
      for (let j = start[s]; j < start[s + 1]; j++) {
        const c = cols[j];
        out[c] += E[j];
        if (!mark[c]) {
          mark[c] = 1;
          moved[count++] = c;
        }
      }
    }
    this.movedCount = count;
    let max = -Infinity;
    for (let c = 0; c < C; c++) if (out[c] > max) max = out[c];
    this.max = max;
    this.base = base;
    return out;
  }

  /** Σ exp(b − keptShift) over the base logits b of the current request; 0 when not known. */
  private keptSum = 0;
  private keptShift = 0;

  /**
   * log Σ exp of the logits `logits` just wrote (`out`). `sumExp(shift)` sums exp(out − shift)
   * over every label (the caller's kernel). With CSR rows few labels move off the base x·W + b,
   * which is the same for every step of a request: the first step sums every label and keeps the
   * base's sum; later steps correct the kept sum at the moved labels only,
   *   Σ exp(z − M) = Σ exp(b − M) + Σ_moved [exp(z_c − M) − exp(b_c − M)],  M ≥ max z, max b.
   * A correction that cancels most of the sum would lose precision: that step sums in full.
   */
  logNormaliser(out: Float64Array, sumExp: (shift: number) => number): number {
    const base = this.base;
    if (!this.support || !base) return this.max + Math.log(sumExp(this.max));
    if (!this.baseFresh && this.keptSum > 0) {
      const shift = Math.max(this.keptShift, this.max);
      const kept = shift === this.keptShift ? this.keptSum : this.keptSum * expTwin(this.keptShift - shift);
      const sum = kept + this.movedDelta(out, base, shift);
      if (sum > 1e-6 * kept) return shift + Math.log(sum);
    }
    const shift = Math.max(this.max, this.baseMax);
    const sum = sumExp(shift);
    const baseSum = sum - this.movedDelta(out, base, shift);
    this.keptSum = baseSum > 1e-6 * sum ? baseSum : 0;
    this.keptShift = shift;
    return shift + Math.log(sum);
  }

  /** Σ over the moved labels of exp(out − shift) − exp(base − shift). */
  private movedDelta(out: Float64Array, base: Float64Array, shift: number): number {
    let delta = 0;
    for (let i = 0; i < this.movedCount; i++) {
      const c = this.moved![i];
      delta += expTwin(out[c] - shift) - expTwin(base[c] - shift);
    }
    return delta;
  }

  state(): LinearHeadState {
    const round = (a: Float64Array) => Array.from(a, (x) => Math.fround(x));
    return {
      dim: this.dim, classes: this.classes, sparseSize: this.sparseSize,
      mean: round(this.mean), std: round(this.std), weights: round(this.weights), sparseWeights: round(this.sparseWeights),
      ...(this.support ? { support: { start: Array.from(this.support.start), cols: Array.from(this.support.cols) } } : {}),
    };
  }

  /** A head from `state()`, validated: consistent shapes, finite weights, standard deviations > 0 (else a DtdrError naming `field`). */
  static fromState(s: LinearHeadState, field = 'state.head'): LinearHead {
    const support = LinearHead.checkState(s, field);
    return new LinearHead(s.dim, s.classes, s.sparseSize, Float64Array.from(s.mean), Float64Array.from(s.std), Float64Array.from(s.weights), Float64Array.from(s.sparseWeights), support);
  }

  /** Validates a saved head (see fromState); returns its CSR support, if any. */
  static checkState(s: LinearHeadState, field = 'state.head'): SparseSupport | undefined {
    object(field, s);
    const ok = s && Number.isInteger(s.dim) && Number.isInteger(s.classes) && Number.isInteger(s.sparseSize)
      && s.dim > 0 && s.classes > 0 && s.sparseSize >= 0
      && s.mean?.length === s.dim && s.std?.length === s.dim
      && s.weights?.length === (s.dim + 1) * s.classes;
    if (!ok) throw new DtdrError('artifact', 'linear head state has inconsistent shapes', { field });
    // Bounds that keep standardised inputs times weights finite in the float32 kernel.
    numbers(`${field}.mean`, s.mean, undefined, { min: -1e4, max: 1e4 });
    numbers(`${field}.std`, s.std, undefined, { min: 1e-24 });
    numbers(`${field}.weights`, s.weights, undefined, COORDINATE);
    numbers(`${field}.sparseWeights`, s.sparseWeights, undefined, COORDINATE);
    if (s.support === undefined) {
      if (s.sparseWeights?.length !== s.sparseSize * s.classes) throw new DtdrError('artifact', 'linear head one-hot rows have inconsistent shapes', { field: `${field}.sparseWeights` });
      return undefined;
    }
    const support = checkedSupport(s.support, s.sparseSize, s.classes, `${field}.support`);
    if (s.sparseWeights?.length !== support.cols.length) throw new DtdrError('artifact', 'linear head one-hot values do not match their support', { field: `${field}.sparseWeights` });
    return support;
  }
}

/** A saved CSR support, checked: start rises from 0 to the column count, columns ascend within a row and name a class. */
function checkedSupport(s: { start: number[]; cols: number[] }, rows: number, classes: number, field: string): SparseSupport {
  const fail = (what: string): never => {
    throw new DtdrError('artifact', `linear head support ${what}`, { field });
  };
  if (!Array.isArray(s?.start) || !Array.isArray(s.cols) || s.start.length !== rows + 1) fail(`must list ${rows + 1} row starts and the columns`);
  const integer = (x: unknown) => Number.isInteger(x) && (x as number) >= 0 && (x as number) <= 0xffffffff;
  if (!s.start.every(integer) || !s.cols.every(integer)) fail('must hold integers ≥ 0 only');
  const start = Uint32Array.from(s.start);
  const cols = Uint32Array.from(s.cols);
  if (start[0] !== 0 || start[rows] !== cols.length) fail('row starts must run from 0 to the column count');
  for (let r = 0; r < rows; r++) {
    if (start[r + 1] < start[r]) fail(`row ${r} ends before it starts`);
    for (let j = start[r]; j < start[r + 1]; j++) if (cols[j] >= classes || (j > start[r] && cols[j] <= cols[j - 1])) fail(`row ${r} has columns out of order or beyond ${classes} classes`);
  }
  return { start, cols };
}

/**
 * The support of each one-hot row: the labels that followed its feature in `data` (every example
 * where it is active, its acceptable labels), merged with `from` (a trained head's support).
 */
function targetSupport(data: LinearHeadData, from?: SparseSupport): SparseSupport {
  const rows = Array.from({ length: data.sparseSize }, () => new Set<number>());
  if (from) for (let r = 0; r < rows.length; r++) for (let j = from.start[r]; j < from.start[r + 1]; j++) rows[r].add(from.cols[j]);
  data.sparse?.forEach((active, i) => {
    for (const s of active) {
      for (const t of Array.from(data.targets[i])) rows[s].add(t);
      for (const t of Array.from(data.related?.[i] ?? [])) rows[s].add(t);
    }
  });
  const start = new Uint32Array(rows.length + 1);
  rows.forEach((set, r) => (start[r + 1] = start[r] + set.size));
  const cols = new Uint32Array(start[rows.length]);
  rows.forEach((set, r) => cols.set(Float64Array.from(set).sort(), start[r]));
  return { start, cols };
}

function standardisation(dense: Float32Array[], dim: number) {
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
 * acceptable labels of each example); ml-matrix solves the small (dim+1)² system.
 */
function ridgeWarmStart(data: LinearHeadData, mean: Float64Array, std: Float64Array, dim: number): Float64Array {
  const C = data.classes;
  const D = dim + 1;
  const n = data.dense.length;
  const xtx = new Float64Array(D * D);
  const xty = new Float64Array(D * C);
  const x = new Float64Array(D);
  for (let i = 0; i < n; i++) {
    const row = data.dense[i];
    for (let d = 0; d < dim; d++) x[d] = (row[d] - mean[d]) / std[d];
    x[dim] = 1;
    for (let a = 0; a < D; a++) {
      const xa = x[a];
      if (xa === 0) continue;
      const base = a * D;
      for (let b = a; b < D; b++) xtx[base + b] += xa * x[b];
    }
    const t = data.targets[i];
    const share = 1 / t.length;
    for (let k = 0; k < t.length; k++) {
      const c = t[k];
      for (let a = 0; a < D; a++) xty[a * C + c] += x[a] * share;
    }
  }
  const A = new Matrix(D, D);
  for (let a = 0; a < D; a++) for (let b = a; b < D; b++) {
    A.set(a, b, xtx[a * D + b]);
    A.set(b, a, xtx[a * D + b]);
  }
  for (let d = 0; d < dim; d++) A.set(d, d, A.get(d, d) + n * 1e-3);
  const B = new Matrix(D, C);
  for (let a = 0; a < D; a++) for (let c = 0; c < C; c++) B.set(a, c, xty[a * C + c]);
  const W = solve(A, B);
  // Regression outputs are probabilities; scale them into a useful logit range.
  return Float64Array.from(W.to1DArray(), (w) => w * 8);
}

export interface EpochReport {
  epoch: number;
  epochs: number;
  loss: number;
}

/** Trains the head; yields the mean training loss after each epoch and returns the head. */
export function* trainLinearHead(data: LinearHeadData, options: LinearHeadOptions = {}, init?: LinearHead): Generator<EpochReport, LinearHead> {
  const o = { ...LINEAR_HEAD_DEFAULTS, ...options };
  const n = data.dense.length;
  if (n === 0) throw new DtdrError('data', 'no training examples', { hint: 'give at least one demonstration' });
  const dim = data.dense[0].length;
  const C = data.classes;
  const S = data.sparseSize;
  // Online learning continues from a trained head (its standardisation kept); else a ridge start.
  if (init && (init.dim !== dim || init.classes !== C || init.sparseSize !== S)) {
    throw new DtdrError('options', `cannot continue a ${init.dim}→${init.classes} head on ${dim}→${C} data`);
  }
  const { mean, std } = init ? { mean: init.mean, std: init.std } : standardisation(data.dense, dim);
  const W = init ? Float64Array.from(init.weights) : ridgeWarmStart(data, mean, std, dim);
  // A head keeps the one-hot layout it was trained with; a CSR support grows with new examples.
  const csr = init ? init.support !== undefined : o.sparseSupport === 'targets' || (o.sparseSupport === 'auto' && S * C > DENSE_ONE_HOT_LIMIT);
  const support = csr ? targetSupport(data, init?.support) : undefined;
  let E: Float64Array;
  if (!support) E = init ? Float64Array.from(init.sparseWeights) : new Float64Array(S * C);
  else {
    E = new Float64Array(support.cols.length);
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
  }
  const head = new LinearHead(dim, C, S, mean, std, W, E, support);
  /** Row r's weights are E[rowStart(r) .. rowStart(r + 1)): labels support.cols[j] with CSR, j − r·C in full rows. */
  const rowStart = support ? (r: number) => support.start[r] : (r: number) => r * C;

  const mW = new Float64Array(W.length), vW = new Float64Array(W.length);
  // dLoss/dW accumulated per batch as rank-1 updates in the float32 kernel.
  const gW = outerAccumulator(dim + 1, C);
  const mE = new Float64Array(E.length), vE = new Float64Array(E.length), gE = new Float64Array(E.length);
  const touched = new Uint8Array(S); // sparse rows with a gradient in this batch
  const b1 = 0.9, b2 = 0.999, eps = 1e-8;
  let step = 0;
  const random = seededRandom(o.seed + 1);
  const indices = Array.from({ length: n }, (_, i) => i);
  const p = new Float64Array(C);
  // Standardise once: every epoch reads the same rows (bias column last).
  const D = dim + 1;
  const X = new Float64Array(n * D);
  data.dense.forEach((x, i) => {
    for (let d = 0; d < dim; d++) X[i * D + d] = (x[d] - mean[d]) / std[d];
    X[i * D + dim] = 1;
  });

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
        kernelW.times(X.subarray(row, row + D), p);
        const sp = data.sparse?.[i];
        if (sp && support) {
          for (let k = 0; k < sp.length; k++) for (let j = support.start[sp[k]]; j < support.start[sp[k] + 1]; j++) p[support.cols[j]] += E[j];
        } else if (sp) for (let k = 0; k < sp.length; k++) {
          const e = sp[k] * C;
          for (let c = 0; c < C; c++) p[c] += E[e + c];
        }
        let max = -Infinity;
        for (let c = 0; c < C; c++) if (p[c] > max) max = p[c];
        let sum = 0;
        for (let c = 0; c < C; c++) sum += p[c] = Math.exp(p[c] - max);
        for (let c = 0; c < C; c++) p[c] /= sum;
        const t = data.targets[i];
        const share = 1 / t.length;
        for (let k = 0; k < t.length; k++) {
          lossSum -= share * Math.log(p[t[k]] + 1e-12);
          p[t[k]] -= share; // p is now dLoss/dlogits
        }
        gW.add(X.subarray(row, row + D), p);
        if (sp) {
          for (let k = 0; k < sp.length; k++) {
            const e = rowStart(sp[k]);
            const to = rowStart(sp[k] + 1);
            if (!touched[sp[k]]) {
              touched[sp[k]] = 1;
              gE.fill(0, e, to);
            }
            if (support) for (let j = e; j < to; j++) gE[j] += p[support.cols[j]];
            else for (let c = 0; c < C; c++) gE[e + c] += p[c];
          }
        }
      }
      step++;
      const scale = 1 / (end - start);
      const lr = (o.learningRate * Math.sqrt(1 - b2 ** step)) / (1 - b1 ** step);
      const grad = gW.grad;
      const stride = gW.stride;
      for (let d = 0, k = 0; d < D; d++) {
        for (let c = 0; c < C; c++, k++) {
          const g = grad[d * stride + c] * scale + o.l2 * W[k];
          mW[k] = b1 * mW[k] + (1 - b1) * g;
          vW[k] = b2 * vW[k] + (1 - b2) * g * g;
          W[k] -= (lr * mW[k]) / (Math.sqrt(vW[k]) + eps);
        }
      }
      // Lazy Adam for the one-hot rows: only rows seen in this batch move.
      for (let s = 0; s < S; s++) {
        if (!touched[s]) continue;
        touched[s] = 0;
        for (let k = rowStart(s); k < rowStart(s + 1); k++) {
          const g = gE[k] * scale + o.l2 * E[k];
          mE[k] = b1 * mE[k] + (1 - b1) * g;
          vE[k] = b2 * vE[k] + (1 - b2) * g * g;
          E[k] -= (lr * mE[k]) / (Math.sqrt(vE[k]) + eps);
        }
      }
    }
    yield { epoch, epochs: o.epochs, loss: lossSum / n };
  }
  return head;
}

/**
 * A reservoir sample of a head's training examples (Vitter's algorithm R, seeded), kept with the
 * model so online learning can rehearse old examples next to new ones: fine-tuning on new
 * demonstrations alone drifts away from what the head knew.
 */
export class ReplayBuffer {
  readonly dense: Float32Array[] = [];
  readonly sparse: Uint32Array[] = [];
  readonly targets: number[][] = [];

  constructor(readonly capacity = 1024, public seen = 0) {}

  add(data: LinearHeadData): void {
    for (let i = 0; i < data.dense.length; i++) {
      this.seen++;
      const slot = this.dense.length < this.capacity ? this.dense.length : Math.floor(hashUnit(this.seen) * this.seen);
      if (slot >= this.capacity) continue;
      this.dense[slot] = Float32Array.from(data.dense[i]);
      this.sparse[slot] = Uint32Array.from(data.sparse?.[i] ?? []);
      this.targets[slot] = Array.from(data.targets[i]);
    }
  }

  /** The new examples followed by up to `ratio`× as many rehearsed ones. */
  mix(data: LinearHeadData, ratio = 2): LinearHeadData {
    const n = Math.min(this.dense.length, Math.round(data.dense.length * ratio));
    const picks = Array.from({ length: this.dense.length }, (_, i) => i);
    shuffleInPlace(picks, seededRandom(this.seen));
    const chosen = picks.slice(0, n);
    return {
      ...data,
      dense: [...data.dense, ...chosen.map((i) => this.dense[i])],
      targets: [...data.targets, ...chosen.map((i) => this.targets[i])],
      ...(data.sparse ? { sparse: [...data.sparse, ...chosen.map((i) => this.sparse[i])] } : {}),
    };
  }

  state(): ReplayState {
    return { capacity: this.capacity, seen: this.seen, dense: this.dense.map((v) => Array.from(v)), sparse: this.sparse.map((v) => Array.from(v)), targets: this.targets };
  }

  /**
   * A buffer from `state()`. With `check` (a loaded file), the saved examples are validated:
   * vectors of the head's dimension, one-hot ids below its one-hot size and labels below its
   * class count (else a DtdrError naming `check.field`).
   */
  static fromState(s: ReplayState | undefined, check?: { field: string; dim: number; sparseSize: number; classes: number }): ReplayBuffer {
    if (check && s !== undefined && s !== null) {
      const f = check.field;
      object(f, s);
      optNum(`${f}.capacity`, s.capacity, { min: 1, max: 1e9, integer: true });
      optNum(`${f}.seen`, s.seen, { min: 0, integer: true });
      if (s.dense !== undefined || s.targets !== undefined) {
        const dense = array(`${f}.dense`, s.dense);
        array(`${f}.targets`, s.targets, dense.length);
        if (s.sparse !== undefined) array(`${f}.sparse`, s.sparse, dense.length);
        dense.forEach((v, i) => {
          numbers(`${f}.dense[${i}]`, v, check.dim, COORDINATE);
          if (s.sparse?.[i] !== undefined) numbers(`${f}.sparse[${i}]`, s.sparse[i], undefined, { min: 0, max: check.sparseSize - 1, integer: true });
          numbers(`${f}.targets[${i}]`, s.targets[i], undefined, { min: 0, max: check.classes - 1, integer: true });
        });
      }
    }
    const buffer = new ReplayBuffer(Number(s?.capacity) || 1024, Number(s?.seen) || 0);
    if (s && Array.isArray(s.dense) && Array.isArray(s.targets) && s.dense.length === s.targets.length) {
      s.dense.forEach((v, i) => {
        buffer.dense.push(Float32Array.from(v));
        buffer.sparse.push(Uint32Array.from(s.sparse?.[i] ?? []));
        buffer.targets.push(s.targets[i].map(Number));
      });
    }
    return buffer;
  }
}

export interface ReplayState {
  capacity: number;
  seen: number;
  dense: number[][];
  sparse: number[][];
  targets: number[][];
}

/** A deterministic uniform number in [0, 1) from an integer (reservoir slots without RNG state). */
function hashUnit(n: number): number {
  let x = Math.imul(n ^ 0x9e3779b9, 0x85ebca6b);
  x = Math.imul(x ^ (x >>> 13), 0xc2b2ae35);
  x ^= x >>> 16;
  return (x >>> 0) / 4294967296;
}

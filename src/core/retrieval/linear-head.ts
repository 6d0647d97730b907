import { expTwin } from './kernels/exp.js';
import { packMatrix, replaceIfChanged, type PackedMatrix } from './kernels/matvec.js';
import { DtdrError } from '../base/errors.js';
import { COORDINATE, numbers, object } from '../base/validate.js';

/**
 * A one-layer softmax classifier over standardised dense features (an embedding) plus optional
 * sparse one-hot features (e.g. the last tools called), trained with Adam on soft targets
 * (uniform over the acceptable labels of a step). Warm-started from the ridge-regression
 * solution (an LU solve), which cuts the epochs needed; the hot loops are plain typed arrays.
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

export const LINEAR_HEAD_DEFAULTS: Required<LinearHeadOptions> = {
  epochs: 8,
  learningRate: 0.01,
  batchSize: 128,
  l2: 1e-5,
  seed: 0,
  sparseSupport: 'all',
};

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
  /**
   * With `sparseSupport: 'targets'`: more labels per example its active one-hot rows may move (e.g. the rest of its
   * plan).
   */
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
  /**
   * The last dense input and its logits before the one-hot rows (x·W + b): every step of a plan has the same request.
   */
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
  /** Where baseMax is (the first such label; −1 when no base logit is a number). */
  private baseArg = -1;
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
      let baseArg = -1;
      for (let c = 0; c < C; c++) {
        if ((last.logits[c] += W[bias + c]) > baseMax) {
          baseMax = last.logits[c];
          baseArg = c;
        }
      }
      this.baseMax = baseMax;
      this.baseArg = baseArg;
    }
    const base = last.logits;
    const E = this.sparseWeights;
    const n = sparse?.length ?? 0;
    if (this.support) return this.addSupportRows(base, sparse, out);
    // The one-hot rows in order, up to three a pass over the classes (a loop of fixed shape runs
    // several times faster than one over a variable number of rows): each label's sum adds the rows
    // in the same order as one pass each, so the logits are the same to the bit.
    // Two spare entries: a pass reads three row offsets, whatever it uses.
    if (this.rowScratch.length < n + 2) this.rowScratch = new Uint32Array(n + 2);
    const rows = this.rowScratch;
    for (let k = 0; k < n; k++) rows[k] = sparse![k] * C;
    let from: Float64Array = base;
    let k = 0;
    do {
      const m = Math.min(3, n - k);
      const r0 = rows[k];
      const r1 = rows[k + 1];
      const r2 = rows[k + 2];
      if (m === 3) for (let c = 0; c < C; c++) out[c] = from[c] + E[r0 + c] + E[r1 + c] + E[r2 + c];
      else if (m === 2) for (let c = 0; c < C; c++) out[c] = from[c] + E[r0 + c] + E[r1 + c];
      else if (m === 1) for (let c = 0; c < C; c++) out[c] = from[c] + E[r0 + c];
      else for (let c = 0; c < C; c++) out[c] = from[c];
      from = out;
      k += m;
    } while (k < n);
    let max = -Infinity;
    for (let c = 0; c < C; c++) if (out[c] > max) max = out[c];
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
    if (this.baseArg >= 0 && !mark[this.baseArg]) {
      // The base's best label kept its logit: the largest is it or a moved label, no pass over every label.
      max = this.baseMax;
      for (let i = 0; i < count; i++) if (out[moved[i]] > max) max = out[moved[i]];
    } else for (let c = 0; c < C; c++) if (out[c] > max) max = out[c];
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
      dim: this.dim,
      classes: this.classes,
      sparseSize: this.sparseSize,
      mean: round(this.mean),
      std: round(this.std),
      weights: round(this.weights),
      sparseWeights: round(this.sparseWeights),
      ...(this.support
        ? { support: { start: Array.from(this.support.start), cols: Array.from(this.support.cols) } }
        : {}),
    };
  }

  /**
   * A head from `state()`, validated: consistent shapes, finite weights, standard deviations > 0 (else a DtdrError
   * naming `field`).
   */
  static fromState(s: LinearHeadState, field = 'state.head'): LinearHead {
    const support = LinearHead.checkState(s, field);
    return new LinearHead(
      s.dim,
      s.classes,
      s.sparseSize,
      Float64Array.from(s.mean),
      Float64Array.from(s.std),
      Float64Array.from(s.weights),
      Float64Array.from(s.sparseWeights),
      support,
    );
  }

  /** Validates a saved head (see fromState); returns its CSR support, if any. */
  static checkState(s: LinearHeadState, field = 'state.head'): SparseSupport | undefined {
    object(field, s);
    const ok =
      s &&
      Number.isInteger(s.dim) &&
      Number.isInteger(s.classes) &&
      Number.isInteger(s.sparseSize) &&
      s.dim > 0 &&
      s.classes > 0 &&
      s.sparseSize >= 0 &&
      s.mean?.length === s.dim &&
      s.std?.length === s.dim &&
      s.weights?.length === (s.dim + 1) * s.classes;
    if (!ok) throw new DtdrError('artifact', 'linear head state has inconsistent shapes', { field });
    // Bounds that keep standardised inputs times weights finite in the float32 kernel.
    numbers(`${field}.mean`, s.mean, undefined, { min: -1e4, max: 1e4 });
    numbers(`${field}.std`, s.std, undefined, { min: 1e-24 });
    numbers(`${field}.weights`, s.weights, undefined, COORDINATE);
    numbers(`${field}.sparseWeights`, s.sparseWeights, undefined, COORDINATE);
    if (s.support === undefined) {
      if (s.sparseWeights?.length !== s.sparseSize * s.classes)
        throw new DtdrError('artifact', 'linear head one-hot rows have inconsistent shapes', {
          field: `${field}.sparseWeights`,
        });
      return undefined;
    }
    const support = checkedSupport(s.support, s.sparseSize, s.classes, `${field}.support`);
    if (s.sparseWeights?.length !== support.cols.length)
      throw new DtdrError('artifact', 'linear head one-hot values do not match their support', {
        field: `${field}.sparseWeights`,
      });
    return support;
  }
}

/**
 * A saved CSR support, checked: start rises from 0 to the column count, columns ascend within a row and name a class.
 */
function checkedSupport(
  s: { start: number[]; cols: number[] },
  rows: number,
  classes: number,
  field: string,
): SparseSupport {
  const fail = (what: string): never => {
    throw new DtdrError('artifact', `linear head support ${what}`, { field });
  };
  if (!Array.isArray(s?.start) || !Array.isArray(s.cols) || s.start.length !== rows + 1)
    fail(`must list ${rows + 1} row starts and the columns`);
  const integer = (x: unknown) => Number.isInteger(x) && (x as number) >= 0 && (x as number) <= 0xffffffff;
  if (!s.start.every(integer) || !s.cols.every(integer)) fail('must hold integers ≥ 0 only');
  const start = Uint32Array.from(s.start);
  const cols = Uint32Array.from(s.cols);
  if (start[0] !== 0 || start[rows] !== cols.length) fail('row starts must run from 0 to the column count');
  for (let r = 0; r < rows; r++) {
    if (start[r + 1] < start[r]) fail(`row ${r} ends before it starts`);
    for (let j = start[r]; j < start[r + 1]; j++)
      if (cols[j] >= classes || (j > start[r] && cols[j] <= cols[j - 1]))
        fail(`row ${r} has columns out of order or beyond ${classes} classes`);
  }
  return { start, cols };
}

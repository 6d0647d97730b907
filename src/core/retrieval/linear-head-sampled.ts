/**
 * Training the linear head over many labels with a sampled softmax: each minibatch's softmax runs
 * over the labels its examples need (their acceptable labels, negatives for one another) and a few
 * seeded uniform negatives, with the log-Q correction for the sampled ones, instead of over every
 * label. A full softmax costs examples × labels × dim per epoch: at 16,000 tools and 80,000 steps
 * that is hours of training for the cross-fitting folds; the sampled one costs examples × (batch
 * labels + negatives) × dim. The head it returns is an ordinary LinearHead (CSR one-hot rows):
 * ranking scores every label as before.
 */
import { seededRandom, shuffleInPlace } from '../base/random.js';
import { LinearHead, type LinearHeadData, type LinearHeadOptions } from './linear-head.js';
import {
  headProblem,
  ridgeWarmStart,
  standardisation,
  targetSupport,
  type EpochReport,
} from './linear-head-training.js';
import { sampledProducts, type SampledProducts } from './kernels/training.js';

/**
 * Labels above which DTDR-G's heads train with a sampled softmax (Seal-Tools' 4,077 and smaller sets keep the full
 * one).
 */
export const SAMPLED_SOFTMAX_ABOVE = 6000;
/** Uniform negatives drawn per minibatch, beside the batch's own acceptable labels. */
export const SAMPLED_NEGATIVES = 64;
/**
 * Examples a sampled head trains on in all, about (epochs fewer when there are more examples): Adam steps, not epochs,
 * set how far it gets.
 */
export const SAMPLED_EXAMPLE_PASSES = 250_000;

/** Trains a head (CSR one-hot rows) with a sampled softmax; yields each epoch's mean sampled loss. */
export function* trainSampledHead(
  data: LinearHeadData,
  options: LinearHeadOptions = {},
  negatives = SAMPLED_NEGATIVES,
  jsOnly = false,
): Generator<EpochReport, LinearHead> {
  const { o, n, dim, C, S } = headProblem(data, options);
  const D = dim + 1;
  const { mean, std } = standardisation(data.dense, dim);
  const W = ridgeWarmStart(data, mean, std, dim, true); // D × C, row-major (bias row last)
  // The products (most of the time) run in the f64x2 kernel, `jsOnly` forces its JS twin (tests):
  // the same bits. Class-major weights there: the weights of label c are Wc[c·D .. c·D + D).
  const products = sampledProducts(n, D, C, jsOnly);
  const { W: Wc, G: gW, X, cand, z } = products;
  for (let d = 0; d < D; d++) for (let c = 0; c < C; c++) Wc[c * D + d] = W[d * C + c];
  const support = targetSupport(data);
  const { start, cols } = support;
  const E = new Float64Array(cols.length);

  data.dense.forEach((x, i) => {
    for (let d = 0; d < dim; d++) X[i * D + d] = (x[d] - mean[d]) / std[d];
    X[i * D + dim] = 1;
  });
  const mW = new Float64Array(Wc.length),
    vW = new Float64Array(Wc.length);
  const mE = new Float64Array(E.length),
    vE = new Float64Array(E.length),
    gE = new Float64Array(E.length);
  const random = seededRandom(o.seed + 1);
  const draw = seededRandom(o.seed + 97);
  const indices = Array.from({ length: n }, (_, i) => i);
  /** Position of a label in this batch's candidate list, or -1. */
  const slot = new Int32Array(C).fill(-1);
  // Per one-hot row met in a batch: its pairs pairLabel/pairEntry[rowFrom[r] .. rowTo[r]) (rowFrom −1: not met yet).
  const rowFrom = new Int32Array(S).fill(-1);
  const rowTo = new Int32Array(S);
  const pairLabel: number[] = [];
  const pairEntry: number[] = [];
  const rowList: number[] = [];
  const state: BatchState = {
    products,
    C,
    D,
    X,
    Wc,
    E,
    gW,
    gE,
    mW,
    vW,
    mE,
    vE,
    start,
    cols,
    slot,
    cand,
    z,
    rowFrom,
    rowTo,
    pairLabel,
    pairEntry,
    rowList,
    step: 0,
    draw,
    negatives,
    options: o,
    sparse: data.sparse,
    targets: data.targets,
  };
  for (let epoch = 1; epoch <= o.epochs; epoch++) {
    shuffleInPlace(indices, random);
    let lossSum = 0;
    for (let from = 0; from < n; from += o.batchSize)
      lossSum += sampledBatch(state, indices, from, Math.min(n, from + o.batchSize));
    yield { epoch, epochs: o.epochs, loss: lossSum / n };
  }
  for (let d = 0; d < D; d++) for (let c = 0; c < C; c++) W[d * C + c] = Wc[c * D + d];
  return new LinearHead(dim, C, S, mean, std, W, E, support);
}

interface BatchState {
  products: SampledProducts;
  C: number;
  D: number;
  X: Float64Array;
  Wc: Float64Array;
  E: Float64Array;
  gW: Float64Array;
  gE: Float64Array;
  mW: Float64Array;
  vW: Float64Array;
  mE: Float64Array;
  vE: Float64Array;
  start: Uint32Array;
  cols: Uint32Array;
  slot: Int32Array;
  cand: Uint32Array;
  z: Float64Array;
  rowFrom: Int32Array;
  rowTo: Int32Array;
  pairLabel: number[];
  pairEntry: number[];
  rowList: number[];
  step: number;
  draw: () => number;
  negatives: number;
  options: Required<LinearHeadOptions>;
  sparse?: Uint32Array[];
  targets: ArrayLike<number>[];
}

/**
 * One minibatch: the sampled softmax's gradients over the batch's labels, then a lazy Adam step. Returns the batch's
 * summed loss.
 */
function sampledBatch(s: BatchState, indices: number[], from: number, to: number): number {
  const { C, D, Wc, E, gW, gE, slot, cand, z, rowFrom, rowTo, pairLabel, pairEntry, rowList, targets } = s;
  const o = s.options;
  let lossSum = 0;
  const { m, positives } = batchLabels(s, indices, from, to);
  // Each sampled negative stands for (C − positives) / sampled labels outside the batch.
  const correction = m > positives ? Math.log((C - positives) / (m - positives)) : 0;
  for (let k = 0; k < m; k++) gW.fill(0, cand[k] * D, cand[k] * D + D);
  batchPairs(s, indices, from, to);
  for (let b = from; b < to; b++) {
    const i = indices[b];
    s.products.dots(i, m, positives, correction);
    const sp = s.sparse?.[i];
    if (sp) {
      for (let a = 0; a < sp.length; a++) {
        for (let p = rowFrom[sp[a]]; p < rowTo[sp[a]]; p++) z[pairLabel[p]] += E[pairEntry[p]];
      }
    }
    let max = -Infinity;
    for (let k = 0; k < m; k++) if (z[k] > max) max = z[k];
    let sum = 0;
    for (let k = 0; k < m; k++) sum += z[k] = Math.exp(z[k] - max);
    for (let k = 0; k < m; k++) z[k] /= sum;
    const t = targets[i];
    const share = 1 / t.length;
    for (let k = 0; k < t.length; k++) {
      const at = slot[t[k]];
      lossSum -= share * Math.log(z[at] + 1e-12);
      z[at] -= share; // z is now dLoss/dlogits
    }
    s.products.accumulate(i, m);
    if (sp) {
      for (let a = 0; a < sp.length; a++) {
        for (let p = rowFrom[sp[a]]; p < rowTo[sp[a]]; p++) gE[pairEntry[p]] += z[pairLabel[p]];
      }
    }
  }
  s.step++;
  const b1 = 0.9,
    b2 = 0.999,
    eps = 1e-8;
  const { mW, vW, mE, vE } = s;
  const scale = 1 / (to - from);
  const lr = (o.learningRate * Math.sqrt(1 - b2 ** s.step)) / (1 - b1 ** s.step);
  // Lazy Adam: only the batch's labels and its rows' entries at those labels move.
  for (let k = 0; k < m; k++) {
    const w = cand[k] * D;
    for (let e = w; e < w + D; e++) {
      const g = gW[e] * scale + o.l2 * Wc[e];
      mW[e] = b1 * mW[e] + (1 - b1) * g;
      vW[e] = b2 * vW[e] + (1 - b2) * g * g;
      Wc[e] -= (lr * mW[e]) / (Math.sqrt(vW[e]) + eps);
    }
  }
  for (const r of rowList) {
    for (let p = rowFrom[r]; p < rowTo[r]; p++) {
      const j = pairEntry[p];
      const g = gE[j] * scale + o.l2 * E[j];
      mE[j] = b1 * mE[j] + (1 - b1) * g;
      vE[j] = b2 * vE[j] + (1 - b2) * g * g;
      E[j] -= (lr * mE[j]) / (Math.sqrt(vE[j]) + eps);
    }
    rowFrom[r] = -1;
  }
  rowList.length = 0;
  for (let k = 0; k < m; k++) slot[cand[k]] = -1;
  return lossSum;
}

/** The batch's labels in `s.cand` (slots in `s.slot`): its examples' acceptable labels, then uniform negatives. */
function batchLabels(s: BatchState, indices: number[], from: number, to: number): { m: number; positives: number } {
  const { C, slot, cand, targets } = s;
  let m = 0;
  for (let b = from; b < to; b++) {
    const t = targets[indices[b]];
    for (let k = 0; k < t.length; k++) {
      const c = t[k];
      if (slot[c] < 0) {
        slot[c] = m;
        cand[m++] = c;
      }
    }
  }
  const positives = m;
  for (let k = 0; k < s.negatives && m < C; k++) {
    const c = Math.floor(s.draw() * C);
    if (slot[c] < 0) {
      slot[c] = m;
      cand[m++] = c;
    }
  }
  return { m, positives };
}

/**
 * Each one-hot row of the batch met once: its entries at the batch's labels, as (label slot,
 * entry) pairs in column order (`s.pairLabel`, `s.pairEntry`, a row's in [rowFrom, rowTo)), their
 * gradients zeroed. Rows hold every label their examples ever needed (thousands at 16,000 tools);
 * an example then visits the few hundred pairs, the same entries in the same order.
 */
function batchPairs(s: BatchState, indices: number[], from: number, to: number): void {
  const { gE, start, cols, slot, rowFrom, rowTo, pairLabel, pairEntry, rowList } = s;
  pairLabel.length = 0;
  pairEntry.length = 0;
  for (let b = from; b < to; b++) {
    const sp = s.sparse?.[indices[b]];
    if (!sp) continue;
    for (let a = 0; a < sp.length; a++) {
      const r = sp[a];
      if (rowFrom[r] >= 0) continue;
      rowFrom[r] = pairLabel.length;
      rowList.push(r);
      for (let j = start[r]; j < start[r + 1]; j++) {
        const k = slot[cols[j]];
        if (k < 0) continue;
        pairLabel.push(k);
        pairEntry.push(j);
        gE[j] = 0;
      }
      rowTo[r] = pairLabel.length;
    }
  }
}

/**
 * DTDR-G's head learns tools it never saw from the runs `learn` brings, and nothing else.
 *
 * The head stays as fitted for the tools the fit knew (trained on at each call, it drifted: see
 * learning.ts). But a tool the fit had no demonstrations of (left out of the training runs, or
 * added since) has a column that says "never" however many runs of it are learned, and the gate
 * trusts the head where the calls so far are familiar: a trained model that learned 40 runs of
 * such a tool ranked it below the first six on their own requests. So where the learned runs call
 * tools with no demonstrated step before the call, those tools' columns train on the runs and the
 * head's replay sample (the other tools' steps teach them where they are not wanted), with every
 * other column held as fitted: the other tools keep their logits, so their order among themselves
 * is unchanged. Columns of tools with a few demonstrated steps stay as fitted: retrained on the
 * replay sample and the new runs, those of UltraTool (a model of 1,333 runs learning 667 more)
 * ranked worse (MRR 0.575 against 0.630 on the test steps needing such a tool).
 */
import { addToReplay, mixWithReplay } from '../replay-buffer.js';
import type { Plan } from '../../base/types.js';
import { seededRandom, shuffleInPlace } from '../../base/random.js';
import { LinearHead, type LinearHeadData } from '../linear-head.js';
import { adamRange } from '../linear-head-training.js';
import type { Evidence } from './evidence.js';
import { examplesAt, headExamples } from './evidence-fit.js';
import type { ToolSide } from './tool-side.js';
import { sampledProducts } from '../kernels/training.js';

/**
 * One learn call's column training is bounded: it trains at most MAX_FRESH_COLUMNS columns on at most
 * MAX_COLUMN_EXAMPLES steps; the other new tools' columns wait (`pendingColumns`) and `learnMore` trains
 * them as many at a time, a call each, on the same examples (Dtdr runs those calls between tasks before
 * its learn resolves). Unbounded, a model of 260 tools that learned 667 runs at once trained about a
 * hundred columns on every step and held the thread for 18 s; capped with none left for later, ten new
 * tools learned in one call left two with columns that said "never", and their runs' steps were then
 * less often in the set than before they were learned.
 */
export const MAX_FRESH_COLUMNS = 4;
export const MAX_COLUMN_EXAMPLES = 2048;

/** The labels of tools `plans` call that had no demonstrated step (`counts`, before), by label. */
export function headNewTools(plans: readonly Plan[], side: ToolSide, counts: ArrayLike<number>): number[] {
  const fresh = new Set<number>();
  for (const plan of plans)
    for (const node of plan.nodes) {
      const f = side.index.get(node.tool);
      if (f !== undefined && f !== side.end && counts[f] === 0) fresh.add(f);
    }
  return [...fresh].sort((a, b) => a - b);
}

/** At most MAX_COLUMN_EXAMPLES examples: every one whose target is a fresh tool, then a seeded sample of the rest. */
function boundedExamples(all: LinearHeadData, fresh: ReadonlySet<number>, seed: number): LinearHeadData {
  if (all.dense.length <= MAX_COLUMN_EXAMPLES) return all;
  const [wanted, others]: number[][] = [[], []];
  all.targets.forEach((t, i) => (Array.from(t).some((c) => fresh.has(c)) ? wanted : others).push(i));
  shuffleInPlace(others, seededRandom(seed));
  return examplesAt(all, [...wanted, ...others].slice(0, Math.max(MAX_COLUMN_EXAMPLES, wanted.length)));
}

/** Full-batch Adam steps the fresh columns take (a convex problem in a few columns: it converges well within). */
const STEPS = 150;
const LEARNING_RATE = 0.05;

/**
 * Trains `ev.head`'s columns of the first MAX_FRESH_COLUMNS of `fresh` on `plans` and the replay sample, leaving the
 * rest to `learnMore`; the other columns stay as they are.
 */
export function learnHeadColumns(
  ev: Evidence,
  side: ToolSide,
  plans: Plan[],
  queries: Float32Array[],
  fresh: readonly number[],
): void {
  ev.pendingColumns = undefined;
  if (!ev.head || fresh.length === 0) return;
  const data = headExamples(side, plans, queries, ev.historyLength, ev.vocabulary);
  // Every replayed step: the new runs' steps are few, and the others say where the tool is not wanted.
  ev.pendingColumns = { labels: [...fresh], examples: mixWithReplay(ev.replay, data, Infinity), seed: ev.replay.seen };
  addToReplay(ev.replay, data);
  learnMoreColumns(ev);
}

/** Trains the next MAX_FRESH_COLUMNS of the pending columns; returns whether any are left. */
export function learnMoreColumns(ev: Evidence): boolean {
  const pending = ev.pendingColumns;
  if (!pending || !ev.head) return false;
  const cols = pending.labels.slice(0, MAX_FRESH_COLUMNS);
  const all = boundedExamples(pending.examples, new Set(cols), pending.seed);
  ev.head = trainColumns(ev.head, all.dense, all.sparse ?? [], all.targets, cols);
  pending.labels = pending.labels.slice(cols.length);
  if (pending.labels.length === 0) ev.pendingColumns = undefined;
  return ev.pendingColumns !== undefined;
}

/**
 * `head` with columns `cols` trained (full-batch Adam on the softmax cross-entropy over every
 * class, the other columns' logits fixed). A CSR head's one-hot rows keep their support: its fresh
 * columns learn from the request alone.
 */
function trainColumns(
  head: LinearHead,
  dense: readonly Float32Array[],
  sparse: readonly Uint32Array[],
  targets: readonly ArrayLike<number>[],
  cols: number[],
): LinearHead {
  const { dim, classes: C, mean, std } = head;
  const n = dense.length;
  const K = cols.length;
  const D = dim + 1;
  const oneHot = head.support === undefined;
  // The fresh columns' dense weights (bias last) are the kernel's W (column k: row k), the standardised requests its X:
  // it takes their products and accumulates their gradient G. Their one-hot weights (full rows) stay here.
  const kernel = sampledProducts(n, D, K);
  const { X, W, G, z, cand } = kernel;
  for (let k = 0; k < K; k++) cand[k] = k;
  // Each example's logits under the head as it is (the fixed ones).
  const fixed = new Float64Array(n * C);
  for (let i = 0; i < n; i++) {
    fixed.set(head.logits(dense[i], sparse[i], new Float64Array(C)), i * C);
    for (let d = 0; d < dim; d++) X[i * D + d] = (dense[i][d] - mean[d]) / std[d];
    X[i * D + dim] = 1;
  }
  const S = oneHot ? head.sparseSize : 0;
  const ones = new Float64Array(K * S);
  cols.forEach((c, k) => {
    for (let d = 0; d < D; d++) W[k * D + d] = head.weights[d * C + c];
    for (let s = 0; s < S; s++) ones[k * S + s] = head.sparseWeights[s * C + c];
  });
  // The other classes' part of each softmax normaliser, once: shift and Σ exp(z − shift) over them.
  const isFresh = new Uint8Array(C);
  for (const c of cols) isFresh[c] = 1;
  const [shift, rest] = [new Float64Array(n), new Float64Array(n)];
  for (let i = 0; i < n; i++) {
    let max = -Infinity;
    for (let c = 0; c < C; c++) if (!isFresh[c] && fixed[i * C + c] > max) max = fixed[i * C + c];
    let sum = 0;
    for (let c = 0; c < C; c++) if (!isFresh[c]) sum += Math.exp(fixed[i * C + c] - max);
    [shift[i], rest[i]] = [max, sum];
  }
  // No weight decay: with Adam it would move every one-hot weight no step uses by the full step size.
  const [mD, vD, mS, vS] = [K * D, K * D, K * S, K * S].map((size) => new Float64Array(size));
  const onesGrad = new Float64Array(K * S);
  for (let step = 1; step <= STEPS; step++) {
    G.fill(0);
    onesGrad.fill(0);
    for (let i = 0; i < n; i++) {
      const row = oneHot ? sparse[i] : undefined;
      kernel.dots(i, K, K, 0);
      let max = shift[i];
      for (let k = 0; k < K; k++) {
        if (row) for (let j = 0; j < row.length; j++) z[k] += ones[k * S + row[j]];
        if (z[k] > max) max = z[k];
      }
      let sum = rest[i] * Math.exp(shift[i] - max);
      for (let k = 0; k < K; k++) sum += z[k] = Math.exp(z[k] - max);
      const t = targets[i];
      for (let k = 0; k < K; k++) {
        // dLoss/dz = p − the class's share of the target, averaged over the examples.
        let grad = z[k] / sum;
        for (let j = 0; j < t.length; j++) if (t[j] === cols[k]) grad -= 1 / t.length;
        z[k] = grad / n;
        if (row) for (let j = 0; j < row.length; j++) onesGrad[k * S + row[j]] += z[k];
      }
      kernel.accumulate(i, K);
    }
    const lr = (LEARNING_RATE * Math.sqrt(1 - 0.999 ** step)) / (1 - 0.9 ** step);
    const h = { scale: 1, l2: 0, lr, b1: 0.9, b2: 0.999, eps: 1e-8 };
    adamRange(W, mD, vD, G, 0, K * D, h);
    adamRange(ones, mS, vS, onesGrad, 0, K * S, h);
  }
  const weights = Float64Array.from(head.weights);
  const sparseWeights = Float64Array.from(head.sparseWeights);
  cols.forEach((c, k) => {
    for (let d = 0; d < D; d++) weights[d * C + c] = W[k * D + d];
    for (let s = 0; s < S; s++) sparseWeights[s * C + c] = ones[k * S + s];
  });
  return new LinearHead(dim, C, head.sparseSize, mean, std, weights, sparseWeights, head.support);
}

/**
 * DTDR-G's head learns tools it hardly knew from the runs `learn` brings, and nothing else.
 *
 * The head stays as fitted for the tools the fit knew (trained on at each call, it drifted: see
 * learning.ts). But a tool the fit had no demonstrations of (left out of the training runs, or
 * added since) has a column that says "never" however many runs of it are learned, and the gate
 * trusts the head where the calls so far are familiar: a trained model that learned 40 runs of
 * such a tool ranked it below the first six on their own requests. So where the
 * learned runs call tools with fewer than FEW_DEMONSTRATIONS demonstrated steps before the call,
 * those tools' columns train on the runs and the head's replay sample (the other tools' steps
 * teach them where they are not wanted), with every other column held as fitted: the other
 * tools keep their logits, so their order among themselves is unchanged.
 */
import type { Plan } from '../../base/types.js';
import { seededRandom, shuffleInPlace } from '../../base/random.js';
import { LinearHead, type LinearHeadData } from '../linear-head.js';
import { FEW_DEMONSTRATIONS, type Evidence } from './evidence.js';
import { headExamples } from './evidence-fit.js';
import type { ToolSide } from './tool-side.js';

/**
 * The cost of one learn call's column training is bounded: it trains at most MAX_FRESH_COLUMNS columns, of the tools
 * with the fewest demonstrated steps (the others train at a later call that brings their runs, or in a refit), on at
 * most MAX_COLUMN_EXAMPLES steps. Unbounded, a model of 260 tools that learned 667 runs at once trained the columns
 * of every tool those runs call fewer than five times, on every step, and the learn call took 18 s instead of 0.2.
 */
export const MAX_FRESH_COLUMNS = 8;
export const MAX_COLUMN_EXAMPLES = 2048;

/**
 * The labels of tools `plans` call that had fewer than FEW_DEMONSTRATIONS demonstrated steps (`counts`, before):
 * at most MAX_FRESH_COLUMNS, the fewest demonstrated first (then by label).
 */
export function headNewTools(plans: readonly Plan[], side: ToolSide, counts: ArrayLike<number>): Set<number> {
  const fresh = new Set<number>();
  for (const plan of plans)
    for (const node of plan.nodes) {
      const f = side.index.get(node.tool);
      if (f !== undefined && f !== side.end && counts[f] < FEW_DEMONSTRATIONS) fresh.add(f);
    }
  const fewest = [...fresh].sort((a, b) => counts[a] - counts[b] || a - b);
  return new Set(fewest.slice(0, MAX_FRESH_COLUMNS));
}

/** At most MAX_COLUMN_EXAMPLES examples: every one whose target is a fresh tool, then a seeded sample of the rest. */
function boundedExamples(all: LinearHeadData, fresh: ReadonlySet<number>, seed: number): LinearHeadData {
  if (all.dense.length <= MAX_COLUMN_EXAMPLES) return all;
  const [wanted, others]: number[][] = [[], []];
  all.targets.forEach((t, i) => (Array.from(t).some((c) => fresh.has(c)) ? wanted : others).push(i));
  shuffleInPlace(others, seededRandom(seed));
  const keep = [...wanted, ...others].slice(0, Math.max(MAX_COLUMN_EXAMPLES, wanted.length));
  return {
    ...all,
    dense: keep.map((i) => all.dense[i]),
    targets: keep.map((i) => all.targets[i]),
    ...(all.sparse ? { sparse: keep.map((i) => all.sparse![i]) } : {}),
  };
}

/** Full-batch Adam steps the fresh columns take (a convex problem in a few columns: it converges well within). */
const STEPS = 150;
const LEARNING_RATE = 0.05;

/** Trains `ev.head`'s columns of `fresh` on `plans` and the replay sample; the other columns stay as they are. */
export function learnHeadColumns(
  ev: Evidence,
  side: ToolSide,
  plans: Plan[],
  queries: Float32Array[],
  fresh: ReadonlySet<number>,
): void {
  const head = ev.head;
  if (!head || fresh.size === 0) return;
  const data = headExamples(side, plans, queries, ev.historyLength, ev.vocabulary);
  // Every replayed step: the new runs' steps are few, and the others say where the tool is not wanted.
  const all = boundedExamples(ev.replay.mix(data, Infinity), fresh, ev.replay.seen);
  ev.head = trainColumns(head, all.dense, all.sparse ?? [], all.targets, [...fresh]);
  ev.replay.add(data);
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
  // Each example's logits under the head as it is (the fixed ones) and its standardised request.
  const fixed = new Float64Array(n * C);
  const X = new Float64Array(n * D);
  for (let i = 0; i < n; i++) {
    fixed.set(head.logits(dense[i], sparse[i], new Float64Array(C)), i * C);
    for (let d = 0; d < dim; d++) X[i * D + d] = (dense[i][d] - mean[d]) / std[d];
    X[i * D + dim] = 1;
  }
  // Parameters per fresh column: D dense weights (bias last), then its one-hot weights (full rows).
  const S = oneHot ? head.sparseSize : 0;
  const P = D + S;
  const theta = new Float64Array(K * P);
  cols.forEach((c, k) => {
    for (let d = 0; d < D; d++) theta[k * P + d] = head.weights[d * C + c];
    for (let s = 0; s < S; s++) theta[k * P + D + s] = head.sparseWeights[s * C + c];
  });
  const own = (i: number, k: number) => {
    let z = 0;
    for (let d = 0; d < D; d++) z += theta[k * P + d] * X[i * D + d];
    if (oneHot) for (const s of sparse[i] ?? []) z += theta[k * P + D + s];
    return z;
  };
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
  const [m, v, g] = [new Float64Array(K * P), new Float64Array(K * P), new Float64Array(K * P)];
  const z = new Float64Array(K);
  for (let step = 1; step <= STEPS; step++) {
    g.fill(0);
    for (let i = 0; i < n; i++) {
      let max = shift[i];
      for (let k = 0; k < K; k++) max = Math.max(max, (z[k] = own(i, k)));
      let sum = rest[i] * Math.exp(shift[i] - max);
      for (let k = 0; k < K; k++) sum += Math.exp(z[k] - max);
      const t = targets[i];
      for (let k = 0; k < K; k++) {
        // dLoss/dz = p − the class's share of the target.
        let grad = Math.exp(z[k] - max) / sum;
        for (let j = 0; j < t.length; j++) if (t[j] === cols[k]) grad -= 1 / t.length;
        for (let d = 0; d < D; d++) g[k * P + d] += (grad * X[i * D + d]) / n;
        if (oneHot) for (const s of sparse[i] ?? []) g[k * P + D + s] += grad / n;
      }
    }
    // No weight decay: with Adam it would move every one-hot weight no step uses by the full step size.
    const lr = (LEARNING_RATE * Math.sqrt(1 - 0.999 ** step)) / (1 - 0.9 ** step);
    for (let j = 0; j < K * P; j++) {
      m[j] = 0.9 * m[j] + 0.1 * g[j];
      v[j] = 0.999 * v[j] + 0.001 * g[j] * g[j];
      theta[j] -= (lr * m[j]) / (Math.sqrt(v[j]) + 1e-8);
    }
  }
  const weights = Float64Array.from(head.weights);
  const sparseWeights = Float64Array.from(head.sparseWeights);
  cols.forEach((c, k) => {
    for (let d = 0; d < D; d++) weights[d * C + c] = theta[k * P + d];
    for (let s = 0; s < S; s++) sparseWeights[s * C + c] = theta[k * P + D + s];
  });
  return new LinearHead(dim, C, head.sparseSize, mean, std, weights, sparseWeights, head.support);
}

/**
 * One step's signals and context for DTDR-G: the description signals (lexical, embedding, called,
 * schema, END), which need no demonstration, and the evidence signals (cluster and pooled graphs,
 * nearby tools, the head). To add a signal: name it in layout.ts, compute it here, give it a prior
 * weight in combine.ts.
 */
import { DependencyGraph } from '../graph.js';
import { dotAt } from '../kernels/rows.js';
import { packMatrix, replaceIfChanged } from '../kernels/matvec.js';
import type { Evidence } from './evidence.js';
import { headSlots } from './evidence.js';
import {
  BAG,
  CALLED,
  CG,
  C_CALLS,
  C_HEAD,
  C_MATCH,
  C_SERVED,
  C_SUPPORT,
  EMB,
  EMBU,
  ENDS,
  FLOOR_BAG,
  FLOOR_GRAPH,
  GG,
  G_MATCH,
  G_SUPPORT,
  HEAD,
  LEX,
  LEXU,
  S,
  SCHEMA,
} from './layout.js';
import type { ToolSide } from './tool-side.js';
import { LOGITS, MAX_BASIS, type LabelSet, type StepInput, type Workspace } from './workspace.js';

/**
 * Fills `w.x` (signal-major: x[s·L + f]) and `w.context` for one step. `without` zeroes signals
 * (ablations); `evidence` is undefined for a model trained on tools alone.
 */
export function computeSignals(
  side: ToolSide,
  ev: Evidence | undefined,
  input: StepInput,
  w: Workspace,
  neighbours: number,
  without: ReadonlySet<number>,
  graphOnly = false,
): void {
  const L = side.labels.length;
  const T = side.end;
  const { x, context } = w;
  // Zero only the rows this step does not overwrite in full (at 16,000 labels the whole matrix is
  // 700 KB a step): the embedding rows when descriptions are computed (their END entry is zeroed
  // here), the cluster graph whenever there is evidence, bag, pooled graph and head outside the
  // graph-only scoring.
  const rest = !graphOnly && ev !== undefined;
  const written = (s: number) =>
    ((s === EMB || s === EMBU) && !graphOnly) ||
    (s === CG && ev !== undefined) ||
    ((s === BAG || s === GG) && rest) ||
    (s === HEAD && rest && ev.head !== undefined);
  // Called, schema and END are zero off w.sparse (the labels the last step set): zero those labels
  // rather than three whole rows.
  const sparse = w.sparse;
  for (let i = 0; i < sparse.size; i++) {
    const f = sparse.list[i];
    x[CALLED * L + f] = 0;
    x[SCHEMA * L + f] = 0;
    x[ENDS * L + f] = 0;
  }
  sparse.reset();
  // The lexical rows of the same request (a plan's later steps) are kept: the plain row holds the
  // same scores and the unserved one is zero off the request's tools, which score() rewrites.
  const lexicalKept =
    !graphOnly &&
    w.lexicalRows !== undefined &&
    w.lexicalRows === side.lexical.kept(input.terms, LEXICAL_SCALE, side.lexicalOrder);
  if (!lexicalKept) w.lexicalRows = undefined;
  if (!rest) w.bagRow = false;
  for (let s = 0; s < S; s++)
    if (!written(s) && s !== CALLED && s !== SCHEMA && s !== ENDS && !(lexicalKept && (s === LEX || s === LEXU)))
      x.fill(0, s * L, s * L + L);
  x[EMB * L + T] = 0;
  x[EMBU * L + T] = 0;
  context.fill(0);
  context[0] = 1;
  w.known = false;
  const history = input.history;
  const called = [...new Set(history.filter((h) => h >= 0 && h < T))];
  if (!graphOnly) descriptionSignals(side, input, called, w);
  if (ev) evidenceSignals(side, ev, input, w, neighbours, graphOnly);
  for (const s of without) {
    x.fill(0, s * L, s * L + L);
    if (s === LEX || s === LEXU) w.lexicalRows = undefined;
    if (s === BAG) w.bagRow = false;
  }
}

/**
 * The called tools' directions, orthonormalised (Gram–Schmidt) into `w.basis`, and the request's
 * residual r = q − Σ γ_i c_i kept as coefficients γ over the called tools (`w.gamma`); returns how
 * many directions were kept and the squared length of q's projection on them.
 */
function projectCalled(
  side: ToolSide,
  q: Float32Array,
  called: number[],
  w: Workspace,
): { kept: number; projected: number } {
  const tv = side.toolVectors;
  const m = called.length;
  const d = side.dim;
  const basis = w.basis;
  const coef = w.coef;
  const gamma = w.gamma;
  gamma.fill(0, 0, m);
  let kept = 0;
  let projected = 0;
  for (let k = 0; k < m && k < MAX_BASIS; k++) {
    const c = called[k];
    const u = basis.subarray(kept * d, kept * d + d);
    const a = coef.subarray(kept * MAX_BASIS, kept * MAX_BASIS + MAX_BASIS);
    for (let j = 0; j < d; j++) u[j] = tv[c * d + j];
    a.fill(0);
    a[k] = 1;
    for (let b = 0; b < kept; b++) {
      const ub = basis.subarray(b * d, b * d + d);
      const ab = coef.subarray(b * MAX_BASIS, b * MAX_BASIS + MAX_BASIS);
      const dot = dotAt(u, 0, ub, 0, d);
      for (let j = 0; j < d; j++) u[j] -= dot * ub[j];
      for (let i = 0; i <= k; i++) a[i] -= dot * ab[i];
    }
    let norm = 0;
    for (let j = 0; j < d; j++) norm += u[j] * u[j];
    if (norm < 1e-8) continue;
    norm = Math.sqrt(norm);
    for (let j = 0; j < d; j++) u[j] /= norm;
    for (let i = 0; i <= k; i++) a[i] /= norm;
    const p = dotAt(q, 0, u, 0, d);
    projected += p * p;
    for (let i = 0; i <= k; i++) gamma[i] += p * a[i];
    kept++;
  }
  return { kept, projected };
}

/** The lexical scores' scale: the embedding signals' range. */
const LEXICAL_SCALE = 0.1;

/** The signals that need no demonstration: lexical, embedding, called, schema, END. */
function descriptionSignals(side: ToolSide, input: StepInput, called: number[], w: Workspace): void {
  const L = side.labels.length;
  const T = side.end;
  const d = side.dim;
  const { x, context } = w;
  const history = input.history;

  // Lexical, plain and history-aware, scaled to the embedding signals' range.
  const served = side.lexical.score(
    input.terms,
    called,
    x.subarray(LEX * L, LEX * L + L),
    x.subarray(LEXU * L, LEXU * L + L),
    { scale: LEXICAL_SCALE, orderDecay: side.lexicalOrder, plainWritten: w.lexicalRows !== undefined },
  );
  w.lexicalRows = side.lexical.kept(input.terms, LEXICAL_SCALE, side.lexicalOrder);
  context[C_SERVED] = served;
  context[C_CALLS] = Math.min(history.length, 4) / 4;

  // Embedding, plain and with the called tools' directions projected out (Gram–Schmidt). The
  // residual r = q − Σ γ_i c_i is kept as coefficients γ over the called tools, so that
  // r·t = q·t − Σ γ_i (c_i·t) reuses the plain dot products and cached similarity rows instead
  // of a second pass over every tool vector.
  const q = input.queryVector;
  const m = called.length;
  const gamma = w.gamma;
  const { kept, projected } = projectCalled(side, q, called, w);
  // |r|² = |q|² − Σ p_b² for an orthonormal basis.
  const rNorm = Math.sqrt(Math.max(0, dotAt(q, 0, q, 0, d) - projected));
  const rScale = rNorm > 1e-6 ? 1 / rNorm : 0;
  side.toolDots(q, x.subarray(EMB * L, EMB * L + T));
  if (kept === 0) {
    for (let f = 0; f < T; f++) x[EMBU * L + f] = m > 0 ? x[EMB * L + f] * rScale : x[EMB * L + f];
  } else {
    // r·t = q·t − Σ γ_i (c_i·t), one pass over the tools; the common one- and two-call cases unrolled.
    const rows = w.residualRows;
    const g = w.residualGammas;
    rows.length = 0;
    g.length = 0;
    for (let i = 0; i < Math.min(m, MAX_BASIS); i++) {
      if (gamma[i] === 0) continue;
      rows.push(side.similarityRow(called[i]));
      g.push(gamma[i]);
    }
    // In the kernel: one SIMD pass over the tools, the JS loop's operations in its order.
    w.kernel.residual(EMB, EMBU, rows, g, rScale, T);
  }

  const sparse = w.sparse;
  for (const c of called) {
    x[CALLED * L + c] = 1;
    sparse.add(c);
  }
  x[ENDS * L + T] = 1;
  sparse.add(T);

  // Schema evidence: the best share of a tool's required inputs that one called tool's outputs name.
  for (const c of called) {
    const { tools, shares } = side.inputsFedBy(c);
    for (let k = 0; k < tools.length; k++) {
      if (shares[k] > x[SCHEMA * L + tools[k]]) x[SCHEMA * L + tools[k]] = shares[k];
      sparse.add(tools[k]);
    }
  }
}

/** The signals demonstrations teach: cluster and pooled graphs, nearby tools, the head. */
function evidenceSignals(
  side: ToolSide,
  ev: Evidence,
  input: StepInput,
  w: Workspace,
  neighbours: number,
  graphOnly: boolean,
): void {
  const L = side.labels.length;
  const d = side.dim;
  const { x, context } = w;
  const history = input.history;
  const q = input.queryVector;
  const l = ev.historyLength;
  softAssign(ev, q, d, w, neighbours);
  const { top, weights, assigned } = w;
  const wSum = assigned.weightSum;
  const acc = w.acc; // all zero between uses
  // One key per history length, shared by every graph this step looks the history up in.
  const keys = w.keys;
  keys.length = 0;
  const keyOf = (j: number) => (keys[j] ??= DependencyGraph.key(history, j));
  let match = 0;
  let support = 0;
  const touched = w.touched;
  touched.reset();
  for (let i = 0; i < top.length; i++) {
    const weight = weights[i] / wSum;
    const graph = ev.graphs[top[i]];
    for (let j = l; j >= 1; j--) {
      const found = graph.lookupKey(keyOf(j));
      if (!found || found.total <= 0) continue;
      const { labels, weights: counts, total } = found;
      for (let k = 0; k < labels.length; k++) {
        acc[labels[k]] += (weight * counts[k]) / total;
        touched.add(labels[k]);
      }
      match += (weight * j) / l;
      support += weight * total;
      break;
    }
  }
  logSparse(x, CG * L, L, acc, touched, FLOOR_GRAPH);
  context[C_MATCH] = match;
  context[C_SUPPORT] = Math.min(1, Math.log1p(support) / Math.log(101));
  if (graphOnly) return;
  touched.clearValues(acc);
  // The bag signal depends on the soft assignment alone: a plan's later steps keep the row.
  if (!w.bagRow) {
    for (let i = 0; i < top.length; i++) {
      const weight = weights[i] / wSum;
      ev.bags[top[i]].forEach((share, label) => {
        acc[label] += weight * share;
        touched.add(label);
      });
    }
    logSparse(x, BAG * L, L, acc, touched, FLOOR_BAG);
    w.bagRow = true;
  }
  // Pooled graph with back-off to shorter histories.
  touched.clearValues(acc);
  pooledGraph(ev, keyOf, l, w);
  w.known = ev.global.lookupKey(keyOf(ev.global.maxHistory)) !== undefined;
  logSparse(x, GG * L, L, acc, touched, FLOOR_GRAPH);
  touched.clearValues(acc);
  if (ev.head) {
    const logits = ev.head.logits(q, headSlots(history, l, ev.vocabulary), w.logits);
    const max = ev.head.max;
    const logZ = ev.head.logNormaliser(logits, (shift) => w.kernel.run(LOGITS, L, shift, 1));
    w.kernel.logClip(LOGITS, logZ, HEAD);
    context[C_HEAD] = Math.exp(max - logZ);
  }
}

/** The k largest values of x[0 .. n), largest first (fewer when n < k). */
export function bestValues(x: Float32Array, n: number, k: number): number[] {
  const best: number[] = [];
  for (let f = 0; f < n; f++) {
    const v = x[f];
    if (best.length < k) {
      best.push(v);
      best.sort((a, b) => b - a);
    } else if (v > best[k - 1]) {
      best[k - 1] = v;
      best.sort((a, b) => b - a);
    }
  }
  return best;
}

/** The rank (1 = best) of value v among `best` (largest first): 1 + how many are larger. */
export function rankAmong(best: readonly number[], v: number): number {
  let lo = 0;
  let hi = best.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (best[mid] > v) lo = mid + 1;
    else hi = mid;
  }
  return lo + 1;
}

/** x[from + f] = log(values[f] + floor), computing logs only where values is non-zero. */
function logSparse(
  x: Float32Array,
  from: number,
  n: number,
  values: Float64Array,
  nonZero: LabelSet,
  floor: number,
): void {
  x.fill(Math.log(floor), from, from + n);
  const list = nonZero.list;
  for (let i = 0; i < nonZero.size; i++) x[from + list[i]] = Math.log(values[list[i]] + floor);
}

/** The request's soft assignment to its nearest clusters (w.top, w.weights, w.assigned), kept while the request is. */
function softAssign(ev: Evidence, q: Float32Array, d: number, w: Workspace, neighbours: number): void {
  const k = ev.k;
  const packed = (ev.packedCentroids ??= packMatrix(ev.centroids, k, d));
  const m = Math.min(neighbours, k);
  const top = w.top;
  const weights = w.weights;
  // The soft assignment depends on the request alone: a plan's later steps reuse it (learning
  // moves centroids and drops the packed matrix, which starts a new assignment).
  const assigned = w.assigned;
  const newQuery = replaceIfChanged(assigned.query, q);
  if (newQuery || assigned.centroids !== packed || assigned.m !== m) {
    const dots = w.dots;
    packed.times(q, dots);
    top.length = 0;
    for (let c = 0; c < k; c++) {
      if (top.length < m) {
        top.push(c);
        if (top.length === m) top.sort((a, b) => dots[b] - dots[a]);
      } else if (dots[c] > dots[top[m - 1]]) {
        let p = m - 1;
        while (p > 0 && dots[top[p - 1]] < dots[c]) {
          top[p] = top[p - 1];
          p--;
        }
        top[p] = c;
      }
    }
    if (top.length < m || m < 2) top.sort((a, b) => dots[b] - dots[a]);
    let sum = 0;
    for (let i = 0; i < top.length; i++) sum += weights[i] = Math.exp((dots[top[i]] - dots[top[0]]) / 0.05);
    assigned.centroids = packed;
    assigned.m = m;
    assigned.weightSum = sum;
    w.bagRow = false;
  }
}

/** The pooled graph's next-label shares for the longest history it has seen, in w.acc (touched), and its context. */
function pooledGraph(ev: Evidence, keyOf: (j: number) => string, l: number, w: Workspace): void {
  const { acc, touched, context } = w;
  for (let j = l; j >= 0; j--) {
    const found = ev.global.lookupKey(keyOf(j));
    if (!found || found.total <= 0) continue;
    const { labels, weights: counts, total } = found;
    for (let k = 0; k < labels.length; k++) {
      acc[labels[k]] = counts[k] / total;
      touched.add(labels[k]);
    }
    context[G_MATCH] = j / l;
    context[G_SUPPORT] = Math.min(1, Math.log1p(total) / Math.log(1001));
    break;
  }
}

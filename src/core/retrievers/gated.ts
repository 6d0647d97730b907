import { checkGatedState } from './gated-state-check.js';
import { DtdrError } from '../errors.js';
import { planSteps, planTools, sequenceKey } from '../plan.js';
import { seededRandom, shuffleInPlace } from '../random.js';
import { terms } from '../text.js';
import { END, type Plan, type ToolSpec } from '../types.js';
import { requireVector } from './baselines.js';
import { countPlans, historyIndices, labelIndices, startCount } from './dependency.js';
import { applyIsotonic, conformalThreshold, expectedCalibrationError, fitIsotonic, fitTemperature, GateDataBuilder, stepProbabilities, trainGate, type GateData } from './gate.js';
import { DependencyGraph } from './graph.js';
import { dotAt, packRows, sphericalKMeans, type KMeansResult } from './kmeans.js';
import { LexicalIndex, type LexicalQuery } from './lexical.js';
import { gateKernel, packMatrix, replaceIfChanged, type GateKernel, type PackedMatrix } from './matvec.js';
import { LinearHead, ReplayBuffer, trainLinearHead, type LinearHeadOptions, type LinearHeadState, type ReplayState } from './linear-head.js';
import { withLazyOrder } from './ranking.js';
import { ONLINE_HEAD, type EmbeddingNeeds, type LearnInput, type RankInput, type Ranking, type Retriever, type TrainingProgress } from './types.js';

/**
 * DTDR-G (ours, the default): one retriever that combines, per step, the signals that are each
 * strong somewhere, with a gate learned on held-out folds of the demonstrations:
 *
 * - the request against tool names and descriptions, lexical (BM25) and by embedding, each also
 *   history-aware: what the calls so far already served counts less;
 * - dependency statistics: per-cluster graphs under a soft assignment to the nearest clusters,
 *   the pooled graph, and which tools the nearby demonstrations use at all;
 * - a linear head over [query embedding, last l calls, set of calls so far] (DTDR-H generalised);
 * - tool-to-tool evidence from schemas: an output of a called tool that feeds a required input.
 *
 * The gate (see gate.ts) weighs the signals by how much the step's context supports them, so
 * memorised sequences lead where the demonstrations know the history and descriptions lead where
 * they do not. Probabilities are temperature-calibrated and the candidate set is split-conformal:
 * it holds an acceptable tool in at least `target` of held-out steps, separately for confident
 * and unsure steps. With no demonstrations it ranks by descriptions alone.
 */
export const SIGNALS = [
  'lexical', // BM25 of the request against the tool's name and description, earlier request terms weighing more
  'lexical-unserved', // the same, with request terms the called tools already matched discounted
  'embedding', // cosine of request and tool description embeddings
  'embedding-unserved', // cosine after projecting the called tools' directions out of the request
  'cluster-graph', // log P(next | recent calls) in the nearest clusters' dependency graphs
  'pooled-graph', // log P(next | recent calls) over all demonstrations, with back-off
  'cluster-tools', // log share of nearby demonstrations that use the tool at all
  'head', // log-probability from the linear head
  'called', // the tool was called already
  'schema', // a called tool's output names a required input of this tool
  'end', // the label is END
] as const;
export type SignalName = (typeof SIGNALS)[number];

export const CONTEXTS = [
  'bias',
  'cluster-match', // how much of the recent history the nearest clusters know (0..1)
  'cluster-support', // demonstration weight behind that, log-scaled to 0..1
  'pooled-match', // how much of the recent history any demonstration knows (0..1)
  'pooled-support',
  'calls', // calls so far, min(n, 4) / 4
  'served', // share of the request's matched terms the called tools served
  'head-confidence', // the head's top probability
] as const;

const S = SIGNALS.length;
const G = CONTEXTS.length;
const [LEX, LEXU, EMB, EMBU, CG, GG, BAG, HEAD, CALLED, SCHEMA, ENDS] = SIGNALS.map((_, i) => i);
const [, C_MATCH, C_SUPPORT, G_MATCH, G_SUPPORT, C_CALLS, C_SERVED, C_HEAD] = CONTEXTS.map((_, i) => i);
/** Calls the "history known" check looks at, whatever l the graphs use. */
const KNOWN_HISTORY = 3;
const FLOOR_GRAPH = 1e-3;
const FLOOR_BAG = 1e-2;

export interface GatedOptions {
  /** l, the calls of history the graphs and head condition on. Default: picked on held-out demonstrations among 1–4. */
  historyLength?: number;
  /** K clusters. Default: picked on held-out demonstrations. */
  clusters?: number;
  /** Cross-fitting folds for the gate and calibration. Default 3. */
  folds?: number;
  /** The fraction of steps whose candidate set must hold an acceptable tool. Default 0.95. */
  target?: number;
  /** A step counts as confident when its top tool's calibrated probability is at least this. Default 0.5. */
  confidentAbove?: number;
  /** Nearest clusters a request is softly assigned to. Default 5. */
  neighbours?: number;
  /**
   * Order of mention in the request: the lexical signal weighs the request's k-th distinct
   * matched term by exp(−k / lexicalOrder), since requests name their first need first ("cancel
   * my ticket and rebook me"). 0 turns it off (every term weighs the same). Default 8.
   */
  lexicalOrder?: number;
  /**
   * How cross-fitting folds are drawn: `plan` (at random), `sequence` (plans with one tool
   * sequence share a fold, so every held-out plan is a new combination) or both, pooled.
   * Default: `plan+sequence` when there are at least 10 sequences and each is repeated about 10
   * times or more on average, else `plan`.
   */
  foldBy?: 'plan' | 'sequence' | 'plan+sequence';
  /**
   * Which held-out steps set the conformal thresholds: `sequence` (steps of plans whose tool
   * sequence the fold never saw: the sets are sized to hold the needed tool on new combinations
   * of familiar steps, and over-cover repeats) or `plan` (random folds: requests like the
   * demonstrations). Default: `sequence` when there are at least 10 sequences and at least half
   * the plans share theirs with another plan (elsewhere random folds already hold out new
   * combinations), else `plan`. Ranking and calibrated probabilities do not depend on it.
   */
  thresholdsFrom?: 'plan' | 'sequence';
  /** Signals to leave out (ablations). */
  without?: SignalName[];
  seed?: number;
  head?: LinearHeadOptions;
}

/** What every fold shares: the tool side, which depends on no demonstration. */
class ToolSide {
  readonly labels: string[];
  readonly end: number;
  readonly lexical: LexicalIndex;
  readonly index: Map<string, number>;
  constructor(readonly tools: ToolSpec[], readonly toolVectors: Float32Array, readonly dim: number, readonly lexicalOrder: number) {
    this.labels = [...tools.map((t) => t.name), END];
    this.end = tools.length;
    this.index = labelIndices(this.labels);
    this.lexical = new LexicalIndex(tools);
    const names = (schema: unknown, requiredOnly: boolean): string[] => {
      const s = schema as { properties?: Record<string, unknown>; required?: unknown } | undefined;
      if (!s || typeof s !== 'object' || !s.properties || typeof s.properties !== 'object') return [];
      const keys = requiredOnly && Array.isArray(s.required) ? s.required.filter((k): k is string => typeof k === 'string') : Object.keys(s.properties);
      return keys.map((k) => terms(k).join(' ')).filter(Boolean);
    };
    this.inputs = tools.map((t) => names(t.parameters, true));
    this.outputs = tools.map((t) => [...new Set(names(t.returns, false))]);
    this.inputs.forEach((needs, f) => {
      for (const n of needs) {
        let list = this.needing.get(n);
        if (!list) this.needing.set(n, (list = []));
        list.push(f);
      }
    });
  }

  private readonly inputs: string[][];
  private readonly outputs: string[][];
  /** Input name → the tools that require it (once per time they list it). */
  private readonly needing = new Map<string, number[]>();
  private readonly fedRows = new Map<number, { tools: Uint32Array; shares: Float64Array }>();

  /**
   * The tools whose required inputs tool c's outputs name, with the share of each one's required
   * inputs they cover (the schema signal): a step touches only the tools its calls feed. Computed
   * once per called tool and kept, like the similarity rows.
   */
  inputsFedBy(c: number): { tools: Uint32Array; shares: Float64Array } {
    return keptRow(this.fedRows, c, () => {
      const fed = new Map<number, number>();
      for (const o of this.outputs[c]) for (const f of this.needing.get(o) ?? []) fed.set(f, (fed.get(f) ?? 0) + 1);
      return { tools: Uint32Array.from(fed.keys()), shares: Float64Array.from(fed, ([f, hits]) => hits / this.inputs[f].length) };
    });
  }

  /** Tool description vectors for the float32 kernel (built on first use). */
  private packedTools?: PackedMatrix;

  /** The last query and its dot products: every step of a plan has the same request. */
  private lastDots?: { query: Float64Array; dots: Float32Array };

  /** q·t for every tool t, into out[0 .. tools). */
  toolDots(q: ArrayLike<number>, out: Float32Array | Float64Array): void {
    const last = (this.lastDots ??= { query: new Float64Array(this.dim).fill(NaN), dots: new Float32Array(this.end) });
    if (replaceIfChanged(last.query, q)) (this.packedTools ??= packMatrix(this.toolVectors, this.end, this.dim)).times(q, last.dots);
    for (let f = 0; f < this.end; f++) out[f] = last.dots[f];
  }

  /** Called tools' similarity rows (c·t for every tool t), computed once per tool and kept. */
  private readonly similarityRows = new Map<number, Float32Array>();

  similarityRow(c: number): Float32Array {
    return keptRow(this.similarityRows, c, () => {
      const d = this.dim;
      const row = new Float32Array(this.end);
      for (let f = 0; f < this.end; f++) row[f] = dotAt(this.toolVectors, c * d, this.toolVectors, f * d, d);
      return row;
    });
  }
}

/** A per-tool row, computed on first use and kept: at most 512 (a few MB even at thousands of tools), the oldest dropped first. */
function keptRow<V>(rows: Map<number, V>, c: number, make: () => V): V {
  let row = rows.get(c);
  if (row === undefined) {
    row = make();
    if (rows.size >= 512) rows.delete(rows.keys().next().value as number);
    rows.set(c, row);
  }
  return row;
}

/** What demonstrations teach; fitted once per cross-fitting fold and once on all of them. */
interface Evidence {
  historyLength: number;
  k: number;
  centroids: Float32Array;
  graphs: DependencyGraph[];
  global: DependencyGraph;
  /** Per cluster: label → share of the cluster's plans that use it. */
  bags: Map<number, number>[];
  head?: LinearHead;
  /** Label → one-hot slot for tools seen in training histories. */
  vocabulary: Map<number, number>;
  /** Demonstrations per cluster (running means when learning online). */
  sizes: number[];
  /** The centroids for the float32 kernel (built on first use; dropped when learning moves them). */
  packedCentroids?: PackedMatrix;
  /** The head's training examples, rehearsed when learning online. */
  replay: ReplayBuffer;
}

interface StepInput {
  terms: LexicalQuery;
  queryVector: Float32Array;
  history: number[];
}

/** Called tools projected out of the query, at most (longer histories keep their first 16 distinct calls). */
const MAX_BASIS = 16;
/** The gate kernel's two input vectors. */
const SCORES = 0;
const LOGITS = 1;
const noTerms = (): LexicalQuery => ({ postings: [] });

/** Scratch buffers for one step; reused so ranking allocates little. */
class Workspace {
  readonly x: Float32Array;
  readonly context = new Float64Array(G);
  /** Gram–Schmidt scratch: orthonormal directions, their coefficients over the called tools, and γ. */
  readonly basis: Float64Array;
  /** The called tools' similarity rows and coefficients the history-aware embedding takes off (reused per step). */
  readonly residualRows: Float32Array[] = [];
  readonly residualGammas: number[] = [];
  readonly coef = new Float64Array(MAX_BASIS * MAX_BASIS);
  readonly gamma = new Float64Array(MAX_BASIS);
  /** Per-step scratch of the evidence signals and the gate. */
  readonly top: number[] = [];
  readonly weights: Float64Array;
  readonly touched: LabelSet;
  /** Graph keys of this step's history, by history length. */
  readonly keys: string[] = [];
  /** Labels where called, schema or END may be non-zero this step. */
  readonly sparse: LabelSet;
  readonly signalWeights = new Float64Array(S);
  /** Some demonstration has the last (up to 3) calls in a row, from the plan's start when shorter. */
  known = false;
  /** The WebAssembly passes over every label (exponentials, the gate's sum, clip, division). */
  readonly kernel: GateKernel;
  readonly scores: Float64Array;
  readonly acc: Float64Array;
  readonly logits: Float64Array;
  readonly dots: Float64Array;
  /** The request whose soft cluster assignment `top` and `weights` hold, and for which centroids. */
  readonly assigned: { query: Float64Array; centroids?: PackedMatrix; m: number; weightSum: number };
  constructor(labels: number, dim: number, clusters: number) {
    this.assigned = { query: new Float64Array(dim).fill(NaN), m: 0, weightSum: 0 };
    // Signals, scores and head logits live in the kernel's memory: its passes read them in place.
    this.kernel = gateKernel(labels, S, 2);
    this.x = this.kernel.x;
    this.scores = this.kernel.inputs[SCORES];
    this.acc = new Float64Array(labels);
    this.touched = new LabelSet(labels);
    this.sparse = new LabelSet(labels);
    this.logits = this.kernel.inputs[LOGITS];
    this.dots = new Float64Array(Math.max(1, clusters));
    this.basis = new Float64Array(MAX_BASIS * dim);
    this.weights = new Float64Array(Math.max(1, clusters)); // soft-assignment weights: at most one per cluster
  }
}

function headSlots(history: readonly number[], l: number, vocabulary: Map<number, number>): Uint32Array {
  const width = vocabulary.size + 2;
  const called = new Set<number>();
  for (const h of history) called.add(vocabulary.get(h) ?? vocabulary.size);
  const slots = new Uint32Array(l + called.size);
  for (let k = 0; k < l; k++) {
    const h = history[history.length - l + k];
    slots[k] = k * width + (h === undefined ? vocabulary.size : vocabulary.get(h) ?? vocabulary.size + 1);
  }
  let k = l;
  for (const id of called) slots[k++] = l * width + id;
  return slots;
}

function headSparseSize(l: number, vocabulary: Map<number, number>): number {
  return l * (vocabulary.size + 2) + vocabulary.size + 1;
}

interface FitPartsOptions {
  historyLength: number;
  seed: number;
  head?: LinearHeadOptions | false;
}

/** Clusters of the demonstration queries and the cluster of each of the plans being fitted. */
interface Clustering {
  centroids: Float32Array;
  k: number;
  assignment: ArrayLike<number>;
}

function fitEvidence(side: ToolSide, plans: Plan[], queries: Float32Array[], clustering: Clustering, o: FitPartsOptions, onProgress?: (p: TrainingProgress) => void): Evidence {
  const l = o.historyLength;
  const { centroids, k, assignment } = clustering;
  const graphs = Array.from({ length: k }, () => new DependencyGraph(l));
  const members: number[][] = Array.from({ length: k }, () => []);
  plans.forEach((plan, i) => {
    countPlans(graphs[assignment[i]], [plan], side.index);
    members[assignment[i]].push(i);
  });
  const global = new DependencyGraph(Math.max(l, KNOWN_HISTORY));
  countPlans(global, plans, side.index);
  const bags = members.map((list) => {
    const bag = new Map<number, number>();
    for (const i of list) for (const t of new Set(planTools(plans[i]))) bag.set(side.index.get(t)!, (bag.get(side.index.get(t)!) ?? 0) + 1 / list.length);
    if (list.length > 0) bag.set(side.end, 1);
    return bag;
  });
  const vocabulary = new Map<number, number>();
  for (const plan of plans) for (const node of plan.nodes) {
    const i = side.index.get(node.tool)!;
    if (!vocabulary.has(i)) vocabulary.set(i, vocabulary.size);
  }
  let head: LinearHead | undefined;
  const replay = new ReplayBuffer();
  if (o.head !== false) {
    const examples = headExamples(side, plans, queries, l, vocabulary);
    replay.add(examples);
    const generator = trainLinearHead(examples, { epochs: 8, seed: o.seed, sparseSupport: 'auto', ...(o.head ?? {}) });
    for (;;) {
      const next = generator.next();
      if (next.done) {
        head = next.value;
        break;
      }
      onProgress?.({ phase: 'head', fraction: next.value.epoch / next.value.epochs, loss: next.value.loss });
    }
  }
  return { historyLength: l, k, centroids, graphs, global, bags, head, vocabulary, sizes: members.map((m) => m.length), replay };
}

/** The head's examples: one per step, [query, last l calls, calls so far] → acceptable labels. */
function headExamples(side: ToolSide, plans: Plan[], queries: Float32Array[], l: number, vocabulary: Map<number, number>) {
  const dense: Float32Array[] = [];
  const sparse: Uint32Array[] = [];
  const targets: number[][] = [];
  const related: number[][] = [];
  plans.forEach((plan, i) => {
    const tools = [...new Set(planTools(plan))].map((t) => side.index.get(t)!);
    for (const step of planSteps(plan)) {
      dense.push(queries[i]);
      sparse.push(headSlots(historyIndices(step.history, side.index), l, vocabulary));
      targets.push(step.acceptable.map((t) => side.index.get(t)!));
      related.push(tools);
    }
  });
  return { dense, sparse, targets, related, classes: side.labels.length, sparseSize: headSparseSize(l, vocabulary) };
}

/**
 * Fills `w.x` (signal-major: x[s·L + f]) and `w.context` for one step. `without` zeroes signals
 * (ablations); `evidence` is undefined for a model trained on tools alone.
 */
function computeSignals(side: ToolSide, ev: Evidence | undefined, input: StepInput, w: Workspace, neighbours: number, without: ReadonlySet<number>, graphOnly = false): void {
  const L = side.labels.length;
  const T = side.end;
  const { x, context } = w;
  x.fill(0);
  context.fill(0);
  context[0] = 1;
  w.known = false;
  const history = input.history;
  const called = [...new Set(history.filter((h) => h >= 0 && h < T))];
  if (!graphOnly) descriptionSignals(side, input, called, w);
  if (ev) evidenceSignals(side, ev, input, w, neighbours, graphOnly);
  for (const s of without) x.fill(0, s * L, s * L + L);
}

/** The signals that need no demonstration: lexical, embedding, called, schema, END. */
function descriptionSignals(side: ToolSide, input: StepInput, called: number[], w: Workspace): void {
  const L = side.labels.length;
  const T = side.end;
  const d = side.dim;
  const { x, context } = w;
  const history = input.history;

  // Lexical, plain and history-aware, scaled to the embedding signals' range.
  const served = side.lexical.score(input.terms, called, x.subarray(LEX * L, LEX * L + L), x.subarray(LEXU * L, LEXU * L + L), { scale: 0.1, orderDecay: side.lexicalOrder });
  context[C_SERVED] = served;
  context[C_CALLS] = Math.min(history.length, 4) / 4;

  // Embedding, plain and with the called tools' directions projected out (Gram–Schmidt). The
  // residual r = q − Σ γ_i c_i is kept as coefficients γ over the called tools, so that
  // r·t = q·t − Σ γ_i (c_i·t) reuses the plain dot products and cached similarity rows instead
  // of a second pass over every tool vector.
  const q = input.queryVector;
  const tv = side.toolVectors;
  const m = called.length;
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
    const [r0, r1] = rows;
    const [g0, g1] = g;
    const emb = EMB * L;
    const embu = EMBU * L;
    if (rows.length === 1) for (let f = 0; f < T; f++) x[embu + f] = (x[emb + f] - g0 * r0[f]) * rScale;
    else if (rows.length === 2) for (let f = 0; f < T; f++) x[embu + f] = (x[emb + f] - g0 * r0[f] - g1 * r1[f]) * rScale;
    else {
      for (let f = 0; f < T; f++) {
        let r = x[emb + f];
        for (let i = 0; i < rows.length; i++) r -= g[i] * rows[i][f];
        x[embu + f] = r * rScale;
      }
    }
  }

  const sparse = w.sparse;
  sparse.reset();
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
function evidenceSignals(side: ToolSide, ev: Evidence, input: StepInput, w: Workspace, neighbours: number, graphOnly: boolean): void {
  const L = side.labels.length;
  const d = side.dim;
  const { x, context } = w;
  const history = input.history;
  const q = input.queryVector;
  {
    const l = ev.historyLength;
    // Soft assignment to the nearest clusters.
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
    }
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
    for (let i = 0; i < top.length; i++) {
      const weight = weights[i] / wSum;
      ev.bags[top[i]].forEach((share, label) => {
        acc[label] += weight * share;
        touched.add(label);
      });
    }
    logSparse(x, BAG * L, L, acc, touched, FLOOR_BAG);
    // Pooled graph with back-off to shorter histories.
    touched.clearValues(acc);
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
}

/** x[from + f] = log(values[f] + floor), computing logs only where values is non-zero. */
function logSparse(x: Float32Array, from: number, n: number, values: Float64Array, nonZero: LabelSet, floor: number): void {
  x.fill(Math.log(floor), from, from + n);
  const list = nonZero.list;
  for (let i = 0; i < nonZero.size; i++) x[from + list[i]] = Math.log(values[list[i]] + floor);
}

/** A set of label indices with O(1) add and reset and no allocation per step. */
class LabelSet {
  readonly list: Uint32Array;
  private readonly mark: Uint8Array;
  size = 0;
  constructor(labels: number) {
    this.list = new Uint32Array(labels);
    this.mark = new Uint8Array(labels);
  }
  add(label: number): void {
    if (this.mark[label]) return;
    this.mark[label] = 1;
    this.list[this.size++] = label;
  }
  reset(): void {
    for (let i = 0; i < this.size; i++) this.mark[this.list[i]] = 0;
    this.size = 0;
  }
  /** Zeroes `values` at the members, then empties the set. */
  clearValues(values: Float64Array): void {
    for (let i = 0; i < this.size; i++) values[this.list[i]] = 0;
    this.reset();
  }
}

/**
 * Combined scores z(f) = Σ_s a_s x_s(f) with a = Θ·context, written into w.scores; returns max z.
 * Called, schema and END are zero off `w.sparse`, and adding a zero changes no sum: one pass
 * adds the eight signals that can be non-zero anywhere, in signal order, and the labels in
 * `w.sparse` are summed over every signal — the same sums, bit for bit, as one pass per signal.
 */
function combine(theta: Float64Array, w: Workspace, labels: number): number {
  const a = w.signalWeights;
  for (let s = 0; s < S; s++) {
    let v = 0;
    for (let g = 0; g < G; g++) v += theta[s * G + g] * w.context[g];
    a[s] = v;
  }
  const z = w.scores;
  const x = w.x;
  // Signals 0–7 (LEX … HEAD) are the dense ones, in signal order.
  w.kernel.combine(a, SCORES);
  const { list, size } = w.sparse;
  for (let i = 0; i < size; i++) {
    const f = list[i];
    let v = 0;
    for (let s = 0; s < S; s++) if (a[s] !== 0) v += a[s] * x[s * labels + f];
    z[f] = v;
  }
  return w.kernel.max(SCORES, labels);
}

/**
 * The gate's starting point, and the whole gate of a model trained on tools alone: descriptions
 * rank the tools, repeat calls are unlikely, and END grows with the calls made and the share of
 * the request they served. Fixed by hand (there is nothing to learn it from), not tuned on any
 * evaluation set.
 */
export function priorGate(): Float64Array {
  const theta = new Float64Array(S * G);
  const set = (s: number, g: number, v: number) => (theta[s * G + g] = v);
  set(LEXU, 0, 3);
  set(EMBU, 0, 8);
  set(CG, 0, 0.5);
  set(GG, 0, 0.5);
  set(HEAD, 0, 0.5);
  set(CALLED, 0, -2);
  set(ENDS, 0, -4);
  set(ENDS, C_CALLS, 2);
  set(ENDS, C_SERVED, 6);
  return theta;
}

/** Indices of the `count` largest values of x[from .. from+n). */
function topIndices(x: Float32Array, from: number, n: number, count: number, into: Set<number>): void {
  const best: number[] = [];
  for (let f = 0; f < n; f++) {
    const v = x[from + f];
    if (best.length < count) {
      best.push(f);
      continue;
    }
    let worst = 0;
    for (let k = 1; k < best.length; k++) if (x[from + best[k]] < x[from + best[worst]]) worst = k;
    if (v > x[from + best[worst]]) best[worst] = f;
  }
  for (const f of best) into.add(f);
}

export interface GatedDiagnostics {
  folds: number;
  foldBy: 'plan' | 'sequence' | 'plan+sequence';
  /** Which held-out steps set the conformal thresholds (absent in files written before it: those of foldBy's first scheme). */
  thresholdsFrom?: 'plan' | 'sequence';
  heldOutSteps: number;
  /** Held-out top-1 expected calibration error before and after temperature scaling, and with isotonic regression. */
  ece: { raw: number; temperature: number; isotonic: number };
  temperature: number;
  /** Conformal thresholds for confident and unsure steps. */
  thresholds: { confident: number; unsure: number };
  historyLength: number;
  clusters: number;
  /** Held-out MRR of the candidate settings tried for l and K. */
  selection: { historyLength: Record<string, number>; clusters: Record<string, number> };
}

export interface GatedState {
  historyLength: number;
  neighbours: number;
  /** GatedOptions.lexicalOrder (absent in files written before it: 0, every request term weighs the same). */
  lexicalOrder?: number;
  without: SignalName[];
  theta: number[];
  temperature: number;
  target: number;
  confidentAbove: number;
  thresholds: { confident: number; unsure: number };
  toolVectors: number[][];
  evidence: null | {
    centroids: number[][];
    graphs: [string, [number, number][]][][];
    global: [string, [number, number][]][];
    /** Context length the pooled graph keeps (max(l, 3)). */
    globalHistory: number;
    bags: [number, number][][];
    head: LinearHeadState | null;
    vocabulary: number[];
    /** Demonstrations per cluster (absent in files written before online learning). */
    sizes?: number[];
    replay?: ReplayState;
  };
  /** Held-out conformal scores per group (absent in older files: learning then uses new scores only). */
  calibration?: { confident: number[]; unsure: number[] };
  diagnostics?: GatedDiagnostics;
}


/** Held-out plans scored per cross-fitting scheme, at most (the demo set's 3,000 and UltraTool's 3,027 are all scored). */
const MAX_SCORED_PLANS = 9000;

/**
 * Each group's split-conformal threshold for the coverage target. A group with fewer than 20
 * held-out scores gets 0: its sets widen by probability mass instead (selectCandidates).
 */
function groupThresholds(scores: { confident: number[]; unsure: number[] }, target: number): { confident: number; unsure: number } {
  const threshold = (group: number[]) => (group.length >= 20 ? conformalThreshold(group, target) : 0);
  return { confident: threshold(scores.confident), unsure: threshold(scores.unsure) };
}

/** `indices` when there are at most `cap` of them, else a seeded sample of `cap`, in their original order. */
function scoredSubset(indices: number[], cap: number, seed: number): number[] {
  const keep = Math.floor(cap);
  if (indices.length <= keep) return indices;
  return shuffleInPlace([...indices], seededRandom(seed)).slice(0, keep).sort((a, b) => a - b);
}

export class GatedRetriever implements Retriever {
  readonly method = 'dtdr-g' as const;
  readonly needs: EmbeddingNeeds = { query: true, context: false };
  private workspace: Workspace;
  private readonly without: Set<number>;

  private constructor(
    private readonly side: ToolSide,
    private evidence: Evidence | undefined,
    readonly theta: Float64Array,
    readonly temperature: number,
    readonly target: number,
    readonly confidentAbove: number,
    public thresholds: { confident: number; unsure: number },
    readonly neighbours: number,
    readonly withoutSignals: SignalName[],
    readonly diagnostics?: GatedDiagnostics,
    /** Held-out conformal scores (probability of the best acceptable label) per group, kept so learning can pool new ones. */
    private calibration: { confident: number[]; unsure: number[] } = { confident: [], unsure: [] },
  ) {
    this.workspace = new Workspace(side.labels.length, side.dim, evidence?.k ?? 0);
    this.without = new Set(withoutSignals.map((s) => SIGNALS.indexOf(s)));
  }

  get labels(): readonly string[] {
    return this.side.labels;
  }

  get historyLength(): number {
    return this.evidence?.historyLength ?? 0;
  }

  /** True when the model learned from demonstrations (false: tools alone). */
  get demonstrated(): boolean {
    return this.evidence !== undefined;
  }

  static fit(tools: ToolSpec[], plans: Plan[], queries: Float32Array[], toolVectors: Float32Array[], options: GatedOptions = {}, onProgress?: (p: TrainingProgress) => void): GatedRetriever {
    const dim = toolVectors[0]?.length ?? queries[0]?.length ?? 0;
    if (tools.length === 0) throw new DtdrError('data', 'no tools to retrieve', { hint: 'give at least one tool' });
    const target = options.target ?? 0.95;
    if (!(target > 0 && target < 1)) throw new DtdrError('options', `target must be in (0, 1), got ${target}`, { field: 'target' });
    const confidentAbove = options.confidentAbove ?? 0.5;
    const neighbours = options.neighbours ?? 5;
    const lexicalOrder = options.lexicalOrder ?? 8;
    if (!(lexicalOrder >= 0 && Number.isFinite(lexicalOrder))) throw new DtdrError('options', `lexicalOrder must be a finite number ≥ 0, got ${lexicalOrder}`, { field: 'lexicalOrder' });
    if (options.thresholdsFrom !== undefined && options.thresholdsFrom !== 'plan' && options.thresholdsFrom !== 'sequence') {
      throw new DtdrError('options', `thresholdsFrom must be "plan" or "sequence", got ${String(options.thresholdsFrom)}`, { field: 'thresholdsFrom' });
    }
    const without = options.without ?? [];
    for (const s of without) if (!SIGNALS.includes(s)) throw new DtdrError('options', `unknown signal "${s}"`, { field: 'without', hint: `one of: ${SIGNALS.join(', ')}` });
    const side = new ToolSide(tools, packRows(toolVectors, dim), dim, lexicalOrder);
    const seed = options.seed ?? 0;
    if (plans.length === 0) {
      return new GatedRetriever(side, undefined, priorGate(), 1, target, confidentAbove, { confident: 0, unsure: 0 }, neighbours, without);
    }
    const withoutIdx = new Set(without.map((s) => SIGNALS.indexOf(s)));
    const headOption = withoutIdx.has(HEAD) ? false : options.head;
    const n = plans.length;
    const folds = Math.max(2, Math.min(options.folds ?? 3, n));
    const sequenceOf = plans.map(sequenceKey);
    const sequenceCounts = new Map<string, number>();
    for (const key of sequenceOf) sequenceCounts.set(key, (sequenceCounts.get(key) ?? 0) + 1);
    const sequences = sequenceCounts.size;
    const repeats = sequenceOf.filter((key) => sequenceCounts.get(key)! > 1).length;
    // Demonstrations that repeat each sequence ~10 times or more (generated from templates, say)
    // tell random folds nothing about new combinations, and folds by sequence (every held-out plan
    // a new combination) tell nothing about repeats, which such data mostly gets: the gate then
    // learns from both kinds of held-out steps. With fewer than 10 sequences a held-out fold would
    // lose whole skills, not combinations: random folds only.
    const foldBy: GatedDiagnostics['foldBy'] = options.foldBy ?? (sequences >= 10 && sequences / n < 0.1 ? 'plan+sequence' : 'plan');
    const thresholdsFrom = options.thresholdsFrom ?? (foldBy === 'sequence' || (sequences >= 10 && repeats >= n / 2) ? 'sequence' : 'plan');
    const gateSchemes: ('plan' | 'sequence')[] = foldBy === 'plan+sequence' ? ['sequence', 'plan'] : [foldBy];
    // A thresholds scheme the gate does not use is scored on the calibration half only.
    const schemes = gateSchemes.includes(thresholdsFrom) ? gateSchemes : [...gateSchemes, thresholdsFrom];
    const foldsOf = (scheme: 'plan' | 'sequence') => {
      const foldOf = new Uint32Array(n);
      if (scheme === 'sequence') {
        // Plans that share a tool sequence share a fold: every held-out plan is a new combination.
        const keys = [...sequenceCounts.keys()];
        const foldOfKey = new Map<string, number>();
        shuffleInPlace(keys, seededRandom(seed + 211)).forEach((key, rank) => foldOfKey.set(key, rank % folds));
        sequenceOf.forEach((key, i) => (foldOf[i] = foldOfKey.get(key)!));
      } else {
        shuffleInPlace(Array.from({ length: n }, (_, i) => i), seededRandom(seed + 211)).forEach((p, rank) => (foldOf[p] = rank % folds));
      }
      return foldOf;
    };
    // K and l are chosen on the first scheme's fold 0 (by sequence where used: robust to new combinations).
    const foldOf = foldsOf(schemes[0]);
    const report = (phase: string, fraction: number) => onProgress?.({ phase, fraction });

    // Settings from the data: l and K by held-out MRR of the graph signals on fold 0.
    const selection = { historyLength: {} as Record<string, number>, clusters: {} as Record<string, number> };
    let l = options.historyLength ?? 0;
    let K = options.clusters ?? 0;
    const train0 = plans.flatMap((p, i) => (foldOf[i] !== 0 ? [i] : []));
    const held0 = scoredSubset(plans.flatMap((p, i) => (foldOf[i] === 0 ? [i] : [])), MAX_SCORED_PLANS / folds, seed + 401);
    const quickScore = (ev: Evidence, signal: number) => {
      const w = new Workspace(side.labels.length, dim, ev.k);
      let rr = 0;
      let count = 0;
      for (const i of held0) {
        for (const step of planSteps(plans[i])) {
          computeSignals(side, ev, { terms: noTerms(), queryVector: queries[i], history: historyIndices(step.history, side.index) }, w, neighbours, withoutIdx, true);
          const row = w.x.subarray(signal * side.labels.length, (signal + 1) * side.labels.length);
          const ok = new Set(step.acceptable.map((t) => side.index.get(t)!));
          let best = -Infinity;
          for (const a of ok) best = Math.max(best, row[a]);
          let rank = 1;
          for (let f = 0; f < row.length; f++) if (row[f] > best) rank++;
          rr += 1 / rank;
          count++;
        }
      }
      return count ? rr / count : 0;
    };
    const sub = (idx: number[]) => ({ plans: idx.map((i) => plans[i]), queries: idx.map((i) => queries[i]) });
    // k-means sees only queries, no labels: cluster every demonstration once per candidate K and
    // let each fold count its graphs within those clusters.
    const all = packRows(queries, dim);
    const cluster = (k: number, iterations?: number) => sphericalKMeans(all, n, dim, k, { seed, maxIterations: iterations });
    const restrict = (c: KMeansResult, idx: number[]): Clustering => ({ centroids: c.centroids, k: c.k, assignment: idx.map((i) => c.assignment[i]) });
    const t0 = sub(train0);
    // K candidates scale with the data (a fixed ratio gives 20 demonstrations K = 2); the cap keeps
    // the per-step cluster lookup cheap. One graph fit per K with l = 4 serves every l ≤ 4.
    const candidates = K ? [K] : [...new Set([n / 20, n / 10, n / 5, n / 2].map((c) => Math.max(1, Math.min(Math.round(c), 300))))];
    let clustering: KMeansResult | undefined;
    let bestEvidence: Evidence | undefined;
    let best = -1;
    for (const c of candidates) {
      const km = cluster(c, 8);
      const ev = fitEvidence(side, t0.plans, t0.queries, restrict(km, train0), { historyLength: 4, seed, head: false });
      if (candidates.length === 1) {
        [clustering, bestEvidence] = [km, ev];
        break;
      }
      const score = quickScore({ ...ev, historyLength: options.historyLength ?? 3 }, CG);
      selection.clusters[c] = +score.toFixed(4);
      if (score > best + 1e-4) [best, clustering, bestEvidence] = [score, km, ev];
    }
    K = clustering!.k;
    if (!l) {
      best = -1;
      for (let c = 1; c <= 4; c++) {
        const score = quickScore({ ...bestEvidence!, historyLength: c }, CG);
        selection.historyLength[c] = +score.toFixed(4);
        if (score > best + 1e-4) [best, l] = [score, c];
      }
    }
    report('settings', 1);

    // Cross-fitting: every demonstration's steps are scored by components that never saw it.
    // Gate on one half of the held-out plans, calibration and conformal thresholds on the other.
    const half = new Uint8Array(n);
    shuffleInPlace(Array.from({ length: n }, (_, i) => i), seededRandom(seed + 307)).forEach((p, rank) => (half[p] = rank % 2));
    const small = n < 40; // too few to split: both halves use everything (the guarantee weakens; said in the reason)
    const builder = new GateDataBuilder(S, G);
    const stepPlan: number[] = [];
    const stepKnown: boolean[] = [];
    const stepScheme: number[] = [];
    const rounds = schemes.length * folds;
    for (const [r, scheme] of schemes.entries()) {
      const foldOf = foldsOf(scheme);
      for (let f = 0; f < folds; f++) {
        const trainIdx = plans.flatMap((_, i) => (foldOf[i] !== f ? [i] : []));
        // Every other plan trains the fold; at most MAX_SCORED_PLANS held-out plans per scheme are
        // scored (gate and calibration need thousands of steps, not 100,000 demonstrations' worth).
        const forThresholdsOnly = r >= gateSchemes.length;
        const heldIdx = scoredSubset(plans.flatMap((_, i) => (foldOf[i] === f && (small || !forThresholdsOnly || half[i] === 1) ? [i] : [])), MAX_SCORED_PLANS / folds, seed + 409 + f);
        const t = sub(trainIdx);
        // Fold heads only feed the gate and calibration: 3 epochs measure as well as 8 there, at a third of the time.
        const foldHead = headOption === false ? false : { ...headOption, epochs: Math.min(3, headOption?.epochs ?? 8) };
        const ev = fitEvidence(side, t.plans, t.queries, restrict(clustering!, trainIdx), { historyLength: l, seed: seed + f, head: foldHead }, (p) =>
          report('cross-fitting', (r * folds + f + p.fraction) / rounds),
        );
        const w = new Workspace(side.labels.length, dim, ev.k);
        for (const i of heldIdx) {
          const qTerms = side.lexical.prepare(terms(plans[i].query));
          for (const step of planSteps(plans[i])) {
            computeSignals(side, ev, { terms: qTerms, queryVector: queries[i], history: historyIndices(step.history, side.index) }, w, neighbours, withoutIdx);
            const acceptable = new Set(step.acceptable.map((t) => side.index.get(t)!));
            const pool = new Set<number>(acceptable);
            pool.add(side.end);
            const L = side.labels.length;
            for (const s of [LEX, LEXU, EMBU, CG, GG, BAG, HEAD]) if (!withoutIdx.has(s)) topIndices(w.x, s * L, L, 12, pool);
            builder.add(w.context, [...pool], (s, f2) => w.x[s * L + f2], (f2) => acceptable.has(f2));
            stepPlan.push(i);
            stepKnown.push(w.known);
            stepScheme.push(r);
          }
        }
        report('cross-fitting', (r * folds + f + 1) / rounds);
      }
    }

    // With both schemes, new-combination steps count 3 times in the gate's fit: weighed as one
    // among many repeats, the gate learns to trust memorised sequences everywhere (measured on the
    // compositional demo set: coverage 0.75 at weight 1, 0.905 at 3, with repeats still at MRR 0.99).
    const both = gateSchemes.length > 1;
    const gateSteps = stepPlan.flatMap((p, i) => ((small || half[p] === 0) && stepScheme[i] < gateSchemes.length ? (both && stepScheme[i] === 0 ? [i, i, i] : [i]) : []));
    // The temperature comes from the first scheme's steps (with both, the new-combination ones).
    const calSteps = stepPlan.flatMap((p, i) => ((small || half[p] === 1) && stepScheme[i] === 0 ? [i] : []));
    // The conformal thresholds from the thresholds scheme's steps: with `sequence`, a set must
    // hold the needed tool for a request no demonstration repeats, not only for repeats.
    const thresholdScheme = schemes.indexOf(thresholdsFrom);
    const thresholdSteps = stepPlan.flatMap((p, i) => ((small || half[p] === 1) && stepScheme[i] === thresholdScheme ? [i] : []));
    const gateData = builder.build(gateSteps);
    const calData = builder.build(calSteps);
    const { theta } = trainGate(gateData, priorGate(), { seed, epochs: gateSteps.length < 2000 ? 60 : 25 });
    report('gate', 1);
    const temperature = fitTemperature(theta, calData);
    const cal = calibrationScores(theta, temperature, calData);
    const thresholdData = thresholdScheme === 0 ? calData : builder.build(thresholdSteps);
    const scored = thresholdScheme === 0 ? cal : calibrationScores(theta, temperature, thresholdData);
    // Confident = a high calibrated top probability in a context calibration has seen (some
    // demonstration has the recent calls in a row); each group gets its own conformal threshold.
    const confidentStep = (i: number) => scored.top[i] >= confidentAbove && stepKnown[thresholdSteps[i]];
    const confidentScores = scored.best.filter((_, i) => confidentStep(i));
    const unsureScores = scored.best.filter((_, i) => !confidentStep(i));
    const thresholds = groupThresholds({ confident: confidentScores, unsure: unsureScores }, target);
    const raw = calibrationScores(theta, 1, calData);
    const diagnostics: GatedDiagnostics = {
      folds,
      foldBy,
      thresholdsFrom,
      heldOutSteps: stepPlan.length,
      ece: {
        raw: expectedCalibrationError(raw.top, raw.topCorrect),
        temperature: expectedCalibrationError(cal.top, cal.topCorrect),
        isotonic: isotonicEce(raw.top, raw.topCorrect),
      },
      temperature,
      thresholds,
      historyLength: l,
      clusters: K,
      selection,
    };
    report('calibration', 1);
    const ev = fitEvidence(side, plans, queries, clustering!, { historyLength: l, seed, head: headOption }, (p) => report('fitting', p.fraction));
    const calibration = { confident: confidentScores.map(Math.fround), unsure: unsureScores.map(Math.fround) };
    return new GatedRetriever(side, ev, theta, temperature, target, confidentAbove, thresholds, neighbours, without, diagnostics, calibration);
  }

  /**
   * Online learning, in time proportional to the new plans: first their steps are scored by the
   * model as it is (they are held out for it) and pooled with the stored conformal scores, which
   * re-sets the thresholds; then each plan joins its nearest cluster (graph counts, tool bag, a
   * running-mean centroid), the pooled graph, and the head continues training on its steps. The
   * gate and temperature stay as fitted. A model trained on tools alone gains its first evidence.
   */
  learn(input: LearnInput): void {
    const plans = input.plans;
    if (plans.length === 0) return;
    const queries = plans.map((_, i) => requireVector(input.queryVectors?.[i], 'dtdr-g', 'queryVectors'));
    const side = this.side;
    const ev = this.evidence;
    if (ev) {
      for (const [i, plan] of plans.entries()) {
        for (const step of planSteps(plan)) {
          const r = this.rank({ query: plan.query, history: step.history, queryVector: queries[i] });
          let best = 0;
          for (const t of step.acceptable) best = Math.max(best, r.probabilities[side.index.get(t)!]);
          (r.confident ? this.calibration.confident : this.calibration.unsure).push(Math.fround(best));
        }
      }
      this.thresholds = groupThresholds(this.calibration, this.target);
    } else {
      // Tools alone so far: one cluster around these plans, the default history length.
      const d = side.dim;
      const centroid = new Float32Array(d);
      for (const q of queries) for (let j = 0; j < d; j++) centroid[j] += q[j];
      normaliseInPlace(centroid);
      this.evidence = fitEvidence(side, plans, queries, { centroids: centroid, k: 1, assignment: new Uint8Array(plans.length) }, { historyLength: KNOWN_HISTORY, seed: 0 });
      this.workspace = new Workspace(side.labels.length, d, 1);
      return;
    }
    const d = side.dim;
    const l = ev.historyLength;
    for (const [i, plan] of plans.entries()) {
      const q = queries[i];
      let k = 0;
      let bestDot = -Infinity;
      for (let c = 0; c < ev.k; c++) {
        const dot = dotAt(ev.centroids, c * d, q, 0, d);
        if (dot > bestDot) [k, bestDot] = [c, dot];
      }
      const n = ++ev.sizes[k];
      const centroid = ev.centroids.subarray(k * d, (k + 1) * d);
      for (let j = 0; j < d; j++) centroid[j] += (q[j] - centroid[j]) / n;
      normaliseInPlace(centroid);
      ev.packedCentroids = undefined;
      countPlans(ev.graphs[k], [plan], side.index);
      countPlans(ev.global, [plan], side.index);
      const bag = ev.bags[k];
      const uses = new Set(planTools(plan).map((t) => side.index.get(t)!));
      for (const [label, share] of bag) if (label !== side.end) bag.set(label, (share * (n - 1) + (uses.has(label) ? 1 : 0)) / n);
      for (const label of uses) if (!bag.has(label)) bag.set(label, 1 / n);
      bag.set(side.end, 1);
    }
    if (ev.head) {
      const data = headExamples(side, plans, queries, l, ev.vocabulary);
      const generator = trainLinearHead(ev.replay.mix(data), { ...ONLINE_HEAD, seed: ev.replay.seen }, ev.head);
      let next = generator.next();
      while (!next.done) next = generator.next();
      ev.head = next.value;
      ev.replay.add(data);
    }
  }

  private lastQuery = { text: '', terms: noTerms() };

  rank(input: RankInput): Ranking {
    const q = input.queryVector;
    if (!q) throw new DtdrError('options', 'dtdr-g needs input.queryVector', { hint: 'rank through Dtdr/rankStep, which embeds for you' });
    const w = this.workspace;
    const L = this.side.labels.length;
    const history = historyIndices(input.history, this.side.index);
    // Every step of a plan ranks the same request: tokenise it once.
    if (this.lastQuery.text !== input.query) this.lastQuery = { text: input.query, terms: this.side.lexical.prepare(terms(input.query)) };
    computeSignals(this.side, this.evidence, { terms: this.lastQuery.terms, queryVector: q, history }, w, this.neighbours, this.without);
    const max = combine(this.theta, w, L);
    const sum = w.kernel.run(SCORES, L, max, 1 / this.temperature);
    w.kernel.divide(L, sum);
    const probabilities = w.kernel.output.slice(0, L);
    // The best label's share is exp(0) / sum.
    const top = 1 / sum;
    const knownHistory = w.known;
    const confident = this.evidence !== undefined && top >= this.confidentAbove && knownHistory;
    const set = { threshold: confident ? this.thresholds.confident : this.thresholds.unsure, target: this.target, confident };
    return withLazyOrder({ labels: this.side.labels, probabilities, confident, set, ...(confident ? {} : { cause: this.unsureCause(top, input.history) }) }, { unitRange: true });
  }

  /**
   * The conformal thresholds another coverage target would give, from the same held-out scores
   * (for coverage-against-size curves; set `thresholds` to use them). Zero where a group has too
   * few scores, as at fit time.
   */
  thresholdsFor(target: number): { confident: number; unsure: number } {
    if (!(target > 0 && target < 1)) throw new DtdrError('options', `target must be in (0, 1), got ${target}`, { field: 'target' });
    return groupThresholds(this.calibration, target);
  }

  /** Why a step is unsure, from what its signals could and could not find. */
  private unsureCause(top: number, history: readonly string[]): string {
    if (!this.evidence) return 'no demonstrations: ranked by tool descriptions alone';
    const c = this.workspace.context;
    const why: string[] = [];
    if (top < this.confidentAbove) why.push(`the top tool has calibrated probability ${top.toFixed(2)} < ${this.confidentAbove}`);
    if (!this.workspace.known) {
      const recent = history.slice(-KNOWN_HISTORY);
      why.push(recent.length > 0 ? `no demonstration has the calls ${recent.join(' → ')} in a row` : 'no demonstration starts a plan like this');
    } else if (c[C_MATCH] < 0.5) why.push('the demonstrations nearest this request never had this history');
    if (c[C_SUPPORT] < Math.log1p(2) / Math.log(101)) why.push('few demonstrations are like this request');
    return why.join('; ');
  }

  state(): GatedState {
    const ev = this.evidence;
    const d = this.side.dim;
    const rows = (a: Float32Array, count: number) => Array.from({ length: count }, (_, i) => Array.from(a.subarray(i * d, (i + 1) * d)));
    return {
      historyLength: this.historyLength,
      neighbours: this.neighbours,
      lexicalOrder: this.side.lexicalOrder,
      without: this.withoutSignals,
      theta: Array.from(this.theta),
      temperature: this.temperature,
      target: this.target,
      confidentAbove: this.confidentAbove,
      thresholds: this.thresholds,
      toolVectors: rows(this.side.toolVectors, this.side.tools.length),
      evidence: ev
        ? {
            centroids: rows(ev.centroids, ev.k),
            graphs: ev.graphs.map((g) => g.state()),
            global: ev.global.state(),
            globalHistory: ev.global.maxHistory,
            bags: ev.bags.map((b) => [...b].map(([k, v]) => [k, +v.toFixed(6)] as [number, number])),
            head: ev.head ? ev.head.state() : null,
            vocabulary: [...ev.vocabulary.keys()],
            sizes: [...ev.sizes],
            replay: ev.replay.state(),
          }
        : null,
      calibration: this.calibration,
      ...(this.diagnostics ? { diagnostics: this.diagnostics } : {}),
    };
  }

  static fromState(tools: ToolSpec[], dim: number, s: GatedState): GatedRetriever {
    checkGatedState(s, tools, dim);
    const fail = (field: string, message: string): never => {
      throw new DtdrError('artifact', message, { field: `state.${field}` });
    };
    if (!s || typeof s !== 'object') fail('', 'missing dtdr-g state');
    if (!Array.isArray(s.theta) || s.theta.length !== S * G || s.theta.some((v) => !Number.isFinite(v))) fail('theta', `gate must have ${S * G} finite weights`);
    if (!Array.isArray(s.toolVectors) || s.toolVectors.length !== tools.length || s.toolVectors.some((v) => !Array.isArray(v) || v.length !== dim)) fail('toolVectors', 'one vector per tool of the encoder dimension expected');
    const without = Array.isArray(s.without) ? s.without.filter((x): x is SignalName => SIGNALS.includes(x as SignalName)) : [];
    // Files written before the lexical signal weighed order of mention have no lexicalOrder: 0 ranks as they did.
    const lexicalOrder = s.lexicalOrder ?? 0;
    if (typeof lexicalOrder !== 'number' || !(lexicalOrder >= 0 && Number.isFinite(lexicalOrder))) fail('lexicalOrder', 'lexicalOrder must be a finite number ≥ 0');
    const side = new ToolSide(tools, Float32Array.from(s.toolVectors.flat()), dim, lexicalOrder);
    let ev: Evidence | undefined;
    if (s.evidence) {
      const e = s.evidence;
      const l = Number(s.historyLength);
      if (!Number.isInteger(l) || l < 1) fail('historyLength', 'history length must be a positive integer');
      if (!Array.isArray(e.centroids) || e.centroids.some((c) => !Array.isArray(c) || c.length !== dim)) fail('evidence.centroids', 'centroids must match the encoder dimension');
      if (!Array.isArray(e.graphs) || e.graphs.length !== e.centroids.length) fail('evidence.graphs', 'one graph per cluster expected');
      if (!Array.isArray(e.bags) || e.bags.length !== e.centroids.length) fail('evidence.bags', 'one tool list per cluster expected');
      const L = tools.length + 1;
      const vocabulary = new Map((e.vocabulary ?? []).map((label, slot) => [label, slot]));
      if ([...vocabulary.keys()].some((i) => !Number.isInteger(i) || i < 0 || i >= L)) fail('evidence.vocabulary', 'history vocabulary must list label indices');
      let head: LinearHead | undefined;
      if (e.head) {
        head = LinearHead.fromState(e.head);
        if (head.dim !== dim || head.classes !== L || head.sparseSize !== headSparseSize(l, vocabulary)) fail('evidence.head', `head is ${head.dim}→${head.classes}, expected ${dim}→${L}`);
      }
      ev = {
        historyLength: l,
        k: e.centroids.length,
        centroids: Float32Array.from(e.centroids.flat()),
        graphs: e.graphs.map((g) => DependencyGraph.fromState(l, g)),
        global: DependencyGraph.fromState(Number(e.globalHistory) || Math.max(l, KNOWN_HISTORY), e.global),
        bags: e.bags.map((b) => new Map(b)),
        head,
        vocabulary,
        sizes: [],
        replay: ReplayBuffer.fromState(e.replay),
      };
      const graphs = ev.graphs;
      ev.sizes = Array.isArray(e.sizes) && e.sizes.length === graphs.length ? e.sizes.map(Number) : graphs.map(startCount);
    }
    const th = s.thresholds ?? { confident: 0, unsure: 0 };
    const calibration = s.calibration && Array.isArray(s.calibration.confident) && Array.isArray(s.calibration.unsure)
      ? { confident: s.calibration.confident.map(Number), unsure: s.calibration.unsure.map(Number) }
      : { confident: [], unsure: [] };
    return new GatedRetriever(side, ev, Float64Array.from(s.theta), Number(s.temperature) || 1, Number(s.target) || 0.95, Number(s.confidentAbove ?? 0.5), th, Number(s.neighbours) || 5, without, s.diagnostics, calibration);
  }
}

function calibrationScores(theta: Float64Array, temperature: number, data: GateData) {
  const n = data.offsets.length - 1;
  const best: number[] = [];
  const top: number[] = [];
  const topCorrect: number[] = [];
  for (let i = 0; i < n; i++) {
    const p = stepProbabilities(theta, data, i, temperature);
    const from = data.offsets[i];
    let b = 0;
    let t = 0;
    let tk = 0;
    for (let k = 0; k < p.length; k++) {
      if (data.accept[from + k] && p[k] > b) b = p[k];
      if (p[k] > t) [t, tk] = [p[k], k];
    }
    best.push(b);
    top.push(t);
    topCorrect.push(data.accept[from + tk]);
  }
  return { best, top, topCorrect };
}

/** ECE of isotonic calibration, measured by 2-fold cross-validation on the calibration steps. */
function isotonicEce(top: number[], correct: number[]): number {
  const idx = top.map((_, i) => i);
  const a = idx.filter((i) => i % 2 === 0);
  const b = idx.filter((i) => i % 2 === 1);
  const mapped: number[] = [];
  const outcome: number[] = [];
  for (const [fitOn, applyTo] of [[a, b], [b, a]]) {
    const map = fitIsotonic(fitOn.map((i) => top[i]), fitOn.map((i) => correct[i]));
    for (const i of applyTo) {
      mapped.push(applyIsotonic(map, top[i]));
      outcome.push(correct[i]);
    }
  }
  return expectedCalibrationError(mapped, outcome);
}

/** Scales a vector to unit length in place (a zero vector stays zero). */
function normaliseInPlace(v: Float32Array): void {
  let norm = 0;
  for (let j = 0; j < v.length; j++) norm += v[j] * v[j];
  norm = Math.sqrt(norm);
  if (norm > 0) for (let j = 0; j < v.length; j++) v[j] /= norm;
}

/**
 * What demonstrations teach DTDR-G, fitted once per cross-fitting fold and once on all of them:
 * per-cluster and pooled dependency graphs, each cluster's tool bag, and the linear head over
 * [request, last l calls, calls so far] with its replay buffer for online learning.
 */
import { planSteps, planTools } from '../../plans/plan.js';
import { seededRandom, shuffleInPlace } from '../../base/random.js';
import type { Plan } from '../../base/types.js';
import { countedSteps, historyIndices } from '../dependency.js';
import { DependencyGraph, type CountedStep } from '../graph.js';
import type { PackedMatrix } from '../kernels/matvec.js';
import type { LinearHead, LinearHeadOptions } from '../linear-head.js';
import { trainLinearHead } from '../linear-head-training.js';
import { ReplayBuffer } from '../replay-buffer.js';
import { SAMPLED_EXAMPLE_PASSES, SAMPLED_SOFTMAX_ABOVE, trainSampledHead } from '../linear-head-sampled.js';
import type { TrainingProgress } from '../types.js';
import { KNOWN_HISTORY } from './layout.js';
import type { ToolSide } from './tool-side.js';

/** What demonstrations teach; fitted once per cross-fitting fold and once on all of them. */
export interface Evidence {
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
  /**
   * Demonstrated steps per label and the rarely demonstrated tools (built on first use; dropped when learning or adding
   * tools).
   */
  rarity?: Rarity;
}

/** Tools with fewer demonstrated steps than this keep part of their voice (see `rarity`). */
export const FEW_DEMONSTRATIONS = 5;

export interface Rarity {
  /** Demonstrated steps per label (the pooled graph's unigram row; steps with several acceptable tools share one). */
  counts: Float64Array;
  /** Tools with fewer than FEW_DEMONSTRATIONS steps… */
  labels: Uint32Array;
  /** Tools no demonstration called (count < 0.5, e.g. added after training). */
  unseen: Uint32Array;
}

/**
 * Demonstrated steps per label, from the pooled graph's unigram row, and the rarely or never
 * demonstrated tools. A tool added after training has floor values in every evidence signal: the
 * graphs and head say "never", when the truth is "never seen"; its description speaks for it
 * through the mix with the descriptions' ranking (shrinkage.ts) and the added-tools rule. (Lifting
 * its evidence toward its description peer's, as before, added no hit in `npm run check --
 * added-tools` and let an added flashlight tool take up to 0.6 of requests that never asked for it:
 * the living-model tests.) The counts also decide a step's calibration group.
 */
export function rarity(ev: Evidence, labels: number): Rarity {
  if (ev.rarity && ev.rarity.counts.length === labels) return ev.rarity;
  const counts = new Float64Array(labels);
  const row = ev.global.lookupKey(DependencyGraph.key([], 0));
  if (row) for (let k = 0; k < row.labels.length; k++) counts[row.labels[k]] += row.weights[k];
  const rare: number[] = [];
  for (let f = 0; f < labels - 1; f++) if (counts[f] < FEW_DEMONSTRATIONS) rare.push(f);
  ev.rarity = {
    counts,
    labels: Uint32Array.from(rare),
    unseen: Uint32Array.from(rare.filter((f) => counts[f] < 0.5)),
  };
  return ev.rarity;
}

export function headSlots(history: readonly number[], l: number, vocabulary: Map<number, number>): Uint32Array {
  const width = vocabulary.size + 2;
  const called = new Set<number>();
  for (const h of history) called.add(vocabulary.get(h) ?? vocabulary.size);
  const slots = new Uint32Array(l + called.size);
  for (let k = 0; k < l; k++) {
    const h = history[history.length - l + k];
    slots[k] = k * width + (h === undefined ? vocabulary.size : (vocabulary.get(h) ?? vocabulary.size + 1));
  }
  let k = l;
  for (const id of called) slots[k++] = l * width + id;
  return slots;
}

export function headSparseSize(l: number, vocabulary: Map<number, number>): number {
  return l * (vocabulary.size + 2) + vocabulary.size + 1;
}

export interface FitPartsOptions {
  historyLength: number;
  seed: number;
  head?: LinearHeadOptions | false;
  /** The head's training steps, at most: a seeded sample of them beyond (plan order kept). Default: every step. */
  headSteps?: number;
  /**
   * Each plan's steps and tools as the fit reads them; a fit over many folds passes one memo (`planMemo`). Default:
   * built fresh.
   */
  memo?: PlanMemo;
}

/** What the evidence reads from a plan, built once per plan for one fit's folds. */
export interface PlanMemo {
  /** The plan's steps as the graphs count them (orders and history keys). */
  steps(plan: Plan): CountedStep[];
  /** The labels of the plan's tools, each once, in the order first called (a cluster's tool bag). */
  tools(plan: Plan): number[];
}

/** A PlanMemo that keeps what it builds, so that every fold and the final fit share it. */
export function planMemo(side: ToolSide): PlanMemo {
  const steps = new Map<Plan, CountedStep[]>();
  const tools = new Map<Plan, number[]>();
  return {
    steps(plan) {
      let kept = steps.get(plan);
      if (!kept) steps.set(plan, (kept = countedSteps(plan, side.index)));
      return kept;
    },
    tools(plan) {
      let kept = tools.get(plan);
      if (!kept) tools.set(plan, (kept = distinctTools(plan, side)));
      return kept;
    },
  };
}

function distinctTools(plan: Plan, side: ToolSide): number[] {
  return [...new Set(planTools(plan))].map((t) => side.index.get(t)!);
}

/** Clusters of the demonstration queries and the cluster of each of the plans being fitted. */
export interface Clustering {
  centroids: Float32Array;
  k: number;
  assignment: ArrayLike<number>;
}

export function fitEvidence(
  side: ToolSide,
  plans: Plan[],
  queries: Float32Array[],
  clustering: Clustering,
  o: FitPartsOptions,
  onProgress?: (p: TrainingProgress) => void,
): Evidence {
  const l = o.historyLength;
  const { centroids, k, assignment } = clustering;
  const graphs = Array.from({ length: k }, () => new DependencyGraph(l));
  const members: number[][] = Array.from({ length: k }, () => []);
  // countPlans' adds, in its order.
  const stepsOf = o.memo ? (plan: Plan) => o.memo!.steps(plan) : (plan: Plan) => countedSteps(plan, side.index);
  const toolsOf = o.memo ? (plan: Plan) => o.memo!.tools(plan) : (plan: Plan) => distinctTools(plan, side);
  plans.forEach((plan, i) => {
    for (const step of stepsOf(plan)) graphs[assignment[i]].addCounted(step);
    members[assignment[i]].push(i);
  });
  const global = new DependencyGraph(Math.max(l, KNOWN_HISTORY));
  for (const plan of plans) for (const step of stepsOf(plan)) global.addCounted(step);
  const bags = members.map((list) => {
    const bag = new Map<number, number>();
    for (const i of list) for (const t of toolsOf(plans[i])) bag.set(t, (bag.get(t) ?? 0) + 1 / list.length);
    if (list.length > 0) bag.set(side.end, 1);
    return bag;
  });
  const vocabulary = new Map<number, number>();
  for (const plan of plans)
    for (const node of plan.nodes) {
      const i = side.index.get(node.tool)!;
      if (!vocabulary.has(i)) vocabulary.set(i, vocabulary.size);
    }
  let head: LinearHead | undefined;
  const replay = new ReplayBuffer();
  // A round of leave-one-out cross-fitting on a single demonstration trains on none: no head then
  // (the other signals score its held-out steps), rather than a head with nothing to learn from.
  if (o.head !== false && plans.length > 0) {
    const examples = sampleExamples(
      headExamples(side, plans, queries, l, vocabulary),
      o.headSteps ?? Infinity,
      o.seed + 601,
    );
    replay.add(examples);
    const headOptions = { epochs: 8, seed: o.seed, sparseSupport: 'auto' as const, ...(o.head ?? {}) };
    // Over many labels a full softmax per step costs hours at app scale: a sampled one (linear-head-sampled.ts).
    // Its epochs stop at about SAMPLED_EXAMPLE_PASSES examples in all (80,000 steps: 3 epochs, ~1,900 Adam steps).
    const generator =
      side.labels.length > SAMPLED_SOFTMAX_ABOVE
        ? trainSampledHead(examples, {
            ...headOptions,
            epochs: Math.max(
              1,
              Math.min(headOptions.epochs, Math.round(SAMPLED_EXAMPLE_PASSES / examples.dense.length)),
            ),
          })
        : trainLinearHead(examples, headOptions);
    for (;;) {
      const next = generator.next();
      if (next.done) {
        head = next.value;
        break;
      }
      onProgress?.({ phase: 'head', fraction: next.value.epoch / next.value.epochs, loss: next.value.loss });
    }
  }
  return {
    historyLength: l,
    k,
    centroids,
    graphs,
    global,
    bags,
    head,
    vocabulary,
    sizes: members.map((m) => m.length),
    replay,
  };
}

/** `examples` when there are at most `cap`, else a seeded sample of `cap` of them in their order. */
function sampleExamples<
  E extends { dense: Float32Array[]; sparse: Uint32Array[]; targets: number[][]; related: number[][] },
>(examples: E, cap: number, seed: number): E {
  const n = examples.dense.length;
  if (n <= cap) return examples;
  const keep = shuffleInPlace(
    Array.from({ length: n }, (_, i) => i),
    seededRandom(seed),
  )
    .slice(0, Math.floor(cap))
    .sort((a, b) => a - b);
  return {
    ...examples,
    dense: keep.map((i) => examples.dense[i]),
    sparse: keep.map((i) => examples.sparse[i]),
    targets: keep.map((i) => examples.targets[i]),
    related: keep.map((i) => examples.related[i]),
  };
}

/** The head's examples: one per step, [query, last l calls, calls so far] → acceptable labels. */
export function headExamples(
  side: ToolSide,
  plans: Plan[],
  queries: Float32Array[],
  l: number,
  vocabulary: Map<number, number>,
) {
  const dense: Float32Array[] = [];
  const sparse: Uint32Array[] = [];
  const targets: number[][] = [];
  const related: number[][] = [];
  plans.forEach((plan, i) => {
    const tools = distinctTools(plan, side);
    for (const step of planSteps(plan)) {
      dense.push(queries[i]);
      sparse.push(headSlots(historyIndices(step.history, side.index), l, vocabulary));
      targets.push(step.acceptable.map((t) => side.index.get(t)!));
      related.push(tools);
    }
  });
  return { dense, sparse, targets, related, classes: side.labels.length, sparseSize: headSparseSize(l, vocabulary) };
}

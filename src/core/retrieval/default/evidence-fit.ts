/**
 * Fitting what demonstrations teach DTDR-G (evidence.ts), once per cross-fitting fold and once on all
 * of them: the graphs, the clusters' tool bags and the linear head with its replay buffer. Training
 * code, loaded with the fit (training.ts).
 */
import { planSteps, planTools } from '../../plans/plan.js';
import type { Plan } from '../../base/types.js';
import { countedSteps, historyIndices } from '../dependency.js';
import { DependencyGraph, type CountedStep } from '../graph.js';
import type { LinearHead, LinearHeadData, LinearHeadOptions } from '../linear-head.js';
import { trainLinearHead } from '../linear-head-training.js';
import { addToReplay, ReplayBuffer } from '../replay-buffer.js';
import { SAMPLED_EXAMPLE_PASSES, SAMPLED_SOFTMAX_ABOVE, trainSampledHead } from '../linear-head-sampled.js';
import type { TrainingProgress } from '../types.js';
import { scoredSubset } from './calibration.js';
import { KNOWN_HISTORY } from './layout.js';
import type { ToolSide } from './tool-side.js';
import { headSlots, headSparseSize, type Evidence } from './evidence.js';

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
  const memo = o.memo ?? planMemo(side);
  plans.forEach((plan, i) => {
    for (const step of memo.steps(plan)) graphs[assignment[i]].addCounted(step);
    members[assignment[i]].push(i);
  });
  const global = new DependencyGraph(Math.max(l, KNOWN_HISTORY));
  for (const plan of plans) for (const step of memo.steps(plan)) global.addCounted(step);
  const bags = members.map((list) => {
    const bag = new Map<number, number>();
    for (const i of list) for (const t of memo.tools(plans[i])) bag.set(t, (bag.get(t) ?? 0) + 1 / list.length);
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
    const all = headExamples(side, plans, queries, l, vocabulary);
    const examples = sampleExamples(all, o.headSteps ?? Infinity, o.seed + 601);
    addToReplay(replay, examples);
    const headOptions = { epochs: 8, seed: o.seed, sparseSupport: 'auto' as const, ...(o.head ?? {}) };
    // Over many labels a full softmax per step costs hours at app scale: a sampled one (linear-head-sampled.ts).
    // Its epochs stop at about SAMPLED_EXAMPLE_PASSES examples in all (80,000 steps: 3 epochs, ~1,900 Adam steps).
    const passes = Math.round(SAMPLED_EXAMPLE_PASSES / examples.dense.length);
    const generator =
      side.labels.length > SAMPLED_SOFTMAX_ABOVE
        ? trainSampledHead(examples, { ...headOptions, epochs: Math.max(1, Math.min(headOptions.epochs, passes)) })
        : trainLinearHead(examples, headOptions);
    let next = generator.next();
    for (; !next.done; next = generator.next())
      onProgress?.({ phase: 'head', fraction: next.value.epoch / next.value.epochs, loss: next.value.loss });
    head = next.value;
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
function sampleExamples<E extends LinearHeadData>(examples: E, cap: number, seed: number): E {
  if (examples.dense.length <= cap) return examples;
  const all = examples.dense.map((_, i) => i);
  return examplesAt(examples, scoredSubset(all, cap, seed));
}

/** The examples at indices `keep`, in that order. */
export function examplesAt<E extends LinearHeadData>(examples: E, keep: readonly number[]): E {
  const at = <T>(list: readonly T[]) => keep.map((i) => list[i]);
  return {
    ...examples,
    dense: at(examples.dense),
    targets: at(examples.targets),
    ...(examples.sparse ? { sparse: at(examples.sparse) } : {}),
    ...(examples.related ? { related: at(examples.related) } : {}),
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

/**
 * The held-out benchmark's measure: the first step of each test plan that calls two tools or more, as
 * its request arrives. Shared by `npm run experiment -- first-step-recall` and the tests.
 */
import type { Dtdr } from '../../src/core/dtdr.js';
import type { Plan } from '../../src/core/base/types.js';
import { planSteps } from '../../src/core/plans/plan.js';

/** A plan's first step: its request, its acceptable tools (the DAG frontier) and the distinct tools the plan calls. */
export interface FirstStep {
  query: string;
  acceptable: string[];
  tools: string[];
}

/** What a model's candidate sets do at those steps, averaged over them. */
export interface FirstStepScores {
  /** Reciprocal rank of the first acceptable tool. */
  mrr: number;
  set: number;
  /** The share of the plan's tools in the set, and of the step's acceptable tools. */
  planRecall: number;
  frontierRecall: number;
  /** The share of confident steps, and of those whose set held no acceptable tool (0 with none). */
  confident: number;
  confidentMiss: number;
}

/** The first steps of the plans that call two distinct tools or more. */
export function firstSteps(test: readonly Plan[]): FirstStep[] {
  return test
    .map((p) => ({ ...planSteps(p)[0], tools: [...new Set(p.nodes.map((n) => n.tool))] }))
    .filter((s) => s.tools.length >= 2);
}

/**
 * A what-if for sets cut by the cap (`widenMax`, 12 by default): the first `keep` of the model's ranking, then the
 * favourites of a model of the tools alone up to the cap, a hedge between the two where the threshold says nothing.
 */
export interface CappedHedge {
  keep: number;
  toolsOnly: Dtdr;
  widenMax?: number;
}

/**
 * Retrieves every first step with `model`, as an app would (`retrieve`: the ranking and its candidate set), or with
 * `hedge`, its capped sets hedged as that says.
 */
export async function scoreFirstSteps(
  model: Dtdr,
  steps: readonly FirstStep[],
  hedge?: CappedHedge,
): Promise<FirstStepScores> {
  const sum = { mrr: 0, set: 0, planRecall: 0, frontierRecall: 0, confident: 0, confidentMiss: 0 };
  const share = (needed: string[], set: string[]) => needed.filter((t) => set.includes(t)).length / needed.length;
  for (const step of steps) {
    const r = await model.retrieve(step.query, []);
    const { order, labels } = r.ranking;
    const at = Array.from(order).findIndex((l) => step.acceptable.includes(labels[l]));
    let set = r.candidates.map((c) => c.tool);
    if (hedge && r.widened && r.reason?.includes('capped at')) set = await hedged(hedge, step.query, order, labels);
    sum.mrr += at >= 0 ? 1 / (at + 1) : 0;
    sum.set += set.length;
    sum.planRecall += share(step.tools, set);
    sum.frontierRecall += share(step.acceptable, set);
    if (r.ranking.confident) {
      sum.confident++;
      if (!set.some((t) => step.acceptable.includes(t))) sum.confidentMiss++;
    }
  }
  const n = Math.max(1, steps.length);
  return {
    mrr: sum.mrr / n,
    set: sum.set / n,
    planRecall: sum.planRecall / n,
    frontierRecall: sum.frontierRecall / n,
    confident: sum.confident / n,
    confidentMiss: sum.confident ? sum.confidentMiss / sum.confident : 0,
  };
}

async function hedged(h: CappedHedge, query: string, order: Uint32Array, labels: readonly string[]): Promise<string[]> {
  const cap = h.widenMax ?? 12;
  const set = new Set(Array.from(order.subarray(0, h.keep), (l) => labels[l]));
  const alone = await h.toolsOnly.rank(query, []);
  for (const l of alone.order) {
    if (set.size >= cap) break;
    set.add(alone.labels[l]);
  }
  return [...set];
}

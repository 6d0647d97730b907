/**
 * The held-out benchmark's measure: the first step of each test plan that calls two tools or more, as
 * its request arrives. Shared by `npm run experiment -- first-step-recall` and the tests.
 */
import type { Dtdr } from '../../src/core/dtdr.js';
import type { Plan } from '../../src/core/base/types.js';
import { planSteps } from '../../src/core/plans/plan.js';
import { selectCandidates, type SelectOptions } from '../../src/core/selection/select.js';

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

/** Retrieves every first step with `model`, as an app would (`retrieve`: the ranking and its candidate set). */
export async function scoreFirstSteps(
  model: Dtdr,
  steps: readonly FirstStep[],
  options?: SelectOptions,
): Promise<FirstStepScores> {
  return (await scoreFirstStepsEach(model, steps, [options]))[0];
}

/**
 * The same under each of several selection options, ranking every step once: each option's candidate set is what
 * `retrieve` would return with it (its confidence included, which selection may take away).
 */
export async function scoreFirstStepsEach(
  model: Dtdr,
  steps: readonly FirstStep[],
  optionsEach: readonly (SelectOptions | undefined)[],
): Promise<FirstStepScores[]> {
  const sums = optionsEach.map(() => ({ mrr: 0, set: 0, planRecall: 0, frontierRecall: 0, confident: 0, miss: 0 }));
  const share = (needed: string[], set: string[]) => needed.filter((t) => set.includes(t)).length / needed.length;
  for (const step of steps) {
    const ranking = await model.rank(step.query, []);
    const { order, labels } = ranking;
    const at = Array.from(order).findIndex((l) => step.acceptable.includes(labels[l]));
    optionsEach.forEach((options, i) => {
      const selected = selectCandidates(ranking, options);
      const set = selected.candidates.map((c) => c.tool);
      const sum = sums[i];
      sum.mrr += at >= 0 ? 1 / (at + 1) : 0;
      sum.set += set.length;
      sum.planRecall += share(step.tools, set);
      sum.frontierRecall += share(step.acceptable, set);
      if (selected.confident ?? ranking.confident) {
        sum.confident++;
        if (!set.some((t) => step.acceptable.includes(t))) sum.miss++;
      }
    });
  }
  const n = Math.max(1, steps.length);
  return sums.map((sum) => ({
    mrr: sum.mrr / n,
    set: sum.set / n,
    planRecall: sum.planRecall / n,
    frontierRecall: sum.frontierRecall / n,
    confident: sum.confident / n,
    confidentMiss: sum.confident ? sum.miss / sum.confident : 0,
  }));
}

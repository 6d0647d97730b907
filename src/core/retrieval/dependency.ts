import { DtdrError } from '../base/errors.js';
import { array, int, labelWeights, numbers } from '../base/validate.js';
import { planOrders, planSteps } from '../plans/plan.js';
import type { Plan } from '../base/types.js';
import { DependencyGraph, type CountedStep } from './graph.js';
import { makeRanking } from './ranking.js';
import type { Backoff, EmbeddingNeeds, LearnInput, RankInput, Ranking, Retriever } from './types.js';

export function labelIndices(labels: readonly string[]): Map<string, number> {
  return new Map(labels.map((l, i) => [l, i]));
}

/** History as label indices; a tool the retriever never saw maps to -2, which matches nothing. */
export function historyIndices(history: readonly string[], index: Map<string, number>): number[] {
  return history.map((t) => index.get(t) ?? -2);
}

/**
 * A plan's steps as `countPlans` adds them (every execution order, in its order), with each step's
 * history keys kept: a fit that counts the same plans into many graphs (DTDR-G's folds) walks the
 * orders and builds the keys once. `DependencyGraph.addCounted` adds one.
 */
export function countedSteps(plan: Plan, index: Map<string, number>): CountedStep[] {
  const orders = planOrders(plan);
  const steps: CountedStep[] = [];
  for (const order of orders) {
    for (const step of planSteps(plan, order)) {
      steps.push({
        history: historyIndices(step.history, index),
        keys: [],
        next: step.acceptable.map((t) => index.get(t)!),
        weight: 1 / orders.length,
      });
    }
  }
  return steps;
}

/** Counts every step of every execution order a plan allows; each plan weighs 1 in total. */
export function countPlans(graph: DependencyGraph, plans: Plan[], index: Map<string, number>): void {
  for (const plan of plans) {
    const orders = planOrders(plan);
    for (const order of orders) {
      for (const step of planSteps(plan, order)) {
        graph.add(
          historyIndices(step.history, index),
          step.acceptable.map((t) => index.get(t)!),
          1 / orders.length,
        );
      }
    }
  }
}

/** Words for a back-off, counted in real calls (the start of a plan is not a call). */
export function backoffCause(b: Backoff): string {
  if (b.historyWanted === 0)
    return `backed off to ${b.scope} statistics: no demonstration near this request starts a plan like this`;
  return `backed off to ${b.scope} statistics with ${b.historyUsed} of the last ${b.historyWanted} calls matched`;
}

/**
 * DR (ToolNet-style, static): next-tool frequencies given the last tool only, pooled over all
 * demonstrations. Before the first call there is no last tool, so it ranks tools by how often
 * they are called; a last tool never seen as a source backs off to the same frequencies.
 */
export class DependencyRetriever implements Retriever {
  readonly method = 'dr' as const;
  readonly needs: EmbeddingNeeds = { query: false, context: false };
  readonly historyLength = 1;
  private readonly index: Map<string, number>;
  constructor(
    readonly labels: readonly string[],
    /** last tool index → next label index → weight */
    readonly transitions: Map<number, Map<number, number>>,
    /** how often each label is called (END never is) */
    readonly frequency: Float64Array,
  ) {
    this.index = labelIndices(labels);
  }

  static fit(labels: readonly string[], plans: Plan[]): DependencyRetriever {
    const retriever = new DependencyRetriever(labels, new Map(), new Float64Array(labels.length));
    retriever.learn({ plans });
    return retriever;
  }

  /** Counts the new plans' transitions and calls (counts simply add: learning equals refitting). */
  learn(input: LearnInput): void {
    const { index, transitions, frequency } = this;
    for (const plan of input.plans) {
      const orders = planOrders(plan);
      for (const order of orders) {
        for (const step of planSteps(plan, order)) {
          const next = step.acceptable.map((t) => index.get(t)!);
          if (step.history.length > 0) {
            const last = index.get(step.history[step.history.length - 1])!;
            let row = transitions.get(last);
            if (!row) transitions.set(last, (row = new Map<number, number>()));
            for (const n of next) row.set(n, (row.get(n) ?? 0) + 1 / next.length / orders.length);
          }
        }
      }
      for (const node of plan.nodes) frequency[index.get(node.tool)!]++;
    }
  }

  rank(input: RankInput): Ranking {
    const last = input.history.length > 0 ? this.index.get(input.history[input.history.length - 1]) : undefined;
    const row = last === undefined ? undefined : this.transitions.get(last);
    const probabilities = new Float64Array(this.labels.length);
    let total = 0;
    if (row) for (const [label, w] of row) total += probabilities[label] = w;
    else for (let i = 0; i < probabilities.length; i++) total += probabilities[i] = this.frequency[i];
    for (let i = 0; i < probabilities.length; i++) probabilities[i] /= total || 1;
    const backoff = {
      scope: 'global' as const,
      historyUsed: row ? 1 : 0,
      historyWanted: Math.min(1, input.history.length),
      support: Math.round(total * 100) / 100,
    };
    const cause = row
      ? undefined
      : input.history.length === 0
        ? 'no history yet: ranked by how often tools are called'
        : `no demonstration calls anything after ${input.history[input.history.length - 1]}`;
    return makeRanking(this.labels, probabilities, {
      tieBreak: this.frequency,
      backoff,
      confident: !!row,
      ...(cause ? { cause } : {}),
    });
  }

  state() {
    return {
      transitions: [...this.transitions].map(([from, row]) => [from, [...row].map(([l, w]) => [l, +w.toFixed(6)])]),
      frequency: Array.from(this.frequency),
    };
  }

  static fromState(
    labels: readonly string[],
    state: { transitions: [number, [number, number][]][]; frequency: number[] },
  ): DependencyRetriever {
    if (!Array.isArray(state?.transitions) || state.frequency?.length !== labels.length) {
      throw new DtdrError('artifact', 'dr state needs transitions and one frequency per label', { field: 'state' });
    }
    const L = labels.length;
    numbers('state.frequency', state.frequency, L, { min: 0 });
    state.transitions.forEach((entry, i) => {
      const e = array(`state.transitions[${i}]`, entry, 2);
      int(`state.transitions[${i}][0]`, e[0], 0, L - 1);
      labelWeights(`state.transitions[${i}][1]`, e[1], L);
    });
    return new DependencyRetriever(
      labels,
      new Map(state.transitions.map(([from, row]) => [from, new Map(row)])),
      Float64Array.from(state.frequency),
    );
  }
}

/** Plans behind a graph: the weight of its start-of-plan row (each plan weighs 1 there). */
export function startCount(graph: DependencyGraph): number {
  const row = graph.lookup([], 1);
  let total = 0;
  if (row) for (const w of row.values()) total += w;
  return Math.round(total);
}

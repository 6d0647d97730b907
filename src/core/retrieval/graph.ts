import { MAX_PLAN_STEPS } from '../base/limits.js';
import { array, int, labelWeights, stateError } from '../base/validate.js';
import type { Backoff } from './types.js';

const START = -1;

/**
 * Weighted next-label counts given the last j tools (j = 0..maxHistory) of a history that is
 * padded with a start marker, so "A as first call" and "A after B" are different contexts at
 * j ≥ 2 and the same at j = 1. One per DTDR-C cluster, one pooled over all demonstrations.
 */
export class DependencyGraph {
  /** key "j|i1,i2,…" → label index → weight */
  readonly table = new Map<string, Map<number, number>>();

  constructor(readonly maxHistory: number) {}

  static key(history: readonly number[], j: number): string {
    const padded: number[] = [];
    for (let k = history.length - j; k < history.length; k++) padded.push(k < 0 ? START : history[k]);
    return `${j}|${padded.join(',')}`;
  }

  /** Counts one step: `next` are the acceptable labels, sharing `weight`. */
  add(history: readonly number[], next: readonly number[], weight = 1): void {
    for (let j = 0; j <= this.maxHistory; j++) {
      const key = DependencyGraph.key(history, j);
      let row = this.table.get(key);
      if (!row) this.table.set(key, (row = new Map<number, number>()));
      for (const label of next) row.set(label, (row.get(label) ?? 0) + weight / next.length);
      this.kept.delete(key);
    }
  }

  /** `add(step.history, step.next, step.weight)`, with the step's keys built once and kept on it (see countedSteps). */
  addCounted(step: CountedStep): void {
    const { history, keys, next, weight } = step;
    for (let j = 0; j <= this.maxHistory; j++) {
      const key = (keys[j] ??= DependencyGraph.key(history, j));
      let row = this.table.get(key);
      if (!row) this.table.set(key, (row = new Map<number, number>()));
      for (const label of next) row.set(label, (row.get(label) ?? 0) + weight / next.length);
      this.kept.delete(key);
    }
  }

  lookup(history: readonly number[], j: number): Map<number, number> | undefined {
    return this.table.get(DependencyGraph.key(history, j));
  }

  /**
   * Rows as typed arrays with their sums, kept once built (dropped when a step adds to the row): a lookup allocates
   * nothing.
   */
  private readonly kept = new Map<string, GraphRow>();

  /**
   * The row under a key from `DependencyGraph.key` (callers that look one history up in many
   * graphs build the key once) as typed arrays in the row's order, with its total weight summed
   * in that order; undefined when no demonstration had this context.
   */
  lookupKey(key: string): GraphRow | undefined {
    let entry = this.kept.get(key);
    if (entry === undefined) {
      const row = this.table.get(key);
      if (!row) return undefined;
      // Through an array: older Hermes (React Native's engine) reads only array-likes in TypedArray.from.
      const labels = Uint32Array.from(Array.from(row.keys()));
      const weights = Float64Array.from(Array.from(row.values()));
      let total = 0;
      for (const v of weights) total += v;
      this.kept.set(key, (entry = { labels, weights, total }));
    }
    return entry;
  }

  state(): [string, [number, number][]][] {
    // Exact: a count summed from fractional step weights (0.9999999999999994) rounded to float32
    // reads 1 after loading, on the other side of the support classes' bounds than the model that
    // was trained. The binary artifact keeps integer and float32-exact weights in small sections.
    return [...this.table].map(([key, row]) => [key, [...row]]);
  }

  /**
   * A graph from `state()`. With `check`, a loaded file's graph is validated first: a context
   * length ≥ 0, string keys, labels in [0, labels) and finite weights ≥ 0 (else a DtdrError naming
   * `check.field`).
   */
  static fromState(
    maxHistory: number,
    entries: [string, [number, number][]][],
    check?: { labels: number; field: string },
  ): DependencyGraph {
    if (check) checkGraphState(maxHistory, entries, check.labels, check.field);
    const graph = new DependencyGraph(maxHistory);
    for (const [key, row] of entries) graph.table.set(key, new Map(row));
    return graph;
  }
}

/**
 * Validates a saved graph: a context length ≥ 0, [key, [[label, weight]…]] entries with string keys, labels in [0,
 * labels), finite weights ≥ 0.
 */
export function checkGraphState(maxHistory: unknown, entries: unknown, labels: number, field: string): void {
  int(`${field}.historyLength`, maxHistory, 0, MAX_PLAN_STEPS);
  array(field, entries).forEach((entry, i) => {
    const e = array(`${field}[${i}]`, entry, 2);
    if (typeof e[0] !== 'string') stateError(`${field}[${i}][0]`, 'a context key must be a string');
    labelWeights(`${field}[${i}][1]`, e[1], labels);
  });
}

/**
 * One demonstrated step to count: its history (label indices), the keys of its last j calls by j (filled as used), the
 * acceptable labels, its weight.
 */
export interface CountedStep {
  history: number[];
  keys: string[];
  next: number[];
  weight: number;
}

/** One context's next-label weights in the row's insertion order, and their sum. */
export interface GraphRow {
  labels: Uint32Array;
  weights: Float64Array;
  total: number;
}

export interface GraphLevel {
  graph: DependencyGraph;
  scope: Backoff['scope'];
  /** Context length j looked up (start markers included). */
  level: number;
}

/**
 * Walks the back-off levels in order and returns a full distribution: the first level that knows
 * the history decides, and each later level adds a thousandth of its weight, so tools the first
 * level never saw are still ordered by the wider context instead of arbitrarily.
 */
export function backoffDistribution(
  levels: GraphLevel[],
  history: readonly number[],
  labels: number,
  maxLevel: number,
) {
  const probabilities = new Float64Array(labels);
  let backoff: Backoff | undefined;
  let matchedLevel = 0;
  let weight = 1;
  // Counted in real calls: start markers make "first call" a context, but they are not history.
  const historyWanted = Math.min(maxLevel, history.length);
  for (const level of levels) {
    const row = level.graph.lookupKey(DependencyGraph.key(history, level.level));
    if (!row) continue;
    const { labels: next, weights: counts, total } = row;
    if (total <= 0) continue;
    if (!backoff) {
      matchedLevel = level.level;
      backoff = {
        scope: level.scope,
        historyUsed: Math.min(level.level, history.length),
        historyWanted,
        support: Math.round(total * 100) / 100,
        level: level.level,
      };
    }
    for (let k = 0; k < next.length; k++) probabilities[next[k]] += (weight * counts[k]) / total;
    weight *= 1e-3;
  }
  let sum = 0;
  for (const p of probabilities) sum += p;
  if (sum > 0) for (let i = 0; i < labels; i++) probabilities[i] /= sum;
  else probabilities.fill(1 / labels);
  return {
    probabilities,
    matchedLevel,
    backoff: backoff ?? { scope: 'global' as const, historyUsed: 0, historyWanted, support: 0 },
  };
}

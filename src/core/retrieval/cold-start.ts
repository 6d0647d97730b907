import { scoreStep, summarize } from '../base/metrics.js';
import { Bm25Retriever } from './baselines.js';
import { ClusterRetriever } from './cluster.js';
import { object, optNum } from '../base/validate.js';
import { makeRanking } from './ranking.js';
import type { EmbeddingNeeds, LearnInput, RankInput, Ranking, Retriever, StateInput } from './types.js';

/**
 * DTDR-CB (ours): DTDR-C with a lexical cold-start fallback. The dependency graph keeps the say on
 * END; among tools, it shares the mass with BM25 over the tool descriptions according to how much
 * the query's cluster knows the history:
 *   λ = s / (s + κ) · (1 + j) / (1 + l)   at cluster scope (j: context length matched),
 *   λ = 0                                 after backing off to all clusters,
 * with s the demonstration weight behind the context. BM25 discounts tools already called (repeat
 * calls are the graph's business). κ is picked at fit time on held-out demonstrations.
 */
export class ColdStartRetriever implements Retriever {
  readonly method = 'dtdr-cb' as const;
  readonly needs: EmbeddingNeeds = { query: true, context: false };
  private readonly end: number;
  private readonly index: Map<string, number>;
  /** Per-tool lexical weight, 1 except for the current step's called tools (reset after each step). */
  private readonly lexicalWeight: Float64Array;

  constructor(
    readonly graph: ClusterRetriever,
    readonly lexical: Bm25Retriever,
    readonly kappa = 2,
  ) {
    this.end = graph.labels.length - 1;
    this.index = new Map(graph.labels.map((label, i) => [label, i]));
    this.lexicalWeight = new Float64Array(graph.labels.length).fill(1);
  }

  /** DTDR-CB from a checked model file's state: the DTDR-C part, κ and the BM25 settings. */
  static fromState(input: StateInput): ColdStartRetriever {
    const s = input.state;
    const cluster = ClusterRetriever.fromState(input);
    optNum('state.kappa', s.kappa, { min: 0 });
    if (s.bm25 !== undefined) object('state.bm25', s.bm25);
    const bm25 = (s.bm25 ?? {}) as { k1?: number; b?: number };
    optNum('state.bm25.k1', bm25.k1, { min: 0 });
    optNum('state.bm25.b', bm25.b, { min: 0, max: 1 });
    const lexical = new Bm25Retriever(input.labels, input.tools, Number(bm25.k1 ?? 1.2), Number(bm25.b ?? 0.75));
    return new ColdStartRetriever(cluster, lexical, Number(s.kappa ?? 2));
  }

  get labels(): readonly string[] {
    return this.graph.labels;
  }

  get historyLength(): number {
    return this.graph.historyLength;
  }

  /** The graphs learn; BM25 over descriptions has nothing to learn from demonstrations. */
  learn(input: LearnInput): void {
    this.graph.learn(input);
  }

  rank(input: RankInput): Ranking {
    const g = this.graph.rank(input);
    const b = this.lexical.rank(input).probabilities;
    const bo = g.backoff!;
    const trust =
      bo.scope === 'cluster'
        ? (bo.support / (bo.support + this.kappa)) * ((1 + (bo.level ?? 0)) / (1 + this.graph.historyLength))
        : 0;
    // Tools already called keep a tenth of their lexical weight (found by index, not per tool).
    const weight = this.lexicalWeight;
    const called: number[] = [];
    for (const tool of input.history) {
      const i = this.index.get(tool);
      if (i !== undefined && i < this.end && weight[i] === 1) {
        weight[i] = 0.1;
        called.push(i);
      }
    }
    let lexicalMass = 0;
    for (let i = 0; i < this.end; i++) lexicalMass += b[i] * weight[i];
    const pEnd = g.probabilities[this.end];
    const toolMass = 1 - pEnd;
    const probabilities = new Float64Array(this.labels.length);
    for (let i = 0; i < this.end; i++) {
      const graphShare = toolMass > 0 ? g.probabilities[i] / toolMass : 0;
      const lexicalShare = lexicalMass > 0 ? (b[i] * weight[i]) / lexicalMass : 1 / this.end;
      probabilities[i] = toolMass * (trust * graphShare + (1 - trust) * lexicalShare);
    }
    for (const i of called) weight[i] = 1;
    probabilities[this.end] = pEnd;
    const cause = !g.confident
      ? g.cause
      : trust < 0.5
        ? `the graph has little support here (trust ${trust.toFixed(2)}): descriptions lead`
        : undefined;
    return makeRanking(this.labels, probabilities, { backoff: bo, confident: !cause, ...(cause ? { cause } : {}) });
  }

  state() {
    return { ...(this.graph.state() as object), kappa: this.kappa, bm25: this.lexical.state() };
  }
}

/** Mean reciprocal rank of a retriever on the steps of some plans (for picking κ). */
export function heldOutMrr(
  retriever: Retriever,
  steps: { query: string; history: string[]; acceptable: string[]; queryVector: Float32Array }[],
): number {
  const scores = steps.map((s) => {
    const r = retriever.rank({ query: s.query, history: s.history, queryVector: s.queryVector });
    return scoreStep(r.order, r.labels, s.acceptable, []);
  });
  return summarize(scores).mrr;
}

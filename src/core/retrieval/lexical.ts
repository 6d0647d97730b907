import { terms, toolText } from '../base/text.js';
import type { ToolSpec } from '../base/types.js';

/**
 * BM25 over tool names and descriptions with the per-(term, tool) weights computed once, and a
 * history-aware variant: a query term that a tool already called matches well counts less, so
 * the part of the request still unserved pulls the next tool ("find a restaurant and text Sam
 * the address": after maps_search_place, "restaurant" is served and "text" leads).
 */
export class LexicalIndex {
  /** term → tool indices and their BM25 weights */
  private readonly postings = new Map<
    string,
    { tools: Uint32Array; weights: Float32Array; max: number; idf: number }
  >();
  /** tool → term → weight, for "how well did a called tool serve this term" */
  private readonly byTool: Map<string, number>[];

  constructor(
    tools: readonly ToolSpec[],
    readonly k1 = 1.2,
    readonly b = 0.75,
  ) {
    const docs = tools.map((t) => terms(toolText(t.name, t.description)));
    const n = docs.length;
    const average = docs.reduce((a, d) => a + d.length, 0) / Math.max(1, n) || 1;
    const lists = new Map<string, [number, number][]>();
    docs.forEach((tokens, i) => {
      const counts = new Map<string, number>();
      for (const t of tokens) counts.set(t, (counts.get(t) ?? 0) + 1);
      for (const [t, tf] of counts) {
        let list = lists.get(t);
        if (!list) lists.set(t, (list = []));
        list.push([i, (tf * (k1 + 1)) / (tf + k1 * (1 - b + (b * tokens.length) / average))]);
      }
    });
    this.byTool = tools.map(() => new Map<string, number>());
    for (const [term, list] of lists) {
      const idf = Math.log(1 + (n - list.length + 0.5) / (list.length + 0.5));
      const weights = Float32Array.from(list, ([, w]) => w * idf);
      let max = 0;
      for (const w of weights) if (w > max) max = w;
      this.postings.set(term, { tools: Uint32Array.from(list, ([i]) => i), weights, max, idf });
      list.forEach(([i], k) => this.byTool[i].set(term, weights[k]));
    }
  }

  private readonly scratch: number[] = [];

  get size(): number {
    return this.byTool.length;
  }

  /** A query's distinct terms that some tool has, looked up once for every step of its plan. */
  prepare(queryTerms: readonly string[]): LexicalQuery {
    const postings: Posting[] = [];
    const seen = new Set<string>();
    for (const term of queryTerms) {
      if (seen.has(term)) continue;
      seen.add(term);
      const p = this.postings.get(term);
      if (p) postings.push({ term, tools: p.tools, weights: p.weights, max: p.max, idf: p.idf });
    }
    return { postings };
  }

  /**
   * Writes plain BM25 scores into `plain` and history-aware ones into `served` (both length ≥
   * tools, zero on entry) and returns the idf-weighted fraction of the query's matched terms the
   * called tools served. `called` holds tool indices; a term's discount is how well its best called
   * tool matches it, relative to the best tool for that term overall, times `discount` (default
   * 0.8); `scale` (default 1) multiplies both scores. The plain scores do not depend on the calls:
   * the first step of a query keeps them on the query, and every step starts the served scores
   * from them and takes off only the discounted terms' share — the few terms the calls matched,
   * not every posting of the request. With `orderDecay` > 0 the plain scores (not the served
   * ones) weigh the query's k-th distinct known term by exp(−k / orderDecay): earlier mentions
   * lead. `plainWritten`: `plain` still holds what the last call with this query and options
   * wrote there (`kept` tells which), and `served` is zero off the query's tools: only the served
   * scores are written again (a plan's later steps rank the same request).
   */
  score(
    query: LexicalQuery,
    called: readonly number[],
    plain: Float32Array,
    served: Float32Array,
    { discount = 0.8, scale = 1, orderDecay = 0, plainWritten = false } = {},
  ): number {
    const kept =
      this.kept(query, scale, orderDecay) ?? (query.plain = this.plainScores(query, plain, served, scale, orderDecay));
    if (plainWritten) for (let k = 0; k < kept.tools.length; k++) served[kept.tools[k]] = kept.sums[k];
    else {
      for (let k = 0; k < kept.tools.length; k++) {
        served[kept.tools[k]] = kept.sums[k];
        plain[kept.tools[k]] = kept.ordered[k];
      }
    }
    if (called.length === 0) return 0;
    let idfTotal = 0;
    let idfServed = 0;
    for (const p of query.postings) {
      let share = 0;
      for (const c of called) {
        const w = c >= 0 && c < this.byTool.length ? this.byTool[c].get(p.term) : undefined;
        if (w !== undefined && w / p.max > share) share = w / p.max;
      }
      idfTotal += p.idf;
      idfServed += p.idf * share;
      if (share === 0) continue;
      // served = scale · Σ_terms (1 − discount · share) · weight
      const cut = scale * discount * share;
      const { tools, weights } = p;
      for (let k = 0; k < tools.length; k++) served[tools[k]] -= cut * weights[k];
    }
    return idfTotal > 0 ? idfServed / idfTotal : 0;
  }

  /**
   * The query's plain scores under these options, once `score` computed them (undefined before): the same object while
   * they hold.
   */
  kept(query: LexicalQuery, scale: number, orderDecay: number): KeptScores | undefined {
    return query.plain?.scale === scale && query.plain.orderDecay === orderDecay ? query.plain : undefined;
  }

  /**
   * The query's plain scores and their order-weighted twins, in one pass over its postings: the
   * sums in `sums` (zero on entry) and the weighted ones in `ordered` (zero on entry; untouched
   * when orderDecay is 0). Both are left holding what they summed; `score` overwrites them.
   */
  private plainScores(
    query: LexicalQuery,
    ordered: Float32Array,
    sums: Float32Array,
    scale: number,
    orderDecay: number,
  ): KeptScores {
    const first = this.scratch;
    first.length = 0;
    const weighOrder = orderDecay > 0;
    const postings = query.postings;
    for (let j = 0; j < postings.length; j++) {
      const { tools, weights } = postings[j];
      const f = weighOrder ? Math.exp(-j / orderDecay) : 0;
      for (let k = 0; k < tools.length; k++) {
        const t = tools[k];
        // Every weight is positive: a zero sum means the tool is touched for the first time.
        if (sums[t] === 0) first.push(t);
        sums[t] += weights[k];
        if (weighOrder) ordered[t] += f * weights[k];
      }
    }
    const tools = Uint32Array.from(first);
    const kept = new Float32Array(first.length);
    for (let k = 0; k < first.length; k++) kept[k] = sums[first[k]] * scale;
    if (!weighOrder) return { tools, sums: kept, ordered: kept, scale, orderDecay };
    const keptOrdered = new Float32Array(first.length);
    for (let k = 0; k < first.length; k++) keptOrdered[k] = ordered[first[k]] * scale;
    return { tools, sums: kept, ordered: keptOrdered, scale, orderDecay };
  }
}

interface Posting {
  term: string;
  tools: Uint32Array;
  weights: Float32Array;
  max: number;
  idf: number;
}

/**
 * A query prepared by `LexicalIndex.prepare`: its distinct known terms' postings, and its plain scores once computed.
 */
export interface LexicalQuery {
  readonly postings: readonly Posting[];
  plain?: KeptScores;
}

export interface KeptScores {
  tools: Uint32Array;
  sums: Float32Array;
  ordered: Float32Array;
  scale: number;
  orderDecay: number;
}

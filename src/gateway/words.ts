/**
 * find_tools before the gateway has learned anything. Where dtdr ranks a step from the tools'
 * descriptions alone (its `tools-only` calibration group: a gateway that has learned no session,
 * or a request unlike every session it learned), find_tools also ranks the tools by the request's
 * words (BM25 over each tool's name and description) and orders them by the mean of the two
 * scores, each scaled to [0, 1] over the tools. Meaning and words miss different tools: terse API
 * summaries (RestBench-TMDB) are found by their words, paraphrased requests by their meaning.
 * The rule was chosen leave-one-world-out among reciprocal rank fusion and weighted score
 * fusions over eight tool worlds (`npm run experiment -- cold-fusion`, docs/gateway.md).
 */
import { END, type ToolSpec } from '../core/base/types.js';
import { Bm25Retriever } from '../core/retrieval/baselines.js';
import { topByScore } from '../core/retrieval/ranking.js';
import type { Ranking } from '../core/retrieval/types.js';
import type { Retrieval } from '../core/selection/retrieval.js';

/** What find_tools' reason adds when it fused the two. */
export const WORDS_NOTE = "tools ordered by the request's meaning and by its words";

/** BM25 over the tools' names and descriptions, for the labels of one model's rankings. */
export class WordRanking {
  private readonly bm25: Bm25Retriever | undefined;

  /** `labels`: a ranking's labels (END last); `tools`: where their descriptions come from. */
  constructor(
    readonly labels: readonly string[],
    tools: readonly ToolSpec[],
  ) {
    const byName = new Map(tools.map((t) => [t.name, t]));
    const described = labels.slice(0, -1).map((name) => byName.get(name) ?? { name, description: '' });
    this.bm25 = labels.at(-1) === END ? new Bm25Retriever(labels, described) : undefined;
  }

  /** The request's BM25 score of each label (shares of its total; equal shares with no word in common). */
  scores(request: string): Float64Array | undefined {
    return this.bm25?.rank({ query: request, history: [] }).probabilities;
  }

  /**
   * A score per label of `ranking` (which must have these labels): the mean of dtdr's probability
   * and the request's BM25 score, each scaled to [0, 1] over the tools; END scores 0. Without any
   * word in common, the order is dtdr's.
   */
  fuse(ranking: Ranking, request: string): Float64Array {
    const n = this.labels.length - 1;
    const meaning = scaledScores(ranking.probabilities, n);
    const words = this.scores(request);
    if (words) {
      const scaled = scaledScores(words, n);
      for (let i = 0; i < n; i++) meaning[i] += scaled[i];
    }
    for (let i = 0; i < n; i++) meaning[i] /= 2;
    return meaning;
  }
}

/**
 * The first `n` values (the tools) scaled to [0, 1] by their least and greatest, the rest 0; all 0
 * when the `n` are equal (BM25 without a word in common).
 */
export function scaledScores(values: ArrayLike<number>, n: number): Float64Array {
  let low = Infinity;
  let high = -Infinity;
  for (let i = 0; i < n; i++) {
    if (values[i] < low) low = values[i];
    if (values[i] > high) high = values[i];
  }
  const span = high - low;
  const scaled = new Float64Array(values.length);
  if (span > 0) for (let i = 0; i < n; i++) scaled[i] = (values[i] - low) / span;
  return scaled;
}

/**
 * Hands `take` labels best first until it holds enough: reads the best few (`top`, a partial sort)
 * and more only when too many of them are refused (down, END, already taken: `take` returns false).
 */
export function takeBest(
  labels: readonly string[],
  top: (k: number) => ArrayLike<number>,
  limit: number,
  take: (label: string) => boolean,
): void {
  let taken = 0;
  for (let k = Math.min(labels.length, 2 * limit + 1); taken < limit; k = Math.min(labels.length, 4 * k)) {
    const order = top(k);
    for (let i = 0; i < order.length && taken < limit; i++) if (take(labels[order[i]])) taken++;
    if (order.length >= labels.length) break;
  }
}

/**
 * find_tools' tools for a step, up to `limit`, all `live`: dtdr's set first, then its ranking; or,
 * where dtdr is unsure from the descriptions alone and `fuse` is given, best first by it (meaning
 * and words). The set stays dtdr's either way.
 */
export function stepTools(
  retrieval: Retrieval,
  limit: number,
  live: (tool: string) => boolean,
  fuse: ((ranking: Ranking) => Float64Array) | undefined,
): { names: string[]; set: string[]; fromWords: boolean } {
  const names: string[] = [];
  const take = (tool: string): boolean => {
    const fits = names.length < limit && tool !== END && live(tool) && !names.includes(tool);
    if (fits) names.push(tool);
    return fits;
  };
  for (const c of retrieval.candidates) take(c.tool);
  const set = names.slice();
  const { ranking } = retrieval;
  const fromWords = fuse !== undefined && ranking.group === 'tools-only' && !retrieval.confident;
  if (fromWords) {
    const fused = fuse(ranking);
    names.length = 0;
    takeBest(ranking.labels, (k) => topByScore(fused, k, undefined, true), limit, take);
  } else {
    const all = ranking.labels.length;
    takeBest(ranking.labels, (k) => (ranking.top && k < all ? ranking.top(k) : ranking.order), limit, take);
  }
  return { names, set, fromWords };
}

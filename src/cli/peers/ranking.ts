/**
 * A peer's search result as a dtdr Ranking, so dtdr eval scores it exactly like its query-only
 * baselines: the package's hits in the package's order, then the tools it did not return (in
 * tool-set order), END last (a query-only search never proposes it, like BM25).
 */
import { isFlat } from '../../core/retrieval/ranking.js';
import type { Ranking } from '../../core/retrieval/types.js';

export interface PeerHit {
  name: string;
  /** The package's score, when it reports one (Orama); absent for the AI SDK, which returns names only. */
  score?: number;
}

export function peerRanking(
  labels: readonly string[],
  index: ReadonlyMap<string, number>,
  hits: readonly PeerHit[],
  options: { uniformOver?: number } = {},
): Ranking {
  const n = labels.length;
  const tools = n - 1; // END is the last label
  const order = new Uint32Array(n);
  const placed = new Uint8Array(n);
  let r = 0;
  const kept: { i: number; score?: number }[] = [];
  for (const hit of hits) {
    const i = index.get(hit.name);
    if (i === undefined || i >= tools || placed[i]) continue;
    placed[i] = 1;
    order[r++] = i;
    kept.push({ i, score: hit.score });
  }
  for (let i = 0; i < n; i++) if (!placed[i]) order[r++] = i;
  const probabilities = new Float64Array(n);
  // Scores (Orama): each hit's share of the positive score mass; names only (AI SDK): an equal share
  // for the first `uniformOver` hits, the ones the package hands the model.
  let sum = 0;
  for (const { score } of kept) sum += Math.max(0, score ?? 0);
  if (sum > 0) for (const { i, score } of kept) probabilities[i] = Math.max(0, score ?? 0) / sum;
  else {
    const share = kept.slice(0, options.uniformOver ?? kept.length);
    for (const { i } of share) probabilities[i] = 1 / share.length;
  }
  if (kept.length === 0) {
    probabilities.fill(1 / tools);
    probabilities[n - 1] = 0;
    return { labels, probabilities, order, confident: false, cause: 'the search returned no tool' };
  }
  const top = probabilities[order[0]];
  const confident = !isFlat(top);
  return {
    labels,
    probabilities,
    order,
    confident,
    ...(confident ? {} : { cause: `the probabilities are flat (the top tool has ${top.toFixed(2)})` }),
  };
}

export function labelIndex(labels: readonly string[]): Map<string, number> {
  return new Map(labels.map((l, i) => [l, i]));
}

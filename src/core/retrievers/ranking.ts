import type { Backoff, Ranking } from './types.js';

/**
 * Orders labels by score, best first; ties go to the higher `tieBreak` (e.g. overall frequency),
 * then to the lower index, so every ranking is total and deterministic.
 */
export function orderByScore(scores: ArrayLike<number>, tieBreak?: ArrayLike<number>): Uint32Array {
  // A plain array sorts far faster with a comparator than a typed array does in V8.
  const order: number[] = new Array(scores.length);
  for (let i = 0; i < order.length; i++) order[i] = i;
  order.sort(tieBreak ? (a, b) => scores[b] - scores[a] || tieBreak[b] - tieBreak[a] || a - b : (a, b) => scores[b] - scores[a] || a - b);
  return Uint32Array.from(order);
}

export function softmaxInPlace(logits: Float64Array, temperature = 1): Float64Array {
  let max = -Infinity;
  for (const x of logits) if (x > max) max = x;
  let sum = 0;
  for (let i = 0; i < logits.length; i++) {
    const e = Number.isFinite(logits[i]) ? Math.exp((logits[i] - max) / temperature) : 0;
    logits[i] = e;
    sum += e;
  }
  for (let i = 0; i < logits.length; i++) logits[i] /= sum;
  return logits;
}

/** A distribution is flat when even its best label has less than `minTop` of the mass. */
export function isFlat(probabilities: Float64Array, order: Uint32Array, minTop = 0.3): boolean {
  return !(probabilities[order[0]] >= minTop);
}

export function makeRanking(
  labels: readonly string[],
  probabilities: Float64Array,
  options: { tieBreak?: ArrayLike<number>; backoff?: Backoff; confident?: boolean } = {},
): Ranking {
  const order = orderByScore(probabilities, options.tieBreak);
  const confident = options.confident ?? !isFlat(probabilities, order);
  return { labels, probabilities, order, confident, ...(options.backoff ? { backoff: options.backoff } : {}) };
}

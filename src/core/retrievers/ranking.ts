import type { Backoff, Ranking } from './types.js';

/**
 * Orders labels by score, best first; ties go to the higher `tieBreak` (e.g. overall frequency),
 * then to the lower index, so every ranking is total and deterministic.
 */
export function orderByScore(scores: ArrayLike<number>, tieBreak?: ArrayLike<number>): Uint32Array {
  const n = scores.length;
  if (!tieBreak && n > 0 && n < 1 << 20) {
    let inUnitRange = true;
    for (let i = 0; i < n && inUnitRange; i++) inUnitRange = scores[i] >= 0 && scores[i] <= 1;
    if (inUnitRange) return orderProbabilities(scores, n);
  }
  // A plain array sorts far faster with a comparator than a typed array does in V8.
  const order: number[] = new Array(n);
  for (let i = 0; i < n; i++) order[i] = i;
  order.sort(tieBreak ? (a, b) => scores[b] - scores[a] || tieBreak[b] - tieBreak[a] || a - b : (a, b) => scores[b] - scores[a] || a - b);
  return Uint32Array.from(order);
}

/**
 * Probabilities in [0, 1]: pack (probability, index) into one exactly representable double —
 * the probability quantised to 2^-(52 - bits) in the high part, the inverted index in the low
 * `bits` — and let the engine's native numeric sort do the work (about 10x faster than a
 * comparator on this machine). Probabilities closer than ~1e-12 count as tied.
 */
function orderProbabilities(p: ArrayLike<number>, n: number): Uint32Array {
  const bits = Math.ceil(Math.log2(n + 1));
  const low = 2 ** bits;
  const scale = 2 ** (52 - bits);
  const keys = new Float64Array(n);
  for (let i = 0; i < n; i++) keys[i] = Math.floor(p[i] * scale) * low + (low - 1 - i);
  keys.sort();
  const order = new Uint32Array(n);
  for (let r = 0; r < n; r++) order[r] = low - 1 - (keys[n - 1 - r] % low);
  return order;
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
  options: { tieBreak?: ArrayLike<number>; backoff?: Backoff; confident?: boolean; cause?: string } = {},
): Ranking {
  const order = orderByScore(probabilities, options.tieBreak);
  const flat = isFlat(probabilities, order);
  const confident = options.confident ?? !flat;
  const cause = confident ? undefined : options.cause ?? (flat ? `the probabilities are flat (the top tool has ${probabilities[order[0]]?.toFixed(2)})` : undefined);
  return { labels, probabilities, order, confident, ...(options.backoff ? { backoff: options.backoff } : {}), ...(cause ? { cause } : {}) };
}

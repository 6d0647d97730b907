import { DtdrError } from '../base/errors.js';
import type { Backoff, Ranking } from './types.js';

/**
 * Orders labels by score, best first; ties go to the higher `tieBreak` (e.g. overall frequency),
 * then to the lower index, so every ranking is total and deterministic.
 */
export function orderByScore(
  scores: ArrayLike<number>,
  tieBreak?: ArrayLike<number>,
  /** every score is known to be in [0, 1] */ unit = false,
): Uint32Array {
  const n = scores.length;
  if (!tieBreak && n > 0 && n < 1 << 20) {
    let inUnitRange = true;
    if (unit) return orderProbabilities(scores, n);
    for (let i = 0; i < n && inUnitRange; i++) inUnitRange = scores[i] >= 0 && scores[i] <= 1;
    if (inUnitRange) return orderProbabilities(scores, n);
  }
  // A plain array sorts far faster with a comparator than a typed array does in V8.
  const order = new Array<number>(n);
  for (let i = 0; i < n; i++) order[i] = i;
  order.sort(
    tieBreak
      ? (a, b) => scores[b] - scores[a] || tieBreak[b] - tieBreak[a] || a - b
      : (a, b) => scores[b] - scores[a] || a - b,
  );
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

/**
 * The first `k` labels of `orderByScore(scores, tieBreak)`, without sorting all of them: the
 * same keys and tie rules, kept in a small sorted buffer. O(n·log k)-ish for the small k a
 * candidate set needs.
 */
export function topByScore(
  scores: ArrayLike<number>,
  k: number,
  tieBreak?: ArrayLike<number>,
  /** every score is known to be in [0, 1] */ inUnitRange = false,
): Uint32Array {
  const n = scores.length;
  k = Math.min(k, n);
  // Unit-range scores without a tie-break sort by the same packed key as orderProbabilities.
  let unit = !tieBreak && n < 1 << 20;
  if (!inUnitRange) for (let i = 0; i < n && unit; i++) unit = scores[i] >= 0 && scores[i] <= 1;
  if (unit) {
    // One packed key per label, as orderProbabilities sorts by: higher key = earlier.
    const bits = Math.ceil(Math.log2(n + 1));
    const low = 2 ** bits;
    const scale = 2 ** (52 - bits);
    const keys = new Float64Array(k);
    const top = new Uint32Array(k);
    let size = 0;
    // Once k are kept, a score whose quantised part is below the k-th's cannot enter: skip it
    // before building its key (most labels, when there are thousands).
    let cut = -1;
    for (let i = 0; i < n; i++) {
      if (scores[i] * scale < cut) continue;
      const key = Math.floor(scores[i] * scale) * low + (low - 1 - i);
      if (size === k && key <= keys[k - 1]) continue;
      let p = size < k ? size++ : k - 1;
      while (p > 0 && keys[p - 1] < key) {
        keys[p] = keys[p - 1];
        top[p] = top[p - 1];
        p--;
      }
      keys[p] = key;
      top[p] = i;
      if (size === k) cut = Math.floor(keys[k - 1] / low);
    }
    return top;
  }
  const better = (a: number, b: number) =>
    scores[a] > scores[b] ||
    (scores[a] === scores[b] &&
      ((tieBreak ? tieBreak[a] - tieBreak[b] : 0) > 0 || ((tieBreak ? tieBreak[a] === tieBreak[b] : true) && a < b)));
  const top: number[] = [];
  for (let i = 0; i < n; i++) {
    if (top.length === k && !better(i, top[k - 1])) continue;
    let p = top.length < k ? top.length : k - 1;
    if (top.length < k) top.push(i);
    while (p > 0 && better(i, top[p - 1])) {
      top[p] = top[p - 1];
      p--;
    }
    top[p] = i;
  }
  return Uint32Array.from(top);
}

/**
 * A ranking whose full `order` is computed only when read (metrics, explanations), while
 * candidate selection asks `top(k)` for the few labels it needs. `tieBreak` orders equal
 * probabilities; `unitRange`: the caller guarantees every probability is in [0, 1], so ordering
 * skips checking it.
 */
export function withLazyOrder<T extends Omit<Ranking, 'order' | 'top'>>(
  ranking: T,
  { tieBreak, unitRange: unit = false }: { tieBreak?: ArrayLike<number>; unitRange?: boolean } = {},
): T & Pick<Ranking, 'order' | 'top'> {
  let order: Uint32Array | undefined;
  const tops = new Map<number, Uint32Array>();
  Object.defineProperty(ranking, 'order', {
    enumerable: true,
    configurable: true,
    get: () => (order ??= orderByScore(ranking.probabilities, tieBreak, unit)),
  });
  Object.defineProperty(ranking, 'top', {
    enumerable: false,
    value: (k: number) => {
      if (order) return order.subarray(0, k);
      let t = tops.get(k);
      if (!t) tops.set(k, (t = topByScore(ranking.probabilities, k, tieBreak, unit)));
      return t;
    },
  });
  return ranking as T & Pick<Ranking, 'order' | 'top'>;
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
export function isFlat(topProbability: number, minTop = 0.3): boolean {
  return !(topProbability >= minTop);
}

export function makeRanking(
  labels: readonly string[],
  probabilities: Float64Array,
  options: { tieBreak?: ArrayLike<number>; backoff?: Backoff; confident?: boolean; cause?: string } = {},
): Ranking {
  const [best] = topByScore(probabilities, 1, options.tieBreak);
  const flat = isFlat(probabilities[best]);
  const confident = options.confident ?? !flat;
  const cause = confident
    ? undefined
    : (options.cause ??
      (flat ? `the probabilities are flat (the top tool has ${probabilities[best]?.toFixed(2)})` : undefined));
  return withLazyOrder(
    {
      labels,
      probabilities,
      confident,
      ...(options.backoff ? { backoff: options.backoff } : {}),
      ...(cause ? { cause } : {}),
    },
    { tieBreak: options.tieBreak },
  );
}

/** A rank or learn input's vector, or a DtdrError naming what is missing. */
export function requireVector(
  v: Float32Array | undefined,
  method: string,
  which: 'queryVector' | 'contextVector' | 'queryVectors' | 'contextVectors',
): Float32Array {
  if (!v)
    throw new DtdrError('options', `${method} needs input.${which}`, {
      hint: 'rank through Dtdr/rankStep, which embeds for you',
    });
  return v;
}

import type { Ranking } from './retrievers/types.js';

export interface SelectOptions {
  /** Keep tools whose probability exceeds α (the paper's threshold). Default 0.1. */
  alpha?: number;
  /** Never put more than this many tools in a confident set. Default 8. */
  maxSize?: number;
  /** When the retriever is unsure, widen to this much probability mass… Default 0.95. */
  widenMass?: number;
  /** …taking at least this many tools… Default 5. */
  widenMin?: number;
  /** …and at most this many. Default 12. */
  widenMax?: number;
}

export const SELECT_DEFAULTS: Required<SelectOptions> = { alpha: 0.1, maxSize: 8, widenMass: 0.95, widenMin: 5, widenMax: 12 };

export interface Candidate {
  tool: string;
  probability: number;
}

export interface CandidateSet {
  /** F_t, best first; may include END. */
  candidates: Candidate[];
  /** True when the set was widened because the retriever was unsure. */
  widened: boolean;
  /** Why it was widened, in words fit for a log or a prompt note. */
  reason?: string;
}

/**
 * The thresholded set F_t = {f : P(f) > α}. A retriever that is unsure (it backed off, its
 * distribution is flat, or nothing clears α) does not get to drop tools silently: the set widens
 * to the smallest top-k holding `widenMass` of the probability, within [widenMin, widenMax].
 */
export function selectCandidates(ranking: Ranking, options: SelectOptions = {}): CandidateSet {
  const o = { ...SELECT_DEFAULTS, ...options };
  const { order, probabilities, labels } = ranking;
  const pick = (n: number): Candidate[] => Array.from(order.subarray(0, n), (i) => ({ tool: labels[i], probability: probabilities[i] }));
  let above = 0;
  while (above < order.length && above < o.maxSize && probabilities[order[above]] > o.alpha) above++;
  const reason = !ranking.confident
    ? ranking.backoff && (ranking.backoff.scope !== 'cluster' || ranking.backoff.historyUsed < ranking.backoff.historyWanted)
      ? `backed off to ${ranking.backoff.scope} statistics with ${ranking.backoff.historyUsed} of ${ranking.backoff.historyWanted} history tools`
      : 'the probabilities are flat'
    : above === 0
      ? `no tool has probability above ${o.alpha}`
      : undefined;
  if (!reason) return { candidates: pick(above), widened: false };
  let size = 0;
  let mass = 0;
  while (size < order.length && size < o.widenMax && (size < o.widenMin || mass < o.widenMass)) mass += probabilities[order[size++]];
  return { candidates: pick(Math.max(size, above)), widened: true, reason };
}

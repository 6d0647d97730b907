/** Order statistics for the measurement scripts (timings on a shared machine: medians and tails). */

/** The q-quantile (0 ≤ q ≤ 1) by rank, no interpolation: quantile(xs, 0.5) is the (upper) median. */
export function quantile(xs: readonly number[], q: number): number {
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
}

export const median = (xs: readonly number[]): number => quantile(xs, 0.5);

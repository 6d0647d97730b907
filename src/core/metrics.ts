/** Per-step retrieval metrics, as the data README defines them (averages are over steps). */
export interface StepScore {
  /** 1 / rank of the first acceptable label (0 if none is ranked). */
  reciprocalRank: number;
  /** Hits in the top k = |F*_t|, divided by k (precision = recall there, so F1 too). */
  f1: number;
  top1: number;
  recall5: number;
  /** The thresholded set holds an acceptable label. */
  covered: number;
  setSize: number;
}

export interface MetricSummary {
  mrr: number;
  f1: number;
  top1: number;
  recall5: number;
  coverage: number;
  setSize: number;
  steps: number;
}

export function scoreStep(order: ArrayLike<number>, labels: readonly string[], acceptable: readonly string[], selected: readonly string[]): StepScore {
  const ok = new Set(acceptable);
  let firstHit = -1;
  for (let r = 0; r < order.length; r++) {
    if (ok.has(labels[order[r]])) {
      firstHit = r;
      break;
    }
  }
  const k = ok.size;
  let hits = 0;
  for (let r = 0; r < Math.min(k, order.length); r++) if (ok.has(labels[order[r]])) hits++;
  return {
    reciprocalRank: firstHit < 0 ? 0 : 1 / (firstHit + 1),
    f1: k === 0 ? 0 : hits / k,
    top1: firstHit === 0 ? 1 : 0,
    recall5: firstHit >= 0 && firstHit < 5 ? 1 : 0,
    covered: selected.some((t) => ok.has(t)) ? 1 : 0,
    setSize: selected.length,
  };
}

export function summarize(scores: readonly StepScore[]): MetricSummary {
  const mean = (f: (s: StepScore) => number) => (scores.length === 0 ? 0 : scores.reduce((a, s) => a + f(s), 0) / scores.length);
  return {
    mrr: mean((s) => s.reciprocalRank),
    f1: mean((s) => s.f1),
    top1: mean((s) => s.top1),
    recall5: mean((s) => s.recall5),
    coverage: mean((s) => s.covered),
    setSize: mean((s) => s.setSize),
    steps: scores.length,
  };
}

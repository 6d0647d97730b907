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
  /** The top-1 label's probability (its claimed confidence). */
  confidence: number;
  /** 1 when the set was widened because the retriever was unsure. */
  widened: number;
}

/**
 * The metrics over a set of steps: MRR, F1, top-1, recall@5, coverage and size of the candidate set, calibration error,
 * confident-miss and widened rates.
 */
export interface MetricSummary {
  mrr: number;
  f1: number;
  top1: number;
  recall5: number;
  coverage: number;
  setSize: number;
  /** Expected calibration error of the top-1 probability (10 equal-width bins). */
  ece: number;
  /** Misses among the steps whose set was not widened (the retriever claimed confidence). */
  confidentMissRate: number;
  /** Share of steps widened. */
  widenedRate: number;
  steps: number;
}

/** Scores one step's ranking against its acceptable tools (rank, F1, coverage of the set). */
export function scoreStep(
  order: ArrayLike<number>,
  labels: readonly string[],
  acceptable: readonly string[],
  selected: readonly string[],
  claim: { confidence?: number; widened?: boolean } = {},
): StepScore {
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
    confidence: claim.confidence ?? 0,
    widened: claim.widened ? 1 : 0,
  };
}

/** Expected calibration error: |accuracy − confidence| per equal-width bin, weighted by the bin's share. */
export function expectedCalibrationError(confidence: ArrayLike<number>, correct: ArrayLike<number>, bins = 10): number {
  const count = new Float64Array(bins);
  const conf = new Float64Array(bins);
  const acc = new Float64Array(bins);
  for (let i = 0; i < confidence.length; i++) {
    const b = Math.min(bins - 1, Math.max(0, Math.floor(confidence[i] * bins)));
    count[b]++;
    conf[b] += confidence[i];
    acc[b] += correct[i];
  }
  let ece = 0;
  for (let b = 0; b < bins; b++) if (count[b] > 0) ece += Math.abs(acc[b] - conf[b]) / confidence.length;
  return ece;
}

/** Averages step scores into the metrics `dtdr eval` prints. */
export function summarize(scores: readonly StepScore[]): MetricSummary {
  const mean = (f: (s: StepScore) => number) =>
    scores.length === 0 ? 0 : scores.reduce((a, s) => a + f(s), 0) / scores.length;
  return {
    mrr: mean((s) => s.reciprocalRank),
    f1: mean((s) => s.f1),
    top1: mean((s) => s.top1),
    recall5: mean((s) => s.recall5),
    coverage: mean((s) => s.covered),
    setSize: mean((s) => s.setSize),
    ece: expectedCalibrationError(
      scores.map((s) => s.confidence),
      scores.map((s) => s.top1),
    ),
    confidentMissRate: (() => {
      const sure = scores.filter((s) => !s.widened);
      return sure.length === 0 ? 0 : sure.filter((s) => !s.covered).length / sure.length;
    })(),
    widenedRate: mean((s) => s.widened),
    steps: scores.length,
  };
}

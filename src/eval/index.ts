/**
 * The research bench, apart from what an app ships: train methods on demonstrations and score them
 * on held-out plans, as `dtdr eval` does, with the dataset's official or a seeded split.
 *
 * @module dtdr/eval
 */
export {
  evaluateMethods,
  splitDataset,
  type EvaluateOptions,
  type EvaluationResult,
  type MethodResult,
  type Split,
} from '../core/evaluation/evaluate.js';
export type { MetricSummary } from '../core/base/metrics.js';

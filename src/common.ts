// Everything here runs in any JavaScript runtime; the two entry points add their platform's I/O.
export { DtdrError, type DtdrErrorCode, type DtdrErrorDetails } from './core/errors.js';
export { LruCache, withEmbeddingCache, type Encoder } from './core/encoder.js';
export { BUNDLED_ENCODER_ID, type EncoderDevice, type EncoderDtype, type EncoderOptions } from './encoders/transformers.js';
export { END, type Dataset, type JsonSchema, type Plan, type PlanNode, type PlanStep, type ToolSpec } from './core/types.js';
export { planFromRecord, chainPlan, planSteps, planTools } from './core/plan.js';
export { datasetFromFiles, parsePlans, parseToolDescriptions, parseSplitIds, type DatasetFiles } from './core/dataset.js';
export { Dtdr, type DtdrTrainOptions, type Retrieval } from './core/dtdr.js';
export { METHODS, trainRetriever, fitRetriever, type TrainOptions } from './core/train.js';
export type { Backoff, MethodName, RankInput, Ranking, Retriever, TrainingProgress } from './core/retrievers/types.js';
export type { LinearHeadOptions } from './core/retrievers/linear-head.js';
export { selectCandidates, SELECT_DEFAULTS, type Candidate, type CandidateSet, type SelectOptions } from './core/select.js';
export { scoreStep, summarize, type MetricSummary, type StepScore } from './core/metrics.js';
export { evaluateMethods, splitDataset, type EvaluateOptions, type EvaluationResult, type MethodResult, type Split } from './core/evaluate.js';
export { MODEL_FORMAT, MODEL_VERSION, loadRetriever, saveRetriever, type ModelArtifact } from './core/artifact.js';
export { contextText, humanizeToolName } from './core/text.js';
export { DEMO_TOOLS, DEMO_QUERIES, demoDataset, generateDemoPlans } from './demo/toolset.js';

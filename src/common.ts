/**
 * dtdr's public API, grouped by what a user does. Everything here runs in any JavaScript runtime;
 * the two platform entries (`dtdr` resolves to ./node.js on Node and ./index.js elsewhere) add
 * their I/O: encoder loading, files or IndexedDB. Framework adapters are subpath exports:
 * `dtdr/ai-sdk`, `dtdr/langchain`, `dtdr/mcp`. Internals stay under src/core and are not part of
 * the API (docs/architecture.md maps them).
 */

// ── Train and retrieve ────────────────────────────────────────────────────────────────────────
// A Dtdr is trained from tools (and demonstrations), then asked for the next tools at each step.
export {
  Dtdr,
  REFIT_IN_BACKGROUND_UP_TO,
  REFIT_TIMEOUT,
  REFIT_UP_TO,
  safeLoadModel,
  type DtdrLoadOptions,
  type DtdrTrainOptions,
  type Retrieval,
  type SafeLoad,
} from './core/dtdr.js';
// Where learn()'s refits run: the calling thread (refitInline), or a worker (refitWorker, per platform).
export { refitInline, type RefitJob, type Refitter } from './core/model/refit.js';
export type { WorkerRefitter } from './workers/refit-client.js';
export { END, type JsonSchema, type Plan, type PlanNode, type ToolSpec } from './core/base/types.js';
export { chainPlan, planFromRecord } from './core/plans/plan.js';
export type { ChainPlanInput } from './core/plans/input.js';
export { METHODS, type TrainOptions } from './core/retrieval/train.js';
export type { Backoff, MethodName, Ranking, TrainingProgress } from './core/retrieval/types.js';
export type {
  ExperimentalGatedSettings,
  FoldWorkers,
  GatedDiagnostics,
  GatedOptions,
} from './core/retrieval/default/index.js';
export type { LinearHeadOptions } from './core/retrieval/linear-head.js';
export { selectCandidates, type Candidate, type CandidateSet, type SelectOptions } from './core/selection/select.js';
// The 27-tool phone-assistant world used by `npm start`, the playground and the examples.
export { DEMO_QUERIES, DEMO_TOOLS, demoDataset } from './demo/toolset.js';

// ── Sentence encoders ─────────────────────────────────────────────────────────────────────────
export {
  BUNDLED_ENCODER_ID,
  createOnnxEncoder,
  type EncoderDevice,
  type EncoderDtype,
  type EncoderOptions,
  type OnnxEncoderInit,
  type OnnxRuntime,
} from './encoders/onnx.js';
export {
  withEmbeddingCache,
  withPersistentCache,
  type EmbeddingStore,
  type Encoder,
  type EncoderBackend,
} from './core/base/encoder.js';

// ── Data files (the TaskBench layout: tool_desc.json, data.jsonl, split_ids.json) ─────────────
export { datasetFromFiles, parsePlans, parseToolList, type DatasetFiles } from './core/plans/dataset.js';
export type { Dataset } from './core/base/types.js';

// ── Prompts for the local model, and parsing its answer ───────────────────────────────────────
export {
  buildArgumentsPrompt,
  buildSelectionPrompt,
  FORMATS,
  STRATEGIES,
  type BuiltPrompt,
  type ChatMessage,
  type PastCall,
  type PromptFormat,
  type PromptSegment,
  type SelectionPromptInput,
  type Strategy,
} from './core/prompts/build.js';
export {
  parseAnswer,
  validateCall,
  type ParsedAnswer,
  type ToolCall,
  type ToolCallErrorKind,
  type ValidateCallOptions,
} from './core/prompts/parse.js';
export { toOpenAITool, toolsFromOpenAI, type OpenAITool } from './core/plans/tools.js';
export { promptTokens, type PromptTokens, type TokenCounter } from './core/prompts/tokens.js';

// ── The agent loop and local models ───────────────────────────────────────────────────────────
export {
  Agent,
  ScriptedModel,
  type AgentOptions,
  type AgentRun,
  type GenerateRequest,
  type LocalModel,
  type PreparedStep,
} from './core/agent/agent.js';
export { openAICompatibleModel, type OpenAICompatibleOptions } from './llm/openai-http.js';
export { transformersModel, type TransformersModelOptions } from './llm/transformers.js';
export { parseWebllmAnswer, webllmResponseFormat, type WebllmResponseFormat } from './llm/webllm.js';

// ── Evaluation ────────────────────────────────────────────────────────────────────────────────
export {
  evaluateMethods,
  splitDataset,
  type EvaluateOptions,
  type EvaluationResult,
  type MethodResult,
  type Split,
} from './core/evaluation/evaluate.js';
export type { MetricSummary } from './core/base/metrics.js';

// ── Saved models (the platform entries add files on disk or IndexedDB) ────────────────────────
export type { ModelArtifact } from './core/model/artifact.js';
export type { ToolChanges } from './core/model/toolset.js';

// ── Errors and input bounds ───────────────────────────────────────────────────────────────────
export { DtdrError, type DtdrErrorCode, type DtdrErrorDetails } from './core/base/errors.js';
export {
  isValidToolName,
  MAX_DESCRIPTION_CHARS,
  MAX_PLAN_STEPS,
  MAX_QUERY_CHARS,
  MAX_TOOL_NAME_CHARS,
  TOOL_NAME_RULE,
} from './core/base/limits.js';

// ── Advanced: the retriever behind a model (`dtdr.retriever`) ─────────────────────────────────
export type { EmbeddingNeeds, LearnInput, RankInput, Retriever } from './core/retrieval/types.js';

/**
 * dtdr's public API, grouped by what a user does. Everything here runs in any JavaScript runtime;
 * the two platform entries (`dtdr` resolves to ./node.js on Node and ./index.js elsewhere) add
 * their I/O: encoder loading, files or IndexedDB. Framework adapters are subpath exports:
 * `dtdr/ai-sdk`, `dtdr/langchain`, `dtdr/mcp`; so are local models (`dtdr/llm`), the demo world
 * (`dtdr/demo`) and the evaluation bench (`dtdr/eval`), which an app's bundle need not carry.
 * Internals stay under src/core and are not part of the API (docs/architecture.md maps them).
 */

// ── Train and retrieve ────────────────────────────────────────────────────────────────────────
// A Dtdr is trained from tools (and demonstrations), then asked for the next tools at each step.
export {
  Dtdr,
  safeLoadModel,
  type DtdrLoadOptions,
  type DtdrTrainOptions,
  type Retrieval,
  type SafeLoad,
} from './core/dtdr.js';
// Where learn()'s refits run: the calling thread (refitInline), or a worker (refitWorker, per platform).
export { refitInline } from './core/model/refit-inline.js';
export type { RefitJob, Refitter } from './core/model/refit.js';
export { REFIT_LIMITS } from './core/model/refit-schedule.js';
export type { WorkerRefitter } from './workers/refit-client.js';
export { END, type JsonSchema, type Plan, type PlanNode, type ToolSpec } from './core/base/types.js';
export { chainPlan, planFromRecord } from './core/plans/plan.js';
export type { RawPlan } from './core/plans/plan.js';
export type { ChainPlanInput } from './core/plans/input.js';
export { METHODS, type TrainOptions } from './core/retrieval/methods.js';
export type { Backoff, MethodName, Ranking, TrainingProgress } from './core/retrieval/types.js';
export type {
  ExperimentalGatedSettings,
  FoldWorkers,
  GatedDiagnostics,
  GatedOptions,
} from './core/retrieval/default/index.js';
export type { LinearHeadOptions } from './core/retrieval/linear-head.js';
export { selectCandidates, type Candidate, type CandidateSet, type SelectOptions } from './core/selection/select.js';

// ── Sentence encoders ─────────────────────────────────────────────────────────────────────────
export {
  BUNDLED_ENCODER_ID,
  createOnnxEncoder,
  type EncoderDevice,
  type EncoderOptions,
  type OnnxEncoderInit,
  type OnnxRuntime,
} from './encoders/onnx.js';
export type { EncoderDtype } from './encoders/onnx-files.js';
export {
  withEmbeddingCache,
  withPersistentCache,
  type EmbeddingCache,
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

// ── The agent loop (local models to run it with: `dtdr/llm`) ──────────────────────────────────
export {
  Agent,
  type AgentOptions,
  type AgentRun,
  type GenerateRequest,
  type LocalModel,
  type PreparedStep,
} from './core/agent/agent.js';

// ── Saved models (the platform entries add files on disk or IndexedDB) ────────────────────────
export type { ModelArtifact } from './core/model/artifact.js';
export type { ToolChanges } from './core/model/toolset.js';

// ── Errors and input bounds ───────────────────────────────────────────────────────────────────
export { DtdrError, type DtdrErrorCode, type DtdrErrorDetails } from './core/base/errors.js';
export { INPUT_LIMITS, isValidToolName, TOOL_NAME_RULE } from './core/base/limits.js';

// ── Advanced: the retriever behind a model (`dtdr.retriever`) ─────────────────────────────────
export type { EmbeddingNeeds, LearnInput, RankInput, Retriever } from './core/retrieval/types.js';

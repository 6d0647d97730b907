import { sha256 } from '@noble/hashes/sha2';
import { bytesToHex } from '@noble/hashes/utils';
import { utf8Encode } from './utf8.js';
import type { ToolChanges } from './toolset.js';
import type { Encoder } from '../base/encoder.js';
import { DtdrError } from '../base/errors.js';
import { Bm25Retriever, QtsRetriever, RandomRetriever } from '../retrieval/baselines.js';
import { ColdStartRetriever } from '../retrieval/cold-start.js';
import { ClusterRetriever, startCount, DependencyRetriever } from '../retrieval/dependency.js';
import { DependencyGraph } from '../retrieval/graph.js';
import { GatedRetriever, type GatedState } from '../retrieval/default/index.js';
import { LearnedRetriever } from '../retrieval/learned.js';
import { LinearHead, type LinearHeadState } from '../retrieval/linear-head.js';
import { ReplayBuffer, type ReplayState } from '../retrieval/linear-head-training.js';
import type { Retriever } from '../retrieval/types.js';
import { isMethod, labelsOf } from '../retrieval/train.js';
import { END, type Plan, type ToolSpec } from '../base/types.js';
import { checkTools } from '../base/checks.js';
import { MAX_PLAN_STEPS } from '../base/limits.js';
import { int, num, numbers, object, optNum, vectors } from '../base/validate.js';

export const MODEL_FORMAT = 'dtdr-model';
/**
 * Bump when the artifact layout changes; `loadRetriever` rejects versions it does not know and
 * migrates older ones it does. v2 added `toolsHash` and the encoder's `fingerprint`, and the
 * binary container (living/binary.ts); v3 lets a linear head keep its one-hot rows as CSR
 * (`state.head.support`: DTDR-G beyond 8M one-hot weights). v1 and v2 files load unchanged.
 */
export const MODEL_VERSION = 3;

/** A trained retriever as one JSON document. */
export interface ModelArtifact {
  format: typeof MODEL_FORMAT;
  version: number;
  method: string;
  createdAt: string;
  /** The encoder the retriever's vectors come from; null for methods that embed nothing. */
  encoder: { id: string; dimension: number; location?: string; fingerprint?: string } | null;
  tools: ToolSpec[];
  /** SHA-256 (hex) of the tools' names, descriptions and schemas: a hand-edited tool list is caught on load. */
  toolsHash?: string;
  labels: string[];
  /** What it was trained on and with which options, for the record. */
  training: { dataset?: string; plans: number; historyLength: number; seed: number; clusters?: number };
  /** A few demonstrations (query and calls) kept for prompt examples. */
  examples?: { id: string; query: string; tools: string[] }[];
  state: unknown;
  /** Tools removed, and (for methods other than dtdr-g) added, after training. */
  toolChanges?: ToolChanges;
  /** Demonstrations folded in by `learn`, and the model before them (so `forget` can replay without them). */
  learning?: { plans: Plan[]; before: ModelArtifact };
}

function usesEncoder(retriever: Retriever): boolean {
  return retriever.needs.query || retriever.needs.context;
}

/** SHA-256 (hex) of the tool list as saved. */
export function toolsHash(tools: readonly ToolSpec[]): string {
  return bytesToHex(sha256(utf8Encode(JSON.stringify(tools.map((t) => [t.name, t.description ?? '', t.parameters ?? null, t.returns ?? null])))));
}

/** A saved model (e.g. the state `forget` replays from) with new tools and the state that matches them. */
export function withTools(artifact: ModelArtifact, tools: ToolSpec[], state: unknown): ModelArtifact {
  return { ...artifact, tools, labels: labelsOf(tools), toolsHash: toolsHash(tools), state };
}

export function saveRetriever(retriever: Retriever, tools: ToolSpec[], encoder: Encoder | undefined, training: ModelArtifact['training'], examples: ModelArtifact['examples'] = []): ModelArtifact {
  const savedTools = tools.map((t) => ({ name: t.name, description: t.description, ...(t.parameters ? { parameters: t.parameters } : {}), ...(t.returns ? { returns: t.returns } : {}) }));
  return {
    format: MODEL_FORMAT,
    version: MODEL_VERSION,
    method: retriever.method,
    createdAt: new Date().toISOString(),
    encoder: usesEncoder(retriever) && encoder
      ? { id: encoder.id, dimension: encoder.dimension, ...(encoder.location ? { location: encoder.location } : {}), ...(encoder.fingerprint ? { fingerprint: encoder.fingerprint } : {}) }
      : null,
    tools: savedTools,
    toolsHash: toolsHash(savedTools),
    labels: [...retriever.labels],
    training,
    examples,
    state: retriever.state(),
  };
}

/**
 * Rebuilds a retriever from an artifact, checking format, version, shapes and — when an encoder
 * is given — that it is the one the model was trained with. `source` names the file in errors.
 */
export function loadRetriever(json: unknown, options: { encoder?: Encoder; source?: string; binary?: boolean } = {}): { retriever: Retriever; artifact: ModelArtifact } {
  const file = options.source ?? 'model';
  try {
    return readArtifact(json, options);
  } catch (error) {
    if (DtdrError.isInstance(error)) throw inFile(error, file);
    throw new DtdrError('artifact', `corrupt model state (${error instanceof Error ? error.message : String(error)})`, { file, field: 'state', hint: 'retrain the model', cause: error });
  }
}

/** `error` with the model's file named (and its field and hint kept). */
function inFile(error: DtdrError, file: string): DtdrError {
  if (error.file) return error;
  let message = error.message;
  if (error.field && message.startsWith(`${error.field}: `)) message = message.slice(error.field.length + 2);
  if (error.hint && message.endsWith(` — ${error.hint}`)) message = message.slice(0, -(error.hint.length + 3));
  return new DtdrError('artifact', message, { file, field: error.field, hint: error.hint, cause: error });
}

function readArtifact(json: unknown, options: { encoder?: Encoder; binary?: boolean }): { retriever: Retriever; artifact: ModelArtifact } {
  const fail = (field: string, message: string, hint?: string): never => {
    throw new DtdrError('artifact', message, { field, hint });
  };
  const a = json as ModelArtifact;
  if (typeof a !== 'object' || a === null || a.format !== MODEL_FORMAT) fail('format', `not a dtdr model (format is ${JSON.stringify(a?.format)})`, 'train one with `dtdr train`');
  if (!Number.isInteger(a.version)) fail('version', 'missing format version');
  if (a.version > MODEL_VERSION) fail('version', `model format version ${a.version} is newer than this dtdr reads (${MODEL_VERSION})`, 'upgrade dtdr');
  if (a.version < 1) fail('version', `model format version ${a.version} is not one dtdr wrote`, 'retrain the model');
  if (!isMethod(a.method)) fail('method', `unknown method "${a.method}"`);
  if (!Array.isArray(a.tools) || a.tools.some((t) => typeof t?.name !== 'string')) fail('tools', 'tools must be a list of {name, description}');
  try {
    checkTools(a.tools, 'tools');
  } catch (e) {
    fail(DtdrError.isInstance(e) && e.field ? e.field : 'tools', DtdrError.isInstance(e) ? e.message : String(e));
  }
  // v1 files have no hash (nothing to check); from v2 on, tools edited by hand are caught here.
  // A file that says it is v1 but has what only v2 wrote (a hash, an encoder fingerprint, the
  // binary container) is an edited newer file: its hash is checked all the same.
  const v1 = a.version < 2 && a.toolsHash === undefined && typeof a.encoder?.fingerprint !== 'string' && !options.binary;
  if (!v1 && a.toolsHash !== toolsHash(a.tools)) fail('toolsHash', 'the tool list does not match its hash: the file was edited after it was saved', 'change tools with model.addTools / removeTools, then save again');
  const labels = labelsOf(a.tools);
  if (!Array.isArray(a.labels) || a.labels.join('\u0000') !== labels.join('\u0000')) fail('labels', `labels must be the tool names followed by ${END}`);
  const needsEncoder = ['qts', 'lr', 'dtdr-c', 'dtdr-l', 'dtdr-h', 'dtdr-cb', 'dtdr-g'].includes(a.method);
  if (a.encoder !== null && a.encoder !== undefined) {
    object('encoder', a.encoder);
    if (typeof a.encoder.id !== 'string') fail('encoder.id', 'the encoder id must be a string');
    int('encoder.dimension', a.encoder.dimension, 1, 1_000_000);
    if (a.encoder.fingerprint !== undefined && typeof a.encoder.fingerprint !== 'string') fail('encoder.fingerprint', 'the encoder fingerprint must be a string (hex)');
    if (a.encoder.location !== undefined && typeof a.encoder.location !== 'string') fail('encoder.location', 'the encoder location must be a string');
  }
  if (needsEncoder && (!a.encoder || typeof a.encoder.id !== 'string' || !Number.isInteger(a.encoder.dimension))) fail('encoder', 'missing the encoder id and dimension');
  if (needsEncoder && options.encoder && (options.encoder.id !== a.encoder!.id || options.encoder.dimension !== a.encoder!.dimension)) {
    fail('encoder', `trained with encoder ${a.encoder!.id} (${a.encoder!.dimension}-d) but loaded with ${options.encoder.id} (${options.encoder.dimension}-d)`, `load it with --encoder ${a.encoder!.id}, or retrain`);
  }
  if (needsEncoder && options.encoder?.fingerprint && a.encoder?.fingerprint && options.encoder.fingerprint !== a.encoder.fingerprint) {
    fail('encoder.fingerprint', `encoder ${a.encoder.id} has other files than the one this model was trained with (fingerprint ${a.encoder.fingerprint.slice(0, 12)}…, loaded ${options.encoder.fingerprint.slice(0, 12)}…)`, 'load the encoder files the model was trained with, or retrain');
  }
  if (a.examples !== undefined && (!Array.isArray(a.examples) || a.examples.some((e) => typeof e?.query !== 'string' || !Array.isArray(e.tools) || e.tools.length === 0 || e.tools.some((t) => typeof t !== 'string')))) {
    fail('examples', 'examples must be a list of {id, query, tools}');
  }
  if (a.training !== undefined) {
    object('training', a.training);
    optNum('training.historyLength', a.training.historyLength, { min: 0, max: MAX_HISTORY, integer: true });
  }
  const s = (a.state ?? {}) as Record<string, unknown>;
  if (a.state !== undefined && a.state !== null) object('state', a.state);
  const l = Number(a.training?.historyLength ?? 3);
  const dim = a.encoder?.dimension ?? 0;
  const L = labels.length;
  let retriever: Retriever;
  switch (a.method) {
    case 'random':
      optNum('state.seed', s.seed, { min: -(2 ** 53), max: 2 ** 53 });
      retriever = new RandomRetriever(labels, Number(s.seed ?? 0));
      break;
    case 'bm25':
      optNum('state.k1', s.k1, { min: 0 });
      optNum('state.b', s.b, { min: 0, max: 1 });
      retriever = new Bm25Retriever(labels, a.tools, Number(s.k1 ?? 1.2), Number(s.b ?? 0.75));
      break;
    case 'qts': {
      const vectors = s.toolVectors as number[][];
      if (!Array.isArray(vectors) || vectors.length !== a.tools.length || vectors.some((v) => v?.length !== dim)) fail('state.toolVectors', 'one vector per tool of the encoder dimension expected');
      checkVectors('state.toolVectors', vectors, a.tools.length, dim);
      optNum('state.temperature', s.temperature, { min: 1e-6, max: 1e6 });
      retriever = new QtsRetriever(labels, vectors.map((v) => Float32Array.from(v)), Number(s.temperature ?? 0.05));
      break;
    }
    case 'dr':
      retriever = DependencyRetriever.fromState(labels, s as never);
      break;
    case 'dtdr-g':
      retriever = GatedRetriever.fromState(a.tools, dim, s as unknown as GatedState);
      break;
    case 'dtdr-c':
    case 'dtdr-cb': {
      const centroids = s.centroids as number[][];
      const graphs = s.graphs as never[];
      if (!Array.isArray(centroids) || centroids.some((c) => c?.length !== dim)) fail('state.centroids', 'centroids must match the encoder dimension');
      checkVectors('state.centroids', centroids, undefined, dim);
      if (!Array.isArray(graphs) || graphs.length !== centroids.length) fail('state.graphs', 'one graph per cluster expected');
      const hl = int('state.historyLength', s.historyLength, 0, MAX_HISTORY);
      const clusterGraphs = graphs.map((g, i) => DependencyGraph.fromState(hl, g, { labels: L, field: `state.graphs[${i}]` }));
      const global = DependencyGraph.fromState(hl, s.global as never, { labels: L, field: 'state.global' });
      optNum('state.minSupport', s.minSupport, { min: 0 });
      if (Array.isArray(s.sizes) && s.sizes.length === centroids.length) numbers('state.sizes', s.sizes, undefined, { min: 0 });
      if (typeof s.plansPerCluster === 'number') num('state.plansPerCluster', s.plansPerCluster);
      const sizes = Array.isArray(s.sizes) && s.sizes.length === centroids.length ? (s.sizes as number[]).map(Number) : clusterGraphs.map(startCount);
      const cluster = new ClusterRetriever(labels, hl, centroids.map((c) => Float64Array.from(c)), clusterGraphs, global, Number(s.minSupport ?? 2), sizes, typeof s.plansPerCluster === 'number' && s.plansPerCluster > 0 ? s.plansPerCluster : null);
      if (a.method === 'dtdr-cb') {
        optNum('state.kappa', s.kappa, { min: 0 });
        if (s.bm25 !== undefined) object('state.bm25', s.bm25);
      }
      const bm25 = (s.bm25 ?? {}) as { k1?: number; b?: number };
      if (a.method === 'dtdr-cb') {
        optNum('state.bm25.k1', bm25.k1, { min: 0 });
        optNum('state.bm25.b', bm25.b, { min: 0, max: 1 });
      }
      retriever = a.method === 'dtdr-c' ? cluster : new ColdStartRetriever(cluster, new Bm25Retriever(labels, a.tools, Number(bm25.k1 ?? 1.2), Number(bm25.b ?? 0.75)), Number(s.kappa ?? 2));
      break;
    }
    default: {
      const head = LinearHead.fromState(s.head as LinearHeadState);
      const classes = a.method === 'lr' ? labels.length - 1 : labels.length;
      if (head.dim !== dim || head.classes !== classes) fail('state.head', `head is ${head.dim}→${head.classes}, expected ${dim}→${classes}`);
      const vocabulary = (s.historyVocabulary ?? []) as number[];
      if (!Array.isArray(vocabulary) || vocabulary.some((i) => !Number.isInteger(i) || i < 0 || i >= labels.length)) fail('state.historyVocabulary', 'history vocabulary must list label indices');
      if (new Set(vocabulary).size !== vocabulary.length) fail('state.historyVocabulary', 'history vocabulary lists a label twice');
      optNum('state.historyLength', s.historyLength, { min: 0, max: MAX_HISTORY, integer: true });
      const hl = Number(s.historyLength ?? l);
      if (a.method === 'dtdr-h' && head.sparseSize !== hl * (vocabulary.length + 2)) fail('state.head', 'one-hot block does not match the history vocabulary');
      const replay = ReplayBuffer.fromState(s.replay as ReplayState | undefined, { field: 'state.replay', dim: head.dim, sparseSize: head.sparseSize, classes: head.classes });
      retriever = new LearnedRetriever(a.method as 'lr' | 'dtdr-l' | 'dtdr-h', labels, hl, head, new Map(vocabulary.map((label, slot) => [label, slot])), [], replay);
    }
  }
  return { retriever, artifact: a };
}

/** A saved history length: at most the longest plan (MAX_PLAN_STEPS); trained models use 1–5. */
const MAX_HISTORY = MAX_PLAN_STEPS;

function checkVectors(field: string, v: unknown, count: number | undefined, dim: number): void {
  vectors(field, v, count, dim);
}

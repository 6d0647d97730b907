import { sha256 } from '@noble/hashes/sha2';
import { bytesToHex } from '@noble/hashes/utils';
import { utf8Encode } from './utf8.js';
import type { ToolChanges } from './toolset.js';
import type { Encoder } from '../base/encoder.js';
import { DtdrError } from '../base/errors.js';
import type { Retriever } from '../retrieval/types.js';
import { assertEntry, isMethod, labelsOf, usesEncoder } from '../retrieval/methods.js';
import { END, type Plan, type ToolSpec } from '../base/types.js';
import { checkTools } from '../base/checks.js';
import { MAX_PLAN_STEPS } from '../base/limits.js';
import { int, object, optNum } from '../base/validate.js';

/** The `format` field of every model artifact. */
export const MODEL_FORMAT = 'dtdr-model';
/**
 * Bump when the artifact layout changes; `loadRetriever` rejects versions it does not know and
 * migrates older ones it does. v2 added `toolsHash` and the encoder's `fingerprint`, and the
 * binary container (model/binary.ts); v3 lets a linear head keep its one-hot rows as CSR
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
  /**
   * The learned runs `forget` can take out and the state it replays them onto; `same` lists the parts of `before` left
   * out because they equal the live state's (shared-state.ts); `folded`: older learned runs were folded into `before`;
   * `fitted`: how many of `plans` the next refit counts growth from: the last refit, or the last one that failed
   * (absent: all).
   */
  learning?: { plans: Plan[]; before: ModelArtifact; same?: string[]; folded?: true; fitted?: number };
}

/** Whether a fitted retriever embeds requests or contexts (its model file then records the encoder). */
function embedsRequests(retriever: Retriever): boolean {
  return retriever.needs.query || retriever.needs.context;
}

/** SHA-256 (hex) of the tool list as saved. */
export function toolsHash(tools: readonly ToolSpec[]): string {
  return bytesToHex(
    sha256(
      utf8Encode(
        JSON.stringify(tools.map((t) => [t.name, t.description ?? '', t.parameters ?? null, t.returns ?? null])),
      ),
    ),
  );
}

/** A saved model (e.g. the state `forget` replays from) with new tools and the state that matches them. */
export function withTools(artifact: ModelArtifact, tools: ToolSpec[], state: unknown): ModelArtifact {
  return { ...artifact, tools, labels: labelsOf(tools), toolsHash: toolsHash(tools), state };
}

export function saveRetriever(
  retriever: Retriever,
  tools: ToolSpec[],
  encoder: Encoder | undefined,
  training: ModelArtifact['training'],
  examples: ModelArtifact['examples'] = [],
): ModelArtifact {
  const savedTools = tools.map((t) => ({
    name: t.name,
    description: t.description,
    ...(t.parameters ? { parameters: t.parameters } : {}),
    ...(t.returns ? { returns: t.returns } : {}),
  }));
  return {
    format: MODEL_FORMAT,
    version: MODEL_VERSION,
    method: retriever.method,
    createdAt: new Date().toISOString(),
    encoder:
      embedsRequests(retriever) && encoder
        ? {
            id: encoder.id,
            dimension: encoder.dimension,
            ...(encoder.location ? { location: encoder.location } : {}),
            ...(encoder.fingerprint ? { fingerprint: encoder.fingerprint } : {}),
          }
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
export function loadRetriever(
  json: unknown,
  options: { encoder?: Encoder; source?: string; binary?: boolean } = {},
): { retriever: Retriever; artifact: ModelArtifact } {
  const file = options.source ?? 'model';
  try {
    return readArtifact(json, options);
  } catch (error) {
    if (DtdrError.isInstance(error)) throw inFile(error, file);
    throw new DtdrError('artifact', `corrupt model state (${error instanceof Error ? error.message : String(error)})`, {
      file,
      field: 'state',
      hint: 'retrain the model',
      cause: error,
    });
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

function readArtifact(
  json: unknown,
  options: { encoder?: Encoder; binary?: boolean },
): { retriever: Retriever; artifact: ModelArtifact } {
  const fail = (field: string, message: string, hint?: string): never => {
    throw new DtdrError('artifact', message, { field, hint });
  };
  const a = json as ModelArtifact;
  if (typeof a !== 'object' || a === null || a.format !== MODEL_FORMAT)
    fail('format', `not a dtdr model (format is ${JSON.stringify(a?.format)})`, 'train one with `dtdr train`');
  if (!Number.isInteger(a.version)) fail('version', 'missing format version');
  if (a.version > MODEL_VERSION)
    fail(
      'version',
      `model format version ${a.version} is newer than this dtdr reads (${MODEL_VERSION})`,
      'upgrade dtdr',
    );
  if (a.version < 1) fail('version', `model format version ${a.version} is not one dtdr wrote`, 'retrain the model');
  if (!isMethod(a.method)) fail('method', `unknown method "${a.method}"`);
  const entry = assertEntry(a.method); // a known method this app has not registered says how to
  if (!Array.isArray(a.tools) || a.tools.some((t) => typeof t?.name !== 'string'))
    fail('tools', 'tools must be a list of {name, description}');
  try {
    checkTools(a.tools, 'tools');
  } catch (e) {
    fail(DtdrError.isInstance(e) && e.field ? e.field : 'tools', DtdrError.isInstance(e) ? e.message : String(e));
  }
  // v1 files have no hash (nothing to check); from v2 on, tools edited by hand are caught here.
  // A file that says it is v1 but has what only v2 wrote (a hash, an encoder fingerprint, the
  // binary container) is an edited newer file: its hash is checked all the same.
  const v1 =
    a.version < 2 && a.toolsHash === undefined && typeof a.encoder?.fingerprint !== 'string' && !options.binary;
  if (!v1 && a.toolsHash !== toolsHash(a.tools))
    fail(
      'toolsHash',
      'the tool list does not match its hash: the file was edited after it was saved',
      'change tools with model.addTools / removeTools, then save again',
    );
  const labels = labelsOf(a.tools);
  if (!Array.isArray(a.labels) || a.labels.join('\u0000') !== labels.join('\u0000'))
    fail('labels', `labels must be the tool names followed by ${END}`);
  checkEncoderRecord(a, options.encoder, fail);
  if (
    a.examples !== undefined &&
    (!Array.isArray(a.examples) ||
      a.examples.some(
        (e) =>
          typeof e?.query !== 'string' ||
          !Array.isArray(e.tools) ||
          e.tools.length === 0 ||
          e.tools.some((t) => typeof t !== 'string'),
      ))
  ) {
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
  // Each method reads and checks its own state (its registry entry's fromState, retrieval/methods.ts).
  const retriever = entry.fromState({ tools: a.tools, labels, dim, historyLength: l, state: s });
  return { retriever, artifact: a };
}

/** The artifact's encoder record, checked, and against the encoder it is being loaded with (`loaded`). */
function checkEncoderRecord(
  a: ModelArtifact,
  loaded: Encoder | undefined,
  fail: (field: string, message: string, hint?: string) => never,
): void {
  const needsEncoder = usesEncoder(a.method);
  if (a.encoder !== null && a.encoder !== undefined) {
    object('encoder', a.encoder);
    if (typeof a.encoder.id !== 'string') fail('encoder.id', 'the encoder id must be a string');
    int('encoder.dimension', a.encoder.dimension, 1, 1_000_000);
    if (a.encoder.fingerprint !== undefined && typeof a.encoder.fingerprint !== 'string')
      fail('encoder.fingerprint', 'the encoder fingerprint must be a string (hex)');
    if (a.encoder.location !== undefined && typeof a.encoder.location !== 'string')
      fail('encoder.location', 'the encoder location must be a string');
  }
  if (needsEncoder && (!a.encoder || typeof a.encoder.id !== 'string' || !Number.isInteger(a.encoder.dimension)))
    fail('encoder', 'missing the encoder id and dimension');
  if (needsEncoder && loaded && (loaded.id !== a.encoder!.id || loaded.dimension !== a.encoder!.dimension)) {
    fail(
      'encoder',
      `trained with encoder ${a.encoder!.id} (${a.encoder!.dimension}-d) but loaded with ${loaded.id} ` +
        `(${loaded.dimension}-d)`,
      `load it with encoder ${a.encoder!.id} (loadEncoder, or dtdr's --encoder), or retrain`,
    );
  }
  if (needsEncoder && loaded?.fingerprint && a.encoder?.fingerprint && loaded.fingerprint !== a.encoder.fingerprint) {
    fail(
      'encoder.fingerprint',
      `encoder ${a.encoder.id} has other files than the one this model was trained with (fingerprint ` +
        `${a.encoder.fingerprint.slice(0, 12)}…, loaded ${loaded.fingerprint.slice(0, 12)}…)`,
      'load the encoder files the model was trained with, or retrain',
    );
  }
}

/** A saved history length: at most the longest plan (MAX_PLAN_STEPS); trained models use 1–5. */
const MAX_HISTORY = MAX_PLAN_STEPS;

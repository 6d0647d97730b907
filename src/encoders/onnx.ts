/**
 * The encoder's runtime seam. A sentence encoder here is an ONNX model folder (config.json,
 * tokenizer.json, tokenizer_config.json, onnx/model*.onnx) run by any ONNX Runtime that speaks
 * `onnxruntime-common`'s API: onnxruntime-web (WASM, the default in browsers and in Node),
 * onnxruntime-node (native, if you install it), onnxruntime-react-native (iOS/Android). Text is
 * tokenized with @huggingface/tokenizers, the pure-JS tokenizer transformers.js itself uses, and
 * pooled here (masked mean, L2 norm), as transformers.js's `feature-extraction` pipeline does.
 * No platform import: the loaders in node.ts and web.ts say where the bytes come from.
 */
import { Tokenizer } from '@huggingface/tokenizers';
import type { Env, InferenceSession, InferenceSessionFactory, Tensor, TensorConstructor } from 'onnxruntime-common';
import { DtdrError } from '../core/base/errors.js';
import { withEmbeddingCache, type Encoder, type EncoderBackend } from '../core/base/encoder.js';
import {
  encoderFingerprint,
  parseJson,
  pickWeightFile,
  readOrExplain,
  type EncoderDtype,
  type ModelFiles,
} from './onnx-files.js';

/** The id of the sentence encoder bundled with the package. */
export const BUNDLED_ENCODER_ID = 'dtdr-glove-100d';

/** An ONNX Runtime module: `import * as ort from 'onnxruntime-web/wasm'` (or -node, -react-native). */
export interface OnnxRuntime {
  InferenceSession: InferenceSessionFactory;
  Tensor: TensorConstructor;
  env?: Env;
}

/** Where the encoder runs: ONNX Runtime's CPU or WebAssembly backend, WebGPU, or the best available. */
export type EncoderDevice = 'cpu' | 'wasm' | 'webgpu' | 'auto';

/**
 * Options of `loadEncoder`: the model, the runtime and device, the weight file, and whether hub models may be
 * downloaded.
 */
export interface EncoderOptions {
  /**
   * The bundled `dtdr-glove-100d` (default), a local model folder (Node: a path; browsers: a URL
   * or path ending in `/`), or a hub id such as `Xenova/all-MiniLM-L6-v2` (needs
   * `allowRemoteModels` and the optional peer `@huggingface/transformers`).
   */
  model?: string;
  /**
   * The ONNX Runtime to run the model on. Default: `onnxruntime-web/wasm` (a dependency; pure WASM,
   * no native binary, no network). Pass `await import('onnxruntime-node')`,
   * `await import('onnxruntime-web/webgpu')` or `onnxruntime-react-native` to use those instead.
   */
  runtime?: OnnxRuntime;
  /** ONNX Runtime's session log level: 0 verbose, 1 info, 2 warning, 3 error (default), 4 fatal. */
  logSeverityLevel?: 0 | 1 | 2 | 3 | 4;
  /** Execution providers, in order. Default: `['webgpu', 'wasm']` for device `webgpu`, else the runtime's own. */
  device?: EncoderDevice;
  /**
   * Weight file to load: `onnx/model.onnx` (fp32), `onnx/model_quantized.onnx` (q8), … Default: config.json's choice,
   * else fp32.
   */
  dtype?: EncoderDtype;
  /** Allow downloading hub models (through transformers.js). Default false: dtdr works offline. */
  allowRemoteModels?: boolean;
  /** Distinct texts kept in the LRU embedding cache. Default 4096; 0 turns it off. */
  cacheSize?: number;
  /** Texts per runtime call. Default 256. */
  batchSize?: number;
  /**
   * Where ONNX Runtime Web's .wasm files are served, if not next to its script (a folder URL).
   * Default: resolved from the installed package by your bundler; you rarely need this.
   */
  wasmPaths?: string;
  /** Hub models only: where transformers.js looks for model ids locally. */
  localModelPath?: string;
  /**
   * Hub models only: the `@huggingface/transformers` module (optional peer). Node imports it by
   * itself; in a bundled app pass `await import('@huggingface/transformers')`.
   */
  transformers?: object;
}

/** Options for {@link createOnnxEncoder}. */
export interface OnnxEncoderInit {
  /** Recorded in trained models. */
  id: string;
  /** The folder it came from, when on disk (recorded in models, so the CLI finds it again). */
  location?: string;
  /** SHA-256 (hex) of its files, recorded in models. */
  fingerprint?: string;
  runtime: OnnxRuntime;
  session: InferenceSession;
  /** The execution provider the session runs on, when known. */
  backend?: EncoderBackend;
  tokenizer: {
    /** The token ids of a text. */
    encode(text: string): { ids: number[] };
  };
  /** Longest token sequence the model takes; longer texts are cut. Default 512. */
  maxLength?: number;
  batchSize?: number;
  cacheSize?: number;
}

/**
 * An Encoder over an already created session and tokenizer: the seam for runtimes dtdr does not
 * load itself (e.g. `onnxruntime-react-native`'s `InferenceSession.create(path)`).
 */
export async function createOnnxEncoder(init: OnnxEncoderInit): Promise<Encoder> {
  const { session, runtime, tokenizer } = init;
  const batchSize = init.batchSize ?? 256;
  if (!Number.isInteger(batchSize) || batchSize < 1) {
    throw new DtdrError('options', `batchSize must be a positive integer, got ${init.batchSize}`, {
      field: 'batchSize',
    });
  }
  const maxLength = init.maxLength ?? 512;
  const inputs = new Set(session.inputNames);
  for (const required of ['input_ids', 'attention_mask']) {
    if (!inputs.has(required)) {
      throw new DtdrError(
        'encoder',
        `encoder "${init.id}" has no ${required} input (inputs: ${session.inputNames.join(', ')})`,
        {
          hint: 'use a sentence-encoder ONNX export (input_ids, attention_mask → last_hidden_state)',
        },
      );
    }
  }
  const output = session.outputNames.includes('last_hidden_state') ? 'last_hidden_state' : session.outputNames[0];

  const tokenize = (text: string): number[] => {
    const ids = tokenizer.encode(text).ids;
    if (ids.some((id) => !Number.isInteger(id))) {
      throw new DtdrError(
        'encoder',
        `the tokenizer of "${init.id}" gave no id for part of ${JSON.stringify(text.slice(0, 40))}`,
        { hint: 'its tokenizer.json needs an unk_token for words outside its vocabulary' },
      );
    }
    // Keep the last token (a [SEP]-like marker for models that have one) when cutting.
    return ids.length > maxLength ? [...ids.slice(0, maxLength - 1), ids[ids.length - 1]] : ids;
  };

  const runBatch = (rows: readonly number[][]) =>
    runPooled(session, runtime, inputs.has('token_type_ids'), output, rows);

  const [probe] = await runBatch([tokenize('probe')]);
  const dimension = probe.length;
  const base: Encoder = {
    id: init.id,
    dimension,
    ...(init.location !== undefined ? { location: init.location } : {}),
    ...(init.fingerprint !== undefined ? { fingerprint: init.fingerprint } : {}),
    ...(init.backend !== undefined ? { backend: init.backend } : {}),
    async embed(texts) {
      // Text with no characters at all has nothing to pool: answer it directly.
      const out: Float32Array[] = texts.map(() => new Float32Array(dimension));
      const rows = texts.flatMap((text, index) => (text.trim() === '' ? [] : [{ index, ids: tokenize(text) }]));
      // A runtime call pads every text to its longest one, and a transformer pays for every padded
      // position, so texts go to the runtime shortest first: one long description no longer makes a
      // whole batch of short requests run at its length. Pooling is masked, so no vector changes.
      rows.sort((a, b) => a.ids.length - b.ids.length || a.index - b.index);
      // A call also holds at most MAX_BATCH_POSITIONS padded positions, so long texts do not build
      // activations of hundreds of MB (a 1536-wide layer over 256 × 128 positions is 200 MB).
      for (let start = 0; start < rows.length;) {
        let end = start + 1;
        while (
          end < rows.length &&
          end - start < batchSize &&
          (end - start + 1) * Math.max(1, rows[end].ids.length) <= MAX_BATCH_POSITIONS
        )
          end++;
        const batch = rows.slice(start, end);
        const vectors = await runBatch(batch.map((row) => row.ids));
        batch.forEach((row, k) => (out[row.index] = vectors[k]));
        start = end;
      }
      return out;
    },
    async dispose() {
      await session.release?.();
    },
  };
  const cacheSize = init.cacheSize ?? 4096;
  return cacheSize > 0 ? withEmbeddingCache(base, cacheSize) : base;
}

/** Most padded token positions in one runtime call (texts × the longest text's tokens). */
const MAX_BATCH_POSITIONS = 8192;

/** L2-normalises; an all-zero vector (text of unknown words only) stays zero rather than NaN. */
function normalise(v: Float64Array): Float32Array {
  let norm = 0;
  for (let k = 0; k < v.length; k++) norm += v[k] * v[k];
  norm = Math.sqrt(norm);
  const out = new Float32Array(v.length);
  if (norm > 0) for (let k = 0; k < v.length; k++) out[k] = v[k] / norm;
  return out;
}

/** Loads a model folder onto a runtime: reads config, tokenizer and the weight file for the dtype. */
export async function loadOnnxEncoder(
  files: ModelFiles,
  id: string,
  runtime: OnnxRuntime,
  options: EncoderOptions = {},
  location?: string,
): Promise<Encoder> {
  const config = parseJson(
    await readOrExplain(files, 'config.json', (name) => files.text(name)),
    'config.json',
    files.location,
  );
  const tokenizerText = await readOrExplain(files, 'tokenizer.json', (name) => files.text(name));
  const tokenizerJson = parseJson(tokenizerText, 'tokenizer.json', files.location);
  const tokenizerConfig =
    files.has && !(await files.has('tokenizer_config.json'))
      ? {}
      : parseJson(
          await readOrExplain(files, 'tokenizer_config.json', (name) => files.text(name)),
          'tokenizer_config.json',
          files.location,
        );

  const weightFile = await pickWeightFile(files, config, options);
  const weights = await readOrExplain(files, weightFile, (name) => files.bytes(name));

  const { session, backend } = await startSession(
    runtime,
    weights,
    options,
    `encoder "${id}" (${files.location}/${weightFile})`,
  );
  let tokenizer: Tokenizer;
  try {
    tokenizer = new Tokenizer(tokenizerJson, tokenizerConfig);
  } catch (cause) {
    throw new DtdrError(
      'encoder',
      `cannot build the tokenizer of "${id}" from ${files.location}/tokenizer.json: ` +
        `${cause instanceof Error ? cause.message : String(cause)}`,
      { cause },
    );
  }
  const maxLength =
    typeof tokenizerConfig.model_max_length === 'number' && tokenizerConfig.model_max_length < 1e6
      ? tokenizerConfig.model_max_length
      : 512;
  const fingerprint = await encoderFingerprint(files, weightFile, weights, tokenizerText);
  return createOnnxEncoder({
    id,
    location,
    fingerprint,
    runtime,
    session,
    backend,
    tokenizer,
    maxLength,
    batchSize: options.batchSize,
    cacheSize: options.cacheSize,
  });
}

/** The adapter ONNX Runtime's WebGPU backend picked (its architecture, e.g. `swiftshader`), if it says. */
async function webGpuAdapter(runtime: OnnxRuntime): Promise<{ adapter?: string }> {
  try {
    const webgpu = (runtime.env as { webgpu?: { device?: Promise<unknown>; adapter?: unknown } } | undefined)?.webgpu;
    const device = (await webgpu?.device) as { adapterInfo?: { architecture?: string; vendor?: string } } | undefined;
    const info =
      device?.adapterInfo ??
      (webgpu?.adapter as { info?: { architecture?: string; vendor?: string } } | undefined)?.info;
    const name = info?.architecture || info?.vendor;
    return name ? { adapter: name } : {};
  } catch {
    return {};
  }
}

/** The default runtime: ONNX Runtime Web's WASM build, loaded on first use. */
export async function defaultRuntime(): Promise<OnnxRuntime> {
  const ort = (await import('onnxruntime-web/wasm')) as unknown as OnnxRuntime;
  return ort;
}

/**
 * One runtime call on token rows (padded to the longest, masked): each row's vector, mean-pooled
 * over its tokens (or the model's own pooled output) and normalised.
 */
async function runPooled(
  session: OnnxEncoderInit['session'],
  runtime: OnnxEncoderInit['runtime'],
  tokenTypes: boolean,
  output: string,
  rows: readonly number[][],
): Promise<Float32Array[]> {
  const width = Math.max(1, ...rows.map((r) => r.length));
  const ids = new BigInt64Array(rows.length * width);
  const mask = new BigInt64Array(rows.length * width);
  rows.forEach((row, i) =>
    row.forEach((id, j) => {
      ids[i * width + j] = BigInt(id);
      mask[i * width + j] = 1n;
    }),
  );
  const dims = [rows.length, width];
  const feeds: Record<string, Tensor> = {
    input_ids: new runtime.Tensor('int64', ids, dims),
    attention_mask: new runtime.Tensor('int64', mask, dims),
  };
  if (tokenTypes) feeds.token_type_ids = new runtime.Tensor('int64', new BigInt64Array(rows.length * width), dims);
  const result = await session.run(feeds);
  const tensor = result[output];
  const data = tensor.data as Float32Array;
  const out: Float32Array[] = [];
  if (tensor.dims.length === 2) {
    // Already pooled (a sentence_embedding output).
    const dim = tensor.dims[1];
    for (let i = 0; i < rows.length; i++) out.push(normalise(Float64Array.from(data.subarray(i * dim, (i + 1) * dim))));
  } else {
    const dim = tensor.dims[2];
    for (let i = 0; i < rows.length; i++) {
      const sum = new Float64Array(dim);
      const count = rows[i].length;
      for (let j = 0; j < count; j++) {
        const base = (i * width + j) * dim;
        for (let k = 0; k < dim; k++) sum[k] += data[base + k];
      }
      for (let k = 0; k < dim && count > 0; k++) sum[k] /= count;
      out.push(normalise(sum));
    }
  }
  return out;
}

/** An ONNX Runtime session on the device asked for, and its backend (WebGPU falls back to WASM, saying so). */
async function startSession(
  runtime: OnnxRuntime,
  weights: Uint8Array,
  options: EncoderOptions,
  what: string,
): Promise<{ session: InferenceSession; backend: EncoderBackend }> {
  if (options.wasmPaths !== undefined && runtime.env?.wasm) runtime.env.wasm.wasmPaths = options.wasmPaths;
  const device = options.device ?? 'auto';
  // ONNX Runtime logs warnings by default; its WebGPU backend warns on every session that it keeps
  // shape and int8 lookup ops on the CPU (expected for this encoder), and in browsers that line,
  // ANSI colour codes and all, lands in the console as an error. Errors are still logged.
  const logSeverityLevel = options.logSeverityLevel ?? 3;
  const create = (executionProviders?: string[]) =>
    runtime.InferenceSession.create(weights, {
      ...(executionProviders ? { executionProviders } : {}),
      logSeverityLevel,
    });
  const failure = (cause: unknown) => {
    const reason = cause instanceof Error ? cause.message.split('\n')[0] : String(cause);
    return new DtdrError('encoder', `cannot start ${what} on ONNX Runtime: ${reason}`, {
      hint:
        device === 'webgpu'
          ? "device 'webgpu' needs a WebGPU build of ONNX Runtime: pass runtime: await " +
            "import('onnxruntime-web/webgpu')"
          : 'check that the file is a complete ONNX model and that the runtime supports its operators',
      cause,
    });
  };
  let session: InferenceSession;
  let backend: EncoderBackend;
  if (device === 'webgpu') {
    // WebGPU alone first, so the backend reported is the one that runs; WASM only as a said fallback.
    try {
      session = await create(['webgpu']);
      backend = { name: 'webgpu', ...(await webGpuAdapter(runtime)) };
    } catch (cause) {
      const reason = cause instanceof Error ? cause.message.split('\n')[0] : String(cause);
      try {
        session = await create(['wasm']);
      } catch {
        throw failure(cause);
      }
      backend = { name: 'wasm', note: `WebGPU was asked for but could not start (${reason}); running on WASM` };
    }
  } else {
    try {
      session = await create(device === 'wasm' || device === 'cpu' ? [device] : undefined);
    } catch (cause) {
      throw failure(cause);
    }
    backend = { name: device === 'auto' ? (runtime.env?.wasm ? 'wasm' : 'cpu') : device };
  }
  return { session, backend };
}

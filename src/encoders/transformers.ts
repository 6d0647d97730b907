/**
 * The one Encoder implementation: transformers.js `feature-extraction` with mean pooling and L2
 * normalisation. It loads the bundled static model, any local ONNX model folder, or (when
 * remote models are allowed) a hub model such as `Xenova/all-MiniLM-L6-v2`. transformers.js
 * picks onnxruntime-node in Node and onnxruntime-web in browsers by itself.
 */
import { env, pipeline, type FeatureExtractionPipeline } from '@huggingface/transformers';
import { DtdrError } from '../core/errors.js';
import { withEmbeddingCache, type Encoder } from '../core/encoder.js';

export const BUNDLED_ENCODER_ID = 'dtdr-glove-100d';

export type EncoderDevice = 'cpu' | 'wasm' | 'webgpu' | 'auto';
export type EncoderDtype = 'auto' | 'fp32' | 'fp16' | 'q8' | 'int8' | 'uint8' | 'q4' | 'bnb4' | 'q4f16';

export interface EncoderOptions {
  /** Hub model id or local model folder. Default: the bundled `dtdr-glove-100d`. */
  model?: string;
  /** Runtime device. Default: `cpu` in Node, `wasm` in browsers; `webgpu` where available. */
  device?: EncoderDevice;
  /** Weight precision; default: what the model's config.json names (`q8` for the bundled model). */
  dtype?: EncoderDtype;
  /** Let transformers.js download from the hub. Default false: dtdr works offline. */
  allowRemoteModels?: boolean;
  /** Folder or URL prefix under which model ids are looked up. Default: transformers.js's own. */
  localModelPath?: string;
  /** Distinct texts kept in the LRU embedding cache. Default 4096; 0 turns it off. */
  cacheSize?: number;
  /** Texts per runtime call. Default 256. */
  batchSize?: number;
  /**
   * Browsers: where ONNX Runtime's WASM files are served (a folder URL, or {mjs, wasm} URLs).
   * transformers.js otherwise fetches them from a CDN; serve them yourself to work offline.
   */
  wasmPaths?: string | { mjs: string; wasm: string };
}

export interface ResolvedModel {
  /** What transformers.js is asked to load (a path, URL or hub id). */
  location: string;
  /** The id recorded in trained models. */
  id: string;
}

const isNode = typeof process !== 'undefined' && !!process.versions?.node;

/** Loads an encoder from an already resolved location; the public loaders resolve ids and folders. */
export async function loadTransformersEncoder(resolved: ResolvedModel, options: EncoderOptions = {}): Promise<Encoder> {
  const batchSize = options.batchSize ?? 256;
  if (!Number.isInteger(batchSize) || batchSize < 1) {
    throw new DtdrError('options', `batchSize must be a positive integer, got ${options.batchSize}`, { field: 'batchSize' });
  }
  const allowRemote = options.allowRemoteModels ?? false;
  env.allowRemoteModels = allowRemote;
  env.allowLocalModels = true;
  if (options.localModelPath !== undefined) env.localModelPath = options.localModelPath;
  const wasm = env.backends?.onnx?.wasm as { wasmPaths?: unknown } | undefined;
  if (options.wasmPaths !== undefined && wasm) {
    wasm.wasmPaths = typeof options.wasmPaths === 'string'
      ? { mjs: `${options.wasmPaths}ort-wasm-simd-threaded.asyncify.mjs`, wasm: `${options.wasmPaths}ort-wasm-simd-threaded.asyncify.wasm` }
      : options.wasmPaths;
  }
  const device = options.device && options.device !== 'auto' ? options.device : isNode ? 'cpu' : 'wasm';

  let extractor: FeatureExtractionPipeline;
  try {
    extractor = (await pipeline('feature-extraction', resolved.location, {
      device,
      ...(options.dtype && options.dtype !== 'auto' ? { dtype: options.dtype } : {}),
      local_files_only: !allowRemote,
    })) as FeatureExtractionPipeline;
  } catch (cause) {
    const reason = cause instanceof Error ? cause.message.split('\n')[0] : String(cause);
    throw new DtdrError('encoder', `cannot load encoder "${resolved.id}" from ${resolved.location}: ${reason}`, {
      hint: allowRemote
        ? 'check the model id and your network'
        : 'give a local ONNX model folder (config.json, tokenizer.json, onnx/model*.onnx), or allow remote models to download it',
      cause,
    });
  }

  const run = async (texts: string[]): Promise<Float32Array[]> => {
    const out: Float32Array[] = [];
    for (let start = 0; start < texts.length; start += batchSize) {
      const batch = texts.slice(start, start + batchSize);
      const tensor = await extractor(batch, { pooling: 'mean', normalize: true });
      const [n, dim] = tensor.dims as number[];
      const data = tensor.data as Float32Array;
      for (let i = 0; i < n; i++) {
        const row = new Float32Array(data.subarray(i * dim, (i + 1) * dim));
        // All-unknown text pools to a zero vector, which normalisation turns into NaN.
        if (Number.isNaN(row[0])) row.fill(0);
        out.push(row);
      }
    }
    return out;
  };

  const probe = await run(['probe']);
  const dimension = probe[0].length;
  const base: Encoder = {
    id: resolved.id,
    dimension,
    async embed(texts) {
      // Text with no characters at all gives the tokenizer nothing to pad: answer it directly.
      const nonEmpty = texts.map((t, i) => [t, i] as const).filter(([t]) => t.trim() !== '');
      const vectors = nonEmpty.length > 0 ? await run(nonEmpty.map(([t]) => t)) : [];
      const out: Float32Array[] = texts.map(() => new Float32Array(dimension));
      nonEmpty.forEach(([, i], k) => (out[i] = vectors[k]));
      return out;
    },
    async dispose() {
      await extractor.dispose();
    },
  };
  const cacheSize = options.cacheSize ?? 4096;
  return cacheSize > 0 ? withEmbeddingCache(base, cacheSize) : base;
}

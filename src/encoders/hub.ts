/**
 * Hub models through transformers.js (an optional peer dependency, loaded only here): used when
 * the user asks for a model id such as `Xenova/all-MiniLM-L6-v2` and allows remote models.
 * Everything else (the bundled encoder, local folders) runs on ONNX Runtime directly (onnx.ts).
 */
import { DtdrError } from '../core/base/errors.js';
import { withEmbeddingCache, type Encoder } from '../core/base/encoder.js';
import type { EncoderOptions } from './onnx.js';
// Types only: erased at build time, so the package does not need transformers.js installed.
import type { FeatureExtractionPipeline } from '@huggingface/transformers';

const isNode = typeof process !== 'undefined' && !!process.versions?.node;

/**
 * Loads an optional peer dependency, or says which package to install. The specifier is a variable
 * so that bundlers neither pull the package into every app nor fail where it is not installed; in
 * a bundled app pass the module itself (e.g. `transformers: await import('@huggingface/transformers')`).
 */
export async function importOptional<T>(name: string, feature: string, provided?: unknown): Promise<T> {
  if (provided !== undefined) return provided as T;
  const specifier = name;
  try {
    return (await import(/* @vite-ignore */ /* webpackIgnore: true */ specifier)) as T;
  } catch (cause) {
    const code = (cause as { code?: string }).code;
    const message = cause instanceof Error ? cause.message : String(cause);
    if (
      code === 'ERR_MODULE_NOT_FOUND' ||
      code === 'MODULE_NOT_FOUND' ||
      /Cannot find (module|package)|Failed to resolve module|Failed to fetch dynamically imported module|bare specifier/i.test(
        message,
      )
    ) {
      const browser = typeof process === 'undefined' || !process.versions?.node;
      throw new DtdrError(
        'options',
        `${feature} needs the optional package ${name}, which is not installed${browser ? ' or not passed in' : ''}`,
        {
          hint: browser ? `npm install ${name}, then pass the module: await import('${name}')` : `npm install ${name}`,
          cause,
        },
      );
    }
    throw cause;
  }
}

type Transformers = typeof import('@huggingface/transformers');

export async function loadHubEncoder(modelId: string, options: EncoderOptions = {}): Promise<Encoder> {
  const { env, pipeline } = await importOptional<Transformers>(
    '@huggingface/transformers',
    `the hub encoder "${modelId}"`,
    options.transformers,
  );
  const resolved = { location: modelId, id: modelId };
  const batchSize = options.batchSize ?? 256;
  if (!Number.isInteger(batchSize) || batchSize < 1) {
    throw new DtdrError('options', `batchSize must be a positive integer, got ${options.batchSize}`, {
      field: 'batchSize',
    });
  }
  const allowRemote = options.allowRemoteModels ?? false;
  env.allowRemoteModels = allowRemote;
  env.allowLocalModels = true;
  if (options.localModelPath !== undefined) env.localModelPath = options.localModelPath;
  const wasm = env.backends?.onnx?.wasm as { wasmPaths?: unknown } | undefined;
  if (options.wasmPaths !== undefined && wasm) wasm.wasmPaths = options.wasmPaths;
  const device = options.device && options.device !== 'auto' ? options.device : isNode ? 'cpu' : 'wasm';

  let extractor: FeatureExtractionPipeline;
  try {
    extractor = await pipeline('feature-extraction', resolved.location, {
      device,
      ...(options.dtype && options.dtype !== 'auto' ? { dtype: options.dtype } : {}),
      local_files_only: !allowRemote,
    });
  } catch (cause) {
    const reason = cause instanceof Error ? cause.message.split('\n')[0] : String(cause);
    throw new DtdrError('encoder', `cannot load encoder "${resolved.id}" from ${resolved.location}: ${reason}`, {
      hint: allowRemote
        ? 'check the model id and your network'
        : 'give a local ONNX model folder (config.json, tokenizer.json, onnx/model*.onnx), or allow ' +
          'remote models to download it',
      cause,
    });
  }

  const run = async (texts: string[]): Promise<Float32Array[]> => {
    const out: Float32Array[] = [];
    for (let start = 0; start < texts.length; start += batchSize) {
      const batch = texts.slice(start, start + batchSize);
      const tensor = await extractor(batch, { pooling: 'mean', normalize: true });
      const [n, dim] = tensor.dims;
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

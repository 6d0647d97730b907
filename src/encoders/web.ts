/**
 * Browser (and worker, edge) encoder loading. The bundled model's files are referenced with
 * `new URL(…, import.meta.url)`, which Vite, webpack 5, Parcel and Rollup turn into emitted
 * assets, so an app that bundles dtdr serves them itself: no CDN, no copying by hand. ONNX
 * Runtime Web's WASM build finds its .wasm file the same way.
 */
import { DtdrError } from '../core/base/errors.js';
import type { Encoder } from '../core/base/encoder.js';
import { BUNDLED_ENCODER_ID, defaultRuntime, loadOnnxEncoder, type EncoderOptions } from './onnx.js';
import type { ModelFiles } from './onnx-files.js';

/** URLs of the bundled model's files, resolved from the installed package. */
const BUNDLED_FILES: Record<string, URL> = {
  'config.json': new URL('../../models/dtdr-glove-100d/config.json', import.meta.url),
  'tokenizer.json': new URL('../../models/dtdr-glove-100d/tokenizer.json', import.meta.url),
  'tokenizer_config.json': new URL('../../models/dtdr-glove-100d/tokenizer_config.json', import.meta.url),
  'onnx/model_quantized.onnx': new URL('../../models/dtdr-glove-100d/onnx/model_quantized.onnx', import.meta.url),
  'manifest.json': new URL('../../models/dtdr-glove-100d/manifest.json', import.meta.url),
};

async function fetchOk(url: string): Promise<Response> {
  const response = await fetch(url);
  if (!response.ok) throw new Error(`HTTP ${response.status} for ${url}`);
  return response;
}

/** A model folder behind URLs: the bundled one, or any folder URL ending in `/`. */
export function urlFiles(
  location: string,
  lookup: (name: string) => string = (name) => new URL(name, new URL(location, globalThis.location?.href)).href,
): ModelFiles {
  return {
    location,
    text: async (name) => (await fetchOk(lookup(name))).text(),
    bytes: async (name) => new Uint8Array(await (await fetchOk(lookup(name))).arrayBuffer()),
    has: async (name) => {
      try {
        return (await fetch(lookup(name), { method: 'HEAD' })).ok;
      } catch {
        return false;
      }
    },
  };
}

export interface ResolvedModel {
  location: string;
  id: string;
  local: boolean;
}

/**
 * Where an encoder is loaded from: the bundled encoder's URL when `model` is undefined, a URL ending in `/` as a
 * folder, anything else as a hub id.
 */
function resolveModel(model: string | undefined): ResolvedModel {
  if (model === undefined || model === BUNDLED_ENCODER_ID)
    return { location: BUNDLED_ENCODER_ID, id: BUNDLED_ENCODER_ID, local: true };
  const trimmed = model.replace(/\/+$/, '');
  // A URL or a path is a served folder; anything else is a hub id.
  if (/^(\w+:\/\/|\/|\.{1,2}\/)/.test(model))
    return { location: `${trimmed}/`, id: trimmed.slice(trimmed.lastIndexOf('/') + 1), local: true };
  return { location: trimmed, id: trimmed, local: false };
}

/**
 * Loads an encoder in the browser: the bundled model by default (served from your bundle), a
 * model folder URL (`/models/my-encoder/`), or a hub id with `allowRemoteModels`.
 */
export async function loadEncoder(options: EncoderOptions = {}): Promise<Encoder> {
  const resolved = resolveModel(options.model);
  if (!resolved.local) {
    if (!options.allowRemoteModels) {
      throw new DtdrError('encoder', `cannot load encoder "${resolved.id}": remote models are off`, {
        hint:
          'serve an ONNX model folder and pass its URL ending in "/", or allow remote models (needs ' +
          '@huggingface/transformers)',
      });
    }
    // transformers.js glue loads only for a hub id (an app serving its own model never downloads it).
    const { loadHubEncoder } = await import('./hub.js');
    return loadHubEncoder(resolved.location, options);
  }
  const files =
    resolved.id === BUNDLED_ENCODER_ID && resolved.location === BUNDLED_ENCODER_ID
      ? {
          ...urlFiles(
            'the dtdr package (models/dtdr-glove-100d)',
            (name) => BUNDLED_FILES[name]?.href ?? `missing:${name}`,
          ),
          has: async (name: string) => name in BUNDLED_FILES,
        }
      : urlFiles(resolved.location);
  return loadOnnxEncoder(files, resolved.id, options.runtime ?? (await defaultRuntime()), options);
}

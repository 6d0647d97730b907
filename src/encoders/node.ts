/**
 * Node encoder loading: the bundled folder inside the package and local folders are read from
 * disk and run on ONNX Runtime Web's WASM build (no native binary, no network); hub ids go to
 * transformers.js when remote models are allowed.
 */
import { existsSync, statSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { basename, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DtdrError } from '../core/base/errors.js';
import type { Encoder } from '../core/base/encoder.js';
import { loadHubEncoder } from './hub.js';
import { BUNDLED_ENCODER_ID, defaultRuntime, loadOnnxEncoder, type EncoderOptions } from './onnx.js';
import type { ModelFiles } from './onnx-files.js';

/** Absolute path of the bundled encoder folder (works from src/ and from dist/). */
export const BUNDLED_MODEL_DIR = fileURLToPath(new URL('../../models/dtdr-glove-100d', import.meta.url));

export interface ResolvedModel {
  /** A folder on disk, or a hub id. */
  location: string;
  /** The id recorded in trained models. */
  id: string;
  /** Whether `location` is a folder on disk. */
  local: boolean;
}

/**
 * Where an encoder is loaded from: the bundled encoder's folder when `model` is undefined, a path as a folder, anything
 * else as a hub id.
 */
function resolveModel(model: string | undefined): ResolvedModel {
  if (model === undefined || model === BUNDLED_ENCODER_ID)
    return { location: BUNDLED_MODEL_DIR, id: BUNDLED_ENCODER_ID, local: true };
  const path = resolve(model);
  if (existsSync(path)) {
    if (!statSync(path).isDirectory()) {
      throw new DtdrError('encoder', `encoder "${model}" is a file, not a model folder`, {
        hint: 'point at the folder that holds config.json, tokenizer.json and onnx/',
      });
    }
    return { location: path, id: basename(path), local: true };
  }
  if (/^(\.{1,2}[\\/]|[\\/]|~)/.test(model)) {
    throw new DtdrError('encoder', `encoder folder "${model}" does not exist`, {
      hint: 'check the path, or omit --encoder to use the bundled model',
    });
  }
  return { location: model, id: model, local: false };
}

/** A model folder on disk. */
export function folderFiles(folder: string): ModelFiles {
  return {
    location: folder,
    text: (name) => readFile(join(folder, name), 'utf8'),
    bytes: async (name) => new Uint8Array(await readFile(join(folder, name))),
    has: async (name) => existsSync(join(folder, name)),
  };
}

/** Loads an encoder in Node: the bundled model by default, a folder on disk, or a hub id. */
export async function loadEncoder(options: EncoderOptions = {}): Promise<Encoder> {
  const resolved = resolveModel(options.model);
  if (!resolved.local) {
    if (!options.allowRemoteModels) {
      throw new DtdrError(
        'encoder',
        `cannot load encoder "${resolved.id}": no such folder, and remote models are off`,
        {
          hint:
            'give a local ONNX model folder (config.json, tokenizer.json, onnx/model*.onnx), or allow ' +
            'remote models to download it (needs @huggingface/transformers)',
        },
      );
    }
    return loadHubEncoder(resolved.location, options);
  }
  let runtime = options.runtime;
  if (!runtime) {
    runtime = await defaultRuntime();
    // One thread: the bundled model is a table lookup, and worker threads cost more than they save.
    if (runtime.env?.wasm) runtime.env.wasm.numThreads = 1;
  }
  const bundled = resolved.location === BUNDLED_MODEL_DIR;
  return loadOnnxEncoder(
    folderFiles(resolved.location),
    resolved.id,
    runtime,
    options,
    bundled ? undefined : resolved.location,
  );
}

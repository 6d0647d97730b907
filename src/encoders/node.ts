/** Node-only model resolution: the bundled folder inside the package, and local folders on disk. */
import { existsSync, statSync } from 'node:fs';
import { basename, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DtdrError } from '../core/errors.js';
import type { Encoder } from '../core/encoder.js';
import { BUNDLED_ENCODER_ID, loadTransformersEncoder, type EncoderOptions, type ResolvedModel } from './transformers.js';

/** Absolute path of the bundled encoder folder (works from src/ and from dist/). */
export const BUNDLED_MODEL_DIR = fileURLToPath(new URL('../../models/dtdr-glove-100d', import.meta.url));

export function resolveModel(model: string | undefined): ResolvedModel {
  if (model === undefined || model === BUNDLED_ENCODER_ID) return { location: BUNDLED_MODEL_DIR, id: BUNDLED_ENCODER_ID };
  const path = resolve(model);
  if (existsSync(path)) {
    if (!statSync(path).isDirectory()) {
      throw new DtdrError('encoder', `encoder "${model}" is a file, not a model folder`, {
        hint: 'point at the folder that holds config.json, tokenizer.json and onnx/',
      });
    }
    return { location: path, id: basename(path) };
  }
  if (/^(\.{1,2}[\\/]|[\\/]|~)/.test(model)) {
    throw new DtdrError('encoder', `encoder folder "${model}" does not exist`, { hint: 'check the path, or omit --encoder to use the bundled model' });
  }
  return { location: model, id: model };
}

/** Loads an encoder in Node: the bundled model by default, a folder on disk, or a hub id. */
export async function loadEncoder(options: EncoderOptions = {}): Promise<Encoder> {
  return loadTransformersEncoder(resolveModel(options.model), options);
}

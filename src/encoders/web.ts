/** Browser model resolution: model ids are looked up under transformers.js's localModelPath. */
import type { Encoder } from '../core/encoder.js';
import { BUNDLED_ENCODER_ID, loadTransformersEncoder, type EncoderOptions, type ResolvedModel } from './transformers.js';

export function resolveModel(model: string | undefined): ResolvedModel {
  if (model === undefined) return { location: BUNDLED_ENCODER_ID, id: BUNDLED_ENCODER_ID };
  const trimmed = model.replace(/\/+$/, '');
  return { location: trimmed, id: trimmed.includes('://') ? trimmed.slice(trimmed.lastIndexOf('/') + 1) : trimmed };
}

/**
 * Loads an encoder in the browser. The bundled model is looked up as `dtdr-glove-100d` under
 * `localModelPath` (transformers.js default: `/models/`), so serve the package's
 * models/dtdr-glove-100d folder there, or pass `localModelPath`.
 */
export async function loadEncoder(options: EncoderOptions = {}): Promise<Encoder> {
  return loadTransformersEncoder(resolveModel(options.model), options);
}

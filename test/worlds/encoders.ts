/**
 * Encoders by name for the experiments that compare them (scripts/experiments/encoder-worlds.ts,
 * tools-only): the bundled GloVe model (`glove` or nothing), any model folder, or a combination `A+B`:
 * the two unit vectors side by side, each scaled by 1/√2, so a dot product is the mean of the two
 * encoders' cosines (a concatenation; GloVe's 100 dimensions and USE lite's 512 count equally).
 */
import type { Encoder } from '../../src/core/base/encoder.js';
import { loadEncoder } from '../../src/encoders/node.js';
import type { EncoderOptions } from '../../src/encoders/onnx.js';

export async function encoderByName(name?: string, options: EncoderOptions = {}): Promise<Encoder> {
  if (name === undefined || name === 'glove') return loadEncoder(options);
  const parts = name.split('+');
  if (parts.length === 1) return loadEncoder({ ...options, model: name });
  const encoders = await Promise.all(parts.map((p) => encoderByName(p, options)));
  const weight = 1 / Math.sqrt(encoders.length);
  const dimension = encoders.reduce((s, e) => s + e.dimension, 0);
  return {
    id: encoders.map((e) => e.id).join('+'),
    dimension,
    async embed(texts) {
      const parts = await Promise.all(encoders.map((e) => e.embed(texts)));
      return texts.map((_, i) => {
        const out = new Float32Array(dimension);
        let offset = 0;
        for (const vectors of parts) {
          const v = vectors[i];
          for (let k = 0; k < v.length; k++) out[offset + k] = v[k] * weight;
          offset += v.length;
        }
        return out;
      });
    },
    async dispose() {
      for (const e of encoders) await e.dispose?.();
    },
  };
}

import { env } from '@huggingface/transformers';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Encoder } from '../src/core/encoder.js';
import { DtdrError } from '../src/core/errors.js';
import { loadEncoder } from '../src/encoders/node.js';
import { BUNDLED_ENCODER_ID } from '../src/encoders/transformers.js';

describe('the bundled offline encoder', () => {
  let encoder: Encoder & { cache?: { hits: number } };
  beforeAll(async () => {
    encoder = await loadEncoder();
  });
  afterAll(() => encoder.dispose?.());

  it('loads with remote models disabled and reports its id and dimension', () => {
    expect(env.allowRemoteModels).toBe(false);
    expect(encoder.id).toBe(BUNDLED_ENCODER_ID);
    expect(encoder.dimension).toBe(100);
  });

  it('returns one unit-norm vector per text, in order', async () => {
    const vectors = await encoder.embed(['book a flight', 'reserve a plane ticket', 'play some jazz']);
    expect(vectors).toHaveLength(3);
    for (const v of vectors) {
      expect(v).toHaveLength(100);
      expect(Math.hypot(...v)).toBeCloseTo(1, 4);
    }
  });

  it('places paraphrases closer than unrelated requests', async () => {
    const [a, b, c] = await encoder.embed(['book a flight to paris', 'reserve a plane ticket to paris', 'turn off the kitchen lights']);
    const dot = (x: Float32Array, y: Float32Array) => x.reduce((s, v, i) => s + v * y[i], 0);
    expect(dot(a, b)).toBeGreaterThan(dot(a, c));
  });

  it('gives a zero vector, not NaN, for text with no known word or no text at all', async () => {
    const [unknown, empty] = await encoder.embed(['zzqx 7 !!', '']);
    expect(Array.from(unknown).every((x) => x === 0)).toBe(true);
    expect(Array.from(empty).every((x) => x === 0)).toBe(true);
  });

  it('is deterministic, and answers repeated texts from its cache', async () => {
    const [first] = await encoder.embed(['send an email to my boss']);
    const hits = encoder.cache!.hits;
    const [second] = await encoder.embed(['send an email to my boss']);
    expect(Array.from(second)).toEqual(Array.from(first));
    expect(encoder.cache!.hits).toBe(hits + 1);
    const fresh = await loadEncoder({ cacheSize: 0 });
    const [third] = await fresh.embed(['send an email to my boss']);
    expect(Array.from(third)).toEqual(Array.from(first));
  });

  it('fails with a typed error naming the fix when a hub model is asked for offline', async () => {
    const error = await loadEncoder({ model: 'Xenova/all-MiniLM-L6-v2' }).catch((e) => e);
    expect(DtdrError.isInstance(error)).toBe(true);
    expect(error.code).toBe('encoder');
    expect(error.message).toMatch(/local ONNX model folder|allow remote/);
  });

  it('rejects a model folder that does not exist', async () => {
    await expect(loadEncoder({ model: './no/such/folder' })).rejects.toThrow(/does not exist/);
  });
});

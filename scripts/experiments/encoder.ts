/**
 * Measures a sentence encoder on dtdr's own paraphrase set and its batched throughput.
 *
 *   npm run experiment -- encoder [--encoder <model id | folder> --sentences 5000 --runs 5]
 *
 * Accuracy: for each of the 2N sentences, is its nearest neighbour (cosine, among all other
 * sentences) its paraphrase partner? Throughput: distinct short sentences per second through
 * encoder.embed with the cache off; the median of several runs (this machine is shared).
 */
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { loadEncoder } from '../../src/encoders/node.js';
import { median } from '../bench/stats.js';

const { values: args } = parseArgs({
  options: {
    encoder: { type: 'string' },
    sentences: { type: 'string', default: '5000' },
    runs: { type: 'string', default: '5' },
  },
});

const dot = (a: Float32Array, b: Float32Array) => a.reduce((s, x, i) => s + x * b[i], 0);

async function main() {
  const { pairs } = JSON.parse(
    readFileSync(new URL('../../test/fixtures/paraphrases.json', import.meta.url), 'utf8'),
  ) as { pairs: [string, string][] };
  const encoder = await loadEncoder({ model: args.encoder, cacheSize: 0 });
  const sentences = pairs.flat();
  const vectors = await encoder.embed(sentences);
  let correct = 0;
  const misses: string[] = [];
  sentences.forEach((s, i) => {
    const partner = i ^ 1;
    let best = -1;
    let bestScore = -Infinity;
    vectors.forEach((v, j) => {
      if (j === i) return;
      const score = dot(vectors[i], v);
      if (score > bestScore) [best, bestScore] = [j, score];
    });
    if (best === partner) correct++;
    else misses.push(`${s}  →  ${sentences[best]}`);
  });

  const n = Number(args.sentences);
  const verbs = ['send', 'find', 'book', 'play', 'call', 'check', 'open', 'set', 'remind', 'show'];
  const objects = ['email', 'flight', 'song', 'alarm', 'note', 'file', 'meeting', 'contact', 'route', 'photo'];
  const texts = Array.from(
    { length: n },
    (_, i) =>
      `please ${verbs[i % 10]} the ${objects[Math.floor(i / 10) % 10]} for my ${['friend', 'boss', 'team', 'mother'][i % 4]} number ${i}`,
  );
  const rates: number[] = [];
  for (let r = 0; r < Number(args.runs); r++) {
    const t0 = performance.now();
    await encoder.embed(texts);
    rates.push(n / ((performance.now() - t0) / 1000));
  }
  console.log(
    JSON.stringify(
      {
        encoder: encoder.id,
        dimension: encoder.dimension,
        pairs: pairs.length,
        nearestNeighbourAccuracy: +(correct / sentences.length).toFixed(4),
        correct,
        sentences: sentences.length,
        throughputPerSecondMedian: Math.round(median(rates)),
        throughputRuns: rates.map(Math.round),
        misses,
      },
      null,
      2,
    ),
  );
  await encoder.dispose?.();
}

await main();

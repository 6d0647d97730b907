/**
 * Measures a sentence encoder on dtdr's own paraphrase set and its batched throughput.
 *
 *   npm run experiment -- encoder [--encoder <glove | folder | A+B> --sentences 5000 --runs 5 --requests 200]
 *
 * Accuracy: for each of the 2N sentences, is its nearest neighbour (cosine, among all other
 * sentences) its paraphrase partner? Throughput: distinct short sentences per second through
 * encoder.embed with the cache off; the median of several runs (this machine is shared) — all in
 * one call (batches of the encoder's batchSize, 256), in calls of 32, and one request per call
 * (the latency of one request: median and 90th percentile ms). The load average is reported with
 * the figures, since the machine is shared. Single-threaded (dtdr's default ONNX Runtime setting).
 */
import { loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import { encoderByName } from '../../test/worlds/encoders.js';
import { paraphraseAccuracy } from '../../test/worlds/paraphrase.js';
import { median } from '../bench/stats.js';

const { values: args } = parseArgs({
  options: {
    encoder: { type: 'string' },
    sentences: { type: 'string', default: '5000' },
    runs: { type: 'string', default: '5' },
    requests: { type: 'string', default: '200' },
  },
});

async function main() {
  const encoder = await encoderByName(args.encoder, { cacheSize: 0 });
  const { pairs, correct, sentences, accuracy, misses } = await paraphraseAccuracy(encoder);

  const n = Number(args.sentences);
  const verbs = ['send', 'find', 'book', 'play', 'call', 'check', 'open', 'set', 'remind', 'show'];
  const objects = ['email', 'flight', 'song', 'alarm', 'note', 'file', 'meeting', 'contact', 'route', 'photo'];
  const texts = Array.from(
    { length: n },
    (_, i) =>
      `please ${verbs[i % 10]} the ${objects[Math.floor(i / 10) % 10]} for my ${['friend', 'boss', 'team', 'mother'][i % 4]} number ${i}`,
  );
  const load = [loadavg()[0]];
  const rateAt = async (list: string[], perCall: number) => {
    const t0 = performance.now();
    for (let i = 0; i < list.length; i += perCall) await encoder.embed(list.slice(i, i + perCall));
    return list.length / ((performance.now() - t0) / 1000);
  };
  const rates: number[] = [];
  const rates32: number[] = [];
  for (let r = 0; r < Number(args.runs); r++) {
    rates.push(await rateAt(texts, n));
    // Distinct texts per run, so no run is answered by a cache of the runtime.
    rates32.push(
      await rateAt(
        texts.map((t) => `${t} run ${r}`),
        32,
      ),
    );
  }
  const requests = Math.min(Number(args.requests), n);
  const latencies: number[] = [];
  for (let i = 0; i < requests; i++) {
    const t0 = performance.now();
    await encoder.embed([`${texts[i]} alone`]);
    latencies.push(performance.now() - t0);
  }
  latencies.sort((a, b) => a - b);
  load.push(loadavg()[0]);
  console.log(
    JSON.stringify(
      {
        encoder: encoder.id,
        dimension: encoder.dimension,
        pairs,
        nearestNeighbourAccuracy: +accuracy.toFixed(4),
        correct,
        sentences,
        throughputPerSecondMedian: Math.round(median(rates)),
        throughputRuns: rates.map(Math.round),
        throughputBatch32Median: Math.round(median(rates32)),
        throughputBatch32Runs: rates32.map(Math.round),
        oneRequestMsMedian: +median(latencies).toFixed(2),
        oneRequestMsP90: +latencies[Math.floor(0.9 * (latencies.length - 1))].toFixed(2),
        oneRequestPerSecond: Math.round(1000 / median(latencies)),
        loadAverage: load.map((l) => +l.toFixed(1)),
        misses,
      },
      null,
      2,
    ),
  );
  await encoder.dispose?.();
}

await main();

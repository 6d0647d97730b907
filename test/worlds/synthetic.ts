/**
 * A seeded synthetic tool world for scale benchmarks: `tools` tools described with real English
 * words (so the bundled encoder sees text it knows), Zipf-popular, each with a few preferred
 * successors; `plans` demonstrations of 1–4 calls that follow them, with requests built from the
 * called tools' descriptions. Not a quality benchmark — a cost one.
 */
import { readFileSync } from 'node:fs';
import { chainPlan } from '../../src/core/plans/plan.js';
import { seededRandom } from '../../src/core/base/random.js';
import type { Dataset } from '../../src/core/base/types.js';

/** Draws an index from a cumulative distribution (last entry 1) by halving: the first i with cdf[i] ≥ u. */
export function cdfSampler(cdf: Float64Array, random: () => number): () => number {
  return () => {
    const u = random();
    let lo = 0;
    let hi = cdf.length - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (cdf[mid] < u) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  };
}

export function syntheticDataset(tools: number, plans: number, seed = 0): Dataset {
  const random = seededRandom(seed);
  const vocab = Object.keys(
    (
      JSON.parse(readFileSync(new URL('../../models/dtdr-glove-100d/tokenizer.json', import.meta.url), 'utf8')) as {
        model: { vocab: Record<string, number> };
      }
    ).model.vocab,
  )
    .slice(150, 8150)
    .filter((w) => /^[a-z]{3,}$/.test(w));
  // Zipf(1.1) over indices: popular words and tools first.
  const zipf = (n: number) => {
    const weights = Array.from({ length: n }, (_, i) => 1 / (i + 1) ** 1.1);
    const total = weights.reduce((a, b) => a + b, 0);
    const cdf = new Float64Array(n);
    let acc = 0;
    weights.forEach((w, i) => (cdf[i] = acc += w / total));
    return cdfSampler(cdf, random);
  };
  const word = zipf(vocab.length);
  const tool = zipf(tools);
  const specs = Array.from({ length: tools }, (_, i) => ({
    name: `tool_${i}`,
    description: Array.from({ length: 6 }, () => vocab[word()]).join(' '),
  }));
  const successors = Array.from({ length: tools }, () => Array.from({ length: 3 }, () => tool()));
  const out = Array.from({ length: plans }, (_, p) => {
    const length = 1 + Math.floor(random() * 4);
    const calls = [tool()];
    while (calls.length < length)
      calls.push(random() < 0.8 ? successors[calls[calls.length - 1]][Math.floor(random() * 3)] : tool());
    const query = calls.map((c) => specs[c].description.split(' ').slice(0, 3).join(' ')).join(' and then ');
    return chainPlan(
      `s${p}`,
      query,
      calls.map((c) => specs[c].name),
    );
  });
  return { name: `synthetic-${tools}t-${plans}p`, tools: specs, plans: out };
}

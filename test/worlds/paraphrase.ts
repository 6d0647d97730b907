/**
 * dtdr's paraphrase check of an encoder (test/fixtures/paraphrases.json, pairs of tool-use requests we
 * wrote): for each sentence, is its nearest neighbour by cosine among all the others its partner?
 */
import { readFileSync } from 'node:fs';
import type { Encoder } from '../../src/core/base/encoder.js';

export interface ParaphraseFigures {
  pairs: number;
  sentences: number;
  correct: number;
  accuracy: number;
  /** "sentence  →  its nearest neighbour" for every sentence whose neighbour is not its partner. */
  misses: string[];
}

const dot = (a: Float32Array, b: Float32Array) => a.reduce((s, x, i) => s + x * b[i], 0);

export async function paraphraseAccuracy(encoder: Pick<Encoder, 'embed'>): Promise<ParaphraseFigures> {
  const { pairs } = JSON.parse(readFileSync(new URL('../fixtures/paraphrases.json', import.meta.url), 'utf8')) as {
    pairs: [string, string][];
  };
  const sentences = pairs.flat();
  const vectors = await encoder.embed(sentences);
  let correct = 0;
  const misses: string[] = [];
  sentences.forEach((s, i) => {
    let best = -1;
    let bestScore = -Infinity;
    vectors.forEach((v, j) => {
      if (j === i) return;
      const score = dot(vectors[i], v);
      if (score > bestScore) [best, bestScore] = [j, score];
    });
    if (best === (i ^ 1)) correct++;
    else misses.push(`${s}  →  ${sentences[best]}`);
  });
  return { pairs: pairs.length, sentences: sentences.length, correct, accuracy: correct / sentences.length, misses };
}

/**
 * The lexical index behind DTDR-G's lexical signals, on a hand-checkable tool set: BM25 of the
 * request, the history-aware twin (terms the calls served count less) and order of mention.
 */
import { describe, expect, it } from 'vitest';
import { LexicalIndex } from '../src/core/retrieval/lexical.js';
import { terms } from '../src/core/base/text.js';
import type { ToolSpec } from '../src/core/base/types.js';

const tools: ToolSpec[] = [
  { name: 'ticket_cancel', description: 'cancel a train ticket' },
  { name: 'ticket_book', description: 'book a train ticket' },
  { name: 'weather', description: 'the weather forecast' },
];
const CANCEL = 0;
const BOOK = 1;
const WEATHER = 2;

function score(query: string, called: number[], options: { orderDecay?: number } = {}) {
  const index = new LexicalIndex(tools);
  const plain = new Float32Array(tools.length);
  const served = new Float32Array(tools.length);
  const share = index.score(index.prepare(terms(query)), called, plain, served, options);
  return { plain: Array.from(plain), served: Array.from(served), share };
}

describe('LexicalIndex', () => {
  it('scores the request with BM25: a tool sharing no term scores 0, symmetric tools tie', () => {
    const { plain } = score('cancel my train ticket and book another', []);
    expect(plain[WEATHER]).toBe(0);
    expect(plain[CANCEL]).toBeGreaterThan(0);
    // "cancel" and "book" each match one tool with the same weight: without order they tie
    expect(plain[CANCEL]).toBeCloseTo(plain[BOOK], 6);
  });

  it('with orderDecay, the need the request names first leads the plain scores (the served ones are untouched)', () => {
    const cancelFirst = score('cancel my train ticket and book another', [], { orderDecay: 8 });
    expect(cancelFirst.plain[CANCEL]).toBeGreaterThan(cancelFirst.plain[BOOK]);
    const bookFirst = score('book a train ticket, then cancel the old one', [], { orderDecay: 8 });
    expect(bookFirst.plain[BOOK]).toBeGreaterThan(bookFirst.plain[CANCEL]);
    // the k-th distinct term some tool knows weighs exp(−k/τ): cancel (k = 0), train (1), ticket (2), book (3)
    const one = (term: string, tool: number) => score(term, []).plain[tool];
    const e = (k: number) => Math.exp(-k / 8);
    expect(cancelFirst.plain[CANCEL]).toBeCloseTo(
      one('cancel', CANCEL) + e(1) * one('train', CANCEL) + e(2) * one('ticket', CANCEL),
      5,
    );
    expect(cancelFirst.plain[BOOK]).toBeCloseTo(
      e(1) * one('train', BOOK) + e(2) * one('ticket', BOOK) + e(3) * one('book', BOOK),
      5,
    );
    const unordered = score('cancel my train ticket and book another', []);
    expect(cancelFirst.served).toEqual(unordered.served);
  });

  it('history-aware: terms a called tool matched count less, and it reports the share served', () => {
    const { plain, served, share } = score('cancel my train ticket and book another', [CANCEL]);
    expect(served[BOOK]).toBeGreaterThan(served[CANCEL]);
    expect(plain[BOOK]).toBeCloseTo(plain[CANCEL], 6);
    // "cancel", "train" and "ticket" are served (by the best tool for each); "book" is not
    expect(share).toBeGreaterThan(0.5);
    expect(share).toBeLessThan(1);
  });
});

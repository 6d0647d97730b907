import { describe, expect, it } from 'vitest';
import { scoreStep, summarize } from '../src/core/base/metrics.js';

// labels: 0=a 1=b 2=c 3=d 4=e 5=f 6=END
const labels = ['a', 'b', 'c', 'd', 'e', 'f', 'END'];

describe('retrieval metrics (hand-computed)', () => {
  it('MRR is 1 / rank of the first acceptable label', () => {
    expect(scoreStep([2, 0, 1], labels, ['a'], []).reciprocalRank).toBeCloseTo(1 / 2);
    expect(scoreStep([2, 3, 1, 0], labels, ['a', 'b'], []).reciprocalRank).toBeCloseTo(1 / 3);
    expect(scoreStep([6, 0], labels, ['END'], []).reciprocalRank).toBe(1);
  });

  it('F1@|F*| counts hits in the top k = |F*|', () => {
    // F* = {a, b}; top-2 = c, a → one hit of two: precision = recall = F1 = 0.5
    expect(scoreStep([2, 0, 1], labels, ['a', 'b'], []).f1).toBeCloseTo(0.5);
    expect(scoreStep([1, 0, 2], labels, ['a', 'b'], []).f1).toBe(1);
    expect(scoreStep([2, 3, 0, 1], labels, ['a', 'b'], []).f1).toBe(0);
  });

  it('top-1 and recall@5', () => {
    expect(scoreStep([0, 1], labels, ['a'], []).top1).toBe(1);
    expect(scoreStep([1, 0], labels, ['a'], []).top1).toBe(0);
    expect(scoreStep([1, 2, 3, 4, 0, 5], labels, ['a'], []).recall5).toBe(1);
    expect(scoreStep([1, 2, 3, 4, 5, 0], labels, ['a'], []).recall5).toBe(0);
  });

  it('coverage and set size of the thresholded set', () => {
    const s = scoreStep([0], labels, ['b'], ['a', 'b', 'c']);
    expect(s.covered).toBe(1);
    expect(s.setSize).toBe(3);
    expect(scoreStep([0], labels, ['b'], ['a']).covered).toBe(0);
  });

  it('averages over steps', () => {
    const m = summarize([scoreStep([0, 1], labels, ['a'], ['a']), scoreStep([0, 1], labels, ['b'], ['a', 'b', 'c'])]);
    expect(m.mrr).toBeCloseTo((1 + 0.5) / 2);
    expect(m.top1).toBeCloseTo(0.5);
    expect(m.coverage).toBe(1);
    expect(m.setSize).toBe(2);
    expect(m.steps).toBe(2);
  });
});

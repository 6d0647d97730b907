/**
 * A model trained on the tools alone (no demonstrations) uses the calls made so far sensibly:
 * after a call or two it still ranks by what the request asks for, and on the history-aware
 * steps of the three public datasets it is no worse than BM25 (the real-data part skips, with a
 * message, when ../shared/data is absent).
 */
import { describe, expect, it } from 'vitest';
import { Dtdr } from '../src/core/dtdr.js';
import { demoDataset } from '../src/demo/toolset.js';
import { loadEncoder } from '../src/encoders/node.js';
import { TOOLS_ONLY_DATASETS, toolsOnlyFigures } from './worlds/tools-only.js';
import { hasSharedData, SHARED_DATA } from './helpers.js';

describe('a tools-only model with history (the demo tool set, hand-checked)', () => {
  it('"Email the invoice to Anna" after files_search and contacts_search: email_send first, then END after it', async () => {
    const dtdr = await Dtdr.train({ tools: demoDataset().tools, encoder: await loadEncoder() });
    const query = 'Email the invoice to Anna';
    const first = await dtdr.retrieve(query, []);
    expect(first.candidates[0].tool).toBe('email_send');
    const next = await dtdr.retrieve(query, ['files_search', 'contacts_search']);
    expect(next.candidates[0].tool).toBe('email_send');
    // nothing about restaurants in the request: the old gate put restaurant_book first here
    expect(next.candidates.slice(0, 5).map((c) => c.tool)).not.toContain('restaurant_book');
    // neither called tool is proposed again ahead of the one the request still needs
    expect(next.candidates.findIndex((c) => c.tool === 'files_search' || c.tool === 'contacts_search')).not.toBe(0);
    const done = await dtdr.retrieve(query, ['files_search', 'contacts_search', 'email_send']);
    expect(done.candidates[0].tool).toBe('END');
  });
});

describe.skipIf(!hasSharedData)('tools-only against BM25 on history-aware steps (real data, test plans)', () => {
  for (const name of TOOLS_ONLY_DATASETS) {
    it(`${name}: dtdr-g's MRR on steps with ≥ 1 prior call is at least BM25's`, async () => {
      const f = await toolsOnlyFigures(`${SHARED_DATA}/${name}`);
      expect(f.historySteps).toBeGreaterThan(0);
      expect(f.mrr['dtdr-g'].history).toBeGreaterThanOrEqual(f.mrr.bm25.history);
    }, 120_000);
  }
});

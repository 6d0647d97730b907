/**
 * New tools keep their voice at scale: the added-tool check of added-tools.test.ts with
 * the tool set grown to 2,000 and 16,000 tools. DTDR-G is trained on the demo plans without eight
 * demo tools; then the eight are added with `addTools` together with seeded synthetic tools
 * (test/worlds/synthetic.ts: descriptions of frequent English words, never demonstrated), and each is
 * asked for with its five requests from test/fixtures/added-tool-requests.json (40 requests).
 *
 * What holds, asserted: a set that misses the asked-for tool is never called confident, at either
 * size. The goal (≥ 95% of requests with the tool in the set) is NOT met yet: measured
 * 31 of 40 at 2,000 and 28 of 40 at 16,000 tools with the bundled GloVe encoder (33 and 30 before the
 * added-tool lift was deleted and requests unlike every demonstration got the tools-only set; 31 and 27 before
 * the centred match kept its hub penalty and came first in the added tools' order, centered.ts;
 * 24 and 24 before the added tools were ordered by their best description rank and kept to half
 * the set). Those two changes were chosen on test/fixtures/added-tool-dev-requests.json, not on
 * this batch. The
 * misses are requests that share no word with the description, whose tool the word-average
 * encoder ranks hundreds to thousands deep among the fillers (the tool-retrieval encoder
 * models/dtdr-tool-100d does no better here: 31 and 25). The floors guard against regressions, not the target.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import type { Encoder } from '../src/core/base/encoder.js';
import { loadEncoder } from '../src/encoders/node.js';
import { ADDED_AT_SCALE as ADDED, grownTo, trainWithoutAdded } from './worlds/added-tools.js';

const FIXTURE = JSON.parse(readFileSync(new URL('./fixtures/added-tool-requests.json', import.meta.url), 'utf8')) as {
  requests: Record<string, string[]>;
};

let encoder: Encoder;
let saved: unknown;
beforeAll(async () => {
  encoder = await loadEncoder();
  saved = await trainWithoutAdded(encoder);
}, 120_000);

describe.each([
  [2000, 31],
  [16000, 28],
])('added tools among %i tools', (size, floor) => {
  it('are in the set for most of their requests, and a set that misses one is never confident', async () => {
    const model = await grownTo(saved, encoder, size);
    expect(model.tools.length).toBe(size);
    let asked = 0;
    let inSet = 0;
    for (const name of ADDED) {
      for (const request of FIXTURE.requests[name]) {
        const r = await model.retrieve(request);
        const hit = r.candidates.some((c) => c.tool === name);
        asked++;
        if (hit) inSet++;
        else expect(r.widened, `"${request}" misses ${name} and is called confident`).toBe(true);
      }
    }
    expect(asked).toBe(40);
    expect(inSet).toBeGreaterThanOrEqual(floor);
  }, 120_000);
});

/**
 * A tool added after training keeps its voice. For demo tools in turn: train DTDR-G
 * without it (its plans removed), addTools it, and ask for it in the words users would use (the
 * requests in test/fixtures/added-tool-requests.json, written before any tuning; at least two per
 * tool share no word with its description). The tool is in the candidate set, and a request whose
 * set misses it is never called confident. A few tools keep CI cheap;
 * `npm run check -- added-tools` runs all 27.
 */
import { readFileSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import { Dtdr } from '../src/core/dtdr.js';
import type { Encoder } from '../src/core/base/encoder.js';
import { planTools } from '../src/core/plans/plan.js';
import { DEMO_TOOLS, generateDemoPlans } from '../src/demo/toolset.js';
import { loadEncoder } from '../src/encoders/node.js';

const FIXTURE = JSON.parse(readFileSync(new URL('./fixtures/added-tool-requests.json', import.meta.url), 'utf8')) as {
  requests: Record<string, string[]>;
};
const CHECKED = ['location_current', 'translate_text', 'restaurant_book', 'photos_search'];
const PLANS = generateDemoPlans(600, 1);

let encoder: Encoder;
beforeAll(async () => {
  encoder = await loadEncoder();
});

describe.each(CHECKED)('%s, added after training', (name) => {
  const tool = DEMO_TOOLS.find((t) => t.name === name)!;
  let model: Dtdr;
  beforeAll(async () => {
    model = await Dtdr.train({
      tools: DEMO_TOOLS.filter((t) => t !== tool),
      plans: PLANS.filter((p) => !planTools(p).includes(name)),
      encoder,
      seed: 0,
    });
    await model.addTools([tool]);
  }, 120_000);

  it('is in the candidate set for its requests, and no request that misses it is called confident', async () => {
    const requests = FIXTURE.requests[name];
    expect(requests.length).toBeGreaterThanOrEqual(5);
    let inSet = 0;
    for (const q of requests) {
      const r = await model.retrieve(q);
      const hit = r.candidates.some((c) => c.tool === name);
      if (hit) inSet++;
      else expect(r.widened, `"${q}" misses ${name} and is called confident`).toBe(true);
    }
    expect(inSet / requests.length).toBeGreaterThanOrEqual(0.8);
  });

  it('says why a set leaves the new tool out', async () => {
    for (const q of FIXTURE.requests[name]) {
      const r = await model.retrieve(q);
      if (!r.candidates.some((c) => c.tool === name))
        expect(r.reason).toMatch(/added after training|no demonstrations/);
    }
  });
});

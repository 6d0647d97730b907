/**
 * The `npm start` showcase: each request carries the plan it needs, at least two combine
 * familiar steps in a sequence no generated demonstration has, and the demo reports, per step,
 * whether the needed tool was in the set (it does not follow a wrong top candidate and call the
 * result a plan).
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { Dtdr } from '../src/core/dtdr.js';
import { END } from '../src/core/base/types.js';
import { loadEncoder } from '../src/encoders/node.js';
import { chainPlan, sequenceKey } from '../src/core/plans/plan.js';
import { DEMO_QUERIES, DEMO_SHOWCASE, DEMO_TOOLS, demoDataset } from '../src/demo/toolset.js';

describe('the npm start showcase', () => {
  const demonstrated = new Set(demoDataset().plans.map(sequenceKey));
  const names = new Set(DEMO_TOOLS.map((t) => t.name));

  it('gives every request the plan it needs, in demo tools', () => {
    expect(DEMO_QUERIES).toEqual(DEMO_SHOWCASE.map((s) => s.query));
    for (const { plan } of DEMO_SHOWCASE) {
      expect(plan.length).toBeGreaterThan(0);
      for (const tool of plan) expect(names.has(tool), tool).toBe(true);
    }
  });

  it('has at least two new combinations of familiar steps', () => {
    const novel = DEMO_SHOWCASE.filter(
      ({ query, plan }) => !demonstrated.has(sequenceKey(chainPlan('showcase', query, [...plan]))),
    );
    expect(novel.length).toBeGreaterThanOrEqual(2);
    // Familiar steps: every tool of a new combination is demonstrated somewhere.
    const used = new Set(demoDataset().plans.flatMap((p) => p.nodes.map((n) => n.tool)));
    for (const { plan } of novel) for (const tool of plan) expect(used.has(tool), tool).toBe(true);
  });
});

describe('the npm start showcase, walked on the default method', () => {
  let model: Dtdr;
  beforeAll(async () => {
    const dataset = demoDataset();
    model = await Dtdr.train({ tools: dataset.tools, plans: dataset.plans, encoder: await loadEncoder() });
  }, 120_000);

  it.each(DEMO_SHOWCASE.map((s) => [s.query, s.plan] as const))(
    '"%s": the needed tool is in the set at every step, and no step that misses it is called confident',
    async (query, plan) => {
      const history: string[] = [];
      for (const need of [...plan, END]) {
        const r = await model.retrieve(query, history);
        expect(
          r.candidates.map((c) => c.tool),
          `step ${history.length + 1} needs ${need}`,
        ).toContain(need);
        history.push(need);
      }
    },
  );

  it('is unsure, and says why, where the vegan-restaurant request leaves the demonstrations (texting after a map search)', async () => {
    const r = await model.retrieve('Find a vegan restaurant near me and text the address to Sam', [
      'maps_search_place',
    ]);
    expect(r.widened).toBe(true);
    expect(r.reason).toContain('"text"');
    expect(r.reason).toContain('contacts_search');
    expect(r.candidates.map((c) => c.tool)).toContain('contacts_search');
  });

  it('never names or offers a tool the app removed, even where the request asks for it', async () => {
    const pruned = Dtdr.load(model.toJSON(), await loadEncoder());
    await pruned.removeTools(['contacts_search', 'sms_send']);
    const r = await pruned.retrieve('Find a vegan restaurant near me and text the address to Sam', [
      'maps_search_place',
    ]);
    expect(r.candidates.map((c) => c.tool)).not.toContain('sms_send');
    expect(r.candidates.map((c) => c.tool)).not.toContain('contacts_search');
    expect(r.reason ?? '').not.toMatch(/sms_send|contacts_search/);
  });
});

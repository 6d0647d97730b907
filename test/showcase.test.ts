/**
 * The `npm start` showcase (issue 22): each request carries the plan it needs, at least two combine
 * familiar steps in a sequence no generated demonstration has, and the demo reports, per step,
 * whether the needed tool was in the set (it does not follow a wrong top candidate and call the
 * result a plan).
 */
import { describe, expect, it } from 'vitest';
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
    const novel = DEMO_SHOWCASE.filter(({ query, plan }) => !demonstrated.has(sequenceKey(chainPlan('showcase', query, [...plan]))));
    expect(novel.length).toBeGreaterThanOrEqual(2);
    // Familiar steps: every tool of a new combination is demonstrated somewhere.
    const used = new Set(demoDataset().plans.flatMap((p) => p.nodes.map((n) => n.tool)));
    for (const { plan } of novel) for (const tool of plan) expect(used.has(tool), tool).toBe(true);
  });
});

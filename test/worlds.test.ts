/**
 * The first-day evaluation's worlds and draws (test/worlds/app-life.ts): each world committed
 * under data/worlds/ loads through `readDatasetDir` with the counts its SOURCE.md states and splits
 * 70/30 in `loadWorld`; the "scenes" draw puts the plans of a few request clusters first, in pool
 * order, then the rest.
 */
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Plan } from '../src/core/base/types.js';
import { chainPlan } from '../src/core/plans/plan.js';
import { readDatasetDir } from '../src/data/node.js';
import { wordAxisEncoder } from './helpers.js';
import { loadWorld, REPO_WORLDS, scenesPool, WORLDS_DIR } from './worlds/app-life.js';

describe('the scenes draw', () => {
  const topics = ['weather', 'music', 'travel', 'bank'];
  // 12 plans, the four topics interleaved: weather-0, music-0, travel-0, bank-0, weather-1, …
  const pool: Plan[] = Array.from({ length: 12 }, (_, i) => {
    const topic = topics[i % 4];
    return chainPlan(`${topic}-${Math.floor(i / 4)}`, `please ${topic} now`, [`${topic}_tool`]);
  });
  const topicOf = (p: Plan) => p.id.split('-')[0];
  const encoder = wordAxisEncoder(topics);

  it('puts the plans of the chosen clusters first, in pool order, then the rest in pool order', async () => {
    const { plans, sceneCount } = await scenesPool(pool, encoder, { clusters: 4, scenes: 2, seed: 0 });
    // Every plan once.
    expect([...plans].map((p) => p.id).sort()).toEqual(pool.map((p) => p.id).sort());
    // Two of the four topics, three plans each.
    expect(sceneCount).toBe(6);
    const first = plans.slice(0, sceneCount);
    const chosen = new Set(first.map(topicOf));
    expect(chosen.size).toBe(2);
    expect(plans.slice(sceneCount).some((p) => chosen.has(topicOf(p)))).toBe(false);
    // Pool order within each part.
    const index = (p: Plan) => pool.indexOf(p);
    for (const part of [first, plans.slice(sceneCount)])
      for (let i = 1; i < part.length; i++) expect(index(part[i])).toBeGreaterThan(index(part[i - 1]));
  });

  it('is fixed by its seed', async () => {
    const a = await scenesPool(pool, encoder, { clusters: 4, scenes: 2, seed: 3 });
    const b = await scenesPool(pool, encoder, { clusters: 4, scenes: 2, seed: 3 });
    expect(a.plans.map((p) => p.id)).toEqual(b.plans.map((p) => p.id));
  });

  it('by default has one cluster per ~20 requests, so three scenes are three features of a large pool', async () => {
    // 400 plans over 20 features, interleaved: a fixed 10 clusters would merge features.
    const features = Array.from({ length: 20 }, (_, i) => `feature${i}`);
    const big = Array.from({ length: 400 }, (_, i) =>
      chainPlan(`${features[i % 20]}-${Math.floor(i / 20)}`, `use ${features[i % 20]}`, [`${features[i % 20]}_tool`]),
    );
    const { plans, sceneCount, clusters } = await scenesPool(big, wordAxisEncoder(features));
    expect(clusters).toBe(20);
    expect(sceneCount).toBe(60);
    expect(new Set(plans.slice(0, sceneCount).map(topicOf)).size).toBe(3);
  });

  it('is the pool itself when one scene holds every plan', async () => {
    const { plans, sceneCount } = await scenesPool(pool, encoder, { clusters: 1, scenes: 3 });
    expect(sceneCount).toBe(12);
    expect(plans.map((p) => p.id)).toEqual(pool.map((p) => p.id));
  });
});

/** The counts a world's SOURCE.md states. */
function statedCounts(name: string) {
  const md = readFileSync(join(WORLDS_DIR, name, 'SOURCE.md'), 'utf8');
  const number = (re: RegExp) => {
    const m = re.exec(md);
    if (!m) throw new Error(`${name}/SOURCE.md: no match for ${re}`);
    return m.slice(1).map(Number);
  };
  const [tools] = number(/^- tools: (\d+)/m);
  const [plans] = number(/^- plans: (\d+)/m);
  const [mean, min, max] = number(/^- calls per plan: mean ([\d.]+), min (\d+), max (\d+)/m);
  const bytes = Number(/read by `readDatasetDir`; ([\d,]+) bytes/.exec(md)?.[1].replace(/,/g, ''));
  return { tools, plans, mean, min, max, bytes };
}

describe('the committed worlds', () => {
  for (const name of REPO_WORLDS) {
    it(`${name} loads through readDatasetDir with the counts SOURCE.md states`, () => {
      const stated = statedCounts(name);
      const ds = readDatasetDir(join(WORLDS_DIR, name));
      expect(ds.tools.length).toBe(stated.tools);
      expect(ds.plans.length).toBe(stated.plans);
      const calls = ds.plans.map((p) => p.nodes.length);
      expect((calls.reduce((a, b) => a + b, 0) / calls.length).toFixed(2)).toBe(stated.mean.toFixed(2));
      expect(Math.min(...calls)).toBe(stated.min);
      expect(Math.max(...calls)).toBe(stated.max);
      // At most 1.5 MB of plans and tools.
      const size = ['data.jsonl', 'tool_desc.json'].reduce((s, f) => s + statSync(join(WORLDS_DIR, name, f)).size, 0);
      expect(size).toBe(stated.bytes);
      expect(size).toBeLessThanOrEqual(1_500_000);
      expect(readFileSync(join(WORLDS_DIR, name, 'LICENSE'), 'utf8').length).toBeGreaterThan(500);
    });

    it(`${name}: loadWorld holds out a seeded 30% of its plans`, () => {
      const world = loadWorld(name, '/nonexistent')!;
      const ds = readDatasetDir(join(WORLDS_DIR, name));
      expect(world.test.length).toBe(Math.round(ds.plans.length * 0.3));
      expect(world.pool.length + world.test.length).toBe(ds.plans.length);
      const test = new Set(world.test.map((p) => p.id));
      expect(world.pool.some((p) => test.has(p.id))).toBe(false);
      expect(loadWorld(name, '/nonexistent')!.test.map((p) => p.id)).toEqual(world.test.map((p) => p.id));
    });
  }
});

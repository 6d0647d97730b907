/**
 * A model as an app lives with it: tools come and go for a long time, removed tools come back
 * with new descriptions, and `learn()` is called once per finished run for ever. The model's
 * labels, size and cost stay those of a fresh model with the same tools, and its online state
 * stays bounded, its saved form holding the state forget replays from once where it equals the
 * live state. (The 1,000-cycle and 100,000-call versions: npm run check -- tool-churn and
 * npm run check -- learn-long.)
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { Dtdr, MAX_FORGETTABLE } from '../src/core/dtdr.js';
import { DtdrError } from '../src/core/base/errors.js';
import type { ModelArtifact } from '../src/core/model/artifact.js';
import { withShared } from '../src/core/model/shared-state.js';
import type { Encoder } from '../src/core/base/encoder.js';
import { chainPlan } from '../src/core/plans/plan.js';
import { addSampledScore, MAX_SAMPLED_SCORES } from '../src/core/retrieval/default/score-sample.js';
import { groupThreshold } from '../src/core/retrieval/default/groups.js';
import { seededRandom } from '../src/core/base/random.js';
import type { GatedState } from '../src/core/retrieval/default/index.js';
import { DEMO_TOOLS, generateDemoPlans } from '../src/demo/toolset.js';
import { loadEncoder } from '../src/encoders/node.js';
import '../src/methods.js'; // the paper's methods, as an app that uses them imports them

let encoder: Encoder;
let trained: unknown;
const QUERIES = [
  'Email the quarterly report to Maria',
  'Wake me up at 7',
  'What is the weather in Paris tomorrow?',
  'Play some jazz',
  'Book a table for two tonight',
];
const orderOf = async (model: Dtdr, query: string) => {
  const r = await model.rank(query);
  return Array.from(r.order, (i) => r.labels[i]);
};

beforeAll(async () => {
  encoder = await loadEncoder();
  trained = (await Dtdr.train({ tools: DEMO_TOOLS, plans: generateDemoPlans(600, 5), encoder, seed: 1 })).toJSON();
});

describe('tools added and removed many times', () => {
  it("60 add/remove cycles with new names: labels are the visible tools and END, the file and the rankings are the fresh model's", async () => {
    const fresh = Dtdr.load(trained, encoder);
    const model = Dtdr.load(trained, encoder);
    for (let i = 0; i < 60; i++) {
      const name = `plugin_tool_${i}`;
      await model.addTools([{ name, description: `Plugin number ${i}: look up the status of order ${i}` }]);
      await model.removeTools([name]);
    }
    expect(model.retriever.labels).toEqual([...DEMO_TOOLS.map((t) => t.name), 'END']);
    expect(model.removedTools).toHaveLength(60);
    const size = model.toBinary().length;
    const freshSize = fresh.toBinary().length;
    expect(size).toBeLessThanOrEqual(freshSize * 1.1);
    for (const q of QUERIES) expect(await orderOf(model, q)).toEqual(await orderOf(fresh, q));
    // Saved and loaded, the names it dropped are still refused by adapters.
    const again = Dtdr.load(model.toBinary(), encoder);
    expect(again.removedTools).toContain('plugin_tool_7');
    expect(again.retriever.labels).toEqual(model.retriever.labels);
  });

  it('an added tool that was learned about leaves the labels when removed, and what was learned from it stays in the state; one never demonstrated leaves both; the other tools keep their order', async () => {
    const model = Dtdr.load(trained, encoder);
    await model.addTools([
      { name: 'bank_transfer', description: 'Transfer money to someone' },
      { name: 'stock_quote', description: 'The price of a stock' },
    ]);
    await model.learn([chainPlan('b1', 'send Maria 20 euros', ['contacts_search', 'bank_transfer'])]);
    const before = await orderOf(model, 'Email the quarterly report to Maria');
    await model.removeTools(['bank_transfer', 'stock_quote']);
    expect(model.retriever.labels).toEqual([...DEMO_TOOLS.map((t) => t.name), 'END']);
    const saved = model.toJSON().tools.map((t) => t.name);
    expect(saved).toContain('bank_transfer');
    expect(saved).not.toContain('stock_quote');
    expect(await orderOf(model, 'Email the quarterly report to Maria')).toEqual(
      before.filter((t) => t !== 'bank_transfer' && t !== 'stock_quote'),
    );
    expect(model.removedTools.sort()).toEqual(['bank_transfer', 'stock_quote']);
  });
});

describe('a removed tool added back takes the new description and schema', () => {
  for (const [what, method] of [
    ['DTDR-G, a trained tool', 'dtdr-g'],
    ['DTDR-C, a trained tool', 'dtdr-c'],
  ] as const) {
    it(what, async () => {
      const model =
        method === 'dtdr-g'
          ? Dtdr.load(trained, encoder)
          : await Dtdr.train({ method, tools: DEMO_TOOLS, plans: generateDemoPlans(300, 5), encoder, seed: 1 });
      await model.removeTools(['alarm_set']);
      const parameters = { type: 'object' as const, properties: { at: { type: 'string' as const } }, required: ['at'] };
      await model.addTools([{ name: 'alarm_set', description: 'Schedule a wake-up phone call', parameters }]);
      const spec = model.tools.find((t) => t.name === 'alarm_set');
      expect(spec?.description).toBe('Schedule a wake-up phone call');
      expect(spec?.parameters).toEqual(parameters);
      const saved = Dtdr.load(model.toJSON(), encoder).tools.find((t) => t.name === 'alarm_set');
      expect(saved?.description).toBe('Schedule a wake-up phone call');
    });
  }

  it('an added tool removed and added again', async () => {
    const model = Dtdr.load(trained, encoder);
    await model.addTools([{ name: 'bank_transfer', description: 'old text' }]);
    await model.removeTools(['bank_transfer']);
    await model.addTools([{ name: 'bank_transfer', description: 'Transfer money from the bank account to someone' }]);
    expect(model.tools.find((t) => t.name === 'bank_transfer')?.description).toBe(
      'Transfer money from the bank account to someone',
    );
    expect(model.removedTools).toEqual([]);
    expect((await model.retrieve('Transfer 20 euros to Maria from my bank account')).ranking.labels).toContain(
      'bank_transfer',
    );
  });
});

describe('learning once per run, for a long time', () => {
  it('1,200 single-plan learn() calls: every score list and the forget window stay bounded; the newest plans can be forgotten', async () => {
    const model = Dtdr.load(trained, encoder);
    // Repeats of the demonstrated sequences, and as many new combinations (only theirs are held-out scores).
    const random = seededRandom(11);
    const pick = () => DEMO_TOOLS[Math.floor(random() * DEMO_TOOLS.length)].name;
    const stream = generateDemoPlans(600, 11).flatMap((plan, i) => {
      const tools = [pick(), pick(), pick()];
      return [plan, chainPlan(`new-${i}`, tools.map((t) => t.replace(/_/g, ' ')).join(' then '), tools)];
    });
    for (const plan of stream) await model.learn([plan]);
    const state = model.toJSON().state as GatedState;
    for (const list of [
      state.calibration!.confident,
      state.calibration!.unsure,
      ...Object.values(state.groups!.scores),
    ])
      expect(list.length).toBeLessThanOrEqual(MAX_SAMPLED_SCORES);
    const counted = state.scoreCounts!;
    expect((counted.confident ?? 0) + (counted.unsure ?? 0)).toBeGreaterThan(1200);
    expect(model.learnedCount).toBeLessThanOrEqual(MAX_FORGETTABLE);
    expect(await model.forget([stream[1199].id])).toBe(1);
  }, 120_000);

  it('the state forget replays from is saved once where it equals the live state (the head, its replay sample): the file loads and forgets as a full copy does', async () => {
    const model = Dtdr.load(trained, encoder);
    const stream = generateDemoPlans(40, 12);
    for (const plan of stream) await model.learn([plan]);
    const json = JSON.parse(JSON.stringify(model.toJSON())) as ModelArtifact;
    const window = json.learning!;
    expect(window.same).toEqual(expect.arrayContaining(['state.evidence.replay', 'state.evidence.head']));
    expect((window.before.state as GatedState).evidence).not.toHaveProperty('replay');
    // The same model with a full copy (as files written before it hold) loads and forgets alike.
    const full = { ...json, learning: { plans: window.plans, before: withShared(window.before, json, window.same) } };
    expect(JSON.stringify(full).length).toBeGreaterThan(JSON.stringify(json).length);
    const [a, b] = [Dtdr.load(model.toBinary(), encoder), Dtdr.load(full, encoder)];
    expect(await a.forget([stream[7].id])).toBe(1);
    expect(await b.forget([stream[7].id])).toBe(1);
    expect(JSON.stringify(a.toJSON().state)).toBe(JSON.stringify(b.toJSON().state));
    for (const same of ['state.theta', ['state.theta'], ['state.evidence.replay', 'state.evidence.replay'], [7]]) {
      const e = (() => {
        try {
          Dtdr.load({ ...json, learning: { ...window, same } }, encoder);
        } catch (x) {
          return x;
        }
      })();
      expect(DtdrError.isInstance(e) && e.field).toMatch(/^learning\.same/);
    }
  }, 120_000);

  it("the score sample is a bounded, deterministic, uniform sample: its conformal threshold is the full list's within 0.005 in quantile", () => {
    const random = seededRandom(3);
    const all = Array.from({ length: 100_000 }, () => random() ** 0.2);
    const sample: number[] = [];
    let seen = 0;
    for (const x of all) seen = addSampledScore(sample, seen, x, 'group:test');
    expect(sample).toHaveLength(MAX_SAMPLED_SCORES);
    expect(seen).toBe(100_000);
    const again: number[] = [];
    all.reduce((n, x) => addSampledScore(again, n, x, 'group:test'), 0);
    expect(again).toEqual(sample);
    const threshold = groupThreshold(sample, 0.95);
    // The share of all scores at or above the sample's threshold: the coverage it gives.
    const covered = all.filter((x) => x >= threshold).length / all.length;
    expect(Math.abs(covered - 0.95)).toBeLessThan(0.005);
  });
});

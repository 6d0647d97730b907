/**
 * The app's first day: a model trained on few, skewed demonstrations is never worse than its tools
 * alone and is not confidently wrong about what its runs never showed. Hand-checked fixtures for
 * the two mechanisms (evidence-weighted shrinkage toward the descriptions, conformal novelty of a
 * request), the learn path (a tools-only model that learns its first runs is the model trained on
 * them), an 8-tool app with its first 20 runs, and the demo world and UltraTool with skewed runs.
 */
import { readFileSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import type { Encoder } from '../src/core/base/encoder.js';
import { summarize } from '../src/core/base/metrics.js';
import { seededRandom, shuffleInPlace } from '../src/core/base/random.js';
import { END, type Plan, type ToolSpec } from '../src/core/base/types.js';
import { Dtdr } from '../src/core/dtdr.js';
import { parsePlans } from '../src/core/plans/dataset.js';
import { chainPlan, planSteps } from '../src/core/plans/plan.js';
import { fitNovelty, learnNovelty, noveltyPValue, unlikeEvery } from '../src/core/retrieval/default/novelty.js';
import { deficits, shrinkInPlace, unseenKeep, unseenShare } from '../src/core/retrieval/default/shrinkage.js';
import { readDatasetDir } from '../src/data/node.js';
import { demoDataset } from '../src/demo/toolset.js';
import { loadEncoder } from '../src/encoders/node.js';
import { scenesPool, scoreRetrievals, skewedPool } from './worlds/app-life.js';
import { hasSharedData, SHARED_DATA } from './helpers.js';

describe('shrinkage toward the descriptions', () => {
  it('gives a tool no demonstration used its share of the descriptions, by hand', () => {
    // Tools 0 and 1 demonstrated, tool 2 never; label 3 is END. The learned model buries tool 2.
    const p = [0.7, 0.2, 0.0, 0.1];
    const descriptions = [0.2, 0.2, 0.4, 0.2];
    shrinkInPlace(p, descriptions, deficits([5, 1, 0, 0]), 4, 3, 0.5);
    // END keeps its learned 0.1. Within the tools (0.9 of the mass): tool 2 keeps half of its
    // description share 0.4 / 0.8; tools 0 and 1 share the descriptions' mass on demonstrated
    // tools and half of tool 2's (0.75) in the learned proportions 0.7 : 0.2.
    expect(p[3]).toBeCloseTo(0.1, 12);
    expect(p[2]).toBeCloseTo(0.9 * 0.5 * 0.5, 12);
    expect(p[0]).toBeCloseTo(0.9 * 0.75 * (0.7 / 0.9), 12);
    expect(p[1]).toBeCloseTo(0.9 * 0.75 * (0.2 / 0.9), 12);
    expect(p.reduce((a, b) => a + b, 0)).toBeCloseTo(1, 12);
  });

  it('changes nothing where every tool has demonstrations', () => {
    const p = [0.6, 0.3, 0.1];
    shrinkInPlace(p, [0.1, 0.1, 0.8], deficits([3, 2, 0]), 3, 2, 0.9);
    expect(p.map((v) => +v.toFixed(12))).toEqual([0.6, 0.3, 0.1]);
  });

  it('estimates the chance of a never-demonstrated tool by Good–Turing, and keeps all of it for a novel request', () => {
    // Two tools used once among four tool steps (END aside): 2 / 4.
    expect(unseenShare([1, 1, 2, 0, 40], 5, 4)).toBe(0.5);
    expect(unseenShare([0, 0, 0], 3, 2)).toBe(1);
    expect(unseenKeep(0.1, 1, 0.05)).toBeCloseTo(0.1, 12);
    expect(unseenKeep(0.1, 0.025, 0.05)).toBeCloseTo(0.55, 12);
    expect(unseenKeep(0.1, 0, 0.05)).toBe(1);
  });
});

describe('conformal novelty of a request', () => {
  const unit = (v: number[]) => {
    const n = Math.hypot(...v);
    return Float32Array.from(v, (x) => x / n);
  };
  // 20 requests near axis 0, spread a little along axes 1 and 2.
  const near = Array.from({ length: 20 }, (_, i) => unit([1, 0.05 * (i % 5), 0.04 * Math.floor(i / 5)]));

  it('gives a request farther than every demonstration the smallest p-value, one among them a large one', () => {
    const model = fitNovelty(near, 3);
    expect(noveltyPValue(model, unit([0, 1, 0]))).toBeCloseTo(1 / 21, 12);
    expect(noveltyPValue(model, near[7])).toBeGreaterThan(0.5);
  });

  it('answers exactly below the asked level and "at least that" above it', () => {
    const model = fitNovelty(near, 3);
    const queries = [unit([0, 1, 0]), unit([1, 1, 0]), unit([1, 0.3, 0]), ...near];
    for (const q of queries) {
      const exact = noveltyPValue(model, q);
      const bounded = noveltyPValue(model, q, 0.2);
      if (exact < 0.2) expect(bounded).toBe(exact);
      else expect(bounded).toBeGreaterThanOrEqual(0.2);
    }
  });

  it('keeps a bounded sample as demonstrations arrive', () => {
    const model = fitNovelty(near, 3);
    const more = Array.from({ length: 1000 }, (_, i) => unit([1, 0.001 * i, 0.3]));
    for (let i = 0; i < 1000; i += 100) learnNovelty(model, more.slice(i, i + 100));
    expect(model.count).toBe(128);
    expect(model.seen).toBe(1020);
  });

  it('keeps a request once however often it comes: a new wording is not "unlike" requests that only repeat', () => {
    // Kept twice, each request would have a twin at similarity 1 and every new wording would get the smallest p-value.
    const model = fitNovelty([...near, ...near, ...near], 3);
    expect(model.count).toBe(20);
    expect(model.seen).toBe(20);
    learnNovelty(model, near);
    expect(model.seen).toBe(20);
    const between = unit([1, 0.07, 0.02]);
    expect(noveltyPValue(model, between)).toBeGreaterThan(0.2);
    expect(unlikeEvery(model, noveltyPValue(model, between))).toBe(false);
  });

  it('calls a request unlike every demonstration only where that is rarer than 5% among exchangeable requests', () => {
    const model = fitNovelty(near, 3);
    const far = unit([0, 1, 0]);
    // 20 kept: the smallest p-value is 1/21 < 0.05.
    expect(unlikeEvery(model, noveltyPValue(model, far))).toBe(true);
    expect(near.some((q) => unlikeEvery(model, noveltyPValue(model, q)))).toBe(false);
    // 19 kept: farther than all of them happens to 1 exchangeable request in 20; not flagged.
    const fewer = fitNovelty(near.slice(0, 19), 3);
    expect(unlikeEvery(fewer, noveltyPValue(fewer, far))).toBe(false);
  });
});

let encoder: Encoder;
beforeAll(async () => {
  encoder = await loadEncoder();
});

describe('a model that starts from its tools and learns its first runs', () => {
  it('is the model trained on the same runs: same probabilities, same confidence', async () => {
    const demo = demoDataset(60, 3);
    const learning = await Dtdr.train({ tools: demo.tools, encoder });
    for (let i = 0; i < 40; i += 10) await learning.learn(demo.plans.slice(i, i + 10));
    const trained = await Dtdr.train({ tools: demo.tools, plans: demo.plans.slice(0, 40), encoder });
    for (const plan of demo.plans.slice(40, 50)) {
      for (const step of planSteps(plan)) {
        const [a, b] = [await learning.rank(step.query, step.history), await trained.rank(step.query, step.history)];
        expect(Array.from(a.probabilities)).toEqual(Array.from(b.probabilities));
        expect(a.confident).toBe(b.confident);
      }
    }
    // Saved and loaded, it still knows its runs and refits no sooner.
    const back = Dtdr.load(learning.toJSON(), encoder);
    expect(back.learnedCount).toBe(40);
  });
});

describe('an 8-tool home app with its first 20 runs', () => {
  const fixture = JSON.parse(readFileSync(new URL('./fixtures/home-app.json', import.meta.url), 'utf8')) as {
    tools: ToolSpec[];
    demonstrations: { query: string; tools: string[] }[];
    requests: { query: string; plan: string[] }[];
    added: { tool: ToolSpec; asking: { query: string; plan: string[] }[] };
  };
  const demonstrated = new Map<string, number>();
  for (const d of fixture.demonstrations) for (const t of d.tools) demonstrated.set(t, (demonstrated.get(t) ?? 0) + 1);
  const steps = (list: { query: string; plan: string[] }[]) =>
    list.flatMap((r, i) => planSteps(chainPlan(`r${i}`, r.query, r.plan)));

  for (const path of ['train', 'learn'] as const) {
    it(`${path}: no confident step is wrong, sets hold the needed tool in ≥ 90% of steps, and every reason's counts are true`, async () => {
      const model =
        path === 'train'
          ? await Dtdr.train({ tools: fixture.tools, plans: fixture.demonstrations, encoder })
          : await Dtdr.train({ tools: fixture.tools, encoder });
      if (path === 'learn') for (let i = 0; i < 20; i += 5) await model.learn(fixture.demonstrations.slice(i, i + 5));
      let covered = 0;
      const all = steps(fixture.requests);
      for (const step of all) {
        const r = await model.retrieve(step.query, step.history);
        const ok = r.candidates.some((c) => step.acceptable.includes(c.tool));
        covered += +ok;
        if (r.confident)
          expect(ok, `"${step.query}" after [${step.history.join(', ')}] is confident and wrong`).toBe(true);
        // "the top tool has few demonstrations (n)" names the top tool's demonstrated calls.
        const few = /the top tool has few demonstrations \((\d+)\)/.exec(r.reason ?? '');
        if (few) expect(Number(few[1])).toBe(demonstrated.get(r.ranking.labels[r.ranking.order[0]]) ?? 0);
        for (const named of (r.reason ?? '').matchAll(/"(\w+)" (?:matches|was added)[^;]*no demonstrations yet/g))
          expect(demonstrated.has(named[1]), r.reason).toBe(false);
      }
      expect(covered / all.length).toBeGreaterThanOrEqual(0.9);
    });
  }

  /** The share of `list`'s steps whose set holds `tool`. */
  const joinedShare = async (model: Dtdr, tool: string, list: { query: string; plan: string[] }[]) => {
    const all = steps(list);
    let joined = 0;
    for (const step of all) {
      const r = await model.retrieve(step.query, step.history);
      if (r.candidates.some((c) => c.tool === tool)) joined++;
    }
    return joined / all.length;
  };
  const vacuum = fixture.added.tool;

  // Before the threshold passed it over, it joined 49 of these 54 steps' sets (sets there hold nearly
  // every tool); its description alone still brings it where the bundled encoder matches it ("Dim the
  // bedroom lights": "room").
  it('a tool added later stays out of most sets of requests that do not ask for it', async () => {
    const model = await Dtdr.train({ tools: fixture.tools, plans: fixture.demonstrations, encoder });
    await model.addTools([vacuum]);
    expect(await joinedShare(model, vacuum.name, fixture.requests)).toBeLessThanOrEqual(0.3);
  });

  it('…and so after another tool is removed: the view maps the labels it passes over', async () => {
    const model = await Dtdr.train({ tools: fixture.tools, plans: fixture.demonstrations, encoder });
    await model.addTools([vacuum]);
    await model.removeTools(['calendar_list']);
    const others = fixture.requests.filter((r) => !r.plan.includes('calendar_list'));
    // 0.34 measured (0.195 before the gate's prior, ExperimentalGatedSettings.priorSteps): it joins sets of 5 of the
    // 9 labels left by its probability, where the threshold speaks for it; a broken view joined 49 of 54 (0.91).
    expect(await joinedShare(model, vacuum.name, others)).toBeLessThanOrEqual(0.35);
    // END stays offered where the plan is done.
    for (const step of steps(others).filter((s) => s.acceptable.includes(END))) {
      const r = await model.retrieve(step.query, step.history);
      expect(
        r.candidates.some((c) => c.tool === END),
        `"${step.query}" after [${step.history.join(', ')}]`,
      ).toBe(true);
    }
  });

  it('…and so in a model that started from its tools, after it refits with the added tool among its tools', async () => {
    const model = await Dtdr.train({ tools: fixture.tools, encoder });
    for (let i = 0; i < 20; i += 5) await model.learn(fixture.demonstrations.slice(i, i + 5));
    await model.addTools([vacuum]);
    // Two more runs: 22 ≥ 1.1 × 20, a refit on every tool, the added one no longer marked as added.
    await model.learn(fixture.demonstrations.slice(0, 2).map((d, i) => ({ ...d, id: `again-${i}` })));
    expect(await joinedShare(model, vacuum.name, fixture.requests)).toBeLessThanOrEqual(0.3);
  });

  it('offers a tool added later where the request asks for it, by its description alone', async () => {
    const model = await Dtdr.train({ tools: fixture.tools, plans: fixture.demonstrations, encoder });
    await model.addTools([fixture.added.tool]);
    for (const step of steps(fixture.added.asking).filter((s) => s.history.length === 0)) {
      const r = await model.retrieve(step.query, step.history);
      expect(r.candidates[0].tool, step.query).toBe(fixture.added.tool.name);
    }
  });
});

/** MRR, coverage and confident-miss of a model trained on `plans`, and of the tools alone, on `test`. */
async function againstToolsAlone(tools: ToolSpec[], plans: Plan[], test: Plan[]) {
  const trained = summarize(await scoreRetrievals(await Dtdr.train({ tools, plans, encoder }), test));
  const alone = summarize(await scoreRetrievals(await Dtdr.train({ tools, encoder }), test));
  return { trained, alone };
}

describe('skewed first runs: the demo world', () => {
  const demo = demoDataset();
  const test = parsePlans(readFileSync(new URL('./fixtures/demo-compositional.jsonl', import.meta.url), 'utf8'));

  it('a model trained on 300 runs of three features ranks the hand-written requests no worse than the tools alone', async () => {
    const { trained, alone } = await againstToolsAlone(demo.tools, skewedPool(demo.plans).slice(0, 300), test);
    expect(trained.mrr).toBeGreaterThanOrEqual(alone.mrr - 0.02);
    // Its runs call under half the tools: it is never confident (the next test), so no confident step can miss.
  });

  it("after 300 runs of three features (a slice: never confident), first steps' sets hold as many of the request's tools as the tools alone's", async () => {
    // Such a model has the held-out steps for thresholds, but they do not count: its first steps fill as a first
    // day's do. Its threshold's sets alone held 0.685 of the plans' tools, the tools alone's 0.933.
    const trained = await Dtdr.train({ tools: demo.tools, plans: skewedPool(demo.plans).slice(0, 300), encoder });
    const alone = await Dtdr.train({ tools: demo.tools, encoder });
    const recall = async (model: Dtdr, options = {}) => {
      let sum = 0;
      for (const plan of test) {
        const r = await model.retrieve(plan.query, [], options);
        // Unsure, and claiming no coverage: neither the slice's held-out steps nor the tools alone speak for the step.
        expect([r.confident, r.target]).toEqual([false, undefined]);
        const tools = new Set(plan.nodes.map((n) => n.tool));
        sum += [...tools].filter((t) => r.candidates.some((c) => c.tool === t)).length / tools.size;
      }
      return sum / test.length;
    };
    const [filled, unfilled, toolsAlone] = [
      await recall(trained),
      await recall(trained, { fillFirstSteps: false }),
      await recall(alone),
    ];
    expect(filled).toBeGreaterThanOrEqual(toolsAlone);
    expect(unfilled).toBeLessThan(toolsAlone - 0.1);
    // Later steps keep their threshold's sets.
    const [first, second] = planSteps(test.find((p) => p.nodes.length > 1)!);
    expect((await trained.retrieve(first.query, [])).ranking.set?.firstDay).toBe(true);
    expect((await trained.retrieve(second.query, second.history)).ranking.set?.firstDay).toBeUndefined();
  });

  for (const n of [30, 100])
    it(`a model trained on the first ${n} runs of three scenes ranks the hand-written requests no worse than the tools alone`, async () => {
      // After a first call from one scene, such runs predicted the call they memorised, not the one the rest of
      // the request asked for: 0.604 and 0.600 against 0.636 before the gate's prior held what the runs teach.
      const scenes = (await scenesPool(demo.plans, encoder)).plans;
      const { trained, alone } = await againstToolsAlone(demo.tools, scenes.slice(0, n), test);
      expect(trained.mrr).toBeGreaterThanOrEqual(alone.mrr - 0.02);
    });

  it("after the first 30 runs of three scenes, first steps' sets hold as many of the request's tools as the tools alone's", async () => {
    // That model has too few held-out steps for a threshold: its unsure sets widen to 95% of the probability, and
    // the cap (12) stops them short. Such a set keeps the learned ranking's first 8, then the descriptions' favourites;
    // the learned top 12 alone (keepLearned: 1) held fewer of the plans' tools than the tools alone's sets.
    const scenes = (await scenesPool(demo.plans, encoder)).plans;
    const trained = await Dtdr.train({ tools: demo.tools, plans: scenes.slice(0, 30), encoder });
    const alone = await Dtdr.train({ tools: demo.tools, encoder });
    let widenedCapped = 0;
    const recall = async (model: Dtdr, options = {}) => {
      let sum = 0;
      for (const plan of test) {
        const r = await model.retrieve(plan.query, [], options);
        // The path under test (counted on the trained model's default sets): no threshold, the widening capped and filled.
        const underTest = model === trained && Object.keys(options).length === 0;
        if (
          underTest &&
          r.ranking.set?.threshold === 0 &&
          /capped at 12 tools, the learned ranking's first 8/.test(r.reason ?? '')
        )
          widenedCapped++;
        const tools = new Set(plan.nodes.map((n) => n.tool));
        sum += [...tools].filter((t) => r.candidates.some((c) => c.tool === t)).length / tools.size;
      }
      return sum / test.length;
    };
    const [filled, learnedOnly, toolsAlone] = [
      await recall(trained),
      await recall(trained, { keepLearned: 1 }),
      await recall(alone),
    ];
    expect(filled).toBeGreaterThanOrEqual(toolsAlone);
    expect(filled).toBeGreaterThan(learnedOnly);
    expect(widenedCapped).toBeGreaterThanOrEqual(10);
  });

  it("a first day's first step offers the request's later tools; a later step, or a model with the held-out steps to be confident, does not", async () => {
    const runs = shuffleInPlace([...demo.plans], seededRandom(1000));
    const firstDay = await Dtdr.train({ tools: demo.tools, plans: runs.slice(0, 30), encoder });
    const grown = await Dtdr.train({ tools: demo.tools, plans: runs.slice(0, 1000), encoder });
    let filled = 0;
    for (const plan of test) {
      const [first, second] = planSteps(plan);
      const r = await firstDay.retrieve(first.query, []);
      if (r.ranking.set?.firstDay) {
        // Unsure, and the set's free places (up to 12, under half of the 28 labels) went to the favourites.
        expect(r.confident).toBe(false);
        const plain = await firstDay.retrieve(first.query, [], { fillFirstSteps: false });
        expect(r.candidates.length).toBeGreaterThanOrEqual(plain.candidates.length);
        expect(r.candidates.length).toBeLessThanOrEqual(12);
        for (const c of plain.candidates) expect(r.candidates.map((x) => x.tool)).toContain(c.tool);
        // What joined are tools: never END, never a tool at probability 0.
        const joined = r.candidates.filter((c) => !plain.candidates.some((p) => p.tool === c.tool));
        for (const c of joined) expect(c.tool === END || c.probability === 0, c.tool).toBe(false);
        if (r.candidates.length > plain.candidates.length) {
          filled++;
          expect(r.reason).toMatch(/of the descriptions' favourites join for the request's later calls/);
        }
      }
      if (second) expect((await firstDay.retrieve(second.query, second.history)).ranking.set?.firstDay).toBeUndefined();
      expect((await grown.retrieve(first.query, [])).ranking.set?.firstDay).toBeUndefined();
    }
    // Most of the 48 requests' first steps when written (the others: unlike every run, the tools-only answer).
    expect(filled).toBeGreaterThanOrEqual(20);
  });

  it('a model trained on 100 runs of three features is confident only where it is right (its runs, a slice, make it never confident)', async () => {
    const { trained } = await againstToolsAlone(demo.tools, skewedPool(demo.plans).slice(0, 100), test);
    expect(trained.confidentMissRate).toBe(0);
  });
});

describe.skipIf(!hasSharedData)('skewed and random first runs: UltraTool (real data)', () => {
  let tools: ToolSpec[];
  let pool: Plan[];
  let test: Plan[];
  beforeAll(() => {
    const ut = readDatasetDir(`${SHARED_DATA}/ultratool`);
    const official = new Set(ut.testIds ?? []);
    // Held out from the training plans, as eval:app-life does; the official test plans stay untouched.
    const train = shuffleInPlace(
      ut.plans.filter((p) => !official.has(p.id)),
      seededRandom(7919),
    );
    [tools, test, pool] = [ut.tools, train.slice(0, 500), train.slice(500)];
  });

  it('300 runs of its three most common first tools: no worse than the tools alone, confident-miss ≤ 0.05', async () => {
    const { trained, alone } = await againstToolsAlone(tools, skewedPool(pool).slice(0, 300), test);
    expect(trained.mrr).toBeGreaterThanOrEqual(alone.mrr - 0.02);
    expect(trained.confidentMissRate).toBeLessThanOrEqual(0.05);
  });

  it('every run of its three most common first tools (586): confident-miss ≤ 0.05', async () => {
    // They call under a fifth of the tools: the rules that speak for undemonstrated tools speak
    // however many runs there are (before, 22 confident steps missed: 0.084).
    const trained = summarize(
      await scoreRetrievals(await Dtdr.train({ tools, plans: skewedPool(pool), encoder }), test),
    );
    expect(trained.confidentMissRate).toBeLessThanOrEqual(0.05);
  });

  it('300 random runs: confident on ≥ 40% of steps with confident-miss ≤ 0.05', async () => {
    // Measured 44% at 0.027 (45% with the deleted description-peers rule, which let a
    // never-demonstrated tool described as well as the best join a confident set).
    const plans = shuffleInPlace([...pool], seededRandom(1000)).slice(0, 300);
    const trained = summarize(await scoreRetrievals(await Dtdr.train({ tools, plans, encoder }), test));
    expect(1 - trained.widenedRate).toBeGreaterThanOrEqual(0.4);
    expect(trained.confidentMissRate).toBeLessThanOrEqual(0.05);
  });

  it('30 random runs: the sets hold the needed tool in ≥ 83% of steps', async () => {
    // Below 40 runs each half's held-out steps are scored by a gate fitted on the other half; a gate
    // fitted on the steps it scored made the thresholds too high (81%).
    const plans = shuffleInPlace([...pool], seededRandom(1000)).slice(0, 30);
    const trained = summarize(await scoreRetrievals(await Dtdr.train({ tools, plans, encoder }), test));
    expect(trained.coverage).toBeGreaterThanOrEqual(0.83);
  });
});

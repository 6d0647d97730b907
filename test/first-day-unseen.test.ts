/**
 * The first day on worlds its rules were never designed on (issue 46): a request unlike every
 * demonstration gets exactly the answer of a model trained on the tools alone, and a small app's
 * sets prune, saying what sets of that size held on held-out steps.
 *
 * The worlds: API-Bank level 3 (data/worlds/api-bank, committed: 391 tools, most called by one
 * request) with its first 30 demonstrations drawn from a few scenes, as an app's first users try a
 * few features; and a 10-tool recipe app written for this test (test/fixtures/recipe-app.json: 26
 * demonstrations, 45 requests in users' own words that no demonstration repeats). And the held-out
 * benchmark's measure, the first step of requests that need two tools or more, on the four worlds
 * converted into data/worlds.
 */
import { readFileSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import { Dtdr } from '../src/core/dtdr.js';
import { expectedCalibrationError } from '../src/core/base/metrics.js';
import { END, type Plan, type ToolSpec } from '../src/core/base/types.js';
import { chainPlan, planSteps } from '../src/core/plans/plan.js';
import { NOVEL_CAUSE } from '../src/core/retrieval/default/calibrate-step.js';
import { selectCandidates } from '../src/core/selection/select.js';
import type { Ranking } from '../src/core/retrieval/types.js';
import { loadEncoder } from '../src/encoders/node.js';
import type { Encoder } from '../src/core/base/encoder.js';
import { firstDayDraws, loadWorld, REPO_WORLDS, scenesPool } from './worlds/app-life.js';
import { firstSteps, scoreFirstSteps, scoreFirstStepsEach } from './worlds/first-step.js';

let encoder: Encoder;
beforeAll(async () => {
  encoder = await loadEncoder();
});

describe('API-Bank (never used to design a rule), 30 demonstrations from a few scenes', () => {
  it('answers every request unlike the demonstrations exactly as a tools-only model does: ranking, set, reason', async () => {
    const world = loadWorld('api-bank', '../shared/data')!;
    const plans = (await scenesPool(world.pool, encoder)).plans.slice(0, 30);
    const trained = await Dtdr.train({ tools: world.tools, plans, encoder });
    const toolsOnly = await Dtdr.train({ tools: world.tools, encoder });
    let flagged = 0;
    for (const plan of world.test) {
      // The first step, and the second with the right first call made.
      const steps = planSteps(plan).slice(0, 2);
      const first = await trained.retrieve(steps[0].query, []);
      if (!first.reason?.startsWith(NOVEL_CAUSE)) continue;
      flagged++;
      for (const step of steps) {
        const [a, b] = [
          await trained.retrieve(step.query, step.history),
          await toolsOnly.retrieve(step.query, step.history),
        ];
        expect(a.reason).toBe(NOVEL_CAUSE);
        expect(a.confident).toBe(false);
        expect(a.ranking.group).toBe('tools-only');
        expect(Array.from(a.ranking.order)).toEqual(Array.from(b.ranking.order));
        expect(Array.from(a.ranking.probabilities)).toEqual(
          Array.from(b.ranking.probabilities).map((p) => expect.closeTo(p, 9)),
        );
        expect(a.candidates.map((c) => c.tool)).toEqual(b.candidates.map((c) => c.tool));
      }
    }
    // 41 of the 97 test requests when written: the check above runs on many requests, not a handful.
    expect(flagged).toBeGreaterThanOrEqual(25);
    // A request like the demonstrations' is not: the same model on its own demonstration requests.
    let own = 0;
    for (const plan of plans)
      own += +((await trained.retrieve(plan.query, [])).reason?.startsWith(NOVEL_CAUSE) ?? false);
    expect(own).toBe(0);
  }, 120_000);

  it('claims no coverage where its held-out steps do not speak for the request (its runs call under half the tools)', async () => {
    const world = loadWorld('api-bank', '../shared/data')!;
    const plans = (await scenesPool(world.pool, encoder)).plans.slice(0, 30);
    const trained = await Dtdr.train({ tools: world.tools, plans, encoder });
    let apart = 0;
    for (const plan of world.test)
      for (const step of planSteps(plan)) {
        const r = await trained.retrieve(step.query, step.history);
        expect(r.confident).toBe(false);
        expect(r.target, r.reason).toBeUndefined();
        expect(r.reason).not.toMatch(/right tool in \d+%/);
        if (!r.reason?.includes('their held-out steps do not speak for other requests')) continue;
        apart++;
        expect(r.ranking.set?.noClaim).toBe(true);
      }
    // 134 of its 227 test steps when written: each has a held-out threshold and no claim.
    expect(apart).toBeGreaterThanOrEqual(50);
  }, 120_000);
});

describe("the held-out benchmark's first step, on the worlds of data/worlds (MetaTool, NESTFUL, API-Bank, τ-retail)", () => {
  it("ranks the first needed tool of a request needing two tools or more within 0.02 of the tools alone after 30 and 100 demonstrations of every draw, and where no step is confident holds as many of the plan's tools", async () => {
    let points = 0;
    let filled = 0;
    for (const name of REPO_WORLDS) {
      const world = loadWorld(name, '../shared/data')!;
      const steps = firstSteps(world.test);
      expect(steps.length, name).toBeGreaterThanOrEqual(25);
      const alone = await scoreFirstSteps(await Dtdr.train({ tools: world.tools, encoder }), steps);
      const draws = await firstDayDraws(world.pool, encoder);
      for (const draw of ['random', 'skewed', 'scenes'] as const)
        for (const n of [30, 100]) {
          if (n > draws[draw].length) continue;
          const plans = draws[draw].slice(0, n);
          const model = await Dtdr.train({ tools: world.tools, plans, encoder });
          const [learned, unfilled] = await scoreFirstStepsEach(model, steps, [undefined, { fillFirstSteps: false }]);
          const point = `${name}, ${draw}, ${n} demonstrations`;
          expect(learned.mrr, point).toBeGreaterThanOrEqual(alone.mrr - 0.02);
          points++;
          // The recall line, where no step is confident and a first day's set may grow to 12 (under half the labels:
          // τ-retail's 16 tools cap it at 8, where the tools alone's sets hold 10.6 on average).
          if (learned.confident > 0 || world.tools.length < 24) continue;
          expect(learned.planRecall, point).toBeGreaterThanOrEqual(alone.planRecall);
          expect(learned.frontierRecall, point).toBeGreaterThanOrEqual(alone.frontierRecall);
          filled += +(unfilled.planRecall < alone.planRecall || unfilled.frontierRecall < alone.frontierRecall);
        }
    }
    // 20 points when written (NESTFUL and API-Bank have no skewed pool of 30).
    expect(points).toBeGreaterThanOrEqual(20);
    // Without the first day's fill, 3 of them fell short of the tools alone's recall when written.
    expect(filled).toBeGreaterThanOrEqual(1);
  }, 300_000);

  it("holds as many of a plan's tools as the tools alone where the cap cuts MetaTool's first sets short (filled with the descriptions' favourites), and would not without the fill", async () => {
    const world = loadWorld('metatool', '../shared/data')!;
    const steps = firstSteps(world.test);
    const alone = await scoreFirstSteps(await Dtdr.train({ tools: world.tools, encoder }), steps);
    const draws = await firstDayDraws(world.pool, encoder);
    let below = 0;
    for (const draw of ['random', 'skewed', 'scenes'] as const)
      for (const n of [30, 100]) {
        const model = await Dtdr.train({ tools: world.tools, plans: draws[draw].slice(0, n), encoder });
        const [filled, learnedOnly] = await scoreFirstStepsEach(model, steps, [undefined, { keepLearned: 1 }]);
        // Most of these sets are capped (12 tools) and no step is confident: the benchmark's recall line applies.
        expect(filled.set, `${draw}, ${n}`).toBeGreaterThan(11);
        expect(filled.confident, `${draw}, ${n}`).toBe(0);
        expect(filled.planRecall, `${draw}, ${n} demonstrations`).toBeGreaterThanOrEqual(alone.planRecall);
        below += +(learnedOnly.planRecall < alone.planRecall);
      }
    // The learned ranking's top 12 alone: 3 of the 6 points below the tools alone when written.
    expect(below).toBeGreaterThanOrEqual(1);
  }, 120_000);
});

describe('a 10-tool recipe app with its first 26 demonstrations (its own requests held out)', () => {
  const fixture = JSON.parse(readFileSync(new URL('./fixtures/recipe-app.json', import.meta.url), 'utf8')) as {
    tools: ToolSpec[];
    demonstrations: Plan[];
    requests: { query: string; plan: string[] }[];
  };

  it('prunes its sets to under half the labels, holds a right tool in ≥ 85% of held-out steps, is never confident of a set of half the labels, and its top-1 probabilities are calibrated within 0.10', async () => {
    const model = await Dtdr.train({ tools: fixture.tools, plans: fixture.demonstrations, encoder });
    const labels = fixture.tools.length + 1;
    let steps = 0;
    let covered = 0;
    let size = 0;
    let claims = 0;
    const [top, correct]: number[][] = [[], []];
    for (const r of fixture.requests) {
      const plan = [...r.plan, END];
      for (let i = 0; i < plan.length; i++) {
        const res = await model.retrieve(r.query, plan.slice(0, i));
        steps++;
        const best = res.ranking.order[0];
        top.push(res.ranking.probabilities[best]);
        correct.push(+(res.ranking.labels[best] === plan[i]));
        size += res.candidates.length;
        covered += +res.candidates.some((c) => c.tool === plan[i]);
        if (res.confident) expect(res.candidates.length * 2).toBeLessThan(labels);
        // Where a set was cut, the reason says from what and what such sets held on held-out steps.
        if (res.reason?.includes('cut from')) {
          claims++;
          expect(res.reason).toMatch(/hold a right tool in \d+% of held-out steps/);
          expect(res.target).toBeLessThan(0.95);
        }
      }
    }
    expect(size / steps).toBeLessThanOrEqual(6);
    expect(covered / steps).toBeGreaterThanOrEqual(0.85);
    // 0.060 measured (0.133 before the gate's prior; npm run experiment -- small-app).
    expect(expectedCalibrationError(top, correct)).toBeLessThanOrEqual(0.1);
    // The cut is what prunes them (without it: 10.96 of 11 labels when written).
    expect(claims).toBeGreaterThan(steps / 2);
    const uncut = await model.retrieve(fixture.requests[0].query, [], { cutHalfSets: false });
    expect(uncut.candidates.length * 2).toBeGreaterThanOrEqual(labels);
  }, 60_000);
});

describe('cutting a set of half the labels or more (selectCandidates)', () => {
  // 12 labels, falling probabilities; the threshold keeps the first 10.
  const probabilities = Float64Array.from([0.3, 0.2, 0.12, 0.1, 0.08, 0.06, 0.05, 0.04, 0.03, 0.015, 0.004, 0.001]);
  const ranking = (set: Partial<NonNullable<Ranking['set']>>, confident = false): Ranking => ({
    labels: Array.from({ length: 12 }, (_, i) => `t${i}`),
    probabilities,
    order: Uint32Array.from({ length: 12 }, (_, i) => i),
    confident,
    set: { threshold: 0.01, target: 0.95, confident, ...set },
  });
  const curve = [0.4, 0.55, 0.65, 0.72, 0.78, 0.83, 0.87, 0.9, 0.93, 0.95, 0.97, 1];

  it('cuts to the largest size under half (here 5 of 12) and claims what sets of 5 held on held-out steps', () => {
    const s = selectCandidates(ranking({ coverageBySize: curve }));
    expect(s.candidates.map((c) => c.tool)).toEqual(['t0', 't1', 't2', 't3', 't4']);
    expect(s.target).toBe(0.78);
    expect(s.widened).toBe(true);
    expect(s.reason).toMatch(/of 5 tools, hold a right tool in 78% of held-out steps.*cut from 10 of the 12 labels/);
  });

  it('takes a confident ranking’s confidence away where its set holds half the labels or more', () => {
    const s = selectCandidates(ranking({ coverageBySize: curve }, true));
    expect(s.confident).toBe(false);
    expect(s.candidates).toHaveLength(5);
    const uncut = selectCandidates(ranking({}, true));
    expect(uncut.candidates).toHaveLength(10);
    expect(uncut.confident).toBe(false);
    expect(uncut.reason).toMatch(/the set holds half the labels or more/);
  });

  it('claims what sets of widenMax held on held-out steps where the cap cut the set short of its threshold', () => {
    const s = selectCandidates(ranking({ coverageBySize: curve }), { widenMin: 1, widenMax: 3 });
    expect(s.candidates.map((c) => c.tool)).toEqual(['t0', 't1', 't2']);
    expect(s.target).toBe(0.65);
    expect(s.reason).toMatch(/of 3 tools, hold a right tool in 65% of held-out steps.*capped at 3 tools/);
    // Where sets of that size held more than the target, the target is the claim; without the curve, too.
    const high = curve.map((c) => Math.max(c, 0.97));
    expect(selectCandidates(ranking({ coverageBySize: high }), { widenMin: 1, widenMax: 3 }).target).toBe(0.95);
    const bare = selectCandidates(ranking({}), { widenMin: 1, widenMax: 3 });
    expect([bare.target, bare.candidates.length]).toEqual([0.95, 3]);
    expect(bare.reason).toMatch(/in 95% of such steps.*capped at 3 tools/);
  });

  it('claims nothing where the held-out steps do not speak for the step (noClaim): the same set, no target', () => {
    for (const options of [{}, { widenMin: 1, widenMax: 3 }]) {
      const claimed = selectCandidates(ranking({ coverageBySize: curve }), options);
      const s = selectCandidates(ranking({ coverageBySize: curve, noClaim: true }), options);
      expect(s.candidates).toEqual(claimed.candidates);
      expect(s.target).toBeUndefined();
      expect(s.widened).toBe(true);
      expect(s.reason).not.toMatch(/right tool in \d+%|sets like this one/);
      expect(s.reason).toMatch(/^unsure; (cut from 10 of the 12 labels$|capped at 3 tools)/);
    }
  });

  it('leaves sets alone without the held-out curve, when asked not to, and below 2 × widenMin labels', () => {
    expect(selectCandidates(ranking({})).candidates).toHaveLength(10);
    expect(selectCandidates(ranking({ coverageBySize: curve }), { cutHalfSets: false }).candidates).toHaveLength(10);
    expect(selectCandidates(ranking({ coverageBySize: curve }), { widenMin: 7 }).candidates).toHaveLength(10);
    expect(() => selectCandidates(ranking({}), { cutHalfSets: 'yes' as unknown as boolean })).toThrow(/cutHalfSets/);
  });
});

describe('saved and loaded', () => {
  it('keeps the held-out curve, and refuses one that is not a coverage curve', async () => {
    const tools = ['a', 'b', 'c'].map((name) => ({ name, description: `tool ${name}` }));
    const plans = Array.from({ length: 30 }, (_, i) =>
      chainPlan(`p${i}`, `do ${i % 2 ? 'a then b' : 'c'}`, i % 2 ? ['a', 'b'] : ['c']),
    );
    const model = await Dtdr.train({ tools, plans, encoder });
    const saved = JSON.parse(JSON.stringify(model.toJSON())) as { state: { coverageBySize?: number[] } };
    expect(saved.state.coverageBySize?.length).toBe(4);
    const back = Dtdr.load(saved, encoder).toJSON() as { state: { coverageBySize?: number[] } };
    expect(back.state.coverageBySize).toEqual(saved.state.coverageBySize);
    const bad = structuredClone(saved);
    bad.state.coverageBySize = [0.9, 0.5, 1, 1];
    expect(() => Dtdr.load(bad, encoder)).toThrow(/coverageBySize/);
  });
});

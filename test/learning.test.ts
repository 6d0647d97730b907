/**
 * Online learning: a model trained on part of the demonstrations that then `learn`s the rest, in
 * batches as an app's runs would arrive, ranks held-out requests within 0.01 MRR of a full
 * retrain on all of them — for every method that learns from demonstrations. `forget` removes
 * what came from given plans exactly: the model is then what it would be had it never seen them.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { Dtdr } from '../src/core/dtdr.js';
import type { Encoder } from '../src/core/base/encoder.js';
import { DtdrError } from '../src/core/base/errors.js';
import { scoreStep, summarize } from '../src/core/base/metrics.js';
import { chainPlan, planSteps } from '../src/core/plans/plan.js';
import type { MethodName } from '../src/core/retrieval/types.js';
import type { Plan } from '../src/core/base/types.js';
import { DEMO_TOOLS, generateDemoPlans } from '../src/demo/toolset.js';
import { loadEncoder } from '../src/encoders/node.js';
import '../src/methods.js'; // the paper's methods, as an app that uses them imports them

const ALL = generateDemoPlans(1200, 5);
const FIRST = ALL.slice(0, 600);
const LATER = ALL.slice(600);
const HELD_OUT = generateDemoPlans(300, 99).map((p) => ({ ...p, id: `test-${p.id}` }));
const LEARNERS: MethodName[] = ['dr', 'lr', 'dtdr-c', 'dtdr-cb', 'dtdr-l', 'dtdr-h', 'dtdr-g'];
/**
 * How far below a full retrain online learning may land. DTDR-C's clusters cannot be re-split
 * online (the old queries are not kept): new clusters grow only where new requests fall, and on
 * this data it lands 0.011–0.012 below; everything else, the default included, within 0.01.
 */
const TOLERANCE: Partial<Record<MethodName, number>> = { 'dtdr-c': 0.015, 'dtdr-cb': 0.015 };

let encoder: Encoder;
beforeAll(async () => {
  encoder = await loadEncoder();
});

async function mrr(model: Dtdr, plans: Plan[]): Promise<number> {
  const scores = [];
  for (const plan of plans) {
    for (const step of planSteps(plan)) {
      const r = await model.rank(plan.query, step.history);
      scores.push(scoreStep(r.order, r.labels, step.acceptable, []));
    }
  }
  return summarize(scores).mrr;
}

describe.each(LEARNERS)('%s learning online', (method) => {
  it(`trained on 600 demonstrations then learning 600 more in batches of 100 ranks within ${TOLERANCE[method] ?? 0.01} MRR of a full retrain on 1,200`, async () => {
    const full = await Dtdr.train({ method, tools: DEMO_TOOLS, plans: ALL, encoder });
    const online = await Dtdr.train({ method, tools: DEMO_TOOLS, plans: FIRST, encoder });
    const before = await mrr(online, HELD_OUT);
    for (let i = 0; i < LATER.length; i += 100) await online.learn(LATER.slice(i, i + 100));
    expect(online.learnedCount).toBe(600);
    const [a, b] = [await mrr(full, HELD_OUT), await mrr(online, HELD_OUT)];
    console.log(
      `[learning] ${method}: trained on 600 ${before.toFixed(3)}, +600 learned ${b.toFixed(3)}, full retrain ${a.toFixed(3)}`,
    );
    expect(b).toBeGreaterThanOrEqual(a - (TOLERANCE[method] ?? 0.01));
    // And learning helps: never worse than before it.
    expect(b).toBeGreaterThanOrEqual(before - 0.005);
  }, 120_000);
});

describe('forget', () => {
  it("removes a user's plans exactly: the model equals one that never learned them, also after save and load", async () => {
    const secret = chainPlan('user-42', 'text my bank code 1234 to my brother', ['contacts_search', 'sms_send']);
    const other = LATER.slice(0, 50);
    const trained = await Dtdr.train({ tools: DEMO_TOOLS, plans: FIRST, encoder });
    // Two copies of the same trained model (as saved): one learns the user's plan among others.
    const a = Dtdr.load(trained.toJSON(), encoder);
    await a.learn([secret, ...other]);
    const b = Dtdr.load(trained.toJSON(), encoder);
    await b.learn(other);
    const reloaded = Dtdr.load(a.toBinary(), encoder);
    expect(JSON.stringify(a.toJSON().state)).not.toBe(JSON.stringify(b.toJSON().state));
    expect(await reloaded.forget(['user-42'])).toBe(1);
    expect(await a.forget((p) => p.query.includes('bank code'))).toBe(1);
    for (const m of [a, reloaded]) {
      expect(JSON.stringify(m.toJSON().state)).toBe(JSON.stringify(b.toJSON().state));
      expect(JSON.stringify(m.toJSON())).not.toContain('bank code');
    }
    expect(await a.forget(['user-42'])).toBe(0);
  }, 120_000);

  it('forgetting everything learned gives back the trained model', async () => {
    const m = Dtdr.load(
      (await Dtdr.train({ method: 'dtdr-c', tools: DEMO_TOOLS, plans: FIRST, encoder })).toJSON(),
      encoder,
    );
    const trained = JSON.stringify(m.toJSON().state);
    await m.learn(LATER.slice(0, 30));
    expect(await m.forget(() => true)).toBe(30);
    expect(JSON.stringify(m.toJSON().state)).toBe(trained);
  });
});

describe('learn refuses bad input with a typed error', () => {
  it('a plan calling a tool the model does not have, and something that is not a plan', async () => {
    const m = await Dtdr.train({ method: 'dtdr-c', tools: DEMO_TOOLS, plans: FIRST.slice(0, 100), encoder });
    const e = await m.learn([chainPlan('x', 'q', ['contacts_search', 'fax_send'])]).catch((x: unknown) => x);
    expect(DtdrError.isInstance(e) && e.field).toBe('plans[0].nodes[1].tool');
    const f = await m.learn([{ id: 'y', query: 'q' } as unknown as Plan]).catch((x: unknown) => x);
    expect(DtdrError.isInstance(f) && f.field).toBe('plans[0]');
  });
});

describe('a model that starts from the tools alone', () => {
  it('gains evidence from its first runs: a demonstrated sequence then leads', async () => {
    const m = await Dtdr.train({ tools: DEMO_TOOLS, encoder });
    const runs = Array.from({ length: 30 }, (_, i) =>
      chainPlan(`run-${i}`, `send the notes from the meeting to person ${i}`, [
        'notes_search',
        'contacts_search',
        'email_send',
      ]),
    );
    const query = 'send the notes from the meeting to Alex';
    const before = await m.rank(query, ['notes_search']);
    await m.learn(runs);
    const after = await m.rank(query, ['notes_search']);
    const top = (r: typeof after) => r.labels[r.order[0]];
    expect(top(after)).toBe('contacts_search');
    expect(after.probabilities[after.labels.indexOf('contacts_search')]).toBeGreaterThan(
      before.probabilities[before.labels.indexOf('contacts_search')],
    );
  });

  // Found by dtdr gateway, whose model starts from the tools and learns each run as it ends: the
  // refit on the first run trained fold heads on no demonstration and threw "no training examples".
  it('learns its first run, one at a time, as a gateway hands them in', async () => {
    const m = await Dtdr.train({ tools: DEMO_TOOLS, plans: [], encoder });
    await m.learn([{ id: 'first', query: 'mail Anna the notes', tools: ['email_send'] }]);
    await m.learn([{ id: 'second', query: 'find Bob and mail him', tools: ['contacts_search', 'email_send'] }]);
    expect(m.learnedCount).toBe(2);
    expect(m.refitErrors).toEqual([]);
  });
});

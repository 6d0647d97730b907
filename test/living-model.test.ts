/**
 * The living model (issue 44): `learn`, `forget` and refits keep a model that answers, whatever
 * the runs, the refitter or the timing. Each test fails on ea5d34c.
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Encoder } from '../src/core/base/encoder.js';
import { Dtdr, MAX_FORGETTABLE, REFIT_TIMEOUT, REFIT_UP_TO } from '../src/core/dtdr.js';
import { refitInline } from '../src/core/model/refit-inline.js';
import { MAX_FRESH_COLUMNS } from '../src/core/retrieval/default/head-columns.js';
import type { Refitter } from '../src/core/model/refit.js';
import type { Plan } from '../src/core/base/types.js';
import { terms } from '../src/core/base/text.js';
import { chainPlan, planSteps, planTools } from '../src/core/plans/plan.js';
import { DEMO_TOOLS, demoDataset, generateDemoPlans } from '../src/demo/toolset.js';
import { loadEncoder } from '../src/encoders/node.js';
import { refitWorker } from '../src/workers/node.js';
import { refitClient, type RefitReply } from '../src/workers/refit-client.js';
import { skewedPool } from './worlds/app-life.js';
import '../src/methods.js'; // the paper's methods, as an app that uses them imports them

let encoder: Encoder;
const worker = refitWorker();
beforeAll(async () => {
  encoder = await loadEncoder();
});
afterAll(() => worker.close());

const RUN = chainPlan('run-1', 'Text Sam that I am running late', ['contacts_search', 'sms_send']);

describe('learn() of one run', () => {
  const refitters: [string, () => Refitter | undefined][] = [
    ['no refitter', () => undefined],
    ['refitInline()', () => refitInline()],
    ['refitWorker()', () => worker],
  ];
  it.each(refitters)('on a tools-only model with %s: the run is learned', async (_, refitter) => {
    const model = await Dtdr.train({ tools: DEMO_TOOLS, encoder, refitter: refitter() });
    await model.learn([RUN]);
    expect(model.learnedCount).toBe(1);
    expect(model.refitErrors).toEqual([]);
    const r = await model.retrieve(RUN.query, ['contacts_search']);
    expect(r.candidates.map((c) => c.tool)).toContain('sms_send');
  });

  it('a learn that fails records nothing: the run is not counted, saved, or stored twice by a retry', async () => {
    let broken = false;
    const flaky: Encoder = {
      ...encoder,
      embed: (texts) => (broken ? Promise.reject(new Error('the encoder is gone')) : encoder.embed(texts)),
    };
    for (const plans of [[], [RUN]]) {
      const model = await Dtdr.train({ tools: DEMO_TOOLS, plans, encoder: flaky });
      broken = true;
      await expect(model.learn([chainPlan('run-2', 'Call mum', ['phone_call'])])).rejects.toThrow(/encoder is gone/);
      expect(model.learnedCount).toBe(0);
      expect(model.toJSON().learning).toBeUndefined();
      broken = false;
      await model.learn([chainPlan('run-2', 'Call mum', ['phone_call'])]);
      expect(model.learnedCount).toBe(1);
    }
  });
});

describe('a trained model learns a tool it had no demonstrations of (L-a)', () => {
  const NEW_REQUESTS = (
    JSON.parse(readFileSync(new URL('./fixtures/learned-tool-requests.json', import.meta.url), 'utf8')) as {
      currency_convert: string[];
    }
  ).currency_convert;
  const { tools, plans } = demoDataset();
  const calls = (p: Plan) => planTools(p).includes('currency_convert');
  const HELD_OUT = generateDemoPlans(300, 77).filter((p) => !calls(p));

  /** Per step of the held-out plans: whether the first tool is right, and whether the set holds a right one. */
  async function answers(model: Dtdr) {
    const out: { tool: string; first: boolean; inSet: boolean }[] = [];
    for (const plan of HELD_OUT)
      for (const step of planSteps(plan)) {
        const r = await model.retrieve(plan.query, step.history);
        const right = (t: string) => step.acceptable.includes(t);
        out.push({
          tool: step.acceptable[0],
          first: right(r.ranking.labels[r.ranking.order[0]]),
          inSet: r.candidates.some((c) => right(c.tool)),
        });
      }
    return out;
  }

  it.each([
    { what: '20 runs in one call', count: 20, batch: 20 },
    { what: '40 runs one at a time', count: 40, batch: 1 },
  ])(
    '$what: first on their requests and on nine in ten of 30 new ones in users’ words; no other tool drops out',
    async ({ count, batch }) => {
      const model = await Dtdr.train({ tools, plans: plans.filter((p) => !calls(p)), encoder, seed: 0 });
      const before = await answers(model);
      const learned = plans.filter(calls).slice(0, count);
      for (let i = 0; i < learned.length; i += batch) await model.learn(learned.slice(i, i + batch));
      const first = async (q: string) => {
        const r = await model.rank(q);
        return r.labels[r.order[0]] === 'currency_convert';
      };
      for (const p of learned) expect(await first(p.query), p.query).toBe(true);
      let hits = 0;
      for (const q of NEW_REQUESTS) if (await first(q)) hits++;
      expect(hits / NEW_REQUESTS.length).toBeGreaterThanOrEqual(0.9);
      const after = await answers(model);
      // Every step whose set held a right tool still does, and no tool is first on fewer of its steps.
      after.forEach((a, i) => before[i].inSet && expect(a.inSet).toBe(true));
      const firsts = (list: typeof after, tool: string) => list.filter((a) => a.tool === tool && a.first).length;
      for (const tool of new Set(before.map((b) => b.tool)))
        expect(firsts(after, tool), tool).toBeGreaterThanOrEqual(firsts(before, tool));
    },
    120_000,
  );
});

describe('a trained model learns ten tools it had no demonstrations of, in one call (L-d)', () => {
  it('every one is in the set of its held-out runs’ steps at least as often as before, and first on most', async () => {
    // More new tools than one call trains the head's columns of (MAX_FRESH_COLUMNS): learn trains the rest before
    // it resolves.
    const NEW = ['photos_search', 'files_open', 'restaurant_book', 'currency_convert', 'notes_search', 'alarm_set'];
    NEW.push('web_search', 'music_search', 'music_play', 'timer_set');
    expect(NEW.length).toBeGreaterThan(MAX_FRESH_COLUMNS);
    const { tools, plans } = demoDataset();
    const callsNew = (p: Plan) => planTools(p).some((t) => NEW.includes(t));
    const runs = new Map(
      NEW.flatMap((t) => plans.filter((p) => planTools(p).includes(t)).slice(0, 12)).map((p) => [p.id, p]),
    );
    const heldOut = generateDemoPlans(600, 77).filter(callsNew);
    /** Per new tool, over the held-out steps that need it: [steps, first, in the set]. */
    const score = async (model: Dtdr) => {
      const by = new Map<string, [number, number, number]>();
      for (const plan of heldOut)
        for (const step of planSteps(plan)) {
          const tool = step.acceptable.find((a) => NEW.includes(a));
          if (!tool) continue;
          const r = await model.retrieve(plan.query, step.history);
          const [n, first, inSet] = by.get(tool) ?? [0, 0, 0];
          const right = (t: string) => step.acceptable.includes(t);
          const top = r.ranking.labels[r.ranking.order[0]];
          by.set(tool, [n + 1, first + +right(top), inSet + +r.candidates.some((c) => right(c.tool))]);
        }
      return by;
    };
    const model = await Dtdr.train({ tools, plans: plans.filter((p) => !callsNew(p)), encoder, seed: 0 });
    const before = await score(model);
    await model.learn([...runs.values()]);
    const after = await score(model);
    const sum = (k: 0 | 1 | 2) => [...after.values()].reduce((a, v) => a + v[k], 0);
    for (const tool of NEW) {
      const [n, , inSet] = after.get(tool)!;
      expect(inSet / n, tool).toBeGreaterThanOrEqual(before.get(tool)![2] / n);
    }
    expect(sum(2) / sum(0)).toBeGreaterThanOrEqual(0.95); // in the set: 1.000 when written
    expect(sum(1) / sum(0)).toBeGreaterThanOrEqual(0.85); // first: 0.904 (0.733 with two columns left untrained)
  }, 120_000);
});

/** A refitter whose jobs wait from `hold()` to `release()` (for ever, for a hung one), else run on the calling thread. */
function heldRefitter() {
  const inline = refitInline();
  let held = false;
  const waiting: (() => void)[] = [];
  const refitter: Refitter = {
    refit: async (job) => {
      if (held) await new Promise<void>((resolve) => waiting.push(resolve));
      return inline.refit(job);
    },
    close: async () => undefined,
  };
  return {
    refitter,
    hold: () => void (held = true),
    release: () => {
      held = false;
      waiting.splice(0).forEach((go) => go());
    },
  };
}

const RUNS = generateDemoPlans(REFIT_UP_TO * 2.25, 31);
const probs = async (model: Dtdr, q: string) => Array.from((await model.rank(q)).probabilities);

describe('a learn call that starts a background refit (L-c)', () => {
  it('ranks the new tool first on its runs’ requests while the refit runs, and on nine in ten new ones after it', async () => {
    const { tools, plans } = demoDataset();
    const calls = (p: Plan) => planTools(p).includes('currency_convert');
    const NEW_REQUESTS = (
      JSON.parse(readFileSync(new URL('./fixtures/learned-tool-requests.json', import.meta.url), 'utf8')) as {
        currency_convert: string[];
      }
    ).currency_convert;
    const { refitter, hold, release } = heldRefitter();
    const model = await Dtdr.train({ tools, encoder, refitter });
    const others = RUNS.filter((p) => !calls(p));
    await model.learn(others.slice(0, REFIT_UP_TO)); // refitted on the calling thread's refitter, waited for
    const learned = plans.filter(calls).slice(0, 20);
    hold();
    await model.learn([...others.slice(REFIT_UP_TO, REFIT_UP_TO * 1.5), ...learned]); // a background refit starts
    const first = async (q: string) => {
      const r = await model.rank(q);
      return r.labels[r.order[0]] === 'currency_convert';
    };
    // Meanwhile the model as it is has learned it: the graphs, the clusters' tools and the head's column for it.
    for (const p of learned) expect(await first(p.query), p.query).toBe(true);
    release();
    await model.settle();
    expect(model.refitErrors).toEqual([]);
    let hits = 0;
    for (const q of NEW_REQUESTS) if (await first(q)) hits++;
    expect(hits / NEW_REQUESTS.length).toBeGreaterThanOrEqual(0.9);
  }, 180_000);
});

describe('a refit that hangs (M-a)', () => {
  it('the default timeout is at most a minute, and refitTimeout must be a positive number of ms', async () => {
    expect(REFIT_TIMEOUT).toBeLessThanOrEqual(60_000);
    await expect(Dtdr.train({ tools: DEMO_TOOLS, encoder, refitTimeout: 0 })).rejects.toThrow(/refitTimeout/);
  });

  it('a refit learn waits for is abandoned after refitTimeout, recorded, and runs on the calling thread', async () => {
    const { refitter, hold } = heldRefitter();
    hold();
    const model = await Dtdr.train({ tools: DEMO_TOOLS, encoder, refitter, refitTimeout: 300 });
    await model.learn([RUN]);
    expect(model.learnedCount).toBe(1);
    expect(model.refitErrors).toEqual([expect.stringMatching(/ran past 0.3 s \(refitTimeout\) and was abandoned/)]);
    expect((await model.retrieve(RUN.query, ['contacts_search'])).candidates.map((c) => c.tool)).toContain('sms_send');
  });

  it('a background refit that hangs: settle() resolves, it is recorded, forget and rankings go on, and the next refit runs', async () => {
    const { refitter, hold, release } = heldRefitter();
    const model = await Dtdr.train({ tools: DEMO_TOOLS, encoder, refitter, refitTimeout: 300 });
    await model.learn(RUNS.slice(0, REFIT_UP_TO));
    hold();
    await model.learn(RUNS.slice(REFIT_UP_TO, REFIT_UP_TO * 1.5)); // a background refit starts, and hangs
    await model.settle();
    expect(model.refitErrors).toEqual([expect.stringMatching(/1500 learned runs failed.*refitTimeout/)]);
    release();
    await model.learn(RUNS.slice(REFIT_UP_TO * 1.5)); // as much growth again: the next refit starts
    await model.settle();
    expect(model.refitErrors).toHaveLength(1); // it landed
    expect(await model.forget([RUNS[0].id])).toBe(1);
    expect(model.learnedCount).toBe(RUNS.length - 1);
  }, 180_000);
});

describe('rankings do not wait for a refit or a forget (M-b)', () => {
  it('while learn’s refit is held on the refitter, retrieve answers from the model as it was', async () => {
    const { refitter, hold, release } = heldRefitter();
    const model = await Dtdr.train({ tools: DEMO_TOOLS, encoder, refitter });
    const before = await probs(model, RUN.query);
    hold();
    const learning = model.learn([RUN]);
    expect(await probs(model, RUN.query)).toEqual(before); // answered while the refit is held
    release();
    await learning;
    expect(await probs(model, RUN.query)).not.toEqual(before);
  });

  it('while forget’s refit is held, retrieve answers from the model before any learned run: never from a forgotten one', async () => {
    const { refitter, hold, release } = heldRefitter();
    const model = await Dtdr.train({ tools: DEMO_TOOLS, encoder, refitter });
    const toolsOnly = await probs(model, RUN.query);
    await model.learn([RUN, ...RUNS.slice(0, 30)]);
    const learned = await probs(model, RUN.query);
    expect(learned).not.toEqual(toolsOnly);
    hold();
    const forgetting = model.forget([RUN.id]);
    // Called after forget, answered while its refit is held: from the tools-only model, which never saw RUN.
    expect(await probs(model, RUN.query)).toEqual(toolsOnly);
    release();
    expect(await forgetting).toBe(1);
    const reference = await Dtdr.train({ tools: DEMO_TOOLS, encoder, refitter: refitInline() });
    await reference.learn(RUNS.slice(0, 30));
    expect(await probs(model, RUN.query)).toEqual(await probs(reference, RUN.query));
    expect(model.refitErrors).toEqual([]);
  });

  it('saved while forget’s refit is held, the model is the one before the forget: every learned run, ranked as learned', async () => {
    const { refitter, hold, release } = heldRefitter();
    const model = await Dtdr.train({ tools: DEMO_TOOLS, encoder, refitter });
    await model.learn([RUN, ...RUNS.slice(0, 30)]);
    const learned = await probs(model, RUN.query);
    hold();
    const forgetting = model.forget([RUN.id]);
    await probs(model, RUN.query); // the forget has begun: it waits for its refit
    const saved = Dtdr.load(JSON.parse(JSON.stringify(model.toJSON())), encoder);
    expect(saved.learnedCount).toBe(31);
    expect(await probs(saved, RUN.query)).toEqual(learned);
    release();
    expect(await forgetting).toBe(1);
    expect(Dtdr.load(model.toJSON(), encoder).learnedCount).toBe(30);
  });
});

describe('a tool removed while an added one is not demonstrated (L-b)', () => {
  it('the removed tool’s share goes to the tools the learned ranking puts next, not to the added tool', async () => {
    const { tools, plans } = demoDataset();
    const calls = (p: Plan) => planTools(p).includes('currency_convert');
    const model = await Dtdr.train({ tools, plans: plans.filter((p) => !calls(p)), encoder, seed: 0 });
    await model.learn(plans.filter(calls).slice(0, 40));
    await model.addTools([{ name: 'flashlight_toggle', description: 'Turn the phone flashlight (torch) on or off' }]);
    await model.removeTools(['sms_send']);
    for (const [query, history] of [
      ['Text Sam that I am running late', ['contacts_search']],
      ['Text Anna that I am running late', ['contacts_search']],
      ['Share the pictures of the party with Tom', ['photos_search', 'contacts_search']],
    ] as const) {
      const r = await model.rank(query, history);
      expect(r.probabilities[r.labels.indexOf('flashlight_toggle')], query).toBeLessThanOrEqual(0.2);
    }
    // Where it is asked for, it still comes first.
    for (const request of ['Turn on the torch', 'Switch the flashlight on', 'Turn the flashlight off']) {
      const asked = await model.rank(request);
      expect(asked.labels[asked.order[0]], request).toBe('flashlight_toggle');
    }
    // Over every distinct step of the demo set's requests (none asks for it): it gave over 0.2 on
    // 436 of 3,622 on ea5d34c, at up to 0.9999; 10 with its evidence lifted toward its description
    // peer's ("Phone my sister now": 0.29); none since that lift was deleted. And every word a
    // printed reason quotes is in the request, with the demonstrations' counts it states: on
    // ea5d34c the reasons tied "how" to maps_directions and "them" to calendar_create_event.
    const demonstrations = [...plans.filter((p) => !calls(p)), ...plans.filter(calls).slice(0, 40)];
    const seen = new Set<string>();
    let [steps, over, words] = [0, 0, 0];
    for (const plan of plans)
      for (const step of planSteps(plan)) {
        const history = step.history.filter((t) => t !== 'sms_send');
        const key = `${plan.query}|${history.join(',')}`;
        if (seen.has(key)) continue;
        seen.add(key);
        const r = await model.retrieve(plan.query, history);
        steps++;
        if (r.ranking.probabilities[r.ranking.labels.indexOf('flashlight_toggle')] > 0.2) over++;
        for (const quoted of (r.reason ?? '').matchAll(/"([^"]+)"/g))
          expect(r.ranking.labels.includes(quoted[1]) || terms(plan.query).includes(quoted[1]), r.reason).toBe(true);
        for (const [, word, m, calls] of (r.reason ?? '').matchAll(
          /the request says "([^"]+)", and of the (\d+) demonstrations whose request says it, ([^;]*)/g,
        )) {
          const say = demonstrations.filter((p) => terms(p.query).includes(word));
          expect(Number(m), r.reason).toBe(say.length);
          for (const [, n, tool] of calls.matchAll(/(\d+) call "([^"]+)"/g)) {
            expect(Number(n), r.reason).toBe(say.filter((p) => planTools(p).includes(tool)).length);
            words++;
          }
        }
        expect(r.reason ?? '', r.reason).not.toMatch(/asks for|which none of|combines with/);
      }
    expect(steps).toBeGreaterThan(3000);
    expect(over).toBe(0);
    expect(words).toBeGreaterThan(0); // the word clause was checked, not only absent
  }, 180_000);
});

describe('whatever the library saves, it loads (M-f)', () => {
  /** The encoder, with some requests' vectors replaced as a damaged embedding store could give them. */
  const odd = (vectors: Record<string, (dim: number) => number[]>): Encoder => ({
    ...encoder,
    embed: async (texts) => {
      const out = await encoder.embed(texts);
      return out.map((v, i) => (vectors[texts[i]] ? Float32Array.from(vectors[texts[i]](v.length)) : v));
    },
  });
  const sized = (dim: number, at: (j: number) => number) => Array.from({ length: dim }, (_, j) => at(j));
  const wrong = {
    'Ping Sam about the party': (dim: number) => sized(dim, (j) => (j === 0 ? 2 : 0)),
    'Message Sam the address': (dim: number) => sized(dim, (j) => (j % 2 ? -3 : 3)),
  };

  it.each([
    ['trained on demonstrations', generateDemoPlans(200, 3)],
    ['trained on its tools alone', []],
  ])('a model %s learns runs whose request vectors are not unit vectors, saves, and loads', async (_, plans) => {
    const model = await Dtdr.train({ tools: DEMO_TOOLS, plans, encoder: odd(wrong) });
    await model.learn(Object.keys(wrong).map((q, i) => chainPlan(`odd-${i}`, q, ['contacts_search', 'sms_send'])));
    for (const saved of [model.toBinary(), JSON.parse(JSON.stringify(model.toJSON())) as unknown]) {
      const loaded = Dtdr.load(saved, encoder, 'odd.dtdr');
      expect(loaded.learnedCount).toBe(2);
    }
  });

  it.each([
    ['not finite', NaN],
    ['past what a saved model holds', 1e6],
  ])('a vector %s is refused before anything is recorded', async (_, value) => {
    const model = await Dtdr.train({
      tools: DEMO_TOOLS,
      plans: generateDemoPlans(200, 3),
      encoder: odd({ 'Ping Sam about the party': (dim) => sized(dim, () => value) }),
    });
    const learning = model.learn([chainPlan('odd', 'Ping Sam about the party', ['contacts_search', 'sms_send'])]);
    await expect(learning).rejects.toMatchObject({ code: 'encoder' });
    expect(model.learnedCount).toBe(0);
    expect(() => Dtdr.load(model.toBinary(), encoder)).not.toThrow();
  });
});

describe('a saved learning window must be the live model before its runs (L3)', () => {
  it('a `learning.before` with another tool or another method is refused, naming the field', async () => {
    const plans = generateDemoPlans(150, 4);
    const model = await Dtdr.train({ tools: DEMO_TOOLS, plans, encoder });
    await model.learn([RUN]);
    const saved = model.toJSON();
    const wire = { name: 'wire_money', description: 'Send money from the bank account to anyone' };
    const other = await Dtdr.train({ tools: [...DEMO_TOOLS, wire], plans, encoder });
    const method = await Dtdr.train({ method: 'dtdr-h', tools: DEMO_TOOLS, plans, encoder });
    for (const [before, field] of [
      [other, 'learning.before.tools'],
      [method, 'learning.before.method'],
    ] as const) {
      const learning = { ...saved.learning!, before: before.toJSON() };
      delete (learning as { same?: unknown }).same;
      const forged = JSON.parse(JSON.stringify({ ...saved, learning })) as unknown;
      expect(() => Dtdr.load(forged, encoder, 'forged.json')).toThrow(expect.objectContaining({ field }));
    }
    // The model's own window still loads, and forget works on it.
    const again = Dtdr.load(JSON.parse(JSON.stringify(saved)) as unknown, encoder);
    expect(await again.forget([RUN.id])).toBe(1);
  });
});

describe('tools that come and go on a method without native support (L6)', () => {
  it('DTDR-H drops an added tool nothing was learned about when it is removed: the file does not keep it', async () => {
    const model = await Dtdr.train({ method: 'dtdr-h', tools: DEMO_TOOLS, plans: generateDemoPlans(300, 2), encoder });
    const cycle = async (i: number) => {
      const name = `plugin_${i}_lookup`;
      await model.addTools([{ name, description: `Plugin ${i}: look up order ${i} in the shop's back office` }]);
      await model.removeTools([name]);
    };
    await cycle(0);
    const after1 = model.toBinary().length;
    for (let i = 1; i <= 40; i++) await cycle(i);
    const changes = model.toJSON().toolChanges!;
    expect(changes.added).toEqual([]);
    expect(changes.vectors?.length ?? DEMO_TOOLS.length).toBe(DEMO_TOOLS.length);
    expect(model.removedTools).toContain('plugin_7_lookup'); // still refused by adapters
    // Only the dropped names remain: well under a description vector (384 numbers) per cycle.
    expect((model.toBinary().length - after1) / 40).toBeLessThan(200);
    // A dropped name can be added again.
    await model.addTools([{ name: 'plugin_7_lookup', description: 'Look up an order' }]);
    expect(model.tools.map((t) => t.name)).toContain('plugin_7_lookup');
    expect(model.removedTools).not.toContain('plugin_7_lookup');
  });
});

describe('past the forget window, and after refits (L4)', () => {
  it('folding the oldest runs in does not hold rankings: one called meanwhile answers before the learn returns', async () => {
    const known = new Map<string, Float32Array>();
    const quick: Encoder = {
      ...encoder,
      embed: (texts) =>
        texts.every((t) => known.has(t)) ? Promise.resolve(texts.map((t) => known.get(t)!)) : encoder.embed(texts),
    };
    const query = 'Text Sam that I am running late';
    known.set(query, (await encoder.embed([query]))[0]);
    const model = await Dtdr.train({ tools: DEMO_TOOLS, plans: generateDemoPlans(200, 6), encoder: quick });
    const runs = generateDemoPlans(MAX_FORGETTABLE + 1, 8).map((p, i) => ({ ...p, id: `run-${i}` }));
    await model.learn(runs.slice(0, MAX_FORGETTABLE));
    const order: string[] = [];
    const learning = model.learn(runs.slice(MAX_FORGETTABLE)).then(() => order.push('learn'));
    // Called once the learn has started folding (it waits for the new run's embedding first).
    await new Promise((resolve) => setTimeout(resolve, 0));
    const ranking = model.rank(query).then(() => order.push('rank'));
    await Promise.all([learning, ranking]);
    expect(order).toEqual(['rank', 'learn']);
    expect(model.learnedCount).toBe(MAX_FORGETTABLE / 2);
  }, 120_000);

  it('an idle refit worker is ended (its memory goes back); the next refit starts a new one', async () => {
    let started = 0;
    let ended = 0;
    const client = refitClient(() => {
      started++;
      let reply: (r: RefitReply) => void = () => undefined;
      return {
        post: ({ id }) => setTimeout(() => reply({ id, state: { ok: id } }), 1),
        listen: (onReply) => void (reply = onReply),
        terminate: () => void ended++,
      };
    }, 20);
    const job = { method: 'dtdr-g', tools: [], plans: [], vectors: {}, seed: 0 } as const;
    await client.refit({ ...job, tools: [...job.tools], plans: [...job.plans] });
    expect([started, ended]).toEqual([1, 0]);
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(ended).toBe(1);
    await client.refit({ ...job, tools: [], plans: [] });
    expect(started).toBe(2);
    await client.close();
  });
});

describe('a slice of the tools when fitted stays one until the next fit (runs folded in since)', () => {
  // The demo world's runs that start with its three most common first tools call under half of its 27 tools.
  const slice = skewedPool(generateDemoPlans(600, 1)).slice(0, 300);
  const more = generateDemoPlans(100, 2);
  const later = generateDemoPlans(slice.length, 4);
  const steps = generateDemoPlans(60, 3).flatMap((p) => planSteps(p));
  const called = (plans: Plan[]) => new Set(plans.flatMap((p) => planTools(p))).size;
  const confidentSteps = async (m: Dtdr) => {
    let n = 0;
    for (const s of steps) if ((await m.retrieve(s.query, s.history)).confident) n++;
    return n;
  };

  it('is never confident, claims nothing and says why, though the 100 runs learned since call every tool', async () => {
    expect(called(slice)).toBeLessThan(DEMO_TOOLS.length / 2);
    expect(called([...slice, ...more])).toBeGreaterThan(DEMO_TOOLS.length * 0.9);
    const model = await Dtdr.train({ tools: DEMO_TOOLS, plans: slice, encoder });
    await model.learn(more); // a trained model folds runs in: no refit
    expect(await confidentSteps(model)).toBe(0);
    const r = await model.retrieve(steps[1].query, steps[1].history);
    expect(r.target).toBeUndefined();
    expect(r.reason).toContain(
      `the demonstrations of the last fit called ${called(slice)} of the ${DEMO_TOOLS.length} tools: its held-out ` +
        'steps do not speak for other requests (the 100 runs learned since count from the next fit, or once they are ' +
        `as many as its ${slice.length})`,
    );
    // Saved and loaded, it still knows; a fit on every run is confident where its held-out steps say so.
    const loaded = Dtdr.load(model.toBinary(), encoder);
    expect(await confidentSteps(loaded)).toBe(0);
    const refitted = await Dtdr.train({ tools: DEMO_TOOLS, plans: [...slice, ...more], encoder });
    expect(await confidentSteps(refitted)).toBeGreaterThan(steps.length / 4);
    // Once the runs learned since are as many as the fit's, they count as they are.
    await model.learn(later);
    expect(await confidentSteps(model)).toBeGreaterThan(0);
  }, 120_000);

  it('is kept in the file and checked; a file written before it counts the tools as they are now', async () => {
    const model = await Dtdr.train({ tools: DEMO_TOOLS, plans: slice, encoder });
    await model.learn(more);
    const saved = JSON.parse(JSON.stringify(model.toJSON())) as { state: Record<string, unknown> };
    expect(saved.state.sliceAtFit).toEqual({
      called: called(slice),
      tools: DEMO_TOOLS.length,
      runs: slice.length,
      learned: 100,
    });
    const bad = structuredClone(saved);
    bad.state.sliceAtFit = { called: DEMO_TOOLS.length + 1, tools: DEMO_TOOLS.length };
    expect(() => Dtdr.load(bad, encoder)).toThrow(/sliceAtFit\.called/);
    const older = structuredClone(saved);
    delete older.state.sliceAtFit;
    expect(await confidentSteps(Dtdr.load(older, encoder))).toBeGreaterThan(0);
    // A model that was no slice when fitted has no such field.
    const whole = (await Dtdr.train({ tools: DEMO_TOOLS, plans: more, encoder })).toJSON() as typeof saved;
    expect(whole.state).not.toHaveProperty('sliceAtFit');
  }, 120_000);
});

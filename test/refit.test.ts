/**
 * Refits off the calling thread. A tools-only model refits on the runs it learns: up to
 * REFIT_UP_TO, `learn` waits for each refit; with a refitter (`refitWorker()`), the fit runs on a
 * worker thread and goes on past REFIT_UP_TO in the background, the new model swapped in as a
 * model change. Either way the model is the one `Dtdr.train` fits on the same runs, bit for bit
 * in its rankings; a refitter that fails costs time, never the model.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { Encoder } from '../src/core/base/encoder.js';
import { DtdrError } from '../src/core/base/errors.js';
import type { Plan } from '../src/core/base/types.js';
import { Dtdr, REFIT_UP_TO } from '../src/core/dtdr.js';
import { refitInline } from '../src/core/model/refit-inline.js';
import type { Refitter } from '../src/core/model/refit.js';
import { planSteps } from '../src/core/plans/plan.js';
import { DEMO_TOOLS, generateDemoPlans } from '../src/demo/toolset.js';
import { loadEncoder } from '../src/encoders/node.js';
import { refitWorker } from '../src/workers/node.js';
import { loadWorld } from './worlds/app-life.js';

const RUNS = generateDemoPlans(REFIT_UP_TO + 600, 11);
// Every step of 40 generated requests and of the hand-written requests that combine the demo's scenarios in new ways.
const PROBES = [...generateDemoPlans(40, 99), ...loadWorld('demo', '')!.test].flatMap((p) =>
  planSteps(p).map((s) => [p.query, s.history] as const),
);

let encoder: Encoder;
const worker = refitWorker();
beforeAll(async () => {
  encoder = await loadEncoder();
});
afterAll(() => worker.close());

/** Every probe step's candidate set (what the app shows its model), confidence, order and probabilities. */
async function rankings(model: Dtdr) {
  const out = [];
  for (const [query, history] of PROBES) {
    const { candidates, ranking: r } = await model.retrieve(query, history);
    out.push({
      set: candidates.map((c) => c.tool),
      confident: r.confident,
      order: Array.from(r.order, (i) => r.labels[i]),
      p: Array.from(r.probabilities),
    });
  }
  return out;
}

/**
 * The same model for a user: the same candidate set, confidence and order at every probe, probabilities within
 * 1e-6 (a refit's model crosses from the worker as its saved state, whose numbers are stored as
 * a saved model's are; a saved and loaded model differs from the fitted one by about 3e-7).
 */
async function expectSameModel(model: Dtdr, reference: Dtdr) {
  const [a, b] = [await rankings(model), await rankings(reference)];
  expect(a.map(({ set, confident, order }) => ({ set, confident, order }))).toEqual(
    b.map(({ set, confident, order }) => ({ set, confident, order })),
  );
  const gap = Math.max(...a.flatMap((r, i) => r.p.map((v, k) => Math.abs(v - b[i].p[k]))));
  expect(gap).toBeLessThan(1e-6);
}

const trained = (plans: Plan[]) => Dtdr.train({ tools: DEMO_TOOLS, plans, encoder });

/** The field and file a refused saved model's error names (undefined when it loads). */
function refusedField(saved: unknown) {
  try {
    Dtdr.load(saved, encoder, 'm.json');
  } catch (e) {
    return DtdrError.isInstance(e) ? [e.field, e.file] : e;
  }
}

describe('refits on a worker thread', () => {
  it('learning 60 runs ten at a time: the worker refits, and the model is the one trained on the 60 runs', async () => {
    const model = await Dtdr.train({ tools: DEMO_TOOLS, encoder, refitter: worker });
    for (let i = 0; i < 60; i += 10) await model.learn(RUNS.slice(i, i + 10));
    expect(worker.refits).toBe(6);
    expect(model.refitErrors).toEqual([]);
    await expectSameModel(model, await trained(RUNS.slice(0, 60)));
  }, 120_000);

  it(`past ${REFIT_UP_TO} runs: learn returns at once, the refit lands in the background, and settle() waits for it`, async () => {
    const model = await Dtdr.train({ tools: DEMO_TOOLS, encoder, refitter: worker });
    await model.learn(RUNS.slice(0, REFIT_UP_TO));
    const first = worker.refits;
    const more = RUNS.slice(REFIT_UP_TO, REFIT_UP_TO + 600);
    await model.learn(more); // 1,600 ≥ 1.5 × 1,000: a background refit starts
    await model.settle();
    expect(worker.refits).toBe(first + 1);
    expect(model.refitErrors).toEqual([]);
    await expectSameModel(model, await trained(RUNS));
  }, 240_000);
});

describe('refits in the background, on the calling thread (refitInline)', () => {
  it('runs learned while a refit is in flight are folded into the refitted model', async () => {
    const model = await Dtdr.train({ tools: DEMO_TOOLS, encoder, refitter: refitInline() });
    await model.learn(RUNS.slice(0, REFIT_UP_TO));
    const pending = model.learn(RUNS.slice(REFIT_UP_TO, REFIT_UP_TO + 500)); // starts the refit on 1,500
    const late = model.learn(RUNS.slice(REFIT_UP_TO + 500)); // learned before the refit lands
    await Promise.all([pending, late]);
    await model.settle();
    // The refit on the first 1,500, then the last 100 folded in, as learn folds them into a trained model.
    const expected = await trained(RUNS.slice(0, REFIT_UP_TO + 500));
    await expected.learn(RUNS.slice(REFIT_UP_TO + 500));
    expect(model.learnedCount).toBe(RUNS.length);
    await expectSameModel(model, expected);
  }, 240_000);

  it('a refit embeds no run again: each request is embedded once, when it is learned', async () => {
    const { encoder: counting, state } = breakable(encoder);
    const model = await Dtdr.train({ tools: DEMO_TOOLS, encoder: counting, refitter: refitInline() });
    await model.learn(RUNS.slice(0, REFIT_UP_TO)); // the refit on 1,000 embeds the tools once
    state.texts = 0;
    await model.learn(RUNS.slice(REFIT_UP_TO, REFIT_UP_TO + 500)); // a background refit on all 1,500
    await model.settle();
    expect(state.texts).toBe(500);
    expect(model.refitErrors).toEqual([]);
  }, 120_000);

  it('a background refit lands under a test runner’s fake timers: settle() resolves', async () => {
    const model = await Dtdr.train({ tools: DEMO_TOOLS, encoder, refitter: refitInline() });
    await model.learn(RUNS.slice(0, REFIT_UP_TO));
    vi.useFakeTimers();
    try {
      await model.learn(RUNS.slice(REFIT_UP_TO, REFIT_UP_TO + 500)); // a background refit on 1,500
      await model.settle();
    } finally {
      vi.useRealTimers();
    }
    expect(model.refitErrors).toEqual([]);
    expect(model.learnedCount).toBe(REFIT_UP_TO + 500);
  }, 60_000);

  it('a forget called while a refit is in flight wins: the refit is dropped, the model is trained on what remains', async () => {
    const model = await Dtdr.train({ tools: DEMO_TOOLS, encoder, refitter: refitInline() });
    await model.learn(RUNS.slice(0, REFIT_UP_TO));
    const learning = model.learn(RUNS.slice(REFIT_UP_TO, REFIT_UP_TO + 500));
    const gone = RUNS.slice(0, 50).map((p) => p.id);
    const forgetting = model.forget(gone);
    await learning;
    expect(await forgetting).toBe(50);
    await model.settle();
    await expectSameModel(model, await trained(RUNS.slice(50, REFIT_UP_TO + 500)));
  }, 240_000);
});

describe('a tool added while a refit is in flight', () => {
  it('drops the refit (it fitted the old tools); the next learn refits over the new tools, as training on them would', async () => {
    const model = await Dtdr.train({ tools: DEMO_TOOLS, encoder, refitter: refitInline() });
    await model.learn(RUNS.slice(0, REFIT_UP_TO));
    const learning = model.learn(RUNS.slice(REFIT_UP_TO, REFIT_UP_TO + 500)); // a refit on 1,500 starts
    const vacuum = { name: 'vacuum_start', description: 'Start the robot vacuum cleaner in a room' };
    const adding = model.addTools([vacuum]);
    await Promise.all([learning, adding]);
    await model.settle();
    expect(model.tools.map((t) => t.name)).toContain('vacuum_start');
    // The dropped refit left the learned runs as they were: one more run starts the refit again, over 28 tools.
    await model.learn(RUNS.slice(REFIT_UP_TO + 500, REFIT_UP_TO + 501));
    await model.settle();
    const reference = await Dtdr.train({
      tools: [...DEMO_TOOLS, vacuum],
      plans: RUNS.slice(0, REFIT_UP_TO + 501),
      encoder,
    });
    await expectSameModel(model, reference);
  }, 240_000);
});

describe('a refitter that fails', () => {
  const broken: Refitter = {
    refit: () => Promise.reject(new Error('workers are blocked here')),
    close: async () => undefined,
  };

  it('up to REFIT_UP_TO: the refit runs on the calling thread and refitErrors says why', async () => {
    const model = await Dtdr.train({ tools: DEMO_TOOLS, encoder, refitter: broken });
    await model.learn(RUNS.slice(0, 30));
    expect(model.refitErrors).toEqual([
      'a refit on 30 learned runs failed (it ran on the calling thread): workers are blocked here',
    ]);
    await expectSameModel(model, await trained(RUNS.slice(0, 30)));
  }, 120_000);

  it('a model saved with learned runs loads with a refitter, which then refits it', async () => {
    const model = await Dtdr.train({ tools: DEMO_TOOLS, encoder });
    await model.learn(RUNS.slice(0, 40));
    const loaded = Dtdr.load(JSON.parse(JSON.stringify(model.toJSON())), encoder, 'saved.json', { refitter: worker });
    const before = worker.refits;
    await loaded.learn(RUNS.slice(40, 50));
    expect(worker.refits).toBe(before + 1);
    await expectSameModel(loaded, await trained(RUNS.slice(0, 50)));
  }, 120_000);
});

describe('a saved model remembers that it folded runs in', () => {
  it('past its forget window, a reloaded model folds new runs in as the saved one does: no refit on the window alone', async () => {
    const model = await Dtdr.train({ tools: DEMO_TOOLS, encoder });
    await model.learn(RUNS.slice(0, REFIT_UP_TO + 100)); // past REFIT_UP_TO without a refitter: folded in
    const saved = model.toJSON();
    expect(saved.learning?.folded).toBe(true);
    const loaded = Dtdr.load(JSON.parse(JSON.stringify(saved)), encoder, 'saved.json', { refitter: worker });
    const before = worker.refits;
    // 60 more: past the 1.1× growth a refit would need, were the window all it had learned.
    await Promise.all([model.learn(RUNS.slice(-60)), loaded.learn(RUNS.slice(-60))]);
    expect(worker.refits).toBe(before);
    await expectSameModel(loaded, model);
  }, 120_000);

  it('learning.folded other than true is refused, naming the field', async () => {
    const model = await Dtdr.train({ tools: DEMO_TOOLS, encoder });
    await model.learn(RUNS.slice(0, 5));
    const saved = model.toJSON();
    const bad = { ...saved, learning: { ...saved.learning!, folded: 'yes' } };
    expect(refusedField(bad)).toEqual(['learning.folded', 'm.json']);
  });
});

describe('when learn refits a tools-only model', () => {
  // Counted in whole runs: 100 × 1.1 is 110.00000000000001 in floating point, which once put the refit after 100 at 120.
  it('after a refit on 100 runs, the next comes at 110 (grown by a tenth), not before', async () => {
    // The saved file's learning.fitted, which it leaves out when the last refit was on every learned run.
    const lastRefitOn = (m: Dtdr) => m.toJSON().learning?.fitted ?? m.learnedCount;
    const model = await Dtdr.train({ tools: DEMO_TOOLS, encoder });
    await model.learn(RUNS.slice(0, 100));
    expect(lastRefitOn(model)).toBe(100);
    await model.learn(RUNS.slice(100, 109));
    expect(lastRefitOn(model)).toBe(100);
    await model.learn(RUNS.slice(109, 110));
    expect(lastRefitOn(model)).toBe(110);
    await expectSameModel(model, await trained(RUNS.slice(0, 110)));
  }, 120_000);
});

describe('a saved model remembers how many runs it was last refitted on', () => {
  it('reloaded between background refits, the next refit comes after the same growth as without the reload', async () => {
    const model = await Dtdr.train({ tools: DEMO_TOOLS, encoder, refitter: worker });
    await model.learn(RUNS.slice(0, REFIT_UP_TO)); // refitted on 1,000
    await model.learn(RUNS.slice(REFIT_UP_TO, REFIT_UP_TO + 400)); // 1,400 < 1.5 × 1,000: no refit
    await model.settle();
    const saved = model.toJSON();
    expect(saved.learning?.fitted).toBe(REFIT_UP_TO);
    const loaded = Dtdr.load(JSON.parse(JSON.stringify(saved)), encoder, 'saved.json', { refitter: worker });
    const before = worker.refits;
    await loaded.learn(RUNS.slice(REFIT_UP_TO + 400, REFIT_UP_TO + 500)); // 1,500 = 1.5 × 1,000: a background refit
    await loaded.settle();
    expect(worker.refits).toBe(before + 1);
    expect(loaded.refitErrors).toEqual([]);
    await expectSameModel(loaded, await trained(RUNS.slice(0, REFIT_UP_TO + 500)));
  }, 240_000);

  it('learning.fitted beyond the learned runs is refused, naming the field', async () => {
    const model = await Dtdr.train({ tools: DEMO_TOOLS, encoder });
    await model.learn(RUNS.slice(0, 5));
    const saved = model.toJSON();
    expect(saved.learning?.fitted).toBeUndefined(); // refitted on all five: nothing to say
    const bad = { ...saved, learning: { ...saved.learning!, fitted: 6 } };
    expect(refusedField(bad)).toEqual(['learning.fitted', 'm.json']);
  });
});

/** A refitter that fits on the calling thread, holding each job of more than `holdAbove` runs until `release`. */
function gatedRefitter(holdAbove: number) {
  const inner = refitInline();
  let release!: (outcome: 'fit' | Error) => void;
  const held = new Promise<'fit' | Error>((resolve) => (release = resolve));
  let holding = false;
  const refitter: Refitter = {
    async refit(job) {
      if (job.plans.length <= holdAbove) return inner.refit(job);
      holding = true;
      const outcome = await held;
      if (outcome instanceof Error) throw outcome;
      return inner.refit(job);
    },
    close: async () => undefined,
  };
  /** Resolves once a job is held (a background refit starts after the learn call that asked for it returns). */
  const started = async () => {
    for (let i = 0; i < 1000 && !holding; i++) await new Promise((resolve) => setTimeout(resolve, 1));
    expect(holding).toBe(true);
  };
  return { refitter, release: (outcome: 'fit' | Error) => release(outcome), holding: () => holding, started };
}

/** The bundled encoder, failing while `broken` is set, and counting the texts it embeds. */
function breakable(inner: Encoder) {
  const state = { broken: false, texts: 0 };
  const wrapped: Encoder = {
    id: inner.id,
    dimension: inner.dimension,
    fingerprint: inner.fingerprint,
    embed: (texts) => {
      if (state.broken) return Promise.reject(new Error('encoder down'));
      state.texts += texts.length;
      return inner.embed(texts);
    },
  };
  return { encoder: wrapped, state };
}

describe('a background refit whose worker or model change fails', () => {
  it('applying a refitted model needs no encoder: the runs learned meanwhile keep the vectors their learn call embedded', async () => {
    const { encoder: shaky, state } = breakable(encoder);
    const gate = gatedRefitter(REFIT_UP_TO);
    const model = await Dtdr.train({ tools: DEMO_TOOLS, encoder: shaky, refitter: gate.refitter });
    await model.learn(RUNS.slice(0, REFIT_UP_TO));
    await model.learn(RUNS.slice(REFIT_UP_TO, REFIT_UP_TO + 500)); // a refit on 1,500 starts and is held
    await model.learn(RUNS.slice(REFIT_UP_TO + 500, REFIT_UP_TO + 510)); // learned meanwhile: folded in when it lands
    await gate.started();
    state.broken = true; // any embedding from here on fails, and would be recorded
    gate.release('fit');
    await model.settle();
    state.broken = false;
    expect(model.refitErrors).toEqual([]);
    expect(model.learnedCount).toBe(REFIT_UP_TO + 510);
    const expected = await trained(RUNS.slice(0, REFIT_UP_TO + 500));
    await expected.learn(RUNS.slice(REFIT_UP_TO + 500, REFIT_UP_TO + 510));
    await expectSameModel(model, expected);
  }, 120_000);

  it('a refit that fails after a forget leaves the forget’s count: the next learn refits on what remains', async () => {
    const gate = gatedRefitter(REFIT_UP_TO);
    const model = await Dtdr.train({ tools: DEMO_TOOLS, encoder, refitter: gate.refitter });
    await model.learn(RUNS.slice(0, REFIT_UP_TO));
    await model.learn(RUNS.slice(REFIT_UP_TO, REFIT_UP_TO + 500)); // held
    const kept = RUNS.slice(REFIT_UP_TO, REFIT_UP_TO + 500);
    expect(await model.forget(RUNS.slice(0, REFIT_UP_TO).map((p) => p.id))).toBe(REFIT_UP_TO); // refits on 500
    gate.release(new Error('the worker crashed'));
    await model.settle();
    await model.learn(RUNS.slice(REFIT_UP_TO + 500, REFIT_UP_TO + 560)); // 560 ≥ 1.1 × 500: a refit
    await expectSameModel(model, await trained([...kept, ...RUNS.slice(REFIT_UP_TO + 500, REFIT_UP_TO + 560)]));
  }, 120_000);

  it('a model that folded runs in and then forgot every learned run still says so when saved', async () => {
    const model = await Dtdr.train({ tools: DEMO_TOOLS, encoder });
    await model.learn(RUNS.slice(0, REFIT_UP_TO + 100));
    await model.forget(() => true);
    expect(model.learnedCount).toBe(0);
    const saved = model.toJSON();
    expect(saved.learning?.folded).toBe(true);
    const loaded = Dtdr.load(JSON.parse(JSON.stringify(saved)), encoder, 'saved.json', { refitter: worker });
    const before = worker.refits;
    await Promise.all([model.learn(RUNS.slice(-20)), loaded.learn(RUNS.slice(-20))]);
    expect(worker.refits).toBe(before); // folded in, as the saved model does: no refit on 20 runs alone
    await expectSameModel(loaded, model);
  }, 120_000);

  it('a closed worker stays closed: the next refit runs on the calling thread and refitErrors says why', async () => {
    const closed = refitWorker();
    await closed.close();
    const model = await Dtdr.train({ tools: DEMO_TOOLS, encoder, refitter: closed });
    await model.learn(RUNS.slice(0, 20));
    expect(closed.refits).toBe(0);
    expect(model.refitErrors).toEqual([
      'a refit on 20 learned runs failed (it ran on the calling thread): the refit worker was closed',
    ]);
    await expectSameModel(model, await trained(RUNS.slice(0, 20)));
  }, 120_000);
});

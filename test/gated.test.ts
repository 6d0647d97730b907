/**
 * DTDR-G, the default method: what it promises on tiny, hand-checkable fixtures. Real-data checks
 * live in real-data.test.ts.
 */
import { readFileSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import { parsePlans } from '../src/core/plans/dataset.js';
import { Dtdr } from '../src/core/dtdr.js';
import { DtdrError } from '../src/core/base/errors.js';
import { sequenceKey } from '../src/core/evaluation/evaluate.js';
import { expectedCalibrationError } from '../src/core/base/metrics.js';
import { chainPlan, planSteps } from '../src/core/plans/plan.js';
import { sequenceHash } from '../src/core/retrieval/default/sequence-scores.js';
import { groupThreshold } from '../src/core/retrieval/default/groups.js';
import { seededRandom } from '../src/core/base/random.js';
import { fitTemperature, gateLoss, GateDataBuilder, stepProbabilities } from '../src/core/retrieval/default/gate.js';
import type { GatedRetriever, GatedState } from '../src/core/retrieval/default/index.js';
import { selectCandidates } from '../src/core/selection/select.js';
import { DEFAULT_METHOD } from '../src/core/retrieval/methods.js';
import { END, type ToolSpec } from '../src/core/base/types.js';
import { generateDemoPlans } from '../src/demo/toolset.js';
import { wordAxisEncoder } from './helpers.js';

const tools: ToolSpec[] = [
  { name: 'place_search', description: 'find a restaurant or shop nearby and return its address' },
  { name: 'contact_lookup', description: 'look up the phone number of a person' },
  { name: 'sms_send', description: 'send a text message to a phone' },
  { name: 'mail_send', description: 'send an email' },
  { name: 'route', description: 'directions to an address' },
];
const encoder = wordAxisEncoder([
  'restaurant',
  'shop',
  'text',
  'message',
  'email',
  'directions',
  'phone',
  'person',
  'address',
  'find',
  'send',
  'anna',
  'ben',
  'navigate',
  'mail',
]);
const names = (r: { candidates: { tool: string }[] }) => r.candidates.map((c) => c.tool);
const rankOf = (r: { ranking: { order: Uint32Array; labels: readonly string[] } }, tool: string) =>
  Array.from(r.ranking.order).findIndex((i) => r.ranking.labels[i] === tool);

describe('DTDR-G is the default method', () => {
  it('Dtdr.train uses it when no method is given', async () => {
    const model = await Dtdr.train({ tools, encoder });
    expect(DEFAULT_METHOD).toBe('dtdr-g');
    expect(model.method).toBe('dtdr-g');
  });
});

describe('from the tools alone (no demonstration)', () => {
  it('ranks the tool whose description matches the request first, and says why it widens', async () => {
    const model = await Dtdr.train({ tools, encoder });
    const r = await model.retrieve('find a restaurant and text the address to anna');
    expect(names(r)[0]).toBe('place_search');
    expect(r.widened).toBe(true);
    expect(r.reason).toMatch(/no demonstrations: ranked by tool descriptions alone/);
    expect(r.ranking.order).toHaveLength(tools.length + 1); // every tool and END keep a rank
  });

  it('is history-aware: once the restaurant part is served, the texting part leads', async () => {
    const model = await Dtdr.train({ tools, encoder });
    const r = await model.retrieve('find a restaurant and text the address to anna', ['place_search']);
    expect(rankOf(r, 'sms_send')).toBeLessThan(rankOf(r, 'place_search'));
    expect(rankOf(r, 'sms_send')).toBeLessThan(rankOf(r, 'mail_send'));
  });

  it('ranks END higher once the request is served', async () => {
    const model = await Dtdr.train({ tools, encoder });
    const before = await model.retrieve('send an email to ben', []);
    const after = await model.retrieve('send an email to ben', ['mail_send']);
    expect(rankOf(after, END)).toBeLessThan(rankOf(before, END));
  });

  it('keeps its own copy of the tools', async () => {
    const mine = tools.map((t) => ({ ...t }));
    const model = await Dtdr.train({ tools: mine, encoder });
    mine[0].name = 'renamed';
    expect(model.tools[0].name).toBe('place_search');
  });
});

describe('with demonstrations: calibrated, conformal, saved exactly', () => {
  const plans = [
    ...Array.from({ length: 30 }, (_, i) =>
      chainPlan(`t${i}`, i % 2 ? 'text anna' : 'send anna a text message', ['contact_lookup', 'sms_send']),
    ),
    ...Array.from({ length: 30 }, (_, i) =>
      chainPlan(`e${i}`, i % 2 ? 'email ben' : 'send ben an email', ['contact_lookup', 'mail_send']),
    ),
    ...Array.from({ length: 30 }, (_, i) =>
      chainPlan(`r${i}`, i % 2 ? 'navigate to a shop' : 'directions to a restaurant', ['place_search', 'route']),
    ),
  ];

  it('learns the next tool from the request and the calls so far, and ends the plan', async () => {
    const model = await Dtdr.train({ tools, plans, encoder });
    expect((await model.retrieve('text anna', ['contact_lookup'])).candidates[0].tool).toBe('sms_send');
    expect((await model.retrieve('email ben', ['contact_lookup'])).candidates[0].tool).toBe('mail_send');
    expect((await model.retrieve('email ben', ['contact_lookup', 'mail_send'])).candidates[0].tool).toBe(END);
  });

  it('gives every ranking probabilities of its own: later steps leave the ones kept earlier as they were', async () => {
    const model = await Dtdr.train({ tools, plans, encoder });
    const first = await model.retrieve('text anna', ['contact_lookup']);
    const kept = Float64Array.from(first.ranking.probabilities);
    // Many more steps than one shared block of probabilities holds.
    for (let i = 0; i < 100; i++)
      await model.retrieve(i % 2 ? 'email ben' : 'directions to a restaurant', i % 3 ? ['contact_lookup'] : []);
    expect(Array.from(first.ranking.probabilities)).toEqual(Array.from(kept));
  });

  it('ranks at another coverage target through a copy (atTarget), leaving the model as it was', async () => {
    const model = await Dtdr.train({ tools, plans, encoder });
    const gated = model.retriever as GatedRetriever;
    const fitted = structuredClone(gated.thresholds);
    const lower = gated.atTarget(0.5);
    expect(gated.thresholdsFor(0.5)).not.toEqual(fitted);
    expect(lower.thresholds).toEqual(gated.thresholdsFor(0.5));
    expect(lower.target).toBe(0.5);
    expect(gated.thresholds).toEqual(fitted);
    expect(gated.target).toBe(0.95);
    const [queryVector] = await encoder.embed(['text anna']);
    const input = { query: 'text anna', history: ['contact_lookup'], queryVector };
    expect(Array.from(lower.rank(input).probabilities)).toEqual(Array.from(gated.rank(input).probabilities));
    expect(() => gated.atTarget(1)).toThrow(/target must be in \(0, 1\)/);
  });

  it('returns a conformal set with its target, and a confident set holds the right tool', async () => {
    const model = await Dtdr.train({ tools, plans, encoder });
    const r = await model.retrieve('text anna', ['contact_lookup']);
    expect(r.target).toBe(0.95);
    expect(r.confident).toBe(true);
    expect(r.widened).toBe(false);
    expect(names(r)).toContain('sms_send');
    const d = model.diagnostics!;
    expect(d.folds).toBe(3);
    expect(d.heldOutSteps).toBe(plans.length * 3); // two calls and END per plan, each scored by a model that never saw it
    expect(d.ece.temperature).toBeGreaterThanOrEqual(0);
  });

  it('a request unlike every demonstration is unsure, widened, and says why', async () => {
    const model = await Dtdr.train({ tools, plans, encoder });
    const r = await model.retrieve('find a person phone', ['route', 'mail_send', 'route']);
    expect(r.confident).toBe(false);
    expect(r.widened).toBe(true);
    // however peaked its probabilities, calibration never saw such a step: it widens, and says why
    expect(r.reason).toMatch(/no demonstration has the calls route → mail_send → route in a row/);
    expect(r.candidates.length).toBeGreaterThanOrEqual(5);
  });

  it('saves and loads to the same probabilities', async () => {
    const model = await Dtdr.train({ tools, plans, encoder });
    const loaded = Dtdr.load(JSON.parse(JSON.stringify(model.toJSON())), encoder);
    for (const history of [[], ['contact_lookup'], ['place_search', 'route']]) {
      const a = await model.retrieve('text anna', history);
      const b = await loaded.retrieve('text anna', history);
      expect(Array.from(b.ranking.probabilities)).toEqual(
        Array.from(a.ranking.probabilities).map((p) => expect.closeTo(p, 6)),
      );
      expect(names(b)).toEqual(names(a));
    }
  });

  it("takes its groups' thresholds from their saved scores: a file written before the confident groups' training-conditional threshold gets it on load", async () => {
    const model = await Dtdr.train({ tools, plans, encoder });
    const saved = JSON.parse(JSON.stringify(model.toJSON())) as { state: GatedState };
    const groups = saved.state.groups!;
    // An older file: 100 held-out scores 0.01 … 1.00 in a confident group, and its split-conformal threshold, the
    // 5th smallest (⌊101 × 0.05⌋); 30 in a group too thin to call its steps confident.
    groups.scores['seen/many/high'] = Array.from({ length: 100 }, (_, i) => (i + 1) / 100);
    groups.thresholds['seen/many/high'] = 0.05;
    groups.scores['seen/few/high'] = Array.from({ length: 30 }, (_, i) => (i + 1) / 30);
    groups.thresholds['seen/few/high'] = 1 / 30;
    const thresholds = (Dtdr.load(saved, encoder).retriever as GatedRetriever).thresholds.groups;
    // With 100 scores, P(Binomial(100, 0.05) ≥ 2) = 0.963 ≥ 0.9 > P(≥ 3) = 0.882: the 2nd smallest.
    expect(thresholds['seen/many/high']).toBe(0.02);
    // Under 50 scores its steps are never confident: split-conformal, ⌊31 × 0.05⌋ = 1st smallest, as saved.
    expect(thresholds['seen/few/high']).toBe(1 / 30);
    // A file written now loads with the thresholds it was saved with.
    const fresh = model.retriever as GatedRetriever;
    const reloaded = Dtdr.load(JSON.parse(JSON.stringify(model.toJSON())), encoder).retriever as GatedRetriever;
    expect(reloaded.thresholds.groups).toEqual(fresh.thresholds.groups);
  });

  it('weighs order of mention in the request (lexicalOrder, default 8); files without it rank as before (0)', async () => {
    const model = await Dtdr.train({ tools, plans, encoder });
    const saved = model.toJSON() as { state: { lexicalOrder?: number } };
    expect(saved.state.lexicalOrder).toBe(8);
    const unordered = await Dtdr.train({ tools, plans, encoder, gated: { experimental: { lexicalOrder: 0 } } });
    const old = JSON.parse(JSON.stringify(unordered.toJSON()));
    delete old.state.lexicalOrder;
    const query = 'find a restaurant address, then send anna a text message';
    const a = await unordered.retrieve(query, []);
    const b = await Dtdr.load(old, encoder).retrieve(query, []);
    const logs = (r: typeof a) => Array.from(r.ranking.probabilities, Math.log);
    expect(logs(b)).toEqual(logs(a).map((v) => expect.closeTo(v, 5)));
    // and the order does move this request's log-probabilities (so the check above can fail)
    const ordered = await Dtdr.train({ tools, plans, encoder, gated: { experimental: { lexicalOrder: 8 } } });
    expect(logs(await ordered.retrieve(query, [])).some((v, i) => Math.abs(v - logs(a)[i]) > 1e-3)).toBe(true);
    await expect(
      Dtdr.train({ tools, plans, encoder, gated: { experimental: { lexicalOrder: -1 } } }),
    ).rejects.toSatisfy((e: unknown) => DtdrError.isInstance(e) && e.code === 'options' && e.field === 'lexicalOrder');
    const bad = JSON.parse(JSON.stringify(saved));
    bad.state.lexicalOrder = 'soon';
    expect(() => Dtdr.load(bad, encoder)).toThrow(/lexicalOrder/);
  });

  it('refuses a fold scheme or threshold source it does not know, naming the field, before any fit', async () => {
    for (const experimental of [{ foldBy: 'by-plan' }, { thresholdsFrom: 'both' }] as const)
      await expect(
        Dtdr.train({ tools, plans, encoder, gated: { experimental: experimental as never } }),
      ).rejects.toSatisfy(
        (e: unknown) => DtdrError.isInstance(e) && e.code === 'options' && e.field === Object.keys(experimental)[0],
      );
  });

  it('ranks a step the same whatever was ranked before it (per-request caches: terms, plain BM25, tool dots, head logits)', async () => {
    const saved = (await Dtdr.train({ tools, plans, encoder })).toJSON();
    const model = Dtdr.load(saved, encoder);
    const steps: [string, string[]][] = [
      ['text anna', []],
      ['text anna', ['contact_lookup']],
      ['email ben', ['contact_lookup']],
      ['text anna', ['contact_lookup']],
      ['directions to a restaurant', []],
      ['text anna', []],
    ];
    const fresh = async (query: string, history: string[]) =>
      Array.from((await Dtdr.load(saved, encoder).retrieve(query, history)).ranking.probabilities);
    for (const [query, history] of steps) {
      const inSequence = Array.from((await model.retrieve(query, history)).ranking.probabilities);
      expect(inSequence).toEqual(await fresh(query, history));
    }
  });

  it('drops its per-request caches when it learns (the cluster assignment, the head, the tool dots)', async () => {
    const model = await Dtdr.train({ tools, plans, encoder });
    // Learning scores its plans with the model as it was, this very request last, then moves a
    // centroid (the new requests mention an address) and retrains the head.
    await model.learn([
      ...Array.from({ length: 5 }, (_, i) => chainPlan(`n${i}`, 'text anna her address', ['place_search', 'sms_send'])),
      chainPlan('n5', 'text anna', ['contact_lookup', 'sms_send']),
    ]);
    const right = Array.from((await model.retrieve('text anna', ['contact_lookup'])).ranking.probabilities);
    await model.retrieve('email ben', []);
    expect(Array.from((await model.retrieve('text anna', ['contact_lookup'])).ranking.probabilities)).toEqual(right);
  });

  it('trains the same model twice for one seed', async () => {
    const a = (await Dtdr.train({ tools, plans, encoder, seed: 3 })).retriever as GatedRetriever;
    const b = (await Dtdr.train({ tools, plans, encoder, seed: 3 })).retriever as GatedRetriever;
    expect(Array.from(a.theta)).toEqual(Array.from(b.theta));
  });

  it('trains cross-fitting heads on at most foldHeadSteps steps: the gate learns from them, the final head sees every step; below 1 is an error', async () => {
    const all = (await Dtdr.train({ tools, plans, encoder })).retriever as GatedRetriever;
    const few = (await Dtdr.train({ tools, plans, encoder, gated: { experimental: { foldHeadSteps: 3 } } }))
      .retriever as GatedRetriever;
    const headOf = (r: GatedRetriever) =>
      Array.from(
        (r as unknown as { parts: { evidence: { head: { weights: Float64Array } } } }).parts.evidence.head.weights,
      );
    expect(headOf(few)).toEqual(headOf(all));
    expect(Array.from(few.theta)).not.toEqual(Array.from(all.theta));
    await expect(
      Dtdr.train({ tools, plans, encoder, gated: { experimental: { foldHeadSteps: 0 } } }),
    ).rejects.toSatisfy((e: unknown) => DtdrError.isInstance(e) && e.code === 'options' && e.field === 'foldHeadSteps');
  });

  it('trains the final head on at most headSteps steps (a seeded sample), the graphs on every step; below 1 is an error', async () => {
    const all = (await Dtdr.train({ tools, plans, encoder })).retriever as GatedRetriever;
    const few = (await Dtdr.train({ tools, plans, encoder, gated: { experimental: { headSteps: 5 } } }))
      .retriever as GatedRetriever;
    const roomy = (await Dtdr.train({ tools, plans, encoder, gated: { experimental: { headSteps: 1e6 } } }))
      .retriever as GatedRetriever;
    const evidenceOf = (r: GatedRetriever) =>
      (r as unknown as { parts: { evidence: { head: { weights: Float64Array }; global: unknown } } }).parts.evidence;
    expect(Array.from(evidenceOf(few).head.weights)).not.toEqual(Array.from(evidenceOf(all).head.weights));
    expect(evidenceOf(few).global).toEqual(evidenceOf(all).global);
    // A cap above the data's steps changes nothing.
    expect(Array.from(evidenceOf(roomy).head.weights)).toEqual(Array.from(evidenceOf(all).head.weights));
    await expect(Dtdr.train({ tools, plans, encoder, gated: { experimental: { headSteps: 0 } } })).rejects.toSatisfy(
      (e: unknown) => DtdrError.isInstance(e) && e.code === 'options' && e.field === 'headSteps',
    );
  });

  it('can leave signals out (ablations), and names the signals it knows', async () => {
    const model = await Dtdr.train({
      tools,
      plans,
      encoder,
      gated: { experimental: { without: ['head', 'cluster-graph'] } },
    });
    expect((await model.retrieve('text anna', ['contact_lookup'])).candidates[0].tool).toBe('sms_send');
    await expect(
      Dtdr.train({ tools, plans, encoder, gated: { experimental: { without: ['nope' as never] } } }),
    ).rejects.toSatisfy(
      (e: unknown) => DtdrError.isInstance(e) && e.code === 'options' && /unknown signal "nope"/.test(e.message),
    );
  });
});

describe('conformal thresholds from new combinations', () => {
  // 12 two-call sequences, each demonstrated 4 times: most plans repeat a sequence.
  const word: Record<string, string> = {
    place_search: 'restaurant',
    contact_lookup: 'person',
    sms_send: 'text',
    mail_send: 'email',
    route: 'directions',
  };
  const names5 = Object.keys(word);
  const pairs = names5.flatMap((a) => names5.filter((b) => b !== a).map((b) => [a, b])).slice(0, 12);
  const plans = pairs.flatMap(([a, b], s) =>
    Array.from({ length: 4 }, (_, k) =>
      chainPlan(`p${s}-${k}`, `${word[a]} then ${word[b]}${k % 2 ? ' anna' : ' ben'}`, [a, b]),
    ),
  );

  let model0: Dtdr;
  beforeAll(async () => {
    model0 = await Dtdr.train({ tools, plans, encoder });
  });

  it('by default, when most plans repeat a sequence, come from folds that hold out whole sequences; ranking does not depend on it', async () => {
    const bySequence = await Dtdr.train({ tools, plans, encoder });
    const byPlan = await Dtdr.train({ tools, plans, encoder, gated: { experimental: { thresholdsFrom: 'plan' } } });
    expect(bySequence.diagnostics).toMatchObject({ foldBy: 'plan', thresholdsFrom: 'sequence' });
    expect(byPlan.diagnostics).toMatchObject({ foldBy: 'plan', thresholdsFrom: 'plan' });
    expect(bySequence.diagnostics!.thresholds).not.toEqual(byPlan.diagnostics!.thresholds);
    for (const history of [[], ['place_search']]) {
      const a = await bySequence.retrieve('restaurant then text anna', history);
      const b = await byPlan.retrieve('restaurant then text anna', history);
      expect(Array.from(a.ranking.probabilities)).toEqual(Array.from(b.ranking.probabilities));
    }
    // the calibration-only folds score the calibration half of the plans: 3 steps each, 48 plans, half of them
    expect(bySequence.diagnostics!.heldOutSteps - byPlan.diagnostics!.heldOutSteps).toBe((plans.length / 2) * 3);
  });

  it('learning adds what the folds would: by sequence, a new sequence scored as it comes and a repeat the held-out steps kept for its sequence; by plan, every step scored', async () => {
    const unseen = names5.flatMap((a) => names5.filter((b) => b !== a).map((b) => [a, b])).slice(12);
    const again = (pair: string[], id: string) => chainPlan(id, `${word[pair[0]]} then ${word[pair[1]]} anna`, pair);
    const pools = (m: Dtdr) => structuredClone((m.toJSON().state as GatedState).calibration!);
    /** The scores added to the two pools since `before` (both far below the sample's cap: appended in order). */
    const added = (m: Dtdr, before: ReturnType<typeof pools>) => {
      const now = pools(m);
      return [...now.confident.slice(before.confident.length), ...now.unsure.slice(before.unsure.length)];
    };
    /** Per sequence key: the held-out steps' scores the model keeps for it. */
    const kept = (m: Dtdr, pair: string[]) => {
      const store = (m.toJSON().state as GatedState).sequences!;
      const at = store.hashes.indexOf(sequenceHash(sequenceKey(chainPlan('k', 'k', pair))));
      if (at < 0) return undefined;
      let plan = store.plans.slice(0, at).reduce((a, b) => a + b, 0);
      let step = store.steps.slice(0, plan).reduce((a, b) => a + b, 0);
      const out: number[][] = [];
      for (let k = 0; k < store.plans[at]; k++, plan++) {
        out.push(store.scores.slice(step, step + store.steps[plan]));
        step += store.steps[plan];
      }
      return out;
    };
    const bySequence = await Dtdr.train({ tools, plans, encoder });
    const byPlan = await Dtdr.train({ tools, plans, encoder, gated: { experimental: { thresholdsFrom: 'plan' } } });
    // The fit knows the 12 sequences and keeps held-out steps (3 each, END included) for those it scored.
    expect((bySequence.toJSON().state as GatedState).sequences!.hashes).toHaveLength(12);
    expect(byPlan.toJSON().state).not.toHaveProperty('sequences');
    // Repeats: each adds one kept demonstration of its sequence (or nothing where none is kept); by plan, each is scored.
    const repeats = pairs.slice(0, 4).map((pair, k) => again(pair, `repeat-${k}`));
    const [seq0, plan0] = [pools(bySequence), pools(byPlan)];
    await bySequence.learn(repeats);
    await byPlan.learn(repeats);
    const fromKept = added(bySequence, seq0);
    const keptOf = pairs.slice(0, 4).map((pair) => kept(bySequence, pair)!);
    expect(fromKept).toHaveLength(keptOf.filter((k) => k.length > 0).length * 3);
    expect(fromKept.length).toBeGreaterThan(0);
    for (const score of fromKept) expect(keptOf.flat(2)).toContain(score);
    expect(added(byPlan, plan0)).toHaveLength(4 * 3);
    // A new sequence, twice in one call: both scored as they come (its fold would hold both out), both kept.
    expect(kept(bySequence, unseen[0])).toBeUndefined();
    const seq1 = pools(bySequence);
    await bySequence.learn([again(unseen[0], 'new-0'), again(unseen[0], 'new-1')]);
    expect(added(bySequence, seq1)).toHaveLength(2 * 3);
    expect(kept(bySequence, unseen[0])).toHaveLength(2);
    const byValue = (a: number, b: number) => a - b;
    expect(kept(bySequence, unseen[0])!.flat().sort(byValue)).toEqual(added(bySequence, seq1).sort(byValue));
    // Saved and loaded, the model knows it: a third time it adds a kept demonstration; another new one is scored.
    const loaded = Dtdr.load(bySequence.toBinary(), encoder);
    const seq2 = pools(loaded);
    await loaded.learn([again(unseen[0], 'new-2')]);
    const replayed = added(loaded, seq2);
    expect(replayed).toHaveLength(3);
    for (const score of replayed) expect(kept(loaded, unseen[0])!.flat()).toContain(score);
    await loaded.learn([again(unseen[1], 'new-3')]);
    expect(added(loaded, seq2)).toHaveLength(2 * 3);
    expect(kept(loaded, unseen[1])).toHaveLength(1);
  });

  it('refuses a saved sequence store a fit could not have written', () => {
    const json = JSON.parse(JSON.stringify(model0.toJSON())) as { state: GatedState };
    const good = json.state.sequences!;
    for (const bad of [
      'x',
      { ...good, hashes: [...good.hashes].reverse() },
      { ...good, hashes: [-1, ...good.hashes.slice(1)] },
      { ...good, plans: good.plans.slice(1) },
      { ...good, plans: good.plans.map(() => 9) },
      { ...good, scores: good.scores.map(() => 2) },
      { ...good, groups: good.groups.map(() => 12) },
      { ...good, steps: good.steps.map(() => 0) },
    ]) {
      const e = (() => {
        try {
          Dtdr.load({ ...json, state: { ...json.state, sequences: bad } }, encoder);
        } catch (x) {
          return x;
        }
      })();
      expect(DtdrError.isInstance(e) && e.field).toMatch(/^state\.sequences/);
    }
  });

  it('rejects an unknown source', async () => {
    await expect(
      Dtdr.train({ tools, plans, encoder, gated: { experimental: { thresholdsFrom: 'random' as never } } }),
    ).rejects.toSatisfy(
      (e: unknown) => DtdrError.isInstance(e) && e.code === 'options' && e.field === 'thresholdsFrom',
    );
  });
});

describe('the statistics behind it, by hand', () => {
  it('split-conformal threshold: the ⌊(n+1)(1−target)⌋-th smallest score', () => {
    const scores = Array.from({ length: 20 }, (_, i) => ((i * 7) % 20) / 20 + 0.05); // 0.05 … 1.00, shuffled
    expect(groupThreshold(scores, 0.8)).toBeCloseTo(0.2, 12); // ⌊21 · 0.2⌋ = 4 → the 4th smallest
    expect(groupThreshold(scores, 0.96)).toBe(0); // ⌊21 · 0.04⌋ = 0: too few steps, keep everything
    expect(groupThreshold(scores.slice(1), 0.5)).toBe(0); // under MIN_SCORES (20) scores: keep everything
  });

  it('a confident threshold covers the target with probability 0.9 over the held-out draw (the binomial rank)', () => {
    const scores = (n: number) => Array.from({ length: n }, (_, i) => (n - i) / 100); // 0.01 … n/100, reversed
    // n = 50, target 0.95: the split-conformal rank is ⌊51 · 0.05⌋ = 2. P(Bin(50, 0.05) = 0) = 0.95^50 = 0.077 ≤ 0.1,
    // P(Bin ≤ 1) = 0.077 + 50 · 0.05 · 0.95^49 = 0.279 > 0.1: the sure rank is 1, the smallest score.
    expect(groupThreshold(scores(50), 0.95)).toBeCloseTo(0.02, 12);
    expect(groupThreshold(scores(50), 0.95, true)).toBeCloseTo(0.01, 12);
    // 0.95^45 = 0.099 ≤ 0.1 but 0.95^44 = 0.105: under 45 held-out scores no rank is sure, and the set keeps everything.
    expect(groupThreshold(scores(45), 0.95, true)).toBeCloseTo(0.01, 12);
    expect(groupThreshold(scores(44), 0.95, true)).toBe(0);
  });

  it('over many draws, a confident threshold from 100 held-out scores covers 95% in at least 90% of them', () => {
    const random = seededRandom(7);
    let covering = 0;
    const draws = 2000;
    for (let d = 0; d < draws; d++) {
      // Scores uniform on (0, 1): a threshold q covers a new step with probability 1 − q.
      const held = Array.from({ length: 100 }, () => random());
      if (1 - groupThreshold(held, 0.95, true) >= 0.95) covering++;
    }
    expect(covering / draws).toBeGreaterThanOrEqual(0.9);
    let marginal = 0;
    const again = seededRandom(7);
    for (let d = 0; d < draws; d++) {
      const held = Array.from({ length: 100 }, () => again());
      if (1 - groupThreshold(held, 0.95) >= 0.95) marginal++;
    }
    // The split-conformal threshold alone covers 95% in far fewer draws (it covers on average over them).
    expect(marginal / draws).toBeLessThan(0.7);
  });

  it("temperature scaling: the held-out loss is −log of each step's acceptable probability, averaged; the search finds its minimum", () => {
    // Two signals, one context; three steps of two or three candidates (one with no acceptable candidate: skipped).
    const builder = new GateDataBuilder(2, 1);
    const rows = [
      [
        [2, 0],
        [0, 1],
        [1, 1],
      ],
      [
        [0, 2],
        [1, 0],
      ],
      [
        [1, 0],
        [0, 0],
      ],
    ];
    const accepted = [[0], [0], []];
    rows.forEach((values, i) =>
      builder.add(
        [1],
        values.map((_, k) => k),
        (s, k) => values[k][s],
        (k) => accepted[i].includes(k),
      ),
    );
    const data = builder.build();
    const theta = Float64Array.from([1, 0.5]);
    for (const T of [0.5, 1, 3]) {
      // Step 0: logits (2, 0.5, 1.5)/T; step 1: (1, 1)/T; step 2 has none acceptable.
      const p0 = Math.exp(2 / T) / (Math.exp(2 / T) + Math.exp(0.5 / T) + Math.exp(1.5 / T));
      expect(gateLoss(theta, data, T)).toBeCloseTo((-Math.log(p0) - Math.log(0.5)) / 2, 9);
      expect(stepProbabilities(theta, data, 0, T)[0]).toBeCloseTo(p0, 9);
    }
    // The loss falls as T falls here (the acceptable candidate leads step 0, ties step 1): the search ends at the bound.
    expect(fitTemperature(theta, data)).toBeCloseTo(0.25, 3);
  });

  it('expected calibration error of top-1 probabilities', () => {
    // bin 0.9: accuracy 0.5 vs confidence 0.9; bin 0.1: accuracy 0 vs 0.1 → (0.4 + 0.1) / 2
    expect(expectedCalibrationError([0.9, 0.9, 0.1, 0.1], [1, 0, 0, 0])).toBeCloseTo(0.25);
  });

  it('a conformal set keeps every label at or above the threshold and reports its target', () => {
    const ranking = {
      labels: ['a', 'b', 'c', END],
      probabilities: Float64Array.from([0.5, 0.3, 0.15, 0.05]),
      order: Uint32Array.from([0, 1, 2, 3]),
      confident: false,
      cause: 'the top tool has calibrated probability 0.50 < 0.6',
      set: { threshold: 0.15, target: 0.9, confident: false },
    };
    const set = selectCandidates(ranking);
    expect(set.candidates.map((c) => c.tool)).toEqual(['a', 'b', 'c']);
    expect(set).toMatchObject({ widened: true, target: 0.9 });
    expect(set.reason).toBe(
      'the top tool has calibrated probability 0.50 < 0.6 (sets like this one, of 3 tools, hold a right tool in 90% of such steps)',
    );
  });
});

describe('the compositional demo set', () => {
  it("combines the generator's scenarios in new ways: no plan repeats a demonstrated sequence", () => {
    const test = parsePlans(readFileSync(new URL('./fixtures/demo-compositional.jsonl', import.meta.url), 'utf8'));
    const seen = new Set(generateDemoPlans().map(sequenceKey));
    expect(test.length).toBeGreaterThanOrEqual(45);
    expect(test.filter((p) => seen.has(sequenceKey(p))).map((p) => p.query)).toEqual([]);
  });
});

describe('an older file of the shipped demo model', () => {
  it('written with split-conformal confident thresholds, loads to the sets, confidence and reasons of the shipped model on every step of the 48 hand-written requests', async () => {
    const { readModelFile } = await import('../src/storage/file.js');
    const { loadEncoder } = await import('../src/encoders/node.js');
    const { ROOT } = await import('./helpers.js');
    const file = `${ROOT}/public/dtdr-demo.model.dtdr`;
    const demoEncoder = await loadEncoder();
    const shipped = Dtdr.load(readModelFile(file), demoEncoder, file);
    // The same file as one written before the training-conditional threshold: every group's saved threshold the
    // split-conformal one. Some confident group's differs, so the file is an older one in what it saved.
    const older = readModelFile(file) as { state: GatedState };
    const { scores, thresholds } = older.state.groups!;
    const target = older.state.target;
    const changed = Object.keys(scores).filter((key) => {
      const split = groupThreshold(scores[key], target);
      const was = thresholds[key];
      thresholds[key] = split;
      return split !== was;
    });
    expect(changed.length).toBeGreaterThan(0);
    const loaded = Dtdr.load(older, demoEncoder, file);
    expect((loaded.retriever as GatedRetriever).thresholds).toEqual((shipped.retriever as GatedRetriever).thresholds);
    const requests = parsePlans(readFileSync(new URL('./fixtures/demo-compositional.jsonl', import.meta.url), 'utf8'));
    let steps = 0;
    for (const plan of requests)
      for (const step of planSteps(plan)) {
        const [a, b] = [
          await shipped.retrieve(step.query, step.history),
          await loaded.retrieve(step.query, step.history),
        ];
        expect(names(b)).toEqual(names(a));
        expect([b.confident, b.widened, b.reason]).toEqual([a.confident, a.widened, a.reason]);
        steps++;
      }
    expect(requests.length).toBe(48);
    expect(steps).toBeGreaterThan(150);
  });
});

import { describe, expect, it } from 'vitest';
import { chainPlan, planFromRecord, planOrders } from '../src/core/plans/plan.js';
import { Bm25Retriever } from '../src/core/retrieval/baselines.js';
import { ClusterRetriever } from '../src/core/retrieval/cluster.js';
import { DependencyRetriever } from '../src/core/retrieval/dependency.js';
import { trainLinearHead } from '../src/core/retrieval/linear-head-training.js';
import { makeRanking, withLazyOrder } from '../src/core/retrieval/ranking.js';
import { selectCandidates } from '../src/core/selection/select.js';
import { trainRetriever } from '../src/core/retrieval/train.js';
import { labelsOf } from '../src/core/retrieval/methods.js';
import { END, type ToolSpec } from '../src/core/base/types.js';
import { wordAxisEncoder } from './helpers.js';
import '../src/methods.js'; // the paper's methods, as an app that uses them imports them

const tools: ToolSpec[] = ['contact', 'mail', 'sms', 'route', 'place'].map((name) => ({
  name,
  description: `${name} tool`,
}));
const labels = labelsOf(tools);
const encoder = wordAxisEncoder(['email', 'text', 'navigate']);
const plans = [
  ...Array.from({ length: 5 }, (_, i) => chainPlan(`e${i}`, 'email anna', ['contact', 'mail'])),
  ...Array.from({ length: 5 }, (_, i) => chainPlan(`t${i}`, 'text anna', ['contact', 'sms'])),
  ...Array.from({ length: 5 }, (_, i) => chainPlan(`n${i}`, 'navigate home', ['place', 'route'])),
];
const top = (r: { order: Uint32Array; labels: readonly string[] }) => r.labels[r.order[0]];

describe('DR: static last-tool dependencies', () => {
  const dr = DependencyRetriever.fit(labels, plans);
  it('ranks by call frequency before the first call', () => {
    const r = dr.rank({ query: 'x', history: [] });
    expect(top(r)).toBe('contact'); // called 10 times
    expect(r.backoff?.historyUsed).toBe(0);
  });
  it('cannot tell mail from sms after contact: it ignores the query', () => {
    const r = dr.rank({ query: 'text anna', history: ['contact'] });
    expect(r.probabilities[labels.indexOf('mail')]).toBeCloseTo(0.5);
    expect(r.probabilities[labels.indexOf('sms')]).toBeCloseTo(0.5);
  });
});

describe('DTDR-C: per-cluster dependency graphs with back-off', () => {
  it('uses the query cluster to disambiguate the next tool', async () => {
    const c = (await trainRetriever('dtdr-c', tools, plans, encoder, { clusters: 3 })) as ClusterRetriever;
    const [text] = await encoder.embed(['text anna']);
    const r = c.rank({ query: 'text anna', history: ['contact'], queryVector: text });
    expect(top(r)).toBe('sms');
    expect(r.probabilities[labels.indexOf('sms')]).toBeCloseTo(1, 2);
    // counted in real calls: one call made, one matched (the start-of-plan marker is not a call)
    expect(r.backoff).toMatchObject({ scope: 'cluster', historyUsed: 1, historyWanted: 1, level: 3 });
    expect(r.confident).toBe(true);
    const end = c.rank({ query: 'text anna', history: ['contact', 'sms'], queryVector: text });
    expect(top(end)).toBe(END);
  });

  it('backs off to a shorter history, then to all clusters, and says so', async () => {
    const c = (await trainRetriever('dtdr-c', tools, plans, encoder, { clusters: 3 })) as ClusterRetriever;
    const [nav] = await encoder.embed(['navigate home']);
    // "route" was never first in the navigate cluster: only the 1-tool context [route] exists there.
    const shorter = c.rank({ query: 'navigate home', history: ['place', 'route', 'route'], queryVector: nav });
    expect(shorter.backoff).toMatchObject({ scope: 'cluster', historyUsed: 1 });
    expect(shorter.confident).toBe(false);
    // "mail" never occurs in the navigate cluster: the pooled graph answers.
    const pooled = c.rank({ query: 'navigate home', history: ['mail'], queryVector: nav });
    expect(pooled.backoff).toMatchObject({ scope: 'global', historyUsed: 1 });
    expect(top(pooled)).toBe(END);
    // every label still gets a rank, and the unsure retriever widens its candidate set
    expect(new Set(pooled.order).size).toBe(labels.length);
    const set = selectCandidates(pooled);
    expect(set.widened).toBe(true);
    expect(set.reason).toBe('backed off to global statistics with 1 of the last 1 calls matched');
    expect(set.candidates.length).toBeGreaterThanOrEqual(5);
  });
});

describe('what an unsure retriever says is true', () => {
  it('an empty history matches no call: 0 of 0, never "3/3"', async () => {
    const c = (await trainRetriever('dtdr-c', tools, plans, encoder, { clusters: 3 })) as ClusterRetriever;
    const [text] = await encoder.embed(['text anna']);
    const r = c.rank({ query: 'text anna', history: [], queryVector: text });
    expect(r.backoff).toMatchObject({ scope: 'cluster', historyUsed: 0, historyWanted: 0 });
  });

  it('a peaked distribution with little support says so, not "flat"', async () => {
    const few = [chainPlan('one', 'text anna', ['contact', 'sms'])];
    const c = (await trainRetriever('dtdr-c', tools, few, encoder, { clusters: 1 })) as ClusterRetriever;
    const [text] = await encoder.embed(['text anna']);
    const r = c.rank({ query: 'text anna', history: ['contact'], queryVector: text });
    expect(r.probabilities[labels.indexOf('sms')]).toBeCloseTo(1, 2);
    expect(r.confident).toBe(false);
    expect(r.cause).toBe('only 1 demonstration steps support this context (fewer than 2)');
    expect(selectCandidates(r).reason).not.toMatch(/flat/);
  });

  it('a flat distribution is called flat, with its top probability', () => {
    const probabilities = Float64Array.from([0.25, 0.25, 0.25, 0.25]);
    const set = selectCandidates(makeRanking(['a', 'b', 'c', END], probabilities));
    expect(set.reason).toBe('the probabilities are flat (the top tool has 0.25)');
  });
});

describe('DTDR-L: a softmax head on the query + history embedding', () => {
  it('its training loss goes down', () => {
    const dense = Array.from({ length: 60 }, (_, i) =>
      Float32Array.from([i % 3 === 0 ? 1 : 0, i % 3 === 1 ? 1 : 0, i % 3 === 2 ? 1 : 0, (i % 7) / 7]),
    );
    const targets = dense.map((_, i) => [i % 3]);
    const generator = trainLinearHead({ dense, targets, classes: 3, sparseSize: 0 }, { epochs: 10, batchSize: 8 });
    const losses: number[] = [];
    for (let next = generator.next(); !next.done; next = generator.next()) losses.push(next.value.loss);
    expect(losses).toHaveLength(10);
    expect(losses[9]).toBeLessThan(losses[0]);
    expect(losses[9]).toBeLessThan(0.2);
  });

  it('predicts the next tool from query and history', async () => {
    const l = await trainRetriever(
      'dtdr-l',
      tools,
      plans,
      wordAxisEncoder(['email', 'text', 'navigate', 'contact', 'mail', 'sms', 'place', 'route']),
      { head: { epochs: 30 } },
    );
    const enc = wordAxisEncoder(['email', 'text', 'navigate', 'contact', 'mail', 'sms', 'place', 'route']);
    const [v] = await enc.embed(['email anna | then: contact']);
    expect(top(l.rank({ query: 'email anna', history: ['contact'], contextVector: v }))).toBe('mail');
  });
});

describe('BM25 and candidate selection', () => {
  it('BM25 ranks the tool whose description matches the query first', () => {
    const bm25 = new Bm25Retriever(labelsOf(tools), [
      ...tools.slice(0, 4),
      { name: 'place', description: 'find a restaurant or shop nearby' },
    ]);
    expect(top(bm25.rank({ query: 'find a restaurant', history: [] }))).toBe('place');
  });

  it('keeps the tools above α when the retriever is confident', () => {
    const probabilities = Float64Array.from([0.6, 0.3, 0.05, 0.05]);
    const set = selectCandidates(
      { labels: ['a', 'b', 'c', END], probabilities, order: Uint32Array.from([0, 1, 2, 3]), confident: true },
      { alpha: 0.1 },
    );
    expect(set).toEqual({
      candidates: [
        { tool: 'a', probability: 0.6 },
        { tool: 'b', probability: 0.3 },
      ],
      widened: false,
    });
  });

  it('keeps every label at or above a conformal threshold, best first, at least one and at most widenMax (and says when it capped)', () => {
    const labels = [...Array.from({ length: 6 }, (_, i) => `t${i}`), END];
    // Unsorted on purpose: the set follows the probabilities, not the label order.
    const probabilities = Float64Array.from([0.05, 0.4, 0.01, 0.3, 0.2, 0.02, 0.02]);
    const ranking = (threshold: number) =>
      withLazyOrder(
        {
          labels,
          probabilities,
          confident: false,
          cause: 'unsure',
          set: { threshold, target: 0.95, confident: false },
        },
        { unitRange: true },
      );
    const tools = (threshold: number, widenMax = 12) =>
      selectCandidates(ranking(threshold), { widenMax, widenMin: 1 }).candidates.map((c) => c.tool);
    expect(tools(0.2)).toEqual(['t1', 't3', 't4']);
    expect(tools(0.9)).toEqual(['t1']); // nothing clears it: the best label alone
    expect(tools(0.02)).toEqual(['t1', 't3', 't4', 't0', 't5', END]); // ties at the threshold are all in
    expect(tools(0.02, 3)).toEqual(['t1', 't3', 't4']);
    expect(selectCandidates(ranking(0.02), { widenMax: 3, widenMin: 1 }).reason).toMatch(
      /capped at 3 tools, holding 0\.90/,
    );
    expect(selectCandidates(ranking(0.2), { widenMax: 3, widenMin: 1 }).reason).not.toMatch(/capped/);
    // The best label is always in; the labels after it that reach the threshold too, even when the
    // head itself does not (a NaN, or a near-tie the order puts first).
    const nanHead = withLazyOrder(
      {
        labels: ['a', 'b', 'c', END],
        probabilities: Float64Array.from([NaN, 0.4, 0.4, 0.2]),
        confident: false,
        set: { threshold: 0.3, target: 0.95, confident: false },
      },
      { unitRange: true },
    );
    expect(
      selectCandidates(nanHead, { widenMin: 1 })
        .candidates.map((c) => c.tool)
        .sort(),
    ).toEqual(['a', 'b', 'c']);
  });

  it("fills an unsure capped set with the descriptions' favourites after the learned ranking's first two thirds, and leaves a confident one", () => {
    // t0..t9 and END, learned order t0, t1, …; every label clears the threshold, so a cap of 4 cuts the set short.
    const labels = [...Array.from({ length: 10 }, (_, i) => `t${i}`), END];
    const probabilities = Float64Array.from([0.3, 0.2, 0.15, 0.1, 0.08, 0.06, 0.05, 0.03, 0.02, 0.01, 0]);
    const ranking = (set: { described?: Uint32Array; describedOnly?: number[] }) =>
      withLazyOrder(
        { labels, probabilities, confident: false, set: { threshold: 0.005, target: 0.95, confident: false, ...set } },
        { unitRange: true },
      );
    const select = (set: Parameters<typeof ranking>[0], widenMax = 4) =>
      selectCandidates(ranking(set), { widenMax, widenMin: 1 });
    const tools = (set: Parameters<typeof ranking>[0], widenMax?: number) =>
      select(set, widenMax).candidates.map((c) => c.tool);
    // Without the descriptions' favourites: the learned top 4.
    expect(tools({})).toEqual(['t0', 't1', 't2', 't3']);
    // With them (t1 is learned already; END has probability 0, a removed label): 3 learned (2/3 of 4, rounded), then t8.
    const described = Uint32Array.from([10, 1, 8, 9, 7]);
    expect(tools({ described })).toEqual(['t0', 't1', 't2', 't8']);
    expect(select({ described }).reason).toMatch(
      /capped at 4 tools, the learned ranking's first 3 then the descriptions' favourites/,
    );
    // A passed-over label (no demonstrations, the set holding most labels) is skipped; the learned order fills the last
    // place (t5); the set is best first.
    expect(tools({ described, describedOnly: [8] }, 8)).toEqual(['t0', 't1', 't2', 't3', 't4', 't5', 't7', 't9']);
    // keepLearned 1: the learned ranking alone.
    expect(select({ described }).candidates.length).toBe(4);
    expect(
      selectCandidates(ranking({ described }), { widenMax: 4, widenMin: 1, keepLearned: 1 }).candidates.map(
        (c) => c.tool,
      ),
    ).toEqual(['t0', 't1', 't2', 't3']);
    // Favourites that run out: the learned order fills the rest.
    expect(tools({ described: Uint32Array.from([0]) })).toEqual(['t0', 't1', 't2', 't3']);
    // A confident ranking's capped set keeps the learned ranking's: the fill is for unsure steps.
    const confident = withLazyOrder(
      { labels, probabilities, confident: true, set: { threshold: 0.005, target: 0.95, confident: true, described } },
      { unitRange: true },
    );
    expect(selectCandidates(confident, { widenMax: 4, widenMin: 1 }).candidates.map((c) => c.tool)).toEqual([
      't0',
      't1',
      't2',
      't3',
    ]);
    // A share outside [0, 1] is refused before any work.
    expect(() => selectCandidates(ranking({ described }), { keepLearned: 1.5 })).toThrow(/keepLearned/);
    // A set the threshold does not cap keeps its own labels.
    expect(tools({ described }, 12)).toHaveLength(10);
    // Without a threshold (too few held-out steps), a widening the cap stops short of widenMass is filled the same way.
    const unthresholded = (set: { described?: Uint32Array }) =>
      withLazyOrder(
        { labels, probabilities, confident: false, set: { threshold: 0, target: 0.95, confident: false, ...set } },
        { unitRange: true },
      );
    const widened = (set: { described?: Uint32Array }, options: object = {}) =>
      selectCandidates(unthresholded(set), { widenMax: 4, widenMin: 1, ...options });
    // The first four hold 0.75 of the probability, short of 0.95: t0, t1, t2 learned, then t8.
    expect(widened({ described }).candidates.map((c) => c.tool)).toEqual(['t0', 't1', 't2', 't8']);
    expect(widened({ described }).reason).toMatch(
      /capped at 4 tools, the learned ranking's first 3 then the descriptions' favourites/,
    );
    // A widening that reaches widenMass within the cap keeps the learned ranking's: 0.75 ≥ 0.7 at four.
    expect(widened({ described }, { widenMass: 0.7 }).candidates.map((c) => c.tool)).toEqual(['t0', 't1', 't2', 't3']);
    // No favourites, or keepLearned 1: the learned ranking alone.
    expect(widened({}).candidates.map((c) => c.tool)).toEqual(['t0', 't1', 't2', 't3']);
    expect(widened({ described }, { keepLearned: 1 }).candidates.map((c) => c.tool)).toEqual(['t0', 't1', 't2', 't3']);
    expect(widened({ described }, { keepLearned: 1 }).reason).not.toMatch(/capped at/);
    // Labels over α stay whatever the share: keepLearned 0 keeps t0, t1, t2 (over 0.1) and fills the last place.
    expect(widened({ described }, { keepLearned: 0 }).candidates.map((c) => c.tool)).toEqual(['t0', 't1', 't2', 't8']);
    expect(widened({ described }, { keepLearned: 0, alpha: 0.09 }).candidates.map((c) => c.tool)).toEqual([
      't0',
      't1',
      't2',
      't3',
    ]);
    // A set past the cap because more labels clear α (maxSize above widenMax) is not a capped widening.
    const overAlpha = widened({ described }, { alpha: 0.005, maxSize: 8 });
    expect(overAlpha.candidates.map((c) => c.tool)).toEqual(['t0', 't1', 't2', 't3', 't4', 't5', 't6', 't7']);
    expect(overAlpha.reason).not.toMatch(/capped at/);
  });

  it("gives a first day's first step the descriptions' favourites in its free places, under half the labels", () => {
    // t0..t29 and END (31 labels: under half is 15); the threshold keeps t0, t1, t2.
    const labels = [...Array.from({ length: 30 }, (_, i) => `t${i}`), END];
    const probabilities = Float64Array.from(labels, (_, i) => (i < 3 ? 0.25 - i * 0.05 : i === 30 ? 0 : 0.01));
    const ranking = (set: { firstDay?: true; described?: Uint32Array; include?: number[] }, confident = false) =>
      withLazyOrder(
        { labels, probabilities, confident, set: { threshold: 0.1, target: 0.95, confident, ...set } },
        { unitRange: true },
      );
    const tools = (r: ReturnType<typeof ranking>, options = {}) =>
      selectCandidates(r, options)
        .candidates.map((c) => c.tool)
        .sort();
    // Favourites: END (probability 0, never), t1 (in already), then t20, t21, … t29.
    const described = Uint32Array.from([30, 1, ...Array.from({ length: 10 }, (_, i) => 20 + i)]);
    expect(tools(ranking({ described }))).toEqual(['t0', 't1', 't2']);
    // On a first day's first step the free places go to them, up to widenMax (12): t20 … t28.
    const first = ranking({ firstDay: true, described });
    expect(tools(first)).toEqual(['t0', 't1', 't2', ...Array.from({ length: 9 }, (_, i) => `t${20 + i}`)].sort());
    const set = selectCandidates(first);
    expect(set.widened).toBe(true);
    expect(set.reason).toMatch(/sets like this one, of 3 tools/);
    expect(set.reason).toMatch(/9 of the descriptions' favourites join for the request's later calls/);
    // Best first, as every set.
    expect(set.candidates.slice(0, 3).map((c) => c.tool)).toEqual(['t0', 't1', 't2']);
    // Under half the labels: with widenMax 20 and favourites to spare (t3 … t29), the set stops at 15 of 31.
    const many = Uint32Array.from({ length: 27 }, (_, i) => 3 + i);
    expect(tools(ranking({ firstDay: true, described: many }), { widenMax: 20 })).toHaveLength(15);
    // Favourites that run out: 3 + 10 here.
    expect(tools(first, { widenMax: 20 })).toHaveLength(13);
    // A tool a rule names keeps its place: the favourites take the places left; the set stays best first.
    const named = ranking({ firstDay: true, described, include: [5] });
    const namedSet = selectCandidates(named).candidates;
    expect(namedSet.map((c) => c.tool)).toContain('t5');
    expect(namedSet).toHaveLength(12);
    for (let i = 1; i < namedSet.length; i++)
      expect(namedSet[i - 1].probability).toBeGreaterThanOrEqual(namedSet[i].probability);
    // Without a conformal threshold (too few held-out steps): the set widened to half the mass (3), then the favourites.
    const unthresholded = withLazyOrder(
      {
        labels,
        probabilities,
        confident: false,
        set: { threshold: 0, target: 0.95, confident: false, firstDay: true, described },
      },
      { unitRange: true },
    );
    const widened = selectCandidates(unthresholded, { widenMin: 3, widenMass: 0.5 });
    expect(
      selectCandidates(unthresholded, { widenMin: 3, widenMass: 0.5, fillFirstSteps: false }).candidates,
    ).toHaveLength(3);
    expect(widened.candidates).toHaveLength(12);
    expect(widened.reason).toMatch(/of the descriptions' favourites join for the request's later calls/);
    // An option given as undefined keeps its default (the fill stays on).
    expect(tools(first, { fillFirstSteps: undefined })).toHaveLength(12);
    // Off with fillFirstSteps: false; never on a confident step; refused when not a boolean.
    expect(tools(first, { fillFirstSteps: false })).toEqual(['t0', 't1', 't2']);
    expect(tools(ranking({ firstDay: true, described }, true))).toEqual(['t0', 't1', 't2']);
    expect(() => selectCandidates(first, { fillFirstSteps: 'yes' as never })).toThrow(/fillFirstSteps/);
  });

  it('offers the included tools, but where more are included than there is room for, keeps the most probable half of the set', () => {
    // Labels t0..t9 and END; the threshold keeps t0..t3; t4..t9 are included (tools a rule names, then added tools the request matches).
    const labels = [...Array.from({ length: 10 }, (_, i) => `t${i}`), END];
    const probabilities = Float64Array.from([0.4, 0.3, 0.2, 0.05, 0.01, 0.009, 0.008, 0.007, 0.006, 0.005, 0.005]);
    const ranking = {
      labels,
      probabilities,
      order: Uint32Array.from(labels.keys()),
      confident: false,
      set: { threshold: 0.05, target: 0.95, confident: false, include: [4, 5, 6, 7, 8, 9] },
    };
    // Room for all: four by threshold, then every included one.
    expect(selectCandidates(ranking, { widenMax: 12 }).candidates.map((c) => c.tool)).toEqual([
      't0',
      't1',
      't2',
      't3',
      't4',
      't5',
      't6',
      't7',
      't8',
      't9',
    ]);
    // Six places: t0..t2 stay (half), the first three included take the rest; t3 gives way.
    expect(selectCandidates(ranking, { widenMax: 6, widenMin: 1 }).candidates.map((c) => c.tool)).toEqual([
      't0',
      't1',
      't2',
      't4',
      't5',
      't6',
    ]);
    // Two included and a full set: they take the two least probable places.
    const two = { ...ranking, set: { ...ranking.set, include: [8, 9] } };
    expect(selectCandidates(two, { widenMax: 4, widenMin: 1 }).candidates.map((c) => c.tool)).toEqual([
      't0',
      't1',
      't8',
      't9',
    ]);
  });

  it('a tool ranked by its description alone joins a set holding most labels only where a rule names it', () => {
    // t0..t8 and END; t4 was added after training and has no demonstrations (set.describedOnly).
    const labels = [...Array.from({ length: 9 }, (_, i) => `t${i}`), END];
    const probabilities = Float64Array.from([0.3, 0.2, 0.15, 0.1, 0.08, 0.07, 0.05, 0.03, 0.01, 0.01]);
    const base = { labels, probabilities, order: Uint32Array.from(labels.keys()), confident: false };
    const tools = (set: { threshold: number; describedOnly?: number[]; include?: number[] }, options = {}) =>
      selectCandidates({ ...base, set: { target: 0.95, confident: false, ...set } }, options).candidates.map(
        (c) => c.tool,
      );
    // A threshold that keeps every label says nothing of t4: it is passed over…
    expect(tools({ threshold: 0.005, describedOnly: [4] })).not.toContain('t4');
    expect(tools({ threshold: 0.005, describedOnly: [4] })).toHaveLength(9);
    // …unless a rule names it (the request matches its description).
    expect(tools({ threshold: 0.005, describedOnly: [4], include: [4] })).toContain('t4');
    // A set of five of ten labels is selective: t4 joins by its probability like any label.
    expect(tools({ threshold: 0.08, describedOnly: [4] })).toEqual(['t0', 't1', 't2', 't3', 't4']);
    // Where no threshold is set the set widens by probability mass; a widening to most labels passes it over too.
    expect(tools({ threshold: 0, describedOnly: [4] }, { widenMass: 0.99, widenMax: 12 })).not.toContain('t4');
    expect(tools({ threshold: 0, describedOnly: [4] }, { widenMass: 0.6 })).toContain('t4');
    // A confident set that is not widened keeps its labels, and a passed-over label never makes a set larger.
    const confident = selectCandidates({
      ...base,
      probabilities: Float64Array.from([0.6, 0.1, 0.08, 0.06, 0.05, 0.04, 0.03, 0.02, 0.01, 0.01]),
      confident: true,
      set: { threshold: 0, target: 0.95, confident: true, describedOnly: [0] },
    });
    expect([confident.candidates.map((c) => c.tool), confident.widened]).toEqual([['t0'], false]);
    const widenedTo = (describedOnly?: number[]) =>
      selectCandidates(
        { ...base, set: { threshold: 0, target: 0.95, confident: false, ...(describedOnly ? { describedOnly } : {}) } },
        { widenMass: 0.7, widenMin: 1 },
      ).candidates.length;
    expect(widenedTo([0])).toBeLessThanOrEqual(widenedTo());
  });
});

describe('DAG plans: every execution order counts', () => {
  it('after the "other" root first, DTDR-C still knows the remaining root', async () => {
    const dag = Array.from({ length: 4 }, (_, i) =>
      planFromRecord({
        id: `s${i}`,
        user_request: 'text anna where i am',
        task_nodes: [{ task: 'place' }, { task: 'contact' }, { task: 'sms' }],
        task_links: [
          { source: 'place', target: 'sms' },
          { source: 'contact', target: 'sms' },
        ],
      }),
    );
    expect(planOrders(dag[0]).map((o) => o.map((i) => dag[0].nodes[i].tool))).toEqual([
      ['place', 'contact', 'sms'],
      ['contact', 'place', 'sms'],
    ]);
    const c = (await trainRetriever('dtdr-c', tools, dag, encoder, { clusters: 1 })) as ClusterRetriever;
    const [q] = await encoder.embed(['text anna where i am']);
    const r = c.rank({ query: 'text anna where i am', history: ['contact'], queryVector: q });
    expect(top(r)).toBe('place');
    expect(r.backoff).toMatchObject({ scope: 'cluster', historyUsed: 1, level: 3 });
  });
});

describe('DTDR-CB: a lexical fallback for tools the demonstrations never used', () => {
  it('ranks an undemonstrated tool that matches the query above the graph guesses', async () => {
    const coldTools = [...tools, { name: 'weather', description: 'forecast rain and sun for a city' }];
    const many = Array.from({ length: 4 }, () => plans)
      .flat()
      .map((p, i) => ({ ...p, id: `${p.id}-${i}` }));
    const query = 'will it rain in the city';
    const [q] = await encoder.embed([query]);
    const c = await trainRetriever('dtdr-c', coldTools, many, encoder, { clusters: 3 });
    const cb = await trainRetriever('dtdr-cb', coldTools, many, encoder, { clusters: 3 });
    const weather = labelsOf(coldTools).indexOf('weather');
    const rankOf = (r: { order: Uint32Array }) => Array.from(r.order).indexOf(weather);
    // DTDR-C can only rank what it saw: the new tool sits among the never-seen ones at the tail.
    const graphRank = rankOf(c.rank({ query, history: [], queryVector: q }));
    const fusedRank = rankOf(cb.rank({ query, history: [], queryVector: q }));
    expect(graphRank).toBeGreaterThanOrEqual(3);
    expect(fusedRank).toBeLessThanOrEqual(1);
  });
});

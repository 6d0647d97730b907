/**
 * Request coverage: an IBM Model 1 word–tool alignment with a NULL word, fitted by EM
 * on demonstrations and descriptions. It says which request words the calls so far and the set
 * leave unexplained; a confident "the plan is done" with such a word is not confident, and the
 * tool that explains it joins the set. Saved, loaded and checked with the model; older models
 * (no coverage) load and rank as before.
 */
import { terms } from '../src/core/base/text.js';
import { describe, expect, it } from 'vitest';
import { Dtdr } from '../src/core/dtdr.js';
import { DtdrError } from '../src/core/base/errors.js';
import { chainPlan } from '../src/core/plans/plan.js';
import type { ToolSpec } from '../src/core/base/types.js';
import {
  checkCoverageState,
  coverageFromState,
  coverageState,
  fitCoverage,
  learnCoverage,
  requestWordsOf,
  strongWords,
  unexplained,
  withAddedTools,
} from '../src/core/retrieval/default/coverage.js';
import { DEMO_TOOLS, generateDemoPlans } from '../src/demo/toolset.js';
import { loadEncoder } from '../src/encoders/node.js';

const tools: ToolSpec[] = [
  { name: 'weather_get', description: 'Get the weather forecast for a city' },
  { name: 'sms_send', description: 'Send a text message to a phone number' },
  { name: 'contacts_search', description: 'Look up a person in the address book' },
];
const index = new Map(tools.map((t, i) => [t.name, i] as [string, number]));
const plans = [
  ...Array.from({ length: 20 }, (_, i) =>
    chainPlan(`w${i}`, `kindly tell me the weather in city${i % 5}`, ['weather_get']),
  ),
  ...Array.from({ length: 20 }, (_, i) =>
    chainPlan(`s${i}`, `kindly text person${i % 4} that I am late`, ['contacts_search', 'sms_send']),
  ),
  ...Array.from({ length: 10 }, (_, i) =>
    chainPlan(`c${i}`, `kindly find the number of person${i % 4}`, ['contacts_search']),
  ),
];

describe('the word–tool alignment (IBM Model 1 with a NULL word)', () => {
  const m = fitCoverage(tools, plans, index, { gain: 3 });
  const best = (word: string) => tools[m.tools[m.words.get(word)!][0]].name;

  it('aligns request words with the tools that explain them, and generic words with NULL', () => {
    expect(best('weather')).toBe('weather_get');
    expect(best('text')).toBe('sms_send');
    expect(best('find')).toBe('contacts_search');
    // "kindly" is in every request: NULL explains it better than any tool
    const kindly = m.words.get('kindly')!;
    expect(m.nullProb[kindly]).toBeGreaterThan(m.probs[kindly][0] ?? 0);
  });

  it('finds the tool for a word the calls and the set leave unexplained, and nothing when they explain it', () => {
    const words = requestWordsOf(m, terms('kindly text anna the weather'));
    const called = (set: string[]) => (a: number) => set.includes(tools[a].name);
    expect(unexplained(m, words, called(['weather_get']), () => true).map((u) => tools[u.tool].name)).toEqual([
      'sms_send',
    ]);
    expect(unexplained(m, words, called(['weather_get', 'sms_send']), () => true)).toEqual([]);
    // a tool that cannot be offered (removed) never joins
    expect(unexplained(m, words, called(['weather_get']), (a) => tools[a].name !== 'sms_send')).toEqual([]);
  });

  it('names, once per request, the few words a set could leave unexplained; checking only those gives the same answer', () => {
    const words = requestWordsOf(m, terms('kindly text anna the weather'));
    const strong = Array.from(strongWords(m, words), (w) => m.names[w]).sort();
    // "kindly" is NULL's, so no set leaves it unexplained; "text" and "weather" have a tool of their own
    expect(strong).toEqual(['text', 'weather']);
    const called = (set: string[]) => (a: number) => set.includes(tools[a].name);
    for (const set of [[], ['weather_get'], ['sms_send'], ['weather_get', 'sms_send'], ['contacts_search']]) {
      expect(unexplained(m, strongWords(m, words), called(set), () => true)).toEqual(
        unexplained(m, words, called(set), () => true),
      );
    }
  });

  it('gives a tool added later rows from its description, without refitting', () => {
    const all = [...tools, { name: 'music_play', description: 'Play a song or playlist' }];
    const extended = withAddedTools(m, all, [3]);
    const words = requestWordsOf(extended, terms('play a song'));
    expect(
      unexplained(
        extended,
        words,
        () => false,
        () => true,
      ).map((u) => all[u.tool].name),
    ).toContain('music_play');
    expect(m.words.has('song')).toBe(false); // the fitted model is untouched
  });

  it('saves to a columnar state that loads back the same and is checked', () => {
    const s = coverageState(m);
    expect(() => checkCoverageState('state.coverage', JSON.parse(JSON.stringify(s)), tools.length)).not.toThrow();
    const back = coverageFromState(s);
    expect([...back.words.keys()]).toEqual([...m.words.keys()]);
    back.tools.forEach((row, i) => expect(Array.from(row)).toEqual(Array.from(m.tools[i])));
    const bad = (edit: (x: typeof s) => void) => {
      const x = JSON.parse(JSON.stringify(s));
      edit(x);
      return () => checkCoverageState('state.coverage', x, tools.length);
    };
    expect(bad((x) => (x.tools[0] = 99))).toThrow(DtdrError);
    expect(bad((x) => (x.offsets[1] = -1))).toThrow(DtdrError);
    expect(bad((x) => (x.probs[0] = 2))).toThrow(DtdrError);
    expect(bad((x) => x.words.push(x.words[0]))).toThrow(DtdrError);
    expect(bad((x) => (x.calls![0] = x.said![0] + 1))).toThrow(/calls/);
    expect(bad((x) => delete x.said)).toThrow(/said/);
    // A file written before the counts loads, its words standing by the alignment alone.
    const older = coverageFromState({ ...s, said: undefined, calls: undefined });
    expect(Array.from(older.strong)).toEqual(Array.from(fitCoverage(tools, plans, index, { gain: 3 }).strong));
    expect(older.said).toBeUndefined();
  });
});

describe('the counts a reason prints: the demonstrations that say a word, and those of them calling each tool', () => {
  // "text" is said in 21 demonstrations, all calling sms_send; "late" in 4, 1 of which calls sms_send.
  const lateOnes = Array.from({ length: 3 }, (_, i) =>
    chainPlan(`l${i}`, `running late for person${i}`, ['contacts_search']),
  );
  const texts = Array.from({ length: 20 }, (_, i) => chainPlan(`t${i}`, `text person${i % 4} hello`, ['sms_send']));
  const mixed = [...texts, chainPlan('tl', 'text person1 I am late', ['sms_send']), ...lateOnes];
  const m = fitCoverage(tools, mixed, index, { gain: 1.5 });
  const id = (w: string) => m.words.get(w)!;

  it('counts, per word, the demonstrations that say it and those of them that call each listed tool', () => {
    expect(m.said![id('text')]).toBe(21);
    expect(m.calls![id('text')][0]).toBe(21);
    expect(m.said![id('late')]).toBe(4);
    const sms = m.tools[id('late')].indexOf(index.get('sms_send')!);
    expect(m.calls![id('late')][sms]).toBe(1);
  });

  it('names the word it found with its counts, as saved and loaded', () => {
    const contacts = (a: number) => a === index.get('contacts_search');
    const words = requestWordsOf(m, terms('text person2 I am late'));
    const found = unexplained(m, words, contacts, () => true);
    expect(found).toEqual([{ tool: index.get('sms_send'), word: 'text', said: 21, calls: 21 }]);
    const back = coverageFromState(JSON.parse(JSON.stringify(coverageState(m))));
    expect(unexplained(back, words, contacts, () => true)).toEqual(found);
  });

  it('learns: new demonstrations join the counts; the alignment stays as fitted', () => {
    const learned = coverageFromState(coverageState(m));
    const texted = Array.from({ length: 30 }, (_, i) =>
      chainPlan(`x${i}`, `text the weather to person${i % 4}`, ['weather_get']),
    );
    learnCoverage(learned, texted, index);
    expect(learned.said![id('text')]).toBe(51);
    expect(learned.calls![id('text')][0]).toBe(21); // sms_send: 21 of 51
    expect(learned.probs[id('text')]).toEqual(m.probs[id('text')]);
    expect(m.said![id('text')]).toBe(21); // the fitted model is untouched
  });
});

describe('request coverage in DTDR-G', () => {
  it('is fitted, saved and loaded with the model; a model saved without it loads and ranks the same', async () => {
    const encoder = await loadEncoder();
    const model = await Dtdr.train({ tools: DEMO_TOOLS, plans: generateDemoPlans(300, 1), encoder, seed: 0 });
    const saved = JSON.parse(JSON.stringify(model.toJSON())) as {
      state: { coverage?: unknown };
    };
    expect(saved.state.coverage).toBeDefined();
    const fromBinary = Dtdr.load(model.toBinary(), encoder);
    const old = JSON.parse(JSON.stringify(saved));
    delete old.state.coverage;
    const legacy = Dtdr.load(old, encoder);
    for (const [query, history] of [
      ['Find a vegan restaurant near me and text the address to Sam', ['maps_search_place']],
      ['Call the nearest pharmacy', []],
    ] as [string, string[]][]) {
      const a = await model.retrieve(query, history);
      const b = await fromBinary.retrieve(query, history);
      expect(b.candidates.map((c) => c.tool)).toEqual(a.candidates.map((c) => c.tool));
      expect(b.confident).toBe(a.confident);
      // without coverage the probabilities are the same: the rule only widens sets
      const logs = (p: Float64Array | Float32Array | number[]) => Array.from(p, Math.log);
      expect(logs((await legacy.retrieve(query, history)).ranking.probabilities)).toEqual(
        logs(a.ranking.probabilities).map((v) => expect.closeTo(v, 5)),
      );
    }
    // A file written while the sequence-words rule was shipped holds its table: it is ignored on load, and the model
    // saves without it.
    const older = JSON.parse(JSON.stringify(saved));
    older.state.sequenceWords = { tools: [0], df: [1] };
    const fromOlder = Dtdr.load(older, encoder);
    const query = 'Find a vegan restaurant near me and text the address to Sam';
    const tools = async (m: Dtdr) => (await m.retrieve(query, [])).candidates.map((c) => c.tool);
    expect(await tools(fromOlder)).toEqual(await tools(fromBinary));
    const resaved = fromOlder.toJSON() as unknown as { state: Record<string, unknown> };
    expect(resaved.state).not.toHaveProperty('sequenceWords');
    const bad = JSON.parse(JSON.stringify(saved)) as { state: { coverage: { tools: number[] } } };
    bad.state.coverage.tools[0] = DEMO_TOOLS.length + 5;
    expect(() => Dtdr.load(bad, encoder)).toThrow(/coverage/);
    await encoder.dispose?.();
  }, 120_000);
});

/**
 * The new-combination rule (combinations.ts): which tools demonstrations call together, the tool
 * always called right before another, the held-out switch, and the saved form. Tiny hand-checked
 * fixtures; the real-data effect is in test/showcase.test.ts and the README.
 */
import { describe, expect, it } from 'vitest';
import { chainPlan, planTools } from '../src/core/plans/plan.js';
import { terms } from '../src/core/base/text.js';
import { fitCoverage } from '../src/core/retrieval/default/coverage.js';
import {
  checkCombinationsState,
  combinationsFromState,
  combinationsState,
  demonstratedWith,
  fitCombinations,
  learnCombinations,
  newCombination,
  MIN_FIRED,
} from '../src/core/retrieval/default/rules/new-combinations.js';
import type { ToolSpec } from '../src/core/base/types.js';

const tools: ToolSpec[] = [
  { name: 'maps_search', description: 'Find places on a map' },
  { name: 'contacts_search', description: 'Look up a contact phone number' },
  { name: 'sms_send', description: 'Send a text message' },
  { name: 'restaurant_book', description: 'Book a restaurant table' },
];
const index = new Map(tools.map((t, i) => [t.name, i]));
const L = tools.length + 1;

describe('which tools demonstrations combine', () => {
  const plans = [
    chainPlan('a', 'find a cafe and book it', ['maps_search', 'restaurant_book']),
    chainPlan('b', 'text Ann that I am late', ['contacts_search', 'sms_send']),
  ];
  const c = fitCombinations(plans, index, L, undefined);

  it('lists the tools some demonstration calls together, and no others', () => {
    expect(demonstratedWith(c, [0], 3)).toBe(true);
    expect(demonstratedWith(c, [0], 2)).toBe(false);
    expect(demonstratedWith(c, [1], 2)).toBe(true);
  });

  it('names the tool always called right before another (its entry)', () => {
    expect(c.entry[2]).toBe(1); // contacts_search before sms_send, 1 of 1
    expect(c.entry[3]).toBe(0);
    expect(c.entry[0]).toBe(-1); // first calls have none
  });

  it('learns new combinations online', () => {
    const learned = fitCombinations(plans, index, L, undefined);
    learnCombinations(
      learned,
      [chainPlan('c', 'find a cafe and text Ann', ['maps_search', 'contacts_search', 'sms_send'])],
      index,
    );
    expect(demonstratedWith(learned, [0], 2)).toBe(true);
    expect(demonstratedWith(learned, [3], 2)).toBe(false);
  });

  it('round-trips its saved form, and refuses what a fit could not have written', () => {
    const s = JSON.parse(JSON.stringify(combinationsState(c)));
    expect(() => checkCombinationsState('state.combinations', s, L)).not.toThrow();
    const back = combinationsFromState(s);
    expect(Array.from(back.entry)).toEqual(Array.from(c.entry));
    expect(back.together.map((l) => Array.from(l))).toEqual(c.together.map((l) => Array.from(l)));
    const refused = (change: Record<string, unknown>, field: RegExp) =>
      expect(() => checkCombinationsState('state.combinations', { ...s, ...change }, L)).toThrow(field);
    refused({ entry: s.entry.map(() => 99) }, /state\.combinations\.entry/);
    refused({ entry: s.entry.map(() => L - 1) }, /state\.combinations\.entry/); // END before a tool
    refused({ enabled: 'yes' }, /state\.combinations\.enabled/);
    refused({ endAlarms: 2 }, /state\.combinations\.endAlarms/);
    refused({ offsets: s.offsets.slice(0, -1) }, /state\.combinations\.offsets/);
    refused({ together: [...s.together].reverse() }, /state\.combinations\.together/); // not rising
    // END combined with a tool: the last slot must be empty.
    refused({ offsets: [...s.offsets.slice(0, -1), s.offsets[L - 1] + 1], together: [...s.together, 0] }, /END/);
  });
});

describe('the rule, switched on by held-out precision', () => {
  // Requests say what they need; three sequences, each demonstrated 30 times, with varied names
  // (so the alignment's NULL word takes the filler). A fixture this small has few words: the
  // alignment gain asked of a word is 5 here (100 by default, for real vocabularies).
  const names =
    'ann ben cara dan eve finn gus hal ivy jon kim lou max ned ola pam quin rob sue tom uma val wes xia yan zed abe bea cal dee'.split(
      ' ',
    );
  const places = 'cafe diner bistro pub grill deli bakery tavern canteen eatery'.split(' ');
  const plans = [
    ...names.map((n, i) =>
      chainPlan(`m${i}`, `find a ${places[i % 10]} near ${n} and book a table`, ['maps_search', 'restaurant_book']),
    ),
    ...names.map((n, i) => chainPlan(`t${i}`, `text ${n} a message`, ['contacts_search', 'sms_send'])),
    ...names.map((n, i) =>
      chainPlan(`x${i}`, `find a ${places[(i + 3) % 10]} for ${n} then text the address`, [
        'maps_search',
        'contacts_search',
        'sms_send',
      ]),
    ),
  ];
  const coverage = fitCoverage(tools, plans, index, { gain: 5 });

  it('fires where a held-out sequence asks for a tool the rest never combine with its calls, and is on when that foretold the plan', () => {
    const c = fitCombinations(plans, index, L, coverage);
    expect(c.fired).toBeGreaterThanOrEqual(MIN_FIRED);
    expect(c.precision).toBeGreaterThanOrEqual(0.75);
    expect(c.enabled).toBe(true);
    // Complete demonstrations leave no requested tool uncombined: no false alarm where END is due.
    expect(c.endAlarms).toBe(0);
    expect(c.atEnd).toBe(true);
  });

  it('stays off where request words do not foretell the plan', () => {
    // The same requests with their plans shuffled across sequences: words now name the wrong tools.
    const scrambled = plans.map((p, i) =>
      chainPlan(
        p.id,
        plans[(i * 7 + 11) % plans.length].query,
        p.order.map((k) => p.nodes[k].tool),
      ),
    );
    const c = fitCombinations(scrambled, index, L, fitCoverage(tools, scrambled, index, { gain: 5 }));
    expect(c.enabled).toBe(false);
    expect(c.atEnd).toBe(false);
    expect(c.precision).toBeLessThan(0.75);
  });

  it('offers the requested tool and the tool the demonstrations call before it', () => {
    const c = fitCombinations(plans.slice(0, 60), index, L, coverage);
    const words = Uint32Array.from(['text', 'table'].map((w) => coverage.words.get(w)!).filter((w) => w !== undefined));
    const found = newCombination({ ...c, enabled: true }, coverage, words, [0], () => true);
    expect(found?.tool).toBe(2);
    expect(found?.offer).toEqual([1, 2]);
    // After contacts_search, "text" asks for nothing new (demonstrated together), but "table" does:
    // restaurant_book, with maps_search, always called right before it.
    const text = Uint32Array.of(coverage.words.get('text')!);
    expect(newCombination({ ...c, enabled: true }, coverage, text, [1], () => true)).toBeUndefined();
    const table = newCombination({ ...c, enabled: true }, coverage, words, [1], () => true);
    expect(table).toMatchObject({ word: 'table', tool: 3, offer: [0, 3] });
    // With the counts behind it: the demonstrations whose request says "table", and those of them calling its tools.
    const sayTable = plans.filter((p) => terms(p.query).includes('table'));
    expect(table?.said).toBe(sayTable.length);
    expect(table?.calls).toEqual(
      table?.tools.map((f) => sayTable.filter((p) => planTools(p).includes(tools[f].name)).length),
    );
    expect(newCombination({ ...c, enabled: false }, coverage, words, [0], () => true)).toBeUndefined();
  });
});

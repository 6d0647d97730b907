/** The default method's shape: a step rule is one object and one registry line; its public options are checked. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DtdrError } from '../src/core/base/errors.js';
import { Dtdr } from '../src/core/dtdr.js';
import type { StepRule } from '../src/core/retrieval/default/rule.js';
import { STEP_RULE_NAMES, STEP_RULES } from '../src/core/retrieval/default/step-rules.js';
import { loadEncoder } from '../src/encoders/node.js';
import { DEMO_TOOLS, generateDemoPlans } from '../src/demo/toolset.js';
import { wordAxisEncoder } from './helpers.js';

/** A toy rule: a request that says its word is not confident, and its tool joins the set. */
const toyRule: StepRule<{ word: string; tool: string }> = {
  name: 'toy-word',
  fit: () => ({ word: 'urgently', tool: 'phone_call' }),
  load: (saved) => saved.toyWord as { word: string; tool: string } | undefined,
  save(state, into) {
    into.toyWord = state;
  },
  check(state, step) {
    if (!step.query.includes(state.word)) return null;
    return { tools: [step.side.index.get(state.tool)!], because: [`the request says "${state.word}"`] };
  },
};

const WORDS = ['restaurant', 'shop', 'text', 'message', 'email', 'directions', 'phone', 'person', 'address'];
const encoder = wordAxisEncoder([...WORDS, 'find', 'send', 'anna', 'ben', 'navigate', 'mail']);

describe('step rules', () => {
  beforeAll(() => {
    STEP_RULES.push(toyRule); // the one registry line
  });
  afterAll(() => {
    STEP_RULES.splice(STEP_RULES.indexOf(toyRule), 1);
  });

  it('a registered rule is fitted, checked at every step, saved and loaded with the model', async () => {
    const model = await Dtdr.train({ tools: DEMO_TOOLS, plans: generateDemoPlans(400, 1), encoder });
    const calm = await model.retrieve('find anna and send her an email', []);
    expect(calm.reason ?? '').not.toContain('urgently');
    const urgent = await model.retrieve('find anna and send her an email urgently', []);
    expect(urgent.confident).toBe(false);
    expect(urgent.reason).toContain('the request says "urgently"');
    expect(urgent.candidates.map((c) => c.tool)).toContain('phone_call');
    const saved = model.toJSON() as unknown as { state: Record<string, unknown> };
    expect(saved.state.toyWord).toEqual({ word: 'urgently', tool: 'phone_call' });
    const loaded = Dtdr.load(JSON.parse(JSON.stringify(saved)), encoder);
    const again = await loaded.retrieve('find anna and send her an email urgently', []);
    expect(again.reason).toContain('the request says "urgently"');
    expect(again.candidates.map((c) => c.tool)).toEqual(urgent.candidates.map((c) => c.tool));
  });

  it('a rule left out (withoutRules, for ablations) stays out through a save and a load; an unknown name is refused', async () => {
    const tools = DEMO_TOOLS;
    const plans = generateDemoPlans(300, 2);
    const encoder = await loadEncoder();
    const model = await Dtdr.train({
      tools,
      plans,
      encoder,
      gated: { experimental: { withoutRules: ['request-coverage'] } },
    });
    const saved = JSON.parse(JSON.stringify(model.toJSON())) as { state: { withoutRules?: string[] } };
    expect(saved.state.withoutRules).toEqual(['request-coverage']);
    const rulesOf = (m: Dtdr) =>
      Object.keys((m as unknown as { state: { base: { parts: { rules: object } } } }).state.base.parts.rules);
    for (const m of [model, Dtdr.load(saved, encoder)]) {
      expect(rulesOf(m)).not.toContain('request-coverage');
      expect(rulesOf(m)).toContain('added-tools');
    }
    await expect(
      Dtdr.train({ tools, plans, encoder, gated: { experimental: { withoutRules: ['coverage'] } } }),
    ).rejects.toSatisfy((e: unknown) => DtdrError.isInstance(e) && e.field === 'withoutRules');
    saved.state.withoutRules = ['nonsense'];
    expect(() => Dtdr.load(saved, encoder)).toThrow(/withoutRules/);
    // A file from an ablation that left out a rule deleted since loads: the rule is out anyway.
    saved.state.withoutRules = ['sequence-words', 'request-coverage'];
    const older = Dtdr.load(saved, encoder);
    expect(rulesOf(older)).not.toContain('request-coverage');
    expect((older.toJSON() as unknown as typeof saved).state.withoutRules).toEqual(['request-coverage']);
  });

  it('every registered rule has a name of its own and the whole interface', () => {
    // The shipped rules, in order (this file's toy rule is registered after them while it runs).
    expect(STEP_RULES.slice(0, STEP_RULE_NAMES.length).map((r) => r.name)).toEqual(STEP_RULE_NAMES);
    expect(new Set(STEP_RULES.map((r) => r.name)).size).toBe(STEP_RULES.length);
    for (const r of STEP_RULES) {
      for (const f of ['fit', 'load', 'save', 'check'] as const) expect(typeof r[f], `${r.name}.${f}`).toBe('function');
    }
  });
});

describe('public options of the default method', () => {
  const refused = async (gated: Record<string, unknown>, field: string) => {
    const train = Dtdr.train({ tools: DEMO_TOOLS, plans: generateDemoPlans(60, 2), encoder, gated: gated });
    const named = (e: unknown) => DtdrError.isInstance(e) && e.code === 'options' && e.field === field;
    await expect(train).rejects.toSatisfy(named);
  };

  it('refuses a bad value of each with a DtdrError naming it, before any work', async () => {
    await refused({ folds: 1 }, 'folds');
    await refused({ folds: 2.5 }, 'folds');
    await refused({ confidentAbove: 1.5 }, 'confidentAbove');
    await refused({ confidentAbove: Number.NaN }, 'confidentAbove');
    await refused({ neighbours: 0 }, 'neighbours');
    await refused({ target: 1 }, 'target');
  });
});

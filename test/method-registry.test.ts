/** The method registry: a method is one object (here, in this file) and one line in the registry. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Dtdr } from '../src/core/dtdr.js';
import { makeRanking } from '../src/core/retrieval/ranking.js';
import {
  registeredMethods,
  registerMethod,
  unregisterMethod,
  type MethodEntry,
} from '../src/core/retrieval/methods.js';
import { registerPaperMethods } from '../src/core/retrieval/paper-methods.js';
import type { MethodName, RankInput, Ranking, Retriever } from '../src/core/retrieval/types.js';
import { DEMO_TOOLS, generateDemoPlans } from '../src/demo/toolset.js';
import { DtdrError } from '../src/core/base/errors.js';
import { wordAxisEncoder } from './helpers.js';
import { PAPER_METHODS } from '../src/core/retrieval/paper-methods.js';

/** A toy method: the tool it was told to favour first, then the others in order. */
class FavouriteRetriever implements Retriever {
  readonly method = 'favourite' as MethodName;
  readonly needs = { query: false, context: false };
  readonly historyLength = 0;
  constructor(
    readonly labels: readonly string[],
    readonly favourite: string,
  ) {}

  rank(_: RankInput): Ranking {
    const p = new Float64Array(this.labels.length).fill(1);
    p[this.labels.indexOf(this.favourite)] = 10;
    const sum = p.reduce((a, b) => a + b, 0);
    return makeRanking(
      this.labels,
      p.map((v) => v / sum),
    );
  }

  state() {
    return { favourite: this.favourite };
  }
}

const favourite: MethodEntry = {
  name: 'favourite' as MethodName,
  needs: { queries: false, tools: false, contexts: false },
  toolsOnly: true,
  fit: (f) => new FavouriteRetriever(f.labels, f.tools[f.tools.length - 1].name),
  fromState: (input) => new FavouriteRetriever(input.labels, String(input.state.favourite)),
  withTools: null,
};

describe('method registry', () => {
  beforeAll(() => {
    registerMethod(favourite); // the one registry line
  });
  afterAll(() => {
    unregisterMethod(favourite.name);
  });

  it('a registered method trains on tools alone, ranks, saves, loads and takes added tools', async () => {
    const model = await Dtdr.train({ method: 'favourite' as MethodName, tools: DEMO_TOOLS });
    const last = DEMO_TOOLS[DEMO_TOOLS.length - 1].name;
    expect((await model.retrieve('anything', [])).candidates[0].tool).toBe(last);
    const loaded = Dtdr.load(JSON.parse(JSON.stringify(model.toJSON())));
    expect(loaded.method).toBe('favourite');
    expect((await loaded.retrieve('anything', [])).candidates[0].tool).toBe(last);
    await loaded.addTools([{ name: 'weather_now', description: 'The weather where you are now.' }]);
    expect(loaded.tools.map((t) => t.name)).toContain('weather_now');
  });

  it('every entry has a unique name, its needs, and fit, fromState and withTools', () => {
    registerPaperMethods();
    const entries = registeredMethods();
    expect(new Set(entries.map((m) => m.name)).size).toBe(entries.length);
    for (const m of entries) {
      expect(Object.keys(m.needs).sort(), m.name).toEqual(['contexts', 'queries', 'tools']);
      expect(typeof m.fit, m.name).toBe('function');
      expect(typeof m.fromState, m.name).toBe('function');
      expect(m.withTools === null || typeof m.withTools === 'function', m.name).toBe(true);
    }
  });

  it('an app that imports only `dtdr` in a browser has DTDR-G; a paper method asks for `dtdr/methods` on train and on load', async () => {
    registerPaperMethods();
    const plans = generateDemoPlans(40, 1);
    const encoder = wordAxisEncoder(['email', 'photo', 'weather', 'alarm', 'music', 'call', 'map', 'note']);
    const model = await Dtdr.train({ method: 'dtdr-c', tools: DEMO_TOOLS, plans, encoder });
    const saved = JSON.parse(JSON.stringify(model.toJSON()));
    for (const m of PAPER_METHODS) unregisterMethod(m.name);
    const train = Dtdr.train({ method: 'dtdr-c', tools: DEMO_TOOLS, plans, encoder });
    await expect(train).rejects.toBeInstanceOf(DtdrError);
    await expect(train).rejects.toMatchObject({
      field: 'method',
      message: expect.stringContaining("import 'dtdr/methods'"),
    });
    expect(() => Dtdr.load(saved, encoder)).toThrow(/"dtdr-c" is not registered in this app — import 'dtdr\/methods'/);
    const gated = await Dtdr.train({ tools: DEMO_TOOLS, plans, encoder });
    expect(gated.method).toBe('dtdr-g');
    await import('../src/methods.js'); // what the hint says to do
    registerPaperMethods(); // the module ran once already in this file's context: register again by hand
    expect(Dtdr.load(saved, encoder).method).toBe('dtdr-c');
  });
});

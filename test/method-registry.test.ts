/** The method registry: a method is one object (here, in this file) and one line in the registry. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Dtdr } from '../src/core/dtdr.js';
import { makeRanking } from '../src/core/retrieval/ranking.js';
import { METHOD_REGISTRY, type MethodEntry } from '../src/core/retrieval/methods.js';
import type { MethodName, RankInput, Ranking, Retriever } from '../src/core/retrieval/types.js';
import { DEMO_TOOLS } from '../src/demo/toolset.js';

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
    METHOD_REGISTRY.push(favourite); // the one registry line
  });
  afterAll(() => {
    METHOD_REGISTRY.splice(METHOD_REGISTRY.indexOf(favourite), 1);
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
    expect(new Set(METHOD_REGISTRY.map((m) => m.name)).size).toBe(METHOD_REGISTRY.length);
    for (const m of METHOD_REGISTRY) {
      expect(Object.keys(m.needs).sort(), m.name).toEqual(['contexts', 'queries', 'tools']);
      expect(typeof m.fit, m.name).toBe('function');
      expect(typeof m.fromState, m.name).toBe('function');
      expect(m.withTools === null || typeof m.withTools === 'function', m.name).toBe(true);
    }
  });
});

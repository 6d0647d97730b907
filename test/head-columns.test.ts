/**
 * What one learn call's column training takes on (head-columns.ts): the tools its runs call that the model had no
 * demonstrated step of, MAX_FRESH_COLUMNS of them in the call and as many in each learnMore call after it.
 */
import { describe, expect, it } from 'vitest';
import type { Plan } from '../src/core/base/types.js';
import { headNewTools, MAX_FRESH_COLUMNS } from '../src/core/retrieval/default/head-columns.js';
import type { ToolSide } from '../src/core/retrieval/default/tool-side.js';
import type { GatedRetriever } from '../src/core/retrieval/default/index.js';
import { Dtdr } from '../src/core/dtdr.js';
import { END } from '../src/core/base/types.js';
import { planTools } from '../src/core/plans/plan.js';
import { demoDataset } from '../src/demo/toolset.js';
import { loadEncoder } from '../src/encoders/node.js';
import '../src/methods.js';

const tools = Array.from({ length: 14 }, (_, i) => `tool_${i}`);
/** The side as headNewTools reads it: tool → label, END last. */
const side = { index: new Map(tools.map((t, i) => [t, i])), end: tools.length } as unknown as ToolSide;
const run = (...called: string[]): Plan => ({
  id: called.join('+'),
  query: `use ${called.join(' and ')}`,
  nodes: called.map((tool) => ({ tool })),
  edges: [],
  order: called.map((_, i) => i),
});

describe('the columns a learn call trains', () => {
  it('are those of the tools its runs call that had no demonstrated step, by label', () => {
    const counts = [0, 4, 5, 12, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0];
    const fresh = headNewTools([run('tool_4', 'tool_1', 'tool_2'), run('tool_3', 'tool_0')], side, counts);
    expect(fresh).toEqual([0, 4]);
  });
});

describe('a learn call that brings more new tools than it trains the columns of', () => {
  const NEW = ['photos_search', 'files_open', 'restaurant_book', 'currency_convert', 'notes_search', 'alarm_set'];
  const { tools, plans } = demoDataset();
  const callsNew = (p: Plan) => planTools(p).some((t) => NEW.includes(t));

  it(`trains ${MAX_FRESH_COLUMNS} and leaves the rest to learnMore, a part per call; every other column stays as it was`, async () => {
    const encoder = await loadEncoder();
    const model = await Dtdr.train({ tools, plans: plans.filter((p) => !callsNew(p)).slice(0, 400), encoder });
    const retriever = model.retriever as GatedRetriever;
    const head = () =>
      (retriever.state() as unknown as { evidence: { head: { weights: number[] } } }).evidence.head.weights;
    const before = head();
    const runs = NEW.flatMap((t) => plans.filter((p) => planTools(p).includes(t)).slice(0, 5));
    const queryVectors = await encoder.embed(runs.map((p) => p.query));
    expect(NEW.length).toBeGreaterThan(MAX_FRESH_COLUMNS);
    expect(retriever.learn({ plans: runs, queryVectors })).toBe(true); // work left
    const parts = [];
    for (let more = true; more;) {
      more = retriever.learnMore();
      parts.push(more);
    }
    expect(parts).toEqual([...new Array<boolean>(Math.ceil(NEW.length / MAX_FRESH_COLUMNS) - 2).fill(true), false]);
    expect(retriever.learnMore()).toBe(false); // nothing left: nothing done
    // Dense weights are laid out [dimension][class]: the columns of the other tools (and END) are unchanged.
    const after = head();
    const labels = [...tools.map((t) => t.name), END];
    const changed = new Set<string>();
    for (let i = 0; i < after.length; i++) if (after[i] !== before[i]) changed.add(labels[i % labels.length]);
    expect([...changed].sort()).toEqual([...NEW].sort());
  }, 60_000);
});

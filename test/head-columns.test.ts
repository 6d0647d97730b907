/**
 * What one learn call's column training takes on (head-columns.ts): the tools its runs call that the model had fewer
 * than five demonstrated steps of, at most MAX_FRESH_COLUMNS of them, the fewest demonstrated first.
 */
import { describe, expect, it } from 'vitest';
import type { Plan } from '../src/core/base/types.js';
import { headNewTools, MAX_FRESH_COLUMNS } from '../src/core/retrieval/default/head-columns.js';
import type { ToolSide } from '../src/core/retrieval/default/tool-side.js';

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
  it('are the tools its runs call with fewer than five demonstrated steps', () => {
    const counts = [0, 4, 5, 12, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0];
    const fresh = headNewTools([run('tool_0', 'tool_1', 'tool_2'), run('tool_3')], side, counts);
    expect([...fresh].sort((a, b) => a - b)).toEqual([0, 1]);
  });

  it(`are at most ${MAX_FRESH_COLUMNS}, the fewest demonstrated first, then by label`, () => {
    // tool_i has i % 5 demonstrated steps: the runs call all fourteen, ten of them under five.
    const counts = [...tools.map((_, i) => i % 5), 0];
    const fresh = headNewTools([run(...tools.slice(0, 7)), run(...tools.slice(7))], side, counts);
    expect(fresh.size).toBe(MAX_FRESH_COLUMNS);
    // Counts 0 (tools 0, 5, 10), then 1 (1, 6, 11), then 2 (2, 7): eight.
    expect([...fresh]).toEqual([0, 5, 10, 1, 6, 11, 2, 7]);
  });
});

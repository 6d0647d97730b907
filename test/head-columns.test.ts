/**
 * What one learn call's column training takes on (head-columns.ts): the tools its runs call that the model had no
 * demonstrated step of, MAX_FRESH_COLUMNS of them at a time.
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
  it('are those of the tools its runs call that had no demonstrated step, then those an earlier call left', () => {
    const counts = [0, 4, 5, 12, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0];
    const fresh = headNewTools([run('tool_0', 'tool_1', 'tool_2'), run('tool_3', 'tool_4')], side, counts);
    expect(fresh).toEqual([0, 4]);
    // Those an earlier call left pending come too, however many runs have been counted since.
    expect(headNewTools([run('tool_0')], side, counts, [3])).toEqual([0, 3]);
  });

  it(`come by label: the call trains the first ${MAX_FRESH_COLUMNS}, learnMore the rest as many at a time`, () => {
    const counts = new Array<number>(tools.length + 1).fill(0);
    const fresh = headNewTools([run(...tools.slice(7)), run(...tools.slice(0, 7))], side, counts);
    expect(fresh).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13]);
    expect(MAX_FRESH_COLUMNS).toBeLessThan(fresh.length);
  });
});

/**
 * Hardening III (issue 44), inputs from elsewhere: tool results and arguments nested 200,000
 * levels deep reach prompts as bounded text (L1); hostile JSON Schemas and their arguments are
 * checked or refused in bounded time (M-d); model files that decode to far more than their size
 * are refused within a memory bound (M-e). Each case failed on ea5d34c.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { Agent, ScriptedModel } from '../src/core/agent/agent.js';
import { Dtdr } from '../src/core/dtdr.js';
import { NESTED_TOO_DEEP } from '../src/core/base/limits.js';
import { chainPlan } from '../src/core/plans/plan.js';
import { buildArgumentsPrompt, buildSelectionPrompt, type PromptFormat } from '../src/core/prompts/build.js';
import type { ToolSpec } from '../src/core/base/types.js';
import { wordAxisEncoder } from './helpers.js';

const TOOLS: ToolSpec[] = [
  { name: 'files_search', description: 'search files' },
  { name: 'contacts_search', description: 'find a contact' },
  { name: 'email_send', description: 'send an email' },
];
const encoder = wordAxisEncoder(['search', 'files', 'find', 'contact', 'send', 'email']);
let model: Dtdr;

beforeAll(async () => {
  model = await Dtdr.train({
    tools: TOOLS,
    plans: [
      chainPlan('1', 'email the file', ['files_search', 'email_send']),
      chainPlan('2', 'find a contact and email them', ['contacts_search', 'email_send']),
    ],
    encoder,
    seed: 1,
  });
});

/** `levels` arrays (or objects) nested in one another around `leaf`. */
const deep = (levels: number, leaf: unknown = 1, object = false): unknown => {
  let v = leaf;
  for (let i = 0; i < levels; i++) v = object ? { a: v } : [v];
  return v;
};

describe('L1: a tool result or arguments nested 200,000 levels deep', () => {
  const FORMATS: PromptFormat[] = ['hermes', 'react', 'openai'];
  const cyclic: Record<string, unknown> = { name: 'loop' };
  cyclic.self = cyclic;
  const history = [
    { tool: 'files_search', arguments: deep(200_000, 'x', true) as Record<string, unknown>, result: deep(200_000) },
    { tool: 'contacts_search', arguments: { q: 'Anna' }, result: cyclic },
  ];

  it.each(FORMATS)('%s: both prompts show their first levels and a marker, as bounded text', (format) => {
    const selection = buildSelectionPrompt({
      query: 'email the file',
      history,
      tools: TOOLS,
      strategy: 'none',
      format,
    });
    const args = buildArgumentsPrompt({ query: 'email the file', history, tool: TOOLS[2], format });
    for (const prompt of [selection, args]) {
      expect(prompt.text).toContain(JSON.stringify(NESTED_TOO_DEEP));
      expect(prompt.text.length).toBeLessThan(10_000);
      // A shallow value is shown as before.
      expect(prompt.text).toContain('{"q":"Anna"}');
    }
  });

  it('the Agent, given a result that deep by its tool, goes on to its next step', async () => {
    const llm = new ScriptedModel([
      '<tool_call>{"name": "files_search", "arguments": {}}</tool_call>',
      '<tool_call>{"name": "files_search", "arguments": {}}</tool_call>',
      'END',
    ]);
    const agent = new Agent({
      retriever: model,
      model: llm,
      format: 'hermes',
      strategy: 'none',
      execute: async () => deep(200_000),
    });
    const run = await agent.run('email the file');
    expect(run.stopReason).toBe('end');
    expect(llm.requests[2].prompt).toContain(JSON.stringify(NESTED_TOO_DEEP));
  });
});

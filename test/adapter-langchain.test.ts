/**
 * dtdr/langchain against the real `langchain` package and its own test double
 * (FakeToolCallingModel): an agent whose model sees only the tools dtdr retrieved for each step,
 * with the calls so far as history, and no LLM call spent on selecting them.
 */
import { createAgent, FakeToolCallingModel, HumanMessage, tool } from 'langchain';
import { beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { dtdrToolSelector } from '../src/adapters/langchain/index.js';
import { Dtdr } from '../src/core/dtdr.js';
import { DEMO_TOOLS, generateDemoPlans } from '../src/demo/toolset.js';
import { loadEncoder } from '../src/encoders/node.js';

/** The fake model, recording the tools bound for each call. */
class RecordingModel extends FakeToolCallingModel {
  static seen: string[][] = [];
  override bindTools(tools: Parameters<FakeToolCallingModel['bindTools']>[0]) {
    RecordingModel.seen.push(tools.map((t) => (t as { name: string }).name));
    return super.bindTools(tools);
  }
}

let model: Dtdr;
beforeAll(async () => {
  model = await Dtdr.train({ tools: DEMO_TOOLS, plans: generateDemoPlans(1500, 3), encoder: await loadEncoder() });
});

describe('dtdrToolSelector in createAgent', () => {
  it('passes the model only the retrieved tools, step by step, with the calls so far as history', async () => {
    const ran: string[] = [];
    const tools = DEMO_TOOLS.map((t) => tool(async () => (ran.push(t.name), 'ok'), { name: t.name, description: t.description, schema: z.object({}).passthrough() }));
    RecordingModel.seen = [];
    const llm = new RecordingModel({
      toolCalls: [
        [{ name: 'files_search', args: { query: 'report' }, id: '1' }],
        [{ name: 'contacts_search', args: { name: 'Maria' }, id: '2' }],
        [{ name: 'email_send', args: { to: 'm@x.org' }, id: '3' }],
        [],
      ],
    });
    const choices: string[][] = [];
    const agent = createAgent({ model: llm, tools, middleware: [dtdrToolSelector(model, { maxTools: 5, onChoice: (c) => choices.push(c.tools) })] });
    await agent.invoke({ messages: [new HumanMessage('Email the quarterly report to Maria')] });
    expect(ran).toEqual(['files_search', 'contacts_search', 'email_send']);
    expect(RecordingModel.seen.length).toBeGreaterThanOrEqual(4);
    const calls = RecordingModel.seen.slice(-4);
    for (const names of calls) expect(names.length).toBeLessThanOrEqual(5);
    expect(calls[0]).toContain('files_search');
    expect(calls[1]).toContain('contacts_search');
    expect(calls[2]).toContain('email_send');
    expect(choices).toHaveLength(4);
    expect(calls.map((c) => [...c].sort())).toEqual(choices.map((c) => [...c].sort()));
  });
});

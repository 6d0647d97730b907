/**
 * dtdr/langchain against the real `langchain` package and its own test double
 * (FakeToolCallingModel): an agent whose model sees only the tools dtdr retrieved for each step,
 * with the calls so far as history, and no LLM call spent on selecting them.
 */
import { createAgent, FakeToolCallingModel, HumanMessage } from 'langchain';
import { beforeAll, describe, expect, it } from 'vitest';
import { dtdrToolSelector } from '../src/adapters/langchain/index.js';
import { Dtdr } from '../src/core/dtdr.js';
import { DEMO_TOOLS, generateDemoPlans } from '../src/demo/toolset.js';
import { loadEncoder } from '../src/encoders/node.js';
import { langchainTools } from './langchain-tools.js';

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
    const tools = langchainTools(ran);
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
    const agent = createAgent({
      model: llm,
      tools,
      middleware: [dtdrToolSelector(model, { maxTools: 5, onChoice: (c) => choices.push(c.tools) })],
    });
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

describe('dtdrToolSelector guards the tool calls too', () => {
  const setup = () => {
    const ran: string[] = [];
    const tools = langchainTools(ran);
    return { ran, tools };
  };
  const toolMessages = (messages: { type?: string; getType?: () => string; content: unknown; status?: string }[]) =>
    messages.filter((m) => (m.type ?? m.getType?.()) === 'tool');

  it('a tool the model was not offered at that call is answered with an error and never runs', async () => {
    const { ran, tools } = setup();
    RecordingModel.seen = [];
    const llm = new RecordingModel({ toolCalls: [[{ name: 'phone_call_log', args: {}, id: '1' }], []] });
    const agent = createAgent({ model: llm, tools, middleware: [dtdrToolSelector(model, { maxTools: 3 })] });
    const out = await agent.invoke({ messages: [new HumanMessage('Email the quarterly report to Maria')] });
    expect(RecordingModel.seen.at(-2)).not.toContain('phone_call_log'); // the premise: not offered
    expect(ran).toEqual([]);
    const [refusal] = toolMessages(out.messages as never);
    expect(refusal.status).toBe('error');
    expect(String(refusal.content)).toMatch(/Tool "phone_call_log" is not available at this step/);
  });

  it('two concurrent runs of one agent keep their own offered sets', async () => {
    const { ran, tools } = setup();
    // Each run's model calls the tool the other run is offered (alarm_set for the email run).
    const middleware = dtdrToolSelector(model, { maxTools: 3 });
    const email = createAgent({
      model: new RecordingModel({ toolCalls: [[{ name: 'alarm_set', args: {}, id: '1' }], []] }),
      tools,
      middleware: [middleware],
    });
    const alarm = createAgent({
      model: new RecordingModel({ toolCalls: [[{ name: 'alarm_set', args: {}, id: '1' }], []] }),
      tools,
      middleware: [middleware],
    });
    await Promise.all([
      email.invoke({ messages: [new HumanMessage('Email the quarterly report to Maria')] }),
      alarm.invoke({ messages: [new HumanMessage('Wake me up at 7 tomorrow, set an alarm')] }),
    ]);
    expect(ran).toEqual(['alarm_set']); // the alarm run's call only
  });
});

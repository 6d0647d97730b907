/**
 * Every adapter follows one rule for the tools a step may offer and run (availableTools in
 * src/adapters/shared.ts): the current listing less the tools removed from the model. Checked
 * with each framework's own test double, offline: a removed tool the app still passes, a tool a
 * server dropped, and a tool the model knows but the server does not list are never offered and
 * never run. Also: the AI SDK guard's tool map has no prototype, and list_changed bursts coalesce.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { generateText, jsonSchema, stepCountIs, tool, type ToolSet } from 'ai';
import { MockLanguageModelV3 } from 'ai/test';
import { createAgent, FakeToolCallingModel, HumanMessage, tool as lcTool } from 'langchain';
import { beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { dtdrPrepareStep } from '../src/adapters/ai-sdk/index.js';
import { dtdrToolSelector } from '../src/adapters/langchain/index.js';
import { dtdrMcpRun, mcpTools, watchMcpTools, type McpClientLike } from '../src/adapters/mcp/index.js';
import { Dtdr } from '../src/core/dtdr.js';
import type { Encoder } from '../src/core/base/encoder.js';
import { DEMO_TOOLS, generateDemoPlans } from '../src/demo/toolset.js';
import { loadEncoder } from '../src/encoders/node.js';

const usage = {
  inputTokens: { total: 10, noCache: 10, cacheRead: 0, cacheWrite: 0 },
  outputTokens: { total: 5, text: 5, reasoning: 0 },
};
const call = (toolName: string, id: string) => ({
  content: [{ type: 'tool-call' as const, toolCallId: id, toolName, input: '{}' }],
  finishReason: { unified: 'tool-calls' as const, raw: 'tool_calls' },
  usage,
  warnings: [],
});
const text = (t: string) => ({
  content: [{ type: 'text' as const, text: t }],
  finishReason: { unified: 'stop' as const, raw: 'stop' },
  usage,
  warnings: [],
});

let encoder: Encoder;
let trained: unknown;
/** A fresh copy of one trained demo model, so each test removes tools from its own. */
const freshModel = () => Dtdr.load(trained, encoder);
const REMOVED = ['phone_call', 'web_search'];

beforeAll(async () => {
  encoder = await loadEncoder();
  trained = (await Dtdr.train({ tools: DEMO_TOOLS, plans: generateDemoPlans(800, 4), encoder })).toJSON();
});

function aiTools(executed: string[], names = DEMO_TOOLS.map((t) => t.name)): ToolSet {
  return Object.fromEntries(
    names.map((name) => [
      name,
      tool({
        description: name,
        inputSchema: jsonSchema({ type: 'object', properties: {} }),
        execute: async () => (executed.push(name), { ok: true }),
      }),
    ]),
  );
}

describe('AI SDK: a removed tool is never offered or run', () => {
  it('hard mode, with the tools option naming it: neither offered nor executed', async () => {
    const model = freshModel();
    await model.removeTools(REMOVED);
    const executed: string[] = [];
    const tools = aiTools(executed);
    const llm = new MockLanguageModelV3({
      doGenerate: [call('phone_call', 'c1'), call('web_search', 'c2'), text('done')],
    });
    const step = dtdrPrepareStep(model, { tools: Object.keys(tools), maxTools: 2, requireWhenConfident: false });
    await generateText({
      model: llm,
      tools: step.guard(tools),
      prepareStep: step,
      stopWhen: stepCountIs(4),
      prompt: 'Call my mother and search the web for her address',
    });
    for (const c of llm.doGenerateCalls)
      for (const name of REMOVED) expect((c.tools ?? []).map((t) => t.name)).not.toContain(name);
    expect(executed).toEqual([]);
  });

  it('soft mode keeps the other tools active but not a removed one, and refuses to run it', async () => {
    const model = freshModel();
    await model.removeTools(REMOVED);
    const executed: string[] = [];
    const tools = aiTools(executed);
    const llm = new MockLanguageModelV3({ doGenerate: [call('phone_call', 'c1'), text('done')] });
    const step = dtdrPrepareStep(model, { mode: 'soft' });
    await generateText({
      model: llm,
      tools: step.guard(tools),
      prepareStep: step,
      stopWhen: stepCountIs(3),
      prompt: 'Call my mother',
    });
    const offered = (llm.doGenerateCalls[0].tools ?? []).map((t) => t.name);
    expect(offered.length).toBe(DEMO_TOOLS.length - REMOVED.length);
    expect(offered).not.toContain('phone_call');
    expect(executed).toEqual([]);
  });

  it('guard: a tool named "__proto__" is an own tool, and a call named toString finds no tool (answered with an error)', async () => {
    const model = freshModel();
    const executed: string[] = [];
    const tools = aiTools(executed, ['__proto__', 'alarm_set']);
    const step = dtdrPrepareStep(model, { mode: 'soft' });
    const guarded = step.guard(tools);
    expect(Object.getPrototypeOf(guarded)).toBe(null);
    expect(Object.keys(guarded)).toEqual(['__proto__', 'alarm_set']);
    expect(Object.hasOwn(guarded, '__proto__')).toBe(true);
    const llm = new MockLanguageModelV3({ doGenerate: [call('toString', 'c1'), text('done')] });
    const result = await generateText({
      model: llm,
      tools: guarded,
      prepareStep: step,
      stopWhen: stepCountIs(3),
      prompt: 'Set an alarm for 7',
    });
    const answered = result.steps[0].content.filter((c) => c.type === 'tool-error' || c.type === 'tool-result');
    expect(answered.map((c) => c.type)).toEqual(['tool-error']);
    expect(executed).toEqual([]);
  });
});

describe('LangChain: a removed tool is never shown or run', () => {
  class RecordingModel extends FakeToolCallingModel {
    static seen: string[][] = [];
    override bindTools(tools: Parameters<FakeToolCallingModel['bindTools']>[0]) {
      RecordingModel.seen.push(tools.map((t) => (t as { name: string }).name));
      return super.bindTools(tools);
    }
  }

  it('the agent still has it; the model never sees it and a call of it is answered with an error', async () => {
    const model = freshModel();
    await model.removeTools(REMOVED);
    const ran: string[] = [];
    const tools = DEMO_TOOLS.map((t) =>
      lcTool(async () => (ran.push(t.name), 'ok'), {
        name: t.name,
        description: t.description,
        schema: z.object({}).passthrough(),
      }),
    );
    RecordingModel.seen = [];
    const llm = new RecordingModel({ toolCalls: [[{ name: 'phone_call', args: {}, id: '1' }], []] });
    const agent = createAgent({ model: llm, tools, middleware: [dtdrToolSelector(model, { maxTools: 2 })] });
    await agent.invoke({ messages: [new HumanMessage('Call my mother and search the web for her address')] });
    expect(RecordingModel.seen.length).toBeGreaterThan(0);
    for (const names of RecordingModel.seen) for (const name of REMOVED) expect(names).not.toContain(name);
    expect(ran).toEqual([]);
  });
});

async function connect(server: McpServer): Promise<Client> {
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  const client = new Client({ name: 'dtdr-test', version: '1.0.0' });
  await Promise.all([server.connect(serverSide), client.connect(clientSide)]);
  return client;
}

const until = async (check: () => boolean) => {
  for (let i = 0; i < 300 && !check(); i++) await new Promise((r) => setTimeout(r, 10));
  expect(check()).toBe(true);
};

describe("MCP: each step reads the server's tools", () => {
  it('a tool the server drops mid-run is not offered or sent at later steps; a tool the model knows but the server does not list never is', async () => {
    const model = freshModel();
    await model.addTools([{ name: 'bank_transfer', description: 'Transfer money from the bank account to someone' }]);
    const server = new McpServer({ name: 'assistant', version: '1.0.0' });
    const ran: string[] = [];
    const registered = new Map(
      DEMO_TOOLS.map((t) => [
        t.name,
        server.registerTool(
          t.name,
          { description: t.description },
          async () => (ran.push(t.name), { content: [{ type: 'text', text: 'ok' }] }),
        ),
      ]),
    );
    const client = await connect(server);
    await watchMcpTools(client, model, { owns: (name) => name !== 'bank_transfer' });
    // The model ranks bank_transfer first for this request (added by its description); this server never lists it.
    const query = 'Transfer money from my bank account to Maria';
    expect((await model.retrieve(query)).candidates.map((c) => c.tool)).toContain('bank_transfer');
    const run = dtdrMcpRun(client, model, { maxTools: 27 });
    const first = (await run.step(query)).tools.map((t) => t.name);
    expect(first).not.toContain('bank_transfer');
    expect((await run.callTool({ name: 'bank_transfer', arguments: {} })).isError).toBe(true);

    const dropped = first[0];
    registered.get(dropped)!.remove();
    await until(() => !model.tools.some((t) => t.name === dropped));
    const later = (await run.step(query)).tools.map((t) => t.name);
    expect(later).not.toContain(dropped);
    expect((await run.callTool({ name: dropped, arguments: {} })).isError).toBe(true);
    expect(ran).toEqual([]);
  });

  it('500 list_changed notifications in a burst cost at most two tools/list reads, and the last list wins', async () => {
    const model = freshModel();
    let tools = DEMO_TOOLS.map((t) => ({ name: t.name, description: t.description, inputSchema: { type: 'object' } }));
    let reads = 0;
    let notify: (() => void) | undefined;
    const client: McpClientLike = {
      async listTools() {
        reads++;
        await new Promise((r) => setTimeout(r, 5));
        return { tools };
      },
      setNotificationHandler(_schema, handler) {
        notify = () => void handler({ method: 'notifications/tools/list_changed' });
      },
    };
    const watch = await watchMcpTools(client, model, { notificationSchema: {} });
    expect(reads).toBe(1);
    tools = tools.filter((t) => t.name !== 'alarm_set');
    for (let i = 0; i < 500; i++) notify!();
    await watch.refresh();
    expect(reads).toBeLessThanOrEqual(3);
    expect(model.tools.map((t) => t.name)).not.toContain('alarm_set');
    expect(await mcpTools(client)).toHaveLength(DEMO_TOOLS.length - 1);
  });
});

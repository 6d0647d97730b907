/**
 * Every adapter follows one rule for the tools a step may offer and run (availableTools in
 * src/adapters/shared.ts): the current listing less the tools removed from the model. Checked
 * with each framework's own test double, offline: a removed tool the app still passes, a tool a
 * server dropped, and a tool the model knows but the server does not list are never offered and
 * never run. Also: the AI SDK guard's tool map has no prototype, a call named like a member of every
 * object (toString) is refused by every adapter, and list_changed bursts coalesce.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { generateText, jsonSchema, simulateReadableStream, stepCountIs, streamText, tool, type ToolSet } from 'ai';
import { MockLanguageModelV3 } from 'ai/test';
import { createAgent, FakeToolCallingModel, HumanMessage } from 'langchain';
import { beforeAll, describe, expect, it } from 'vitest';
import { dtdrPrepareStep } from '../src/adapters/ai-sdk/index.js';
import { dtdrToolSelector } from '../src/adapters/langchain/index.js';
import { dtdrMcpRun, mcpTools, watchMcpTools, type McpClientLike } from '../src/adapters/mcp/index.js';
import { Dtdr } from '../src/core/dtdr.js';
import { DtdrError } from '../src/core/base/errors.js';
import { validateCall } from '../src/core/prompts/parse.js';
import type { Encoder } from '../src/core/base/encoder.js';
import { DEMO_TOOLS, generateDemoPlans } from '../src/demo/toolset.js';
import { loadEncoder } from '../src/encoders/node.js';
import { langchainTools } from './langchain-tools.js';
import { modelCall, modelText, usage } from './ai-sdk-results.js';

const call = (toolName: string, id: string) => modelCall(toolName, {}, id);
const text = modelText;

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

/** generateText with the step's guard and prepareStep, as an app wires dtdr into the AI SDK. */
function generateWith(
  llm: MockLanguageModelV3,
  step: ReturnType<typeof dtdrPrepareStep>,
  tools: ToolSet,
  prompt: string,
  steps = 3,
) {
  return generateText({
    model: llm,
    tools: step.guard(tools),
    prepareStep: step,
    stopWhen: stepCountIs(steps),
    prompt,
  });
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
    await generateWith(llm, step, tools, 'Call my mother and search the web for her address', 4);
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
    await generateWith(llm, step, tools, 'Call my mother');
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
    const tools = langchainTools(ran);
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

describe('a call of a name no tool has, like a member of every object (toString, constructor)', () => {
  const INHERITED = ['toString', 'constructor'];
  const refusal = (name: string) =>
    new RegExp(`^Tool "${name}" is not available at this step: no tool has that name\\. Available tools: \\w`);

  it.each(INHERITED)(
    'AI SDK hard mode: a call of "%s" is refused with a DtdrError naming it and the step\'s tools, never run',
    async (name) => {
      const executed: string[] = [];
      const tools = aiTools(executed);
      const llm = new MockLanguageModelV3({ doGenerate: [call(name, 'c1'), text('done')] });
      const step = dtdrPrepareStep(freshModel(), { tools: Object.keys(tools), maxTools: 3 });
      const error = await generateWith(llm, step, tools, 'Set an alarm for 7').catch((e: unknown) => e);
      expect(DtdrError.isInstance(error) && error.code).toBe('tool-call');
      expect((error as Error).message).toMatch(refusal(name));
      for (const offered of step.last!.tools) expect((error as Error).message).toContain(offered);
      expect(executed).toEqual([]);
    },
  );

  it('AI SDK streamText: the call comes back as an error part carrying the DtdrError, never run', async () => {
    const executed: string[] = [];
    const tools = aiTools(executed);
    const chunks = [
      { type: 'tool-call' as const, toolCallId: 'c1', toolName: 'toString', input: '{}' },
      {
        type: 'finish' as const,
        finishReason: { unified: 'tool-calls' as const, raw: 'tool_calls' },
        usage,
      },
    ];
    const llm = new MockLanguageModelV3({ doStream: async () => ({ stream: simulateReadableStream({ chunks }) }) });
    const step = dtdrPrepareStep(freshModel(), { tools: Object.keys(tools), maxTools: 3 });
    const errors: unknown[] = [];
    const result = streamText({
      model: llm,
      tools: step.guard(tools),
      prepareStep: step,
      stopWhen: stepCountIs(3),
      prompt: 'Set an alarm for 7',
      onError: ({ error }) => void errors.push(error),
    });
    const parts: { type: string; toolName?: string }[] = [];
    for await (const part of result.fullStream) parts.push(part);
    expect(parts.some((p) => p.type === 'tool-call')).toBe(false);
    expect(errors).toHaveLength(1);
    expect(DtdrError.isInstance(errors[0]) && errors[0].message).toMatch(refusal('toString'));
    expect(executed).toEqual([]);
  });

  it('AI SDK soft mode leaving a removed tool out: refused the same way; an ordinary unknown name stays a tool error', async () => {
    const model = freshModel();
    await model.removeTools(REMOVED);
    const executed: string[] = [];
    const tools = aiTools(executed);
    const llm = new MockLanguageModelV3({ doGenerate: [call('constructor', 'c1'), text('done')] });
    const step = dtdrPrepareStep(model, { mode: 'soft', tools: Object.keys(tools) });
    const error = await generateWith(llm, step, tools, 'Set an alarm for 7').catch((e: unknown) => e);
    expect((error as Error).message).toMatch(refusal('constructor'));

    const other = new MockLanguageModelV3({ doGenerate: [call('no_such_tool', 'c1'), text('done')] });
    const hard = dtdrPrepareStep(model, { tools: Object.keys(tools), maxTools: 3, requireWhenConfident: false });
    const result = await generateWith(other, hard, tools, 'Set an alarm for 7');
    const answered = result.steps[0].content.filter((c) => c.type === 'tool-error' || c.type === 'tool-result');
    expect(answered.map((c) => c.type)).toEqual(['tool-error']);
    expect(executed).toEqual([]);
  });

  it.each(INHERITED)(
    'LangChain: a call of "%s" is answered with an error ToolMessage naming the shown tools',
    async (name) => {
      const ran: string[] = [];
      const tools = langchainTools(ran);
      const llm = new FakeToolCallingModel({ toolCalls: [[{ name, args: {}, id: '1' }], []] });
      const agent = createAgent({ model: llm, tools, middleware: [dtdrToolSelector(freshModel(), { maxTools: 3 })] });
      const out = await agent.invoke({ messages: [new HumanMessage('Set an alarm for 7')] });
      const answers = out.messages.filter((m) => m.getType() === 'tool');
      expect(answers).toHaveLength(1);
      expect(answers[0]).toMatchObject({ status: 'error', name });
      expect(String(answers[0].content)).toMatch(
        new RegExp(`^Tool "${name}" is not available at this step\\. Available tools: \\w`),
      );
      expect(ran).toEqual([]);
    },
  );

  it.each(INHERITED)('MCP: callTool("%s") is an error result naming the offered tools, never sent', async (name) => {
    const sent: string[] = [];
    const client: McpClientLike = {
      listTools: async () => ({
        tools: DEMO_TOOLS.map((t) => ({ name: t.name, description: t.description, inputSchema: { type: 'object' } })),
      }),
      callTool: async (params) => (sent.push(params.name), { content: [] }),
    };
    const run = dtdrMcpRun(client, freshModel(), { maxTools: 3 });
    const { tools } = await run.step('Set an alarm for 7');
    const result = await run.callTool({ name, arguments: {} });
    expect(result.isError).toBe(true);
    expect(result.content[0].text).toBe(
      `Tool "${name}" is not available at this step. Available tools: ${tools.map((t) => t.name).join(', ')}.`,
    );
    expect(sent).toEqual([]);
  });

  it.each(INHERITED)(
    'the agent\'s own check: an answer calling "%s" is an unknown-tool error naming the step\'s tools',
    (name) => {
      const parsed = validateCall({ kind: 'call', call: { name, arguments: {} }, warnings: [] }, DEMO_TOOLS, [
        'alarm_set',
        'timer_set',
      ]);
      expect(parsed).toMatchObject({ kind: 'error', error: 'unknown-tool' });
      expect(parsed.kind === 'error' && parsed.message).toBe(
        `There is no function named "${name}". Choose one of: alarm_set, timer_set.`,
      );
    },
  );
});

/**
 * Hardening III, M-c and L5, with each framework's own test double, offline.
 *
 * M-c: a call is checked against the live tool set when it runs, not only when its step offered
 * tools — a tool removed while the model's answer was being made never runs (AI SDK, LangChain,
 * MCP), and an MCP step that throws leaves no offered set behind (fail closed).
 * L5: a user message with only an image is passed over for the conversation's first text; a
 * conversation with no user text is refused the same way by every adapter (a DtdrError), never
 * answered with every tool past maxTools.
 */
import { generateText, jsonSchema, stepCountIs, tool, type ToolSet } from 'ai';
import { MockLanguageModelV3 } from 'ai/test';
import { createAgent, createMiddleware, FakeToolCallingModel, HumanMessage } from 'langchain';
import { beforeAll, describe, expect, it } from 'vitest';
import { dtdrPrepareStep } from '../src/adapters/ai-sdk/index.js';
import { dtdrToolSelector } from '../src/adapters/langchain/index.js';
import { dtdrMcpRun, type McpClientLike } from '../src/adapters/mcp/index.js';
import { Dtdr } from '../src/core/dtdr.js';
import { DtdrError } from '../src/core/base/errors.js';
import type { Encoder } from '../src/core/base/encoder.js';
import { DEMO_TOOLS, generateDemoPlans } from '../src/demo/toolset.js';
import { loadEncoder } from '../src/encoders/node.js';
import { langchainTools } from './langchain-tools.js';
import { modelCall, modelText } from './ai-sdk-results.js';

const call = (toolName: string, id: string) => modelCall(toolName, {}, id);
const text = modelText;

let encoder: Encoder;
let trained: unknown;
const freshModel = () => Dtdr.load(trained, encoder);
const QUERY = 'Set an alarm for 7 tomorrow morning';
const TOOL = 'alarm_set';
/** A PNG's first bytes: the image part's content does not matter to the adapters, only that it has no text. */
const IMAGE = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

beforeAll(async () => {
  encoder = await loadEncoder();
  trained = (await Dtdr.train({ tools: DEMO_TOOLS, plans: generateDemoPlans(800, 4), encoder })).toJSON();
});

function aiTools(executed: string[]): ToolSet {
  return Object.fromEntries(
    DEMO_TOOLS.map((t) => [
      t.name,
      tool({
        description: t.description,
        inputSchema: jsonSchema({ type: 'object', properties: {} }),
        execute: async () => (executed.push(t.name), { ok: true }),
      }),
    ]),
  );
}

const mcpClient = (sent: string[], failListing: { now: boolean } = { now: false }): McpClientLike => ({
  listTools: async () => {
    if (failListing.now) throw new Error('the server went away');
    return {
      tools: DEMO_TOOLS.map((t) => ({ name: t.name, description: t.description, inputSchema: { type: 'object' } })),
    };
  },
  callTool: async (params) => (sent.push(params.name), { content: [{ type: 'text', text: 'ok' }] }),
});

describe('M-c: a tool removed while the model answers, after its step offered it, never runs', () => {
  it.each(['hard', 'soft'] as const)(
    'AI SDK (%s mode): the guard checks the model when the call runs',
    async (mode) => {
      const model = freshModel();
      const executed: string[] = [];
      const tools = aiTools(executed);
      // The model's answer is made while the app removes the tool (a server dropped it, a user revoked it).
      let answers = 0;
      const llm = new MockLanguageModelV3({
        doGenerate: async () => (++answers === 1 ? (await model.removeTools([TOOL]), call(TOOL, 'c1')) : text('done')),
      });
      const step = dtdrPrepareStep(model, {
        mode,
        tools: Object.keys(tools),
        maxTools: 3,
        requireWhenConfident: false,
      });
      const result = await generateText({
        model: llm,
        tools: step.guard(tools),
        prepareStep: step,
        stopWhen: stepCountIs(3),
        prompt: QUERY,
      });
      expect((llm.doGenerateCalls[0].tools ?? []).map((t) => t.name)).toContain(TOOL); // the premise: offered
      expect(executed).toEqual([]);
      const answered = result.steps[0].content.filter((c) => c.type === 'tool-error' || c.type === 'tool-result');
      expect(answered.map((c) => c.type)).toEqual(['tool-error']);
      const error = (answered[0] as { error: unknown }).error;
      expect(DtdrError.isInstance(error) && error.code).toBe('tool-call');
      expect((error as Error).message).toBe(
        `Tool "${TOOL}" is not available: it was removed after this step offered it.`,
      );
    },
  );

  it('LangChain: wrapToolCall checks the model when the call runs', async () => {
    const model = freshModel();
    const ran: string[] = [];
    const shown: string[][] = [];
    // Runs inside dtdr's wrapModelCall: the tool is removed after the model was shown it, before its call runs.
    const removeWhileAnswering = createMiddleware({
      name: 'RemoveWhileAnswering',
      wrapModelCall: async (request, handler) => {
        shown.push((request.tools ?? []).map((t) => (t as { name: string }).name));
        const response = await handler(request);
        if (shown.length === 1) await model.removeTools([TOOL]);
        return response;
      },
    });
    const llm = new FakeToolCallingModel({ toolCalls: [[{ name: TOOL, args: {}, id: '1' }], []] });
    const agent = createAgent({
      model: llm,
      tools: langchainTools(ran),
      middleware: [dtdrToolSelector(model, { maxTools: 3 }), removeWhileAnswering],
    });
    const out = await agent.invoke({ messages: [new HumanMessage(QUERY)] });
    expect(shown[0]).toContain(TOOL); // the premise: offered
    expect(ran).toEqual([]);
    const answers = out.messages.filter((m) => m.getType() === 'tool');
    expect(answers).toHaveLength(1);
    expect(answers[0]).toMatchObject({ status: 'error', name: TOOL });
    expect(String(answers[0].content)).toBe(
      `Tool "${TOOL}" is not available: it was removed after this step offered it.`,
    );
  });

  it('MCP: callTool checks the model when the call is made', async () => {
    const model = freshModel();
    const sent: string[] = [];
    const run = dtdrMcpRun(mcpClient(sent), model, { maxTools: 3 });
    const { tools } = await run.step(QUERY);
    expect(tools.map((t) => t.name)).toContain(TOOL); // the premise: offered
    await model.removeTools([TOOL]);
    const result = await run.callTool({ name: TOOL, arguments: {} });
    expect(result).toMatchObject({ isError: true });
    expect(result.content[0].text).toBe(`Tool "${TOOL}" is not available: it was removed after this step offered it.`);
    expect(sent).toEqual([]);
    expect(run.history).toEqual([]);
  });

  it("MCP: a step that throws leaves no offered set: the previous step's tools are refused (fail closed)", async () => {
    const sent: string[] = [];
    const failing = { now: false };
    const run = dtdrMcpRun(mcpClient(sent, failing), freshModel(), { maxTools: 3 });
    const { tools } = await run.step(QUERY);
    expect(tools.map((t) => t.name)).toContain(TOOL);
    failing.now = true;
    await expect(run.step(QUERY)).rejects.toThrow('the server went away');
    const result = await run.callTool({ name: TOOL, arguments: {} });
    expect(result.isError).toBe(true);
    expect(result.content[0].text).toMatch(/no step of this run has offered tools yet/);
    // A step for another request throws too, and leaves nothing behind either.
    failing.now = false;
    await run.step(QUERY);
    await expect(run.step('Email Maria the report')).rejects.toThrow(DtdrError);
    expect((await run.callTool({ name: TOOL, arguments: {} })).isError).toBe(true);
    expect(sent).toEqual([]);
    // And a step that succeeds offers again.
    await run.step(QUERY);
    expect((await run.callTool({ name: TOOL, arguments: {} })).isError).toBeUndefined();
    expect(sent).toEqual([TOOL]);
  });
});

describe('L5: a message with only an image', () => {
  class RecordingModel extends FakeToolCallingModel {
    static seen: string[][] = [];
    override bindTools(tools: Parameters<FakeToolCallingModel['bindTools']>[0]) {
      RecordingModel.seen.push(tools.map((t) => (t as { name: string }).name));
      return super.bindTools(tools);
    }
  }
  const imageOnly = () =>
    new HumanMessage({ content: [{ type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } }] });

  it('LangChain: the request is the first human text; maxTools holds', async () => {
    RecordingModel.seen = [];
    const agent = createAgent({
      model: new RecordingModel({ toolCalls: [[]] }),
      tools: langchainTools([]),
      middleware: [dtdrToolSelector(freshModel(), { maxTools: 3 })],
    });
    await agent.invoke({ messages: [imageOnly(), new HumanMessage(QUERY)] });
    expect(RecordingModel.seen).toHaveLength(1);
    expect(RecordingModel.seen[0].length).toBeLessThanOrEqual(3);
    expect(RecordingModel.seen[0]).toContain(TOOL);
  });

  it('LangChain: with no human text at all, the model call is refused with a DtdrError, no tool shown', async () => {
    RecordingModel.seen = [];
    const ran: string[] = [];
    const agent = createAgent({
      model: new RecordingModel({ toolCalls: [[{ name: TOOL, args: {}, id: '1' }], []] }),
      tools: langchainTools(ran),
      middleware: [dtdrToolSelector(freshModel(), { maxTools: 3 })],
    });
    // LangChain wraps a middleware's error in its MiddlewareError; dtdr's DtdrError is its cause.
    const error = ((await agent.invoke({ messages: [imageOnly()] }).catch((e: unknown) => e)) as { cause?: unknown })
      .cause;
    expect(DtdrError.isInstance(error) && error.code).toBe('options');
    expect((error as Error).message).toMatch(/found no user message with text to retrieve tools for/);
    expect(RecordingModel.seen).toEqual([]);
    expect(ran).toEqual([]);
  });

  it('AI SDK: the same: the first user text is the request; with none, the same DtdrError', async () => {
    const tools = aiTools([]);
    const llm = new MockLanguageModelV3({ doGenerate: [text('done')] });
    // The mock answers in text: a confident step must not require a tool call here (this checks the request taken).
    const step = dtdrPrepareStep(freshModel(), { tools: Object.keys(tools), maxTools: 3, requireWhenConfident: false });
    await generateText({
      model: llm,
      tools: step.guard(tools),
      prepareStep: step,
      messages: [
        { role: 'user', content: [{ type: 'image', image: IMAGE, mediaType: 'image/png' }] },
        { role: 'user', content: QUERY },
      ],
    });
    const offered = (llm.doGenerateCalls[0].tools ?? []).map((t) => t.name);
    expect(offered.length).toBeLessThanOrEqual(3);
    expect(offered).toContain(TOOL);

    const none = new MockLanguageModelV3({ doGenerate: [text('done')] });
    const error = await generateText({
      model: none,
      tools: step.guard(tools),
      prepareStep: step,
      messages: [{ role: 'user', content: [{ type: 'image', image: IMAGE, mediaType: 'image/png' }] }],
    }).catch((e: unknown) => e);
    expect(DtdrError.isInstance(error) && error.code).toBe('options');
    expect((error as Error).message).toMatch(/found no user message with text to retrieve tools for/);
    expect(none.doGenerateCalls).toHaveLength(0);
  });
});

/**
 * dtdr/ai-sdk against the real `ai` package and its own test double (MockLanguageModelV3, exported by ai 6 and ai 7 alike): a
 * generateText run over the demo tool set where the model is offered at most 5 tools per step,
 * always including the one its scripted plan calls next, and a call to a tool outside the
 * step's set is answered with an error and never executed.
 */
import { generateText, jsonSchema, stepCountIs, tool, type ToolSet } from 'ai';
import { MockLanguageModelV3 } from 'ai/test';
import { beforeAll, describe, expect, it } from 'vitest';
import { dtdrPrepareStep, dtdrToolSearch } from '../src/adapters/ai-sdk/index.js';
import { Dtdr } from '../src/core/dtdr.js';
import { DEMO_TOOLS, generateDemoPlans } from '../src/demo/toolset.js';
import { loadEncoder } from '../src/encoders/node.js';
import { modelCall, modelText } from './ai-sdk-results.js';

const call = modelCall;
const text = modelText;

let model: Dtdr;
let executed: string[];
let tools: ToolSet;
beforeAll(async () => {
  model = await Dtdr.train({ tools: DEMO_TOOLS, plans: generateDemoPlans(1500, 3), encoder: await loadEncoder() });
  tools = Object.fromEntries(
    DEMO_TOOLS.map((t) => [
      t.name,
      tool({
        description: t.description,
        inputSchema: jsonSchema((t.parameters ?? { type: 'object', properties: {} }) as never),
        execute: async () => (executed.push(t.name), { ok: true }),
      }),
    ]),
  );
});

describe('dtdrPrepareStep with generateText', () => {
  it('offers ≤ 5 tools per step including the next one in the plan; a hidden tool call is refused and not executed', async () => {
    executed = [];
    const script = [
      call('files_search', { query: 'quarterly report' }, 'c1'),
      call('contacts_search', { name: 'Maria' }, 'c2'),
      call('alarm_set', { time: '07:00' }, 'c3'), // not offered at this step: must not run
      call('email_send', { to: 'maria@example.org', subject: 'Report', body: 'Attached' }, 'c4'),
      text('Sent.'),
    ];
    const llm = new MockLanguageModelV3({ doGenerate: script });
    const step = dtdrPrepareStep(model, { tools: Object.keys(tools), maxTools: 5 });
    const result = await generateText({
      model: llm,
      tools: step.guard(tools),
      prepareStep: step,
      stopWhen: stepCountIs(8),
      prompt: 'Email the quarterly report to Maria',
    });
    const offered = llm.doGenerateCalls.map((c) => (c.tools ?? []).map((t) => t.name));
    expect(offered.length).toBe(5);
    for (const names of offered) expect(names.length).toBeLessThanOrEqual(5);
    expect(offered[0]).toContain('files_search');
    expect(offered[1]).toContain('contacts_search');
    expect(offered[2]).not.toContain('alarm_set');
    expect(offered[3]).toContain('email_send');
    expect(executed).toEqual(['files_search', 'contacts_search', 'email_send']);
    const hidden = result.steps[2].content.find((c) => c.type === 'tool-error');
    expect(hidden).toBeDefined();
    expect(result.text).toBe('Sent.');
  });

  it('soft mode keeps every tool active (prompt-cache friendly) and puts the weighted hint in the instructions', async () => {
    const llm = new MockLanguageModelV3({ doGenerate: [text('ok')] });
    const step = dtdrPrepareStep(model, { mode: 'soft' });
    await generateText({
      model: llm,
      tools,
      prepareStep: step,
      system: 'You are helpful.',
      prompt: 'Email the quarterly report to Maria',
    });
    const [first] = llm.doGenerateCalls;
    expect(first.tools?.length).toBe(DEMO_TOOLS.length);
    const system = JSON.stringify(first.prompt);
    expect(system).toContain('You are helpful.');
    expect(system).toMatch(/Tools most likely needed for the next step, by dtdr's retrieval: \w+ \(0\.\d\d\)/);
  });

  it("soft mode keeps the call's own system prompt first and never drops it (ai 6: the hint follows it as a system message; ai 7: in the instructions)", async () => {
    const llm = new MockLanguageModelV3({ doGenerate: [text('ok')] });
    const step = dtdrPrepareStep(model, { mode: 'soft' });
    await generateText({
      model: llm,
      tools,
      prepareStep: step,
      system: 'You are helpful.',
      prompt: 'Email the quarterly report to Maria',
    });
    const prompt = llm.doGenerateCalls[0].prompt;
    const firstOther = prompt.findIndex((m) => m.role !== 'system');
    const system = prompt
      .slice(0, firstOther)
      .map((m) => String(m.content))
      .join('\n\n');
    expect(prompt.slice(firstOther).some((m) => m.role === 'system')).toBe(false); // every system part precedes the conversation
    expect(system.startsWith('You are helpful.')).toBe(true);
    expect(system).toMatch(
      /You are helpful\.\n\nTools most likely needed for the next step, by dtdr's retrieval: \w+ \(0\.\d\d\)/,
    );
    expect(prompt.filter((m) => m.role === 'user').map((m) => JSON.stringify(m.content))).toEqual([
      expect.stringContaining('Email the quarterly report to Maria'),
    ]);
  });

  it('soft mode with the system option sends one system prompt: yours, then the hint', async () => {
    const llm = new MockLanguageModelV3({ doGenerate: [text('ok')] });
    const step = dtdrPrepareStep(model, { mode: 'soft', system: 'You are helpful.' });
    await generateText({ model: llm, tools, prepareStep: step, prompt: 'Email the quarterly report to Maria' });
    const prompt = llm.doGenerateCalls[0].prompt;
    const systems = prompt.filter((m) => m.role === 'system');
    expect(systems.length).toBe(1);
    expect(prompt[0].role).toBe('system');
    expect(String(systems[0].content)).toMatch(
      /^You are helpful\.\n\nTools most likely needed for the next step, by dtdr's retrieval: \w+ \(0\.\d\d\)/,
    );
  });

  it('soft mode keeps a system prompt given as system messages, and the hint follows them', async () => {
    const llm = new MockLanguageModelV3({ doGenerate: [text('ok')] });
    const step = dtdrPrepareStep(model, {
      mode: 'soft',
      system: [
        { role: 'system', content: 'You are helpful.' },
        { role: 'system', content: 'Be brief.' },
      ],
    });
    await generateText({ model: llm, tools, prepareStep: step, prompt: 'Email the quarterly report to Maria' });
    const prompt = llm.doGenerateCalls[0].prompt;
    expect(prompt.slice(0, 3).map((m) => m.role)).toEqual(['system', 'system', 'system']);
    expect(prompt.slice(0, 2).map((m) => m.content)).toEqual(['You are helpful.', 'Be brief.']);
    expect(String(prompt[2].content)).toMatch(
      /^Tools most likely needed for the next step, by dtdr's retrieval: \w+ \(0\.\d\d\)/,
    );
  });

  it('the guard answers a call outside the set with an error and does not execute it, even when the SDK is told every tool is active', async () => {
    executed = [];
    const step = dtdrPrepareStep(model, { tools: Object.keys(tools), maxTools: 3 });
    await step({
      steps: [],
      stepNumber: 0,
      messages: [{ role: 'user', content: 'Email the quarterly report to Maria' }],
      initialMessages: [{ role: 'user', content: 'Email the quarterly report to Maria' }],
    } as never);
    const guarded = step.guard(tools);
    const outside = DEMO_TOOLS.map((t) => t.name).find((n) => !step.last!.tools.includes(n))!;
    const run = (guarded[outside] as { execute: (i: unknown, o: unknown) => Promise<unknown> }).execute(
      {},
      { toolCallId: 'x', messages: [] },
    );
    await expect(run).rejects.toThrow(/not available at this step/);
    expect(executed).toEqual([]);
  });
});

describe('the guard: per run, per step, failing closed', () => {
  const guardedCall = (t: ToolSet, name: string, messages: unknown[]) =>
    (t[name] as { execute: (i: unknown, o: unknown) => Promise<unknown> }).execute({}, { toolCallId: 'x', messages });

  it('a call before any step has chosen is refused, not executed (directly, and in a run without prepareStep)', async () => {
    executed = [];
    const step = dtdrPrepareStep(model, { tools: Object.keys(tools) });
    const guarded = step.guard(tools);
    await expect(guardedCall(guarded, 'phone_call_log', [{ role: 'user', content: 'who called me?' }])).rejects.toThrow(
      /not available at this step/,
    );
    const llm = new MockLanguageModelV3({ doGenerate: [call('phone_call_log', {}, 'c1'), text('ok')] });
    const result = await generateText({
      model: llm,
      tools: guarded,
      stopWhen: stepCountIs(3),
      prompt: 'Who called me?',
    });
    expect(result.steps[0].content.find((c) => c.type === 'tool-error')).toBeDefined();
    expect(executed).toEqual([]);
  });

  it('two runs sharing one dtdrPrepareStep keep their own sets: run A cannot execute a tool only run B was offered', async () => {
    executed = [];
    const step = dtdrPrepareStep(model, { tools: Object.keys(tools), maxTools: 3, requireWhenConfident: false });
    const guarded = step.guard(tools);
    let aAsked!: () => void;
    let bPrepared!: () => void;
    const aReady = new Promise<void>((resolve) => (aAsked = resolve));
    const bReady = new Promise<void>((resolve) => (bPrepared = resolve));
    // Interleaved: A's step is prepared and its model asked; then B's step is prepared; then A's
    // model answers with a tool from B's set.
    const llmA = new MockLanguageModelV3({
      doGenerate: async () => (aAsked(), await bReady, call('alarm_set', { time: '07:00' }, 'a1')),
    });
    const llmB = new MockLanguageModelV3({ doGenerate: async () => (bPrepared(), text('ok')) });
    // The app keeps every tool active (e.g. for its prompt cache): the guard is the only barrier.
    const allActive = async (o: Parameters<typeof step>[0]) => ({ toolChoice: (await step(o))?.toolChoice });
    const runA = generateText({
      model: llmA,
      tools: guarded,
      prepareStep: allActive,
      stopWhen: stepCountIs(1),
      prompt: 'Email the quarterly report to Maria',
    });
    await aReady;
    const runB = generateText({
      model: llmB,
      tools: guarded,
      prepareStep: allActive,
      stopWhen: stepCountIs(1),
      prompt: 'Wake me up at 7 tomorrow, set an alarm',
    });
    const [a] = await Promise.all([runA, runB]);
    const offered = await Promise.all(
      ['Email the quarterly report to Maria', 'Wake me up at 7 tomorrow, set an alarm'].map(async (q) => {
        const probe = dtdrPrepareStep(model, { tools: Object.keys(tools), maxTools: 3 });
        await probe({
          steps: [],
          stepNumber: 0,
          messages: [{ role: 'user', content: q }],
          initialMessages: [{ role: 'user', content: q }],
        } as never);
        return probe.last!.tools;
      }),
    );
    expect(offered[0]).not.toContain('alarm_set'); // the premise: dtdr offers it to B only
    expect(offered[1]).toContain('alarm_set');
    expect(a.steps[0].content.find((c) => c.type === 'tool-error')).toBeDefined();
    expect(executed).toEqual([]);
  });

  it('a tool name that breaks the tool-name rule is refused when the adapter is set up', () => {
    expect(() => dtdrPrepareStep(model, { tools: ['ok_tool', 'bad</tools>'] })).toThrow(/tool-name rule/);
    expect(() =>
      dtdrPrepareStep(model).guard({
        'x<|im_start|>': tool({ inputSchema: jsonSchema({ type: 'object' }), execute: async () => 1 }),
      }),
    ).toThrow(/tool-name rule/);
  });
});

describe('dtdrToolSearch', () => {
  it('ranks the eligible deferred tools for the search query and the calls so far', async () => {
    const search = dtdrToolSearch(model, { history: () => ['contacts_search'] });
    const names = await search({
      query: 'send a message to Maria',
      tools: DEMO_TOOLS.map((t) => ({ name: t.name, description: t.description })),
    });
    expect(names.slice(0, 3)).toEqual(expect.arrayContaining(['sms_send']));
    expect(names).not.toContain('END');
  });
});

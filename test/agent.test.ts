import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { beforeAll, describe, expect, it } from 'vitest';
import { Agent, ScriptedModel, type GenerateRequest } from '../src/core/agent/agent.js';
import { Dtdr } from '../src/core/dtdr.js';
import { DEMO_TOOLS, generateDemoPlans } from '../src/demo/toolset.js';
import { loadEncoder } from '../src/encoders/node.js';
import { openAICompatibleModel } from '../src/llm/openai-http.js';
import '../src/methods.js'; // the paper's methods, as an app that uses them imports them

let retriever: Dtdr;
beforeAll(async () => {
  retriever = await Dtdr.train({
    method: 'dtdr-c',
    tools: DEMO_TOOLS,
    plans: generateDemoPlans(1500, 3),
    encoder: await loadEncoder(),
  });
});

/** A model that picks the first function the prompt offers and fills its required arguments with "x". */
const firstOffered = (request: GenerateRequest) => {
  const name = request.allowed[0];
  const required = ((DEMO_TOOLS.find((t) => t.name === name)?.parameters?.required ?? []) as string[]).filter(
    (k) => k !== 'duration_minutes',
  );
  return `<tool_call>${JSON.stringify({ name, arguments: Object.fromEntries(required.map((k) => [k, 'x'])) })}</tool_call>`;
};

describe('the agent loop with a scripted model, on the demo tool set', () => {
  it('turns a request into validated calls, ending with END', async () => {
    const model = new ScriptedModel([
      '<tool_call>{"name": "contacts_search", "arguments": {}}</tool_call>',
      '<tool_call>{"name": "contacts_search", "arguments": {"name": "Anna"}}</tool_call>',
      '<think>now the mail</think><tool_call>{"name": "email_send", "arguments": {}}</tool_call>',
      '<tool_call>{"name": "email_send", "arguments": {"to": "anna@example.org", "subject": "Trip", "body": "See you soon"}}</tool_call>',
      'END',
    ]);
    const agent = new Agent({
      retriever,
      model,
      format: 'hermes',
      strategy: 'hard-weighted',
      demonstrations: retriever.examples,
      execute: async (call) => (call.name === 'contacts_search' ? { email: 'anna@example.org' } : { sent: true }),
    });
    const run = await agent.run('Email Anna about the trip');
    expect(run.stopReason).toBe('end');
    expect(run.calls.map((c) => c.name)).toEqual(['contacts_search', 'email_send']);
    expect(run.calls[1].arguments).toEqual({ to: 'anna@example.org', subject: 'Trip', body: 'See you soon' });
    // the first prompt was hard-masked to the retrieved candidates, which held the right tool
    expect(model.requests[0].allowed).toContain('contacts_search');
    expect(model.requests[0].allowed.length).toBeLessThan(DEMO_TOOLS.length);
    // the result of the first call reached the next prompt
    expect(model.requests[2].prompt).toContain('→ {"email":"anna@example.org"}');
  });

  it('sends a malformed answer back with the error, and goes on when the retry is good', async () => {
    const model = new ScriptedModel([
      '<tool_call>{"name": "teleport"}</tool_call>',
      '<tool_call>{"name": "music_search", "arguments": {"query": "jazz"}}</tool_call>',
      'END',
    ]);
    const agent = new Agent({ retriever, model, fillArguments: false });
    const run = await agent.run('Play some jazz');
    expect(model.requests[1].messages.at(-1)!.content).toMatch(
      /There is no function named "teleport". Choose one of: .*music_search/,
    );
    expect(run.calls.map((c) => c.name)).toEqual(['music_search']);
    expect(run.stopReason).toBe('end');
  });

  it('stops with a reason on repeated invalid answers, on repetition, and after max steps', async () => {
    const bad = await new Agent({
      retriever,
      model: new ScriptedModel(['nonsense', 'still nonsense']),
      fillArguments: false,
    }).run('Play some jazz');
    expect(bad).toMatchObject({ stopReason: 'invalid-answer', error: /No tool call found/ });
    const same = '<tool_call>{"name": "web_search", "arguments": {"query": "x"}}</tool_call>';
    const looping = await new Agent({
      retriever,
      model: new ScriptedModel(Array(10).fill(same)),
      strategy: 'soft',
      fillArguments: false,
      maxRepeats: 2,
    }).run('Search the web for the budget');
    expect(looping.stopReason).toBe('repetition');
    const bounded = await new Agent({
      retriever,
      model: new ScriptedModel(
        Array(20)
          .fill(null)
          .map(() => firstOffered),
      ),
      strategy: 'soft',
      fillArguments: false,
      maxSteps: 3,
      maxRepeats: 99,
    }).run('Take me to the museum');
    expect(bounded.calls).toHaveLength(3);
    expect(bounded.stopReason).toBe('max-steps');
  });
});

describe('the OpenAI-compatible HTTP adapter (a local stand-in server)', () => {
  it('sends messages and tools, and reads tool_calls back', async () => {
    const bodies: any[] = [];
    const server = createServer((req, res) => {
      let data = '';
      req.on('data', (c) => (data += c));
      req.on('end', () => {
        bodies.push(JSON.parse(data));
        res.setHeader('content-type', 'application/json');
        res.end(
          JSON.stringify({
            choices: [
              {
                message: {
                  role: 'assistant',
                  content: null,
                  tool_calls: [{ type: 'function', function: { name: 'music_search', arguments: '{"query":"jazz"}' } }],
                },
              },
            ],
          }),
        );
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const { port } = server.address() as AddressInfo;
    try {
      const model = openAICompatibleModel({ baseUrl: `http://127.0.0.1:${port}/v1`, model: 'qwen3-0.6b' });
      const agent = new Agent({ retriever, model, format: 'openai', fillArguments: false, maxSteps: 1 });
      const run = await agent.run('Play some jazz');
      expect(run.calls).toEqual([{ name: 'music_search', arguments: { query: 'jazz' } }]);
      expect(bodies[0].model).toBe('qwen3-0.6b');
      expect(bodies[0].tools.map((t: any) => t.function.name)).toContain('music_search');
    } finally {
      server.close();
    }
  });

  it('turns an unreachable server into a typed error', async () => {
    const model = openAICompatibleModel({ baseUrl: 'http://127.0.0.1:9/v1', model: 'x' });
    await expect(
      model.generate({ stage: 'select', format: 'hermes', messages: [], prompt: '', allowed: [] }),
    ).rejects.toThrow(/cannot reach http:\/\/127.0.0.1:9\/v1.*server running/);
  });
});

describe('learning from finished runs (opt-in)', () => {
  it('hands a run that ended with END to learn, and only when the app accepts it', async () => {
    const model = Dtdr.load(retriever.toJSON(), retriever.encoder);
    const script = () =>
      new ScriptedModel([
        '<tool_call>{"name": "contacts_search", "arguments": {"name": "Anna"}}</tool_call>',
        '<tool_call>{"name": "email_send", "arguments": {"to": "a@b.c", "subject": "s", "body": "b"}}</tool_call>',
        'END',
      ]);
    const declined = await new Agent({
      retriever: model,
      model: script(),
      fillArguments: false,
      learnFromRuns: () => false,
    }).run('Email Anna');
    expect(declined.learned).toBeUndefined();
    expect(model.learnedCount).toBe(0);
    const run = await new Agent({ retriever: model, model: script(), fillArguments: false, learnFromRuns: true }).run(
      'Email Anna',
    );
    expect(run.stopReason).toBe('end');
    expect(run.learned).toBe(true);
    expect(model.learnedCount).toBe(1);
    const stalled = await new Agent({
      retriever: model,
      model: new ScriptedModel(['<tool_call>{"name": "teleport"}</tool_call>', 'nonsense']),
      fillArguments: false,
      learnFromRuns: true,
      maxRetries: 0,
    }).run('Go');
    expect(stalled.stopReason).toBe('invalid-answer');
    expect(model.learnedCount).toBe(1);
  });
});

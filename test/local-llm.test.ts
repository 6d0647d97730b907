/**
 * Local models, really run: transformers.js loads a tiny random-weight causal LM (ONNX written at
 * test time, the real Qwen3 tokenizer and chat template) from a local folder, and dtdr's
 * logit-level hard mask keeps its answers inside the allowed calls. Over 200 answers from 4
 * random models and 50 prompts each: with the mask every answer parses and names an allowed tool
 * (or END where END is allowed); without it, almost none parse.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Agent, type GenerateRequest } from '../src/core/agent/agent.js';
import { Dtdr } from '../src/core/dtdr.js';
import { buildSelectionPrompt } from '../src/core/prompts/build.js';
import { AnswerTrie, allowedAnswers } from '../src/core/prompts/constrain.js';
import { parseAnswer } from '../src/core/prompts/parse.js';
import { seededRandom, shuffleInPlace } from '../src/core/base/random.js';
import { END } from '../src/core/base/types.js';
import { DEMO_QUERIES, DEMO_TOOLS, generateDemoPlans } from '../src/demo/toolset.js';
import { loadEncoder } from '../src/encoders/node.js';
import { transformersModel } from '../src/llm/transformers.js';
import { writeTinyLm } from './tiny-lm.js';

const dir = mkdtempSync(join(tmpdir(), 'dtdr-tiny-lm-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** 50 selection requests per model: random requests, random candidate sets, END allowed or not. */
function requests(seed: number): GenerateRequest[] {
  const random = seededRandom(seed);
  const queries = [...DEMO_QUERIES, ...generateDemoPlans(60, seed).map((p) => p.query)];
  return Array.from({ length: 50 }, (_, i) => {
    const names = shuffleInPlace(
      DEMO_TOOLS.map((t) => t.name),
      random,
    ).slice(0, 1 + Math.floor(random() * 5));
    const prompt = buildSelectionPrompt({
      query: queries[i % queries.length],
      history: [],
      tools: DEMO_TOOLS,
      strategy: 'hard-weighted',
      format: 'hermes',
      candidates: names.map((tool, k) => ({ tool, probability: 1 / (k + 2) })),
    });
    // Half the steps may end the plan; in the others the app knows it goes on.
    const allowed = i % 2 === 0 ? prompt.allowed : prompt.allowed.filter((a) => a !== END);
    return { stage: 'select', format: 'hermes', messages: prompt.messages, prompt: prompt.text, allowed };
  });
}

describe('the answer trie (pure)', () => {
  it('allows exactly the continuations of the allowed answers, then end-of-sequence', () => {
    const trie = new AnswerTrie([
      { tokens: [1, 2, 3], open: false },
      { tokens: [1, 4], open: false },
      { tokens: [7], open: true },
    ]);
    expect(trie.next([]).tokens.sort()).toEqual([1, 7]);
    expect(trie.next([1]).tokens.sort()).toEqual([2, 4]);
    expect(trie.next([1, 4])).toMatchObject({ tokens: [], complete: true });
    expect(trie.next([7, 99, 100]).free).toBe(true);
    expect(trie.next([5]).dead).toBe(true);
    expect(allowedAnswers('hermes', 'select', ['a', END]).map((a) => a.text)).toEqual([
      '<tool_call>\n{"name": "a", "arguments": {}}\n</tool_call>',
      END,
    ]);
  });
});

describe('a random-weight local model under transformers.js', () => {
  const seeds = [1, 2, 3, 4];
  beforeAll(() => {
    for (const s of seeds) writeTinyLm(join(dir, `lm-${s}`), s);
  });

  it('with the logit mask, 200 of 200 answers parse and name an allowed tool; without it, almost none parse', async () => {
    let masked = 0;
    let maskedValid = 0;
    let unmaskedValid = 0;
    const named = new Set<string>();
    for (const s of seeds) {
      const withMask = await transformersModel({ model: join(dir, `lm-${s}`), dtype: 'fp32', maxNewTokens: 40 });
      const without = await transformersModel({
        model: join(dir, `lm-${s}`),
        dtype: 'fp32',
        maxNewTokens: 40,
        hardMask: false,
      });
      for (const request of requests(s)) {
        const a = parseAnswer('hermes', await withMask.generate(request));
        masked++;
        const name = a.kind === 'call' ? a.call.name : a.kind === 'end' ? END : undefined;
        if (name && request.allowed.includes(name)) maskedValid++;
        if (name && name !== END) named.add(name);
        const b = parseAnswer('hermes', await without.generate(request));
        if (b.kind === 'call' && request.allowed.includes(b.call.name)) unmaskedValid++;
        if (b.kind === 'end' && request.allowed.includes(END)) unmaskedValid++;
      }
    }
    console.log(
      `[local-llm] masked: ${maskedValid}/${masked} valid, ${named.size} distinct tools named; unmasked: ${unmaskedValid}/${masked} valid`,
    );
    expect(masked).toBe(200);
    expect(maskedValid).toBe(200);
    expect(named.size).toBeGreaterThan(3);
    expect(unmaskedValid).toBeLessThanOrEqual(10);
  }, 300_000);

  it('drives Agent end to end: every call it makes is one dtdr offered', async () => {
    const retriever = await Dtdr.train({
      tools: DEMO_TOOLS,
      plans: generateDemoPlans(800, 2),
      encoder: await loadEncoder(),
    });
    const model = await transformersModel({ model: join(dir, 'lm-2'), dtype: 'fp32', maxNewTokens: 60 });
    const agent = new Agent({
      retriever,
      model,
      format: 'hermes',
      strategy: 'hard-weighted',
      fillArguments: false,
      maxSteps: 4,
    });
    const run = await agent.run('Email the quarterly report to Maria');
    expect(['end', 'max-steps', 'repetition']).toContain(run.stopReason);
    for (const [i, step] of run.steps.entries()) {
      if (step.selection.kind === 'call')
        expect(step.retrieval.candidates.map((c) => c.tool)).toContain(run.calls[i].name);
    }
  }, 120_000);
});

describe('the WebLLM route: a JSON schema whose name enum is the hard mask', () => {
  it('accepts exactly the allowed names and END, and reads answers back', async () => {
    const { Validator } = await import('@cfworker/json-schema');
    const { webllmResponseFormat, parseWebllmAnswer } = await import('../src/llm/webllm.js');
    const format = webllmResponseFormat(['email_send', END]);
    expect(format.type).toBe('json_object');
    const validator = new Validator(JSON.parse(format.schema));
    expect(validator.validate({ name: 'email_send', arguments: { to: 'a@b.c' } }).valid).toBe(true);
    expect(validator.validate({ name: 'alarm_set', arguments: {} }).valid).toBe(false);
    expect(parseWebllmAnswer('{"name": "email_send", "arguments": {"to": "a@b.c"}}', ['email_send', END])).toEqual({
      name: 'email_send',
      arguments: { to: 'a@b.c' },
    });
    expect(parseWebllmAnswer('{"name": "END", "arguments": {}}', ['email_send', END])).toBe(END);
    expect(() => parseWebllmAnswer('{"name": "alarm_set", "arguments": {}}', ['email_send', END])).toThrow(
      /not allowed/,
    );
  });
});

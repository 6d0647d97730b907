import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseAnswer, parseHermes, parseOpenAI, parseReAct, validateCall } from '../src/core/prompts/parse.js';
import type { ToolSpec } from '../src/core/base/types.js';

const tools: ToolSpec[] = [
  {
    name: 'email_send',
    description: '',
    parameters: {
      type: 'object',
      properties: { to: { type: 'string' }, cc: { type: 'array', items: { type: 'string' } } },
      required: ['to'],
      additionalProperties: false,
    },
  },
  { name: 'music_play', description: '' },
];

describe('Hermes / Qwen answers', () => {
  it('reads a call, also after a thinking block and with prose around it', () => {
    expect(parseHermes('<tool_call>\n{"name": "email_send", "arguments": {"to": "a@x.org"}}\n</tool_call>')).toEqual({
      kind: 'call',
      call: { name: 'email_send', arguments: { to: 'a@x.org' } },
      warnings: [],
    });
    const r = parseHermes(
      '<think>mail first</think>Sure! <tool_call>{"name":"music_play","arguments":{}}</tool_call> done',
    );
    expect(r).toMatchObject({
      kind: 'call',
      call: { name: 'music_play' },
      warnings: ['ignored text outside the <tool_call> block'],
    });
  });
  it('detects END', () => {
    expect(parseHermes('END').kind).toBe('end');
    expect(parseHermes('<tool_call>{"name": "END"}</tool_call>').kind).toBe('end');
  });
  it('reports truncated JSON, prose without a call, and several calls', () => {
    expect(parseHermes('<tool_call>{"name": "email_send", "argu')).toMatchObject({
      kind: 'error',
      error: 'malformed-json',
    });
    expect(parseHermes('I think you should send an email.')).toMatchObject({ kind: 'error', error: 'no-call' });
    expect(parseHermes('<tool_call>{"name":"a"}</tool_call><tool_call>{"name":"b"}</tool_call>')).toMatchObject({
      kind: 'error',
      error: 'several-calls',
    });
    expect(parseHermes('<tool_call>{"arguments": {}}</tool_call>')).toMatchObject({
      kind: 'error',
      message: /no "name"/,
    });
  });
});

describe('OpenAI-style answers', () => {
  it('reads tool_calls with string arguments, a bare call, and END', () => {
    const message = {
      role: 'assistant',
      content: null,
      tool_calls: [{ id: '1', type: 'function', function: { name: 'email_send', arguments: '{"to":"b@x.org"}' } }],
    };
    expect(parseOpenAI(message)).toMatchObject({
      kind: 'call',
      call: { name: 'email_send', arguments: { to: 'b@x.org' } },
    });
    expect(parseOpenAI('{"name": "music_play", "arguments": {}}')).toMatchObject({
      kind: 'call',
      call: { name: 'music_play' },
    });
    expect(parseOpenAI({ role: 'assistant', content: 'END' }).kind).toBe('end');
  });
  it('reports arguments that are not a JSON object', () => {
    expect(parseOpenAI({ tool_calls: [{ function: { name: 'email_send', arguments: '{"to": ' } }] })).toMatchObject({
      kind: 'error',
      error: 'malformed-json',
    });
    expect(parseOpenAI({ tool_calls: [{ function: { name: 'email_send', arguments: '[1]' } }] })).toMatchObject({
      kind: 'error',
      error: 'malformed-json',
    });
  });
});

describe('ReAct answers', () => {
  it('reads Action and Action Input, and END', () => {
    expect(parseReAct('Thought: mail her\nAction: email_send\nAction Input: {"to": "a@x.org"}')).toMatchObject({
      kind: 'call',
      call: { name: 'email_send', arguments: { to: 'a@x.org' } },
    });
    expect(parseReAct('Thought: pick\nAction: music_play')).toMatchObject({
      kind: 'call',
      call: { name: 'music_play', arguments: {} },
    });
    expect(parseReAct('Action: END').kind).toBe('end');
    expect(parseReAct('Final Answer: all done').kind).toBe('end');
  });
  it('reports a missing action and a bad Action Input', () => {
    expect(parseReAct('Thought: hmm')).toMatchObject({ kind: 'error', error: 'no-call' });
    expect(parseReAct('Action: email_send\nAction Input: {to: a}')).toMatchObject({
      kind: 'error',
      error: 'malformed-json',
    });
  });
});

describe('validation against the tool set, the mask and the JSON Schema', () => {
  const call = (name: string, args: object) => ({
    kind: 'call' as const,
    call: { name, arguments: args as Record<string, unknown> },
    warnings: [],
  });
  it('accepts a valid call', () =>
    expect(validateCall(call('email_send', { to: 'a@x.org' }), tools).kind).toBe('call'));
  it('names the allowed tools when the tool does not exist', () => {
    expect(validateCall(call('fly', {}), tools, ['email_send', 'END'])).toMatchObject({
      error: 'unknown-tool',
      message: 'There is no function named "fly". Choose one of: email_send, or END.',
    });
  });
  it('rejects a real tool outside the hard mask, listing the allowed ones', () => {
    expect(validateCall(call('music_play', {}), tools, ['email_send', 'END'])).toMatchObject({
      error: 'not-allowed',
      allowed: ['email_send', 'END'],
    });
  });
  it('reports wrong types and missing required fields', () => {
    expect(validateCall(call('email_send', { to: 3 }), tools)).toMatchObject({
      error: 'invalid-arguments',
      message: /to: .*string/,
    });
    expect(validateCall(call('email_send', { cc: ['x'] }), tools)).toMatchObject({
      error: 'invalid-arguments',
      message: /required.*"to"|"to".*required/,
    });
  });
});

describe('no answer makes a parser throw (property-based)', () => {
  const tagged = fc.oneof(
    fc.string(),
    fc.string().map((s) => `<tool_call>${s}`),
    fc.string().map((s) => `<tool_call>${s}</tool_call>`),
    fc.json().map((j) => `<tool_call>${j}</tool_call>`),
    fc.string().map((s) => `Action: ${s}\nAction Input: ${s}`),
    fc.json(),
  );
  it.each(['hermes', 'openai', 'react'] as const)('%s: 1,000 random answers all give a typed result', (format) => {
    fc.assert(
      fc.property(tagged, (answer) => {
        const r = validateCall(parseAnswer(format, answer), tools, ['email_send', 'END']);
        expect(['call', 'end', 'error']).toContain(r.kind);
        if (r.kind === 'error') expect(r.message.length).toBeGreaterThan(0);
      }),
      { numRuns: 1000, seed: 42 },
    );
  });
  it('openai: 1,000 random JSON values as messages give a typed result', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (v) => ['call', 'end', 'error'].includes(parseAnswer('openai', v).kind)),
      { numRuns: 1000, seed: 7 },
    );
  });
});

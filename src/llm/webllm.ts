/**
 * The WebLLM route to a hard mask (`@mlc-ai/web-llm`; not a dependency — this file only builds
 * plain objects): its `tools` parameter works for a few Hermes models only, but
 * `response_format: { type: 'json_object', schema }` constrains any model's output to a JSON
 * schema, and a `name` enum over the allowed tools (and END) is a hard mask at decoding time.
 *
 *   const r = await engine.chat.completions.create({
 *     messages: prompt.messages,
 *     response_format: webllmResponseFormat(prompt.allowed),
 *   });
 *   const answer = parseWebllmAnswer(r.choices[0].message.content, prompt.allowed);
 */
import { DtdrError } from '../core/base/errors.js';
import type { ToolCall } from '../core/prompts/parse.js';
import { END } from '../core/base/types.js';

/** WebLLM's ResponseFormat (the parts used here; its `schema` is a JSON string). */
export interface WebllmResponseFormat {
  type: 'json_object';
  schema: string;
}

/** The JSON schema of one answer: {"name": <an allowed tool or END>, "arguments": {…}}. */
export function answerSchema(allowed: readonly string[], argumentsSchema: object = { type: 'object' }): object {
  if (allowed.length === 0)
    throw new DtdrError('options', 'no allowed tools to constrain the answer to', { field: 'allowed' });
  return {
    type: 'object',
    properties: { name: { type: 'string', enum: [...allowed] }, arguments: argumentsSchema },
    required: ['name', 'arguments'],
    additionalProperties: false,
  };
}

/** `response_format` for WebLLM's chat.completions.create: the answer can only name an allowed tool (or END). */
export function webllmResponseFormat(allowed: readonly string[], argumentsSchema?: object): WebllmResponseFormat {
  return { type: 'json_object', schema: JSON.stringify(answerSchema(allowed, argumentsSchema)) };
}

/** Reads a constrained answer back: a call, END, or a DtdrError naming what is wrong. */
export function parseWebllmAnswer(
  content: string | null | undefined,
  allowed: readonly string[],
): ToolCall | typeof END {
  let value: unknown;
  try {
    value = JSON.parse(content ?? '');
  } catch {
    throw new DtdrError('tool-call', 'the answer is not JSON', {
      hint: 'pass response_format: webllmResponseFormat(allowed)',
    });
  }
  const { name, arguments: args } = (value ?? {}) as { name?: unknown; arguments?: unknown };
  if (typeof name !== 'string' || !allowed.includes(name))
    throw new DtdrError('tool-call', `the answer names ${JSON.stringify(name)}, which is not allowed`, {
      field: 'name',
    });
  if (name === END) return END;
  return {
    name,
    arguments: args && typeof args === 'object' && !Array.isArray(args) ? (args as Record<string, unknown>) : {},
  };
}

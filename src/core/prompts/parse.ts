import { END, type ToolSpec } from '../base/types.js';
import type { BuiltPrompt, PromptFormat } from './build.js';
import { argumentProblems } from './schema-check.js';

/** A tool call: the tool's name and its arguments. */
export interface ToolCall {
  name: string;
  arguments: Record<string, unknown>;
}

/** Why an answer is not a valid call. */
export type ToolCallErrorKind =
  'no-call' | 'malformed-json' | 'unknown-tool' | 'not-allowed' | 'invalid-arguments' | 'several-calls';

/** What came back from the model: a call, the end of the plan, or an error to feed back. */
export type ParsedAnswer =
  | { kind: 'call'; call: ToolCall; warnings: string[] }
  | { kind: 'end'; warnings: string[] }
  | { kind: 'error'; error: ToolCallErrorKind; message: string; allowed?: string[] };

const err = (error: ToolCallErrorKind, message: string, allowed?: string[]): ParsedAnswer => ({
  kind: 'error',
  error,
  message,
  ...(allowed ? { allowed } : {}),
});

/*
 * Every scan below is linear in the answer's length: a model's answer is untrusted text, and a
 * backtracking regex (`<think>[\s\S]*?</think>`, `^\s*…` under the m flag, `(.+?)\s*$`) turns a
 * 40,000-character answer into seconds of work. Each function says which regex it stands for.
 */

const THINK_OPEN = '<think>';
const THINK_CLOSE = '</think>';

/**
 * Qwen3 and others think aloud first; the answer is what follows the thinking block. Drops each
 * `<think>…</think>` block, then everything up to a last unpaired `</think>` (the regexes
 * `/<think>[\s\S]*?<\/think>/g` and `/^[\s\S]*<\/think>/`).
 */
function stripThinking(text: string): string {
  let out = '';
  let from = 0;
  for (;;) {
    const open = text.indexOf(THINK_OPEN, from);
    if (open < 0) break;
    const close = text.indexOf(THINK_CLOSE, open + THINK_OPEN.length);
    if (close < 0) break;
    out += text.slice(from, open);
    from = close + THINK_CLOSE.length;
  }
  out += text.slice(from);
  const last = out.lastIndexOf(THINK_CLOSE);
  return last < 0 ? out : out.slice(last + THINK_CLOSE.length);
}

/** JavaScript's `\s` (which is also what `trim` removes), for one UTF-16 code unit. */
const SPACE = /\s/;
const isSpace = (text: string, i: number): boolean => SPACE.test(text[i]);
/** The characters `.` does not match and at which `^`/`$` match under the m flag. */
const isLineBreak = (text: string, i: number): boolean => {
  const c = text.charCodeAt(i);
  return c === 10 || c === 13 || c === 0x2028 || c === 0x2029;
};

function parseJsonObject(raw: string): { ok: true; value: Record<string, unknown> } | { ok: false; message: string } {
  let text = raw.trim().replace(/^```(?:json)?\s*/i, '');
  // `/\s*```$/`, without its quadratic backtracking over a long run of spaces.
  if (text.endsWith('```')) text = text.slice(0, -3).trimEnd();
  try {
    const value: unknown = JSON.parse(text);
    if (typeof value !== 'object' || value === null || Array.isArray(value))
      return { ok: false, message: 'expected a JSON object' };
    return { ok: true, value: value as Record<string, unknown> };
  } catch (e) {
    return { ok: false, message: e instanceof Error ? e.message : String(e) };
  }
}

function callFromObject(value: Record<string, unknown>): ToolCall | string {
  const fn = (value.function ?? value) as Record<string, unknown>;
  const name = fn.name;
  if (typeof name !== 'string' || name === '') return 'the call has no "name" string';
  let args = fn.arguments ?? fn.parameters ?? {};
  if (typeof args === 'string') {
    const parsed = parseJsonObject(args);
    if (!parsed.ok) return `"arguments" is a string that is not a JSON object (${parsed.message})`;
    args = parsed.value;
  }
  if (typeof args !== 'object' || args === null || Array.isArray(args)) return '"arguments" must be a JSON object';
  return { name, arguments: args as Record<string, unknown> };
}

const END_WORD = new RegExp(`^\\W*${END}\\W*$`);
/** Each alternative starts with a letter, so the m-flag `^` costs nothing on lines that do not. */
const END_LINE = /^(Final Answer|Action:\s*END)\b/im;

function isEndWord(text: string): boolean {
  const trimmed = text.trim();
  return END_WORD.test(trimmed) || END_LINE.test(trimmed);
}

/** Hermes / Qwen: `<tool_call>{"name": …, "arguments": {…}}</tool_call>`, or END. */
export function parseHermes(answer: string): ParsedAnswer {
  const text = stripThinking(String(answer));
  const blocks = [...text.matchAll(/<tool_call>([\s\S]*?)(?:<\/tool_call>|$)/g)];
  if (blocks.length === 0) {
    if (isEndWord(text)) return { kind: 'end', warnings: [] };
    const bare = parseJsonObject(text);
    if (bare.ok) return finishCall(bare.value, ['the call was not wrapped in <tool_call> tags']);
    return err(
      'no-call',
      `No tool call found. Answer with <tool_call>{"name": …, "arguments": {…}}</tool_call>, or ${END} when done.`,
    );
  }
  if (blocks.length > 1) return err('several-calls', 'Answer with exactly one <tool_call> per step.');
  const parsed = parseJsonObject(blocks[0][1]);
  if (!parsed.ok)
    return err(
      'malformed-json',
      `The <tool_call> content is not valid JSON (${parsed.message}). Answer with one complete JSON object.`,
    );
  const outside = text.replace(blocks[0][0], '').trim();
  return finishCall(parsed.value, outside ? ['ignored text outside the <tool_call> block'] : []);
}

function finishCall(value: Record<string, unknown>, warnings: string[]): ParsedAnswer {
  const call = callFromObject(value);
  if (typeof call === 'string') return err('malformed-json', `The tool call is incomplete: ${call}.`);
  if (call.name === END) return { kind: 'end', warnings };
  return { kind: 'call', call, warnings };
}

/** OpenAI-style: an assistant message with `tool_calls`, its JSON text, or a bare `{name, arguments}`. */
export function parseOpenAI(answer: unknown): ParsedAnswer {
  let value: unknown = answer;
  if (typeof answer === 'string') {
    const text = stripThinking(answer);
    if (isEndWord(text)) return { kind: 'end', warnings: [] };
    const parsed = parseJsonObject(text);
    if (!parsed.ok)
      return text.includes('<tool_call>')
        ? parseHermes(text)
        : err('malformed-json', `The answer is not a JSON tool call (${parsed.message}).`);
    value = parsed.value;
  }
  if (typeof value !== 'object' || value === null) return err('no-call', 'No tool call found.');
  const message = value as { tool_calls?: unknown; content?: unknown };
  if (Array.isArray(message.tool_calls)) {
    if (message.tool_calls.length === 0)
      return typeof message.content === 'string' && isEndWord(message.content)
        ? { kind: 'end', warnings: [] }
        : err('no-call', 'No tool call found.');
    if (message.tool_calls.length > 1) return err('several-calls', 'Make exactly one tool call per step.');
    return finishCall(message.tool_calls[0] as Record<string, unknown>, []);
  }
  if ('tool_calls' in message || ('content' in message && !('name' in message))) {
    return typeof message.content === 'string' && isEndWord(message.content)
      ? { kind: 'end', warnings: [] }
      : err('no-call', 'No tool call found.');
  }
  return finishCall(value as Record<string, unknown>, []);
}

/** ReAct: `Action: name` and, for arguments, `Action Input: {…}`; `Action: END` or `Final Answer` ends. */
export function parseReAct(answer: string): ParsedAnswer {
  const text = stripThinking(String(answer));
  const actions = actionNames(text, 2);
  if (actions.length === 0)
    return isEndWord(text)
      ? { kind: 'end', warnings: [] }
      : err('no-call', `No "Action:" line found. Answer "Action: <function name>", or "Action: ${END}" when done.`);
  if (actions.length > 1) return err('several-calls', 'Give exactly one "Action:" line per step.');
  const name = actions[0].replace(/^[`"']|[`"']$/g, '');
  if (name === END) return { kind: 'end', warnings: [] };
  const input = ACTION_INPUT.exec(text);
  if (!input) return { kind: 'call', call: { name, arguments: {} }, warnings: [] };
  const raw = beforeObservation(input[1].trim());
  const parsed = parseJsonObject(raw === '' ? '{}' : raw);
  if (!parsed.ok) return err('malformed-json', `"Action Input" is not a JSON object (${parsed.message}).`);
  return { kind: 'call', call: { name, arguments: parsed.value }, warnings: [] };
}

/**
 * The names on `Action:` lines, at most `limit` of them: the captures of
 * `/^\s*Action\s*:\s*(.+?)\s*$/gim`, found in one pass. That regex's leading `\s*` may cross
 * blank lines, but it can only ever reach an `Action` that also starts its own line after spaces,
 * so starting at each line with spaces alone finds the same lines; the name runs from the first
 * non-space after the colon (which may be on a later line) to the last non-space of its line.
 */
function actionNames(text: string, limit: number): string[] {
  const names: string[] = [];
  const head = /^[^\S\r\n\u2028\u2029]*Action\s*:\s*/gim;
  let match: RegExpExecArray | null;
  while (names.length < limit && (match = head.exec(text))) {
    const start = head.lastIndex; // the first non-space after the colon, or the end of the text
    if (start < text.length) {
      let end = start;
      while (end < text.length && !isLineBreak(text, end)) end++;
      let last = end - 1;
      while (isSpace(text, last)) last--;
      names.push(text.slice(start, last + 1));
      head.lastIndex = end;
    } else {
      // Only spaces after the colon: the regex gives `.+?` the last of them that is not a line break.
      const colon = match.index + match[0].lastIndexOf(':');
      let last = text.length - 1;
      while (last > colon && isLineBreak(text, last)) last--;
      if (last > colon) names.push(text[last]);
      break;
    }
  }
  return names;
}

/**
 * `Action Input:` and all after it: `/^\s*Action\s+Input\s*:\s*([\s\S]*)$/im`, with `^\s*` kept to one line (see
 * actionNames).
 */
const ACTION_INPUT = /^[^\S\r\n\u2028\u2029]*Action\s+Input\s*:\s*([\s\S]*)$/im;
const OBSERVATION = /(?:Observation|Thought)\s*:/y;

/**
 * The text before the first line that starts (after spaces) with `Observation:` or `Thought:`:
 * `s.split(/\n\s*(?:Observation|Thought)\s*:/)[0]`.
 */
function beforeObservation(text: string): string {
  let i = text.indexOf('\n');
  while (i >= 0) {
    let j = i + 1;
    while (j < text.length && isSpace(text, j)) j++;
    OBSERVATION.lastIndex = j;
    if (OBSERVATION.test(text)) return text.slice(0, i);
    // Every line break in text[i, j) reaches the same j: go on after the spaces.
    i = text.indexOf('\n', j);
  }
  return text;
}

/** Reads a model's answer in `format`: a tool call, END, or an error value (never throws on model output). */
export function parseAnswer(format: PromptFormat, answer: unknown): ParsedAnswer {
  try {
    if (format === 'hermes') return parseHermes(String(answer ?? ''));
    if (format === 'react') return parseReAct(String(answer ?? ''));
    return parseOpenAI(answer ?? '');
  } catch (e) {
    // The parsers above do not throw on any string; this is the last guard for exotic inputs.
    return err('no-call', `Could not read the answer (${e instanceof Error ? e.message : String(e)}).`);
  }
}

/** What validateCall checks an answer against, besides the tool set. */
export interface ValidateCallOptions {
  /**
   * What the answer answers: `select` (a selection prompt, which asks for `"arguments": {}` —
   * the arguments come from a second prompt, so they are not checked) or `arguments` (checked
   * against the tool's JSON Schema). Taken from the prompt when one is passed; default `arguments`.
   */
  stage?: BuiltPrompt['stage'];
  /** Overrides the stage: check the arguments against the schema (true) or not (false). */
  checkArguments?: boolean;
}

/**
 * Checks a parsed call against the tool set, the allowed names (a hard mask) and the tool's JSON
 * Schema. Pass the prompt the model answered — `validateCall(parseAnswer(prompt.format, answer),
 * tools, prompt)` — and it checks what that prompt asked for: its allowed names, and the
 * arguments only for an arguments prompt (a selection prompt asks for `"arguments": {}`). With a
 * list of allowed names instead, or none, the arguments are checked unless `stage: 'select'` or
 * `checkArguments: false` says otherwise. Errors carry a message fit to send back to the model.
 */
export function validateCall(
  parsed: ParsedAnswer,
  tools: readonly ToolSpec[],
  against?: readonly string[] | Pick<BuiltPrompt, 'allowed' | 'stage'>,
  options: ValidateCallOptions = {},
): ParsedAnswer {
  const prompt =
    against !== undefined && !Array.isArray(against) ? (against as Pick<BuiltPrompt, 'allowed' | 'stage'>) : undefined;
  const allowed = prompt ? prompt.allowed : (against as readonly string[] | undefined);
  const stage = options.stage ?? prompt?.stage ?? 'arguments';
  const checkArguments = options.checkArguments ?? stage === 'arguments';
  if (parsed.kind !== 'call') return parsed;
  const { name } = parsed.call;
  const allowedNames = allowed ? allowed.filter((n) => n !== END) : tools.map((t) => t.name);
  const tool = tools.find((t) => t.name === name);
  if (!tool)
    return err(
      'unknown-tool',
      `There is no function named "${name}". Choose one of: ` +
        `${allowedNames.join(', ')}${allowed?.includes(END) ? `, or ${END}` : ''}.`,
      [...(allowed ?? allowedNames)],
    );
  if (allowed && !allowed.includes(name))
    return err(
      'not-allowed',
      `"${name}" is not available at this step. Choose one of: ` +
        `${allowedNames.join(', ')}${allowed.includes(END) ? `, or ${END}` : ''}.`,
      [...allowed],
    );
  if (tool.parameters && checkArguments) {
    const problems = argumentProblems(tool.parameters, parsed.call.arguments, name);
    if (problems.length > 0)
      return err(
        'invalid-arguments',
        `The arguments of ${name} do not match its signature: ${[...new Set(problems)].slice(0, 5).join('; ')}.`,
      );
  }
  return parsed;
}

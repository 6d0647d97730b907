import { DtdrError } from '../base/errors.js';
import { boundedJson, isValidToolName } from '../base/limits.js';
import { planTools } from '../plans/plan.js';
import type { Candidate } from '../selection/select.js';
import { END, type Plan, type ToolSpec } from '../base/types.js';
import { toOpenAITool, type OpenAITool } from '../plans/tools.js';
import { promptReason } from './reason.js';

/**
 * How tools are shown: all of them (`none`, `raw-demos`), only the candidates (`hard`), all with the candidates marked
 * (`soft`), and with probabilities (`-weighted`).
 */
export type Strategy = 'none' | 'raw-demos' | 'hard' | 'soft' | 'hard-weighted' | 'soft-weighted';
/** The tool format of the local model: OpenAI Chat Completions `tools`, Hermes/Qwen `<tools>`, or ReAct text. */
export type PromptFormat = 'openai' | 'hermes' | 'react';
/** Every prompt strategy. */
export const STRATEGIES: readonly Strategy[] = ['none', 'raw-demos', 'hard', 'soft', 'hard-weighted', 'soft-weighted'];
/** Every prompt format. */
export const FORMATS: readonly PromptFormat[] = ['openai', 'hermes', 'react'];

/** One chat message. */
export interface ChatMessage {
  role: 'system' | 'user' | 'assistant' | 'tool';
  content: string;
}

/** A call already made in this plan, shown to the model as context. */
export interface PastCall {
  tool: string;
  arguments?: unknown;
  result?: unknown;
}

/** A piece of the prompt; `cacheable` pieces are the same at every step (a KV cache can keep them). */
export interface PromptSegment {
  text: string;
  cacheable: boolean;
}

/**
 * A prompt for the local model: its text and messages, what it allows, and its parts (cacheable and variable) for token
 * counts.
 */
export interface BuiltPrompt {
  stage: 'select' | 'arguments';
  format: PromptFormat;
  strategy: Strategy;
  /** Chat messages; for `openai` the tools travel separately in `tools`. */
  messages: ChatMessage[];
  tools?: OpenAITool[];
  /** The whole prompt as a ChatML string (how a Qwen-style model reads it), for counting and text APIs. */
  text: string;
  /** Cacheable prefix first, then what changes per step. */
  segments: PromptSegment[];
  /** Names the answer may use (END included at the selection stage). */
  allowed: string[];
  /** What the prompt says about the retriever's confidence, if anything. */
  note?: string;
  /**
   * `openai` format: the Chat Completions request body to send (merge in `model`). No answer
   * format is imposed: the model calls one of `tools` natively, or answers END without a call.
   */
  request?: OpenAIChatRequest;
}

/** The parts of an OpenAI-compatible Chat Completions request that dtdr fills in. */
export interface OpenAIChatRequest {
  messages: ChatMessage[];
  tools: OpenAITool[];
  tool_choice: 'auto' | 'required';
  parallel_tool_calls: false;
}

/** Calls of the history shown in a prompt, at most (the most recent; older ones are summarised). Default. */
export const MAX_HISTORY_SHOWN = 20;

/**
 * What {@link buildSelectionPrompt} needs: the request, the calls so far, the tools, the candidates and how to present
 * them.
 */
export interface SelectionPromptInput {
  query: string;
  history: readonly (string | PastCall)[];
  tools: readonly ToolSpec[];
  strategy: Strategy;
  format: PromptFormat;
  /** F_t from the retriever (not needed for `none`). */
  candidates?: readonly Candidate[];
  /** The retriever widened F_t because it was unsure; `reason` says why (the prompt shows its first cause). */
  widened?: boolean;
  reason?: string;
  /** Demonstrations to draw examples from; the first is the one fixed example. */
  demonstrations?: readonly Plan[];
  /**
   * Under `hard*`, what to do when the retriever is unsure: keep its widened set (default) or show every tool as soft
   * masking does.
   */
  lowConfidence?: 'widen' | 'soft';
  /** Most recent calls shown in full; older ones are counted, not listed. Default MAX_HISTORY_SHOWN (20). */
  maxHistory?: number;
}

/**
 * Tool descriptions, and the user's request, are data, not instructions: JSON-quote them, and
 * escape `<` and `>` so they cannot open or close the prompt's own tags (`</tools>`,
 * `<tool_call>`) or a chat turn (`<|im_end|>`), and the Unicode line separators, which some
 * readers take for line breaks.
 */
export function quoteData(value: unknown): string {
  // Bounded: a tool result or arguments nested deeper than MAX_NESTING show their first levels.
  return (boundedJson(value) ?? 'null')
    .replace(/</g, '\\u003c')
    .replace(/>/g, '\\u003e')
    .replace(/\u2028/g, '\\u2028')
    .replace(/\u2029/g, '\\u2029');
}

/**
 * A tool name as prompt text — every name a prompt shows (the tool list, the candidates, the
 * calls so far, the demonstrations, the arguments prompt) goes through here. A name that follows
 * the tool-name rule (limits.ts) is shown as it is, so prompts for valid tools are unchanged.
 * Any other string (one that reached a prompt without an entry check: a hand-made ToolSpec, a
 * history entry, a demonstration) is shown JSON-quoted with `<`, `>` and the Unicode line
 * separators escaped: one line of plain data that cannot open a chat turn (`<|im_start|>`), close
 * or open a tag (`</tools>`, `<tool_call>`), or start a new list item or `Action:` line. The
 * prompt's structure so never depends on the rule.
 */
export function promptName(name: unknown): string {
  const text = typeof name === 'string' ? name : String(name);
  if (isValidToolName(text) || text === END) return text;
  return quoteData(text)
    .replace(/\u2028/g, '\\u2028')
    .replace(/\u2029/g, '\\u2029');
}

const pastCall = (c: string | PastCall): PastCall => (typeof c === 'string' ? { tool: c } : c);

/** The calls so far: the last `max` in full, numbered as in the whole history; older ones counted. */
function historyText(history: readonly (string | PastCall)[], max = MAX_HISTORY_SHOWN): string {
  if (history.length === 0) return 'Calls made so far: none.';
  if (!Number.isInteger(max) || max < 1)
    throw new DtdrError('options', `maxHistory must be a positive integer, got ${max}`, { field: 'maxHistory' });
  const from = Math.max(0, history.length - max);
  const omitted = from > 0 ? `(${from} earlier call${from > 1 ? 's' : ''} not shown)\n` : '';
  return `Calls made so far:\n${omitted}${history
    .slice(from)
    .map(pastCall)
    .map(
      (c, i) =>
        `${from + i + 1}. ${promptName(c.tool)}` +
        `${c.arguments !== undefined ? ` ${quoteData(c.arguments)}` : ''}` +
        `${c.result !== undefined ? ` → ${quoteData(c.result)}` : ''}`,
    )
    .join('\n')}`;
}

function demonstrationText(plan: Plan): string {
  return `Request: ${quoteData(plan.query)}\nCalls: ${[...planTools(plan).map(promptName), END].join(' → ')}`;
}

/** Up to `n` demonstrations whose plans use the most candidate tools (ties: earlier first). */
export function pickDemonstrations(
  pool: readonly Plan[],
  candidates: readonly string[],
  n = 5,
  exclude?: Plan,
): Plan[] {
  const wanted = new Set(candidates);
  return pool
    .map((plan, i) => ({ plan, i, overlap: new Set(planTools(plan).filter((t) => wanted.has(t))).size }))
    .filter((x) => x.overlap > 0 && x.plan !== exclude)
    .sort((a, b) => b.overlap - a.overlap || a.i - b.i)
    .slice(0, n)
    .map((x) => x.plan);
}

function toolBlock(tools: readonly ToolSpec[], format: PromptFormat, withParameters: boolean): string {
  if (format === 'react') {
    return tools
      .map(
        (t) =>
          `- ${promptName(t.name)}: ${quoteData(t.description)}` +
          `${withParameters && t.parameters ? ` arguments ${quoteData(t.parameters)}` : ''}`,
      )
      .join('\n');
  }
  return `<tools>\n${tools.map((t) => quoteData(toOpenAITool(t, withParameters))).join('\n')}\n</tools>`;
}

function answerInstruction(format: PromptFormat, stage: 'select' | 'arguments'): string {
  const args = stage === 'arguments' ? '"arguments": <arguments as a JSON object>' : '"arguments": {}';
  if (format === 'react') {
    return stage === 'select'
      ? `Answer in this form and stop:\nThought: <one short sentence>\nAction: <function name, or ` +
          `${END} when the request is fully handled>`
      : 'Answer in this form and stop:\nAction: <function name>\nAction Input: <arguments as a JSON object>';
  }
  if (format === 'openai') {
    // Native tool calling: the API carries the functions and the call; no text format to impose.
    return stage === 'select'
      ? `Call exactly one of the provided functions. When the request is fully handled, call none and answer ${END}.`
      : 'Call the provided function with its arguments.';
  }
  return (
    `Answer with one call and nothing else:\n<tool_call>\n{"name": <function name>, ${args}}\n</tool_call>` +
    `${stage === 'select' ? `\nWhen the request is fully handled, answer ${END}.` : ''}`
  );
}

function render(messages: ChatMessage[]): string {
  return `${messages.map((m) => `<|im_start|>${m.role}\n${m.content}<|im_end|>\n`).join('')}<|im_start|>assistant\n`;
}

function assemble(
  stage: BuiltPrompt['stage'],
  format: PromptFormat,
  strategy: Strategy,
  system: PromptSegment[],
  user: string,
  allowed: string[],
  tools?: OpenAITool[],
  note?: string,
): BuiltPrompt {
  const systemText = system.map((s) => s.text).join('\n\n');
  const messages: ChatMessage[] = [
    { role: 'system', content: systemText },
    { role: 'user', content: user },
  ];
  // ChatML framing is constant; the segments below partition the rendered text exactly.
  const segments: PromptSegment[] = [];
  // Separators end a segment, never start one: "…>" + "\n\n" would otherwise tokenize apart.
  system.forEach((s, i) =>
    segments.push({
      text: `${i === 0 ? '<|im_start|>system\n' : ''}${s.text}${i < system.length - 1 ? '\n\n' : ''}`,
      cacheable: s.cacheable,
    }),
  );
  segments.push({ text: `<|im_end|>\n<|im_start|>user\n${user}<|im_end|>\n<|im_start|>assistant\n`, cacheable: false });
  // Keep the cacheable prefix contiguous: once a variable segment appears, everything after varies.
  let varying = false;
  for (const s of segments) s.cacheable = !(varying ||= !s.cacheable);
  const request: OpenAIChatRequest | undefined =
    format === 'openai' && tools
      ? { messages, tools, tool_choice: stage === 'arguments' ? 'required' : 'auto', parallel_tool_calls: false }
      : undefined;
  return {
    stage,
    format,
    strategy,
    messages,
    ...(tools ? { tools } : {}),
    text: render(messages),
    segments,
    allowed,
    ...(note ? { note } : {}),
    ...(request ? { request } : {}),
  };
}

const SELECT_GUIDE =
  'You are the function-calling agent of an on-device assistant. ' +
  "Pick the single next function call that moves the user's request forward, given the calls already made. " +
  'Call one function at a time; never invent function names.';

/** The function-selection prompt for one step, with F_t encoded by the chosen strategy. */
export function buildSelectionPrompt(input: SelectionPromptInput): BuiltPrompt {
  const { format, tools } = input;
  let strategy = input.strategy;
  if (!STRATEGIES.includes(strategy))
    throw new DtdrError('options', `unknown strategy "${strategy}"`, { hint: `one of: ${STRATEGIES.join(', ')}` });
  if (!FORMATS.includes(format))
    throw new DtdrError('options', `unknown format "${format}"`, { hint: `one of: ${FORMATS.join(', ')}` });
  const candidates = input.candidates ?? [];
  if (strategy !== 'none' && candidates.length === 0)
    throw new DtdrError('options', `strategy ${strategy} needs the retriever's candidates`);
  let note: string | undefined;
  const why = promptReason(input.reason) ?? 'low confidence';
  if (input.widened && strategy.startsWith('hard')) {
    if (input.lowConfidence === 'soft') {
      note =
        `The retriever was unsure (${why}), so every tool is listed ` + `and its guesses are only marked as preferred.`;
      strategy = strategy === 'hard' ? 'soft' : 'soft-weighted';
    } else {
      note = `The retriever was unsure (${why}), so this list is wider than usual.`;
    }
  } else if (input.widened) {
    note = `The retriever was unsure (${why}); treat its preferences as weak hints.`;
  }
  const byName = new Map(tools.map((t) => [t.name, t]));
  const shownTools = strategy.startsWith('hard')
    ? candidates
        .filter((c) => c.tool !== END)
        .map((c) => byName.get(c.tool))
        .filter((t): t is ToolSpec => !!t)
    : [...tools];
  const weighted = strategy.endsWith('weighted');
  const listed = (cs: readonly Candidate[]) =>
    cs.map((c) => (weighted ? `${promptName(c.tool)} (${c.probability.toFixed(2)})` : promptName(c.tool))).join(', ');
  const demos = input.demonstrations ?? [];

  const system: PromptSegment[] = [
    { text: SELECT_GUIDE, cacheable: true },
    { text: answerInstruction(format, 'select'), cacheable: true },
  ];
  if (demos.length > 0) system.push({ text: `Example:\n${demonstrationText(demos[0])}`, cacheable: true });
  const header =
    format === 'react' ? 'Functions you can call:' : 'Function signatures are given within <tools></tools> XML tags:';
  const block = `${header}\n${toolBlock(shownTools, format, false)}`;
  if (format !== 'openai') system.push({ text: block, cacheable: !strategy.startsWith('hard') });
  if (strategy.startsWith('hard') && weighted)
    system.push({
      text: `Most likely next calls, with the retriever's probabilities: ${listed(candidates)}.`,
      cacheable: false,
    });
  if (strategy.startsWith('soft'))
    system.push({
      text:
        `Prefer these functions for the next call${weighted ? ' (retriever probabilities)' : ''}: ` +
        `${listed(candidates)}.`,
      cacheable: false,
    });
  if (strategy === 'raw-demos') {
    const more = pickDemonstrations(
      demos,
      candidates.map((c) => c.tool),
      5,
      demos[0],
    );
    if (more.length > 0)
      system.push({ text: `More examples:\n${more.map(demonstrationText).join('\n\n')}`, cacheable: false });
  }
  if (note) system.push({ text: note, cacheable: false });
  const user = `${quoteData(input.query)}\n\n${historyText(input.history, input.maxHistory)}`;
  const allowed = [...shownTools.map((t) => t.name), END];
  const openaiTools = format === 'openai' ? shownTools.map((t) => toOpenAITool(t, false)) : undefined;
  return assemble('select', format, strategy, system, user, allowed, openaiTools, note);
}

/** The parameter-filling prompt for the function chosen at this step. */
export function buildArgumentsPrompt(input: {
  query: string;
  history: readonly (string | PastCall)[];
  tool: ToolSpec;
  format: PromptFormat;
  maxHistory?: number;
}): BuiltPrompt {
  const { format, tool } = input;
  const system: PromptSegment[] = [
    {
      text:
        `You are the function-calling agent of an on-device assistant. Fill in the arguments of ` +
        `${promptName(tool.name)} for the user's request, using values from the request and from ` +
        `earlier results. Follow the signature exactly.`,
      cacheable: true,
    },
    { text: answerInstruction(format, 'arguments'), cacheable: true },
  ];
  if (format !== 'openai')
    system.push({
      text: `${
        format === 'react' ? 'Function:' : 'Function signature within <tools></tools> XML ' + 'tags:'
      }\n${toolBlock([tool], format, true)}`,
      cacheable: false,
    });
  const user = `${quoteData(input.query)}\n\n${historyText(input.history, input.maxHistory)}`;
  return assemble(
    'arguments',
    format,
    'hard',
    system,
    user,
    [tool.name],
    format === 'openai' ? [toOpenAITool(tool, true)] : undefined,
  );
}

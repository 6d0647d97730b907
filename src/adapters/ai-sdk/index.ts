/**
 * dtdr for the Vercel AI SDK (`ai` ≥ 7, an optional peer dependency).
 *
 *   const step = dtdrPrepareStep(model, { tools: Object.keys(tools) });
 *   await generateText({ model: llm, tools: step.guard(tools), prepareStep: step, stopWhen: stepCountIs(8), prompt });
 *
 * Each step, the request (the first user message) and the tool calls of earlier steps go to
 * dtdr, and `activeTools` becomes the retrieved set (END handled: when dtdr is confident the plan
 * goes on, `toolChoice` is `required`). `mode: 'soft'` keeps every tool active — the tool list,
 * and so the provider's prompt cache, stays the same — and adds dtdr's weighted hint to the
 * instructions. `dtdrToolSearch(model)` is a history-aware `search` callback for `toolSearch`.
 *
 * The guard. `guard(tools)` wraps every tool's `execute` so that a call outside the set offered
 * at that step of that run is answered with an error result and never executed. The set is kept
 * per step and per run, never in the prepareStep object: `generateText`/`streamText` build a new
 * `messages` array for every step and hand that same array to `prepareStep` and, as
 * `options.messages`, to every tool the step's answer calls. The guard keys the step's allowed
 * set by that array (a WeakMap, so nothing outlives the run), so two runs sharing one
 * `dtdrPrepareStep` can never see each other's sets, and it fails closed: a call whose `messages`
 * no step of ours saw (a call before the first `prepareStep`, a tool run outside generateText, a
 * resumed tool approval, or a `prepareStep` of yours that returns its own `messages` around ours)
 * is refused, not executed. In soft mode every tool given at that step is allowed.
 *
 * Tool names. Every name given to dtdr here (the `tools` option, `alwaysInclude`, the keys passed
 * to `guard`) must follow the tool-name rule (limits.ts), which every provider's own rule is
 * stricter than: a name that breaks it is refused with a DtdrError naming it, at once. Tools dtdr
 * does not know stay offered but never enter its history or hint.
 */
import type { PrepareStepFunction, PrepareStepResult, ToolSet } from 'ai';
import type { Dtdr } from '../../core/dtdr.js';
import { DtdrError } from '../../core/base/errors.js';
import { checkToolName } from '../../core/base/limits.js';
import { importOptional } from '../../encoders/hub.js';
import { chooseTools, messageText, type AdapterOptions, type StepChoice } from '../shared.js';

// Fail at import, in one line naming the package, when `ai` is not installed.
await importOptional('ai', 'dtdr/ai-sdk');

export interface DtdrPrepareStepOptions extends AdapterOptions {
  /** `hard` (default): only the retrieved tools are active. `soft`: every tool stays active and the instructions carry dtdr's hint. */
  mode?: 'hard' | 'soft';
  /** The names of all the tools you pass to generateText: tools dtdr does not know stay active. */
  tools?: readonly string[];
  /** Set `toolChoice: 'required'` when dtdr is confident the plan is not finished. Default true. */
  requireWhenConfident?: boolean;
}

type StepOptions = Parameters<PrepareStepFunction<ToolSet>>[0];

export interface DtdrPrepareStep {
  (options: StepOptions): Promise<PrepareStepResult<ToolSet>>;
  /** The last step's choice, for logs and UIs. */
  readonly last: StepChoice | undefined;
  /** Wraps tools so that a call outside the set offered at its step of its run (or before any step) is refused, not executed. */
  guard<T extends ToolSet>(tools: T): T;
}

/** The request: the text of the first user message. */
function requestOf(options: StepOptions): string {
  const first = options.initialMessages.find((m) => m.role === 'user') ?? options.messages.find((m) => m.role === 'user');
  const text = first ? messageText(first.content) : '';
  if (!text) throw new DtdrError('options', 'dtdrPrepareStep found no user message to retrieve tools for', { hint: 'pass prompt or a user message to generateText/streamText' });
  return text;
}

/** The tools called in earlier steps that ran (a refused or failed call is not history), in order. */
function historyOf(options: StepOptions): string[] {
  return options.steps.flatMap((s) => s.content.filter((c) => c.type === 'tool-result').map((c) => (c as { toolName: string }).toolName));
}

export function dtdrPrepareStep(model: Dtdr, options: DtdrPrepareStepOptions = {}): DtdrPrepareStep {
  for (const [i, name] of (options.tools ?? []).entries()) checkToolName(name, { field: `tools[${i}]` });
  for (const [i, name] of (options.alwaysInclude ?? []).entries()) checkToolName(name, { field: `alwaysInclude[${i}]` });
  let last: StepChoice | undefined;
  /** Each step's allowed set (null: every tool, soft mode), keyed by the step's own messages array. */
  const allowedAt = new WeakMap<object, ReadonlySet<string> | null>();
  const prepare = async (step: StepOptions): Promise<PrepareStepResult<ToolSet>> => {
    const choice = await chooseTools(model, requestOf(step), historyOf(step), options.tools, options);
    last = choice;
    if (options.mode === 'soft') {
      allowedAt.set(step.messages, null);
      const base = typeof step.initialInstructions === 'string' ? `${step.initialInstructions}\n\n` : '';
      return { instructions: `${base}${choice.hint}` };
    }
    allowedAt.set(step.messages, new Set(choice.tools));
    const confident = !choice.retrieval.widened && !choice.mayEnd;
    return {
      activeTools: choice.tools,
      ...(confident && (options.requireWhenConfident ?? true) ? { toolChoice: 'required' as const } : {}),
    };
  };
  Object.defineProperty(prepare, 'last', { get: () => last });
  return Object.assign(prepare, {
    guard<T extends ToolSet>(tools: T): T {
      const wrapped: Record<string, unknown> = {};
      for (const [name, t] of Object.entries(tools)) {
        checkToolName(name, { field: `tools.${name}` });
        const execute = (t as { execute?: (...args: unknown[]) => unknown }).execute;
        wrapped[name] = execute
          ? {
              ...t,
              execute: async (input: unknown, callOptions?: { messages?: unknown }, ...rest: unknown[]) => {
                const messages = callOptions?.messages;
                const allowed = messages && typeof messages === 'object' ? allowedAt.get(messages) : undefined;
                // Thrown, so the SDK answers the model with a tool error (and it is no history).
                if (allowed === undefined) {
                  throw new DtdrError('tool-call', `Tool "${name}" is not available at this step: no step of this run has offered tools yet.`, {
                    hint: 'pass the same dtdrPrepareStep as prepareStep to the generateText/streamText call that runs these guarded tools, and return its messages unchanged',
                  });
                }
                if (allowed !== null && !allowed.has(name)) {
                  throw new DtdrError('tool-call', `Tool "${name}" is not available at this step. Available tools: ${[...allowed].join(', ')}.`);
                }
                return execute(input, callOptions, ...rest);
              },
            }
          : t;
      }
      return wrapped as T;
    },
  }) as DtdrPrepareStep;
}

export interface DtdrToolSearchOptions {
  /** The calls made so far in the conversation; default none. */
  history?: () => readonly string[];
  select?: AdapterOptions['select'];
}

/**
 * A `search` callback for the AI SDK's `toolSearch({ search })`: ranks the eligible deferred
 * tools for the model's search query together with the calls made so far, best first.
 */
export function dtdrToolSearch(model: Dtdr, options: DtdrToolSearchOptions = {}) {
  return async ({ query, tools }: { query: string; tools: Array<{ name: string; description?: string }> }): Promise<string[]> => {
    const known = new Set(model.tools.map((t) => t.name));
    const history = (options.history?.() ?? []).filter((h) => known.has(h));
    const ranking = await model.rank(query, history);
    const eligible = new Set(tools.map((t) => t.name));
    return Array.from(ranking.order, (i) => ranking.labels[i]).filter((name) => eligible.has(name));
  };
}

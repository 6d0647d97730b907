/**
 * dtdr for the Vercel AI SDK (`ai` 6 or 7, an optional peer dependency).
 *
 *   const step = dtdrPrepareStep(model, { tools: Object.keys(tools) });
 *   await generateText({ model: llm, tools: step.guard(tools), prepareStep: step, stopWhen: stepCountIs(8), prompt });
 *
 * Each step, the request (the first user message with text) and the tool calls of earlier steps go to
 * dtdr, and `activeTools` becomes the retrieved set (END handled: when dtdr is confident the plan
 * goes on, `toolChoice` is `required`). `mode: 'soft'` keeps every tool active — the tool list,
 * and so the provider's prompt cache, stays the same — and adds dtdr's weighted hint to the
 * system prompt. `dtdrToolSearch(model)` is a history-aware `search` callback for ai 7's `toolSearch`.
 *
 * Both majors. The step options differ: ai 7 hands `prepareStep` the call's `initialMessages` and
 * `initialInstructions` and takes `instructions` back; ai 6 hands it only the step's `messages`
 * (the call's messages, then the responses so far) and takes `system` back, and it cannot see the
 * call's own `system`. So the request is the first user message with text of `initialMessages`
 * (ai 7) or of `messages` (ai 6); a message with only images or files is passed over, and a
 * conversation with no user text is refused with a DtdrError (no tools are offered without a
 * request). In soft mode the hint follows your system prompt: the `system` option if you give it
 * (dtdr returns it and the hint as the step's system prompt, in place of the call's); else, on
 * ai 7, the call's `instructions`; else, on ai 6, the hint goes in as a system message right after
 * the call's own `system` (which the SDK sends first), so that prompt is never dropped.
 *
 * The guard. `guard(tools)` wraps every tool's `execute` so that a call outside the set offered
 * at that step of that run is answered with an error result and never executed. The set is kept
 * per step and per run, never in the prepareStep object: `generateText`/`streamText` (ai 6 and 7
 * alike) build a new `messages` array for every step and hand that same array to `prepareStep` and,
 * as `options.messages`, to every tool the step's answer calls. The guard keys the step's allowed
 * set by that array (a WeakMap, so nothing outlives the run), so two runs sharing one
 * `dtdrPrepareStep` can never see each other's sets, and it fails closed: a call whose `messages`
 * no step of ours saw (a call before the first `prepareStep`, a tool run outside generateText, a
 * resumed tool approval, or, on ai 7, a `prepareStep` of yours that returns its own `messages`
 * around ours) is refused, not executed. In soft mode every tool given at that step is allowed.
 * A call naming no tool of the step is answered by the SDK with a tool error; on ai 6, whose
 * active-tool map is a plain object, a name like `toString` or `constructor` would find that
 * member instead, so there the step's model refuses such an answer with a DtdrError naming the call
 * and the step's tools (noInheritedCalls). When a call runs, its tool is checked once more against
 * the model as it is then: a tool removed (`removeTools`) while the model's answer was being made,
 * after its step offered it, is refused like any other, never executed.
 *
 * Tool names. Every name given to dtdr here (the `tools` option, `alwaysInclude`, the keys passed
 * to `guard`) must follow the tool-name rule (limits.ts), which every provider's own rule is
 * stricter than: a name that breaks it is refused with a DtdrError naming it, at once. Tools dtdr
 * does not know stay offered but never enter its history or hint. A tool removed from the model
 * (`removeTools`) is never offered or run, in either mode, even though it is still passed in; the
 * listing is the `tools` option, else the names given to `guard`.
 *
 * @module dtdr/ai-sdk
 */
import type {
  LanguageModel,
  LanguageModelMiddleware,
  ModelMessage,
  PrepareStepFunction,
  PrepareStepResult,
  SystemModelMessage,
  ToolSet,
} from 'ai';
import type { Dtdr } from '../../core/dtdr.js';
import { DtdrError } from '../../core/base/errors.js';
import { checkToolName } from '../../core/base/limits.js';
import { importOptional } from '../../encoders/hub.js';
import {
  chooseTools,
  noRequestError,
  removedSinceOffered,
  requestText,
  type AdapterOptions,
  type StepChoice,
} from '../shared.js';

// Fail at import, in one line naming the package, when `ai` is not installed.
const { wrapLanguageModel } = await importOptional<typeof import('ai')>('ai', 'dtdr/ai-sdk');

/** Options of {@link dtdrPrepareStep}: the tools it may offer, how many, always-included tools, and the soft mode. */
export interface DtdrPrepareStepOptions extends AdapterOptions {
  /**
   * `hard` (default): only the retrieved tools are active. `soft`: every tool stays active and the instructions carry
   * dtdr's hint.
   */
  mode?: 'hard' | 'soft';
  /** The names of all the tools you pass to generateText: tools dtdr does not know stay active. */
  tools?: readonly string[];
  /** Set `toolChoice: 'required'` when dtdr is confident the plan is not finished. Default true. */
  requireWhenConfident?: boolean;
  /**
   * Soft mode: your system prompt, which dtdr's hint follows. Given, the step's system prompt is
   * this and the hint (ai 7: `instructions`, ai 6: `system`), in place of the call's own: pass it
   * here instead of to generateText. Not given: on ai 7 the hint follows the call's `instructions`;
   * on ai 6 (whose prepareStep cannot see the call's `system`) it goes in as a second system
   * message right after the call's `system`.
   */
  system?: string | SystemModelMessage | SystemModelMessage[];
}

type StepOptions = Parameters<PrepareStepFunction<ToolSet>>[0];

/** What {@link dtdrPrepareStep} returns: the `prepareStep` function itself, with `guard` and the last step's choice. */
export interface DtdrPrepareStep {
  // Generic, so that it fits `prepareStep` for the tool set of the call (its type is the installed ai's).
  <TOOLS extends ToolSet = ToolSet>(
    options: Parameters<PrepareStepFunction<TOOLS>>[0],
  ): Promise<PrepareStepResult<TOOLS>>;
  /** The last step's choice, for logs and UIs. */
  readonly last: StepChoice | undefined;
  /**
   * Wraps tools so that a call outside the set offered at its step of its run (or before any step) is refused, not
   * executed.
   */
  guard<T extends ToolSet>(tools: T): T;
}

/** What ai 7 adds to the step options (absent on ai 6, whose types the package is built against). */
interface Ai7StepOptions {
  initialMessages?: ModelMessage[];
  initialInstructions?: string | SystemModelMessage | SystemModelMessage[];
}
type System = string | SystemModelMessage | SystemModelMessage[];

/**
 * ai 7's extra step options, or undefined on ai 6 (ai 7 hands prepareStep the call's initial messages; ai 6 does not).
 * No type guard: the source type-checks against either major.
 */
function ai7Of(options: StepOptions): (Ai7StepOptions & { initialMessages: ModelMessage[] }) | undefined {
  const extra = options as unknown as Ai7StepOptions;
  return Array.isArray(extra.initialMessages)
    ? (extra as Ai7StepOptions & { initialMessages: ModelMessage[] })
    : undefined;
}

/**
 * A system prompt followed by dtdr's hint: one string if the prompt is a string (or none), else the prompt's messages
 * and one more.
 */
function withHint(base: System | undefined, hint: string): System {
  if (base === undefined || base === null) return hint;
  if (typeof base === 'string') return base ? `${base}\n\n${hint}` : hint;
  return [...(Array.isArray(base) ? base : [base]), { role: 'system', content: hint }];
}

/**
 * The request: the text of the first user message that has any (ai 7: of the call's initial messages; ai 6: of the
 * step's messages, which begin with them).
 */
function requestOf(options: StepOptions): string {
  const users = (messages: readonly ModelMessage[]) => messages.filter((m) => m.role === 'user').map((m) => m.content);
  const initial = ai7Of(options)?.initialMessages;
  const text = (initial && requestText(users(initial))) || requestText(users(options.messages));
  if (!text)
    throw noRequestError('dtdrPrepareStep', 'pass prompt or a user message with text to generateText/streamText');
  return text;
}

/** The tools called in earlier steps that ran (a refused or failed call is not history), in order. */
function historyOf(options: StepOptions): string[] {
  return options.steps.flatMap((s) =>
    s.content.filter((c) => c.type === 'tool-result').map((c) => (c as { toolName: string }).toolName),
  );
}

/** Soft mode's result: the hint after the caller's system prompt, in the field the installed major reads. */
function softResult(step: StepOptions, hint: string, system: System | undefined): PrepareStepResult<ToolSet> {
  // Cast: the package is type-checked against ai 6, whose result has no `instructions`.
  const ai7 = ai7Of(step);
  if (ai7)
    return { instructions: withHint(system ?? ai7.initialInstructions, hint) } as unknown as PrepareStepResult<ToolSet>;
  if (system !== undefined) return { system: withHint(system, hint) };
  // ai 6 without the option: the SDK sends the call's `system` before these messages; the hint
  // goes after it and any system messages the call's messages begin with. The tools still receive
  // the step's own messages array (the guard's key): a returned `messages` only changes the prompt.
  const at = step.messages.findIndex((m) => m.role !== 'system');
  const split = at < 0 ? step.messages.length : at;
  return {
    messages: [...step.messages.slice(0, split), { role: 'system', content: hint }, ...step.messages.slice(split)],
  };
}

/**
 * A `prepareStep` for `generateText`/`streamText`: each step sets `activeTools` to dtdr's candidate set for the request
 * and the tools that ran, handles END, and (`mode: 'soft'`) adds a weighted hint instead. Use `step.guard(tools)` as
 * the call's `tools` so a call outside the step's set never runs.
 */
export function dtdrPrepareStep(model: Dtdr, options: DtdrPrepareStepOptions = {}): DtdrPrepareStep {
  for (const [i, name] of (options.tools ?? []).entries()) checkToolName(name, { field: `tools[${i}]` });
  for (const [i, name] of (options.alwaysInclude ?? []).entries())
    checkToolName(name, { field: `alwaysInclude[${i}]` });
  let last: StepChoice | undefined;
  /** The tool names given to `guard`: the listing when the `tools` option is not given. */
  let guarded: readonly string[] | undefined;
  /** Each step's allowed set (soft mode: every available tool), keyed by the step's own messages array. */
  const allowedAt = new WeakMap<object, Allowed>();
  const prepare = async (step: StepOptions): Promise<PrepareStepResult<ToolSet>> => {
    const listing = options.tools ?? guarded;
    const choice = await chooseTools(model, requestOf(step), historyOf(step), listing, options);
    last = choice;
    if (options.mode === 'soft') {
      // Every tool stays active but a removed or unlisted one; a tool dtdr cannot name (no listing, no guard) is not
      // refused.
      allowedAt.set(step.messages, listing ? allowedOf(choice.available) : notRemoved(model));
      const result = softResult(step, choice.hint, options.system);
      // activeTools only when some tool is left out: the SDK then looks tools up in its own copy of the map.
      return listing && listing.some((name) => !choice.available.has(name))
        ? { ...result, activeTools: [...choice.available], ...noInheritedCalls(step, choice.available) }
        : result;
    }
    const offered = new Set(choice.tools);
    allowedAt.set(step.messages, allowedOf(offered));
    const confident = !choice.retrieval.widened && !choice.mayEnd;
    return {
      activeTools: choice.tools,
      ...(confident && (options.requireWhenConfident ?? true) ? { toolChoice: 'required' as const } : {}),
      ...noInheritedCalls(step, offered),
    };
  };
  Object.defineProperty(prepare, 'last', { get: () => last });
  return Object.assign(prepare, {
    guard<T extends ToolSet>(tools: T): T {
      // A null-prototype object with own properties only: a tool named "__proto__" is a tool, and
      // a call named "toString" or "constructor" finds no tool (the SDK answers NoSuchToolError).
      const wrapped = Object.create(null) as Record<string, unknown>;
      for (const [name, t] of Object.entries(tools)) {
        checkToolName(name, { field: `tools.${name}` });
        const execute = (t as { execute?: (...args: unknown[]) => unknown }).execute;
        const value = execute
          ? {
              ...t,
              execute: async (input: unknown, callOptions?: { messages?: unknown }, ...rest: unknown[]) => {
                const messages = callOptions?.messages;
                const allowed = messages && typeof messages === 'object' ? allowedAt.get(messages) : undefined;
                // Thrown, so the SDK answers the model with a tool error (and it is no history).
                if (allowed === undefined) {
                  throw new DtdrError(
                    'tool-call',
                    `Tool "${name}" is not available at this step: no step of this run has offered tools yet.`,
                    {
                      hint:
                        'pass the same dtdrPrepareStep as prepareStep to the generateText/streamText call that ' +
                        'runs these guarded tools, and return its messages unchanged',
                    },
                  );
                }
                if (!allowed.allows(name)) {
                  throw new DtdrError(
                    'tool-call',
                    `Tool "${name}" is not available at this step. Available tools: ${allowed.names().join(', ')}.`,
                  );
                }
                // Checked again now: the tool may have been removed while the model's answer was being made.
                const removed = removedSinceOffered(model, name);
                if (removed) throw new DtdrError('tool-call', removed);
                return execute(input, callOptions, ...rest);
              },
            }
          : t;
        Object.defineProperty(wrapped, name, { value, enumerable: true, writable: true, configurable: true });
      }
      guarded = Object.keys(wrapped);
      return wrapped as T;
    },
  }) as unknown as DtdrPrepareStep;
}

/**
 * ai 6 looks a step's active tools up in a plain object (ai 7 in its own properties only), so a
 * call named like a member of Object.prototype (`toString`, `constructor`) that is no tool of the
 * step finds that member: it parses, nothing runs, and it comes back with no result and no error.
 * On ai 6 a step with active tools therefore runs its model through a check of the answer: such
 * a call is refused with a DtdrError naming it and the step's tools (generateText rejects with
 * it; streamText gets it as an error part in place of the call). Any other name the step lacks is
 * answered by the SDK with a tool error, as before.
 */
function noInheritedCalls(step: StepOptions, offered: ReadonlySet<string>): { model?: LanguageModel } {
  const model = step.model;
  if (ai7Of(step) || !model || typeof model !== 'object' || model.specificationVersion !== 'v3') return {};
  const refusal = (name: string) =>
    new DtdrError(
      'tool-call',
      `Tool "${name}" is not available at this step: no tool has that name. ` +
        `Available tools: ${[...offered].join(', ')}.`,
    );
  const refused = (part: { type: string; toolName?: string; providerExecuted?: boolean }) =>
    part.type === 'tool-call' &&
    !part.providerExecuted &&
    typeof part.toolName === 'string' &&
    part.toolName in Object.prototype &&
    !offered.has(part.toolName);
  const middleware: LanguageModelMiddleware = {
    specificationVersion: 'v3',
    wrapGenerate: async ({ doGenerate }) => {
      const result = await doGenerate();
      const bad = result.content.find(refused);
      if (bad) throw refusal((bad as { toolName: string }).toolName);
      return result;
    },
    wrapStream: async ({ doStream }) => {
      const result = await doStream();
      type Part = typeof result.stream extends ReadableStream<infer P> ? P : never;
      const stream = result.stream.pipeThrough(
        new TransformStream<Part, Part>({
          transform(part, controller) {
            controller.enqueue(
              refused(part)
                ? { type: 'error' as const, error: refusal((part as { toolName: string }).toolName) }
                : part,
            );
          },
        }),
      );
      return { ...result, stream };
    },
  };
  return { model: wrapLanguageModel({ model, middleware }) };
}

/** What a step may run: a call is checked with `allows`; `names` are listed in the refusal. */
interface Allowed {
  allows(name: string): boolean;
  names(): string[];
}
const allowedOf = (set: ReadonlySet<string>): Allowed => ({ allows: (name) => set.has(name), names: () => [...set] });

/** Soft mode without a listing: every name but the model's removed tools. */
function notRemoved(model: Dtdr): Allowed {
  const removed = new Set(model.removedTools);
  return { allows: (name) => !removed.has(name), names: () => model.tools.map((t) => t.name) };
}

/** Options of {@link dtdrToolSearch}. */
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
  return async ({
    query,
    tools,
  }: {
    query: string;
    tools: Array<{ name: string; description?: string }>;
  }): Promise<string[]> => {
    const known = new Set(model.tools.map((t) => t.name));
    const history = (options.history?.() ?? []).filter((h) => known.has(h));
    const ranking = await model.rank(query, history);
    const eligible = new Set(tools.map((t) => t.name));
    return Array.from(ranking.order, (i) => ranking.labels[i]).filter((name) => eligible.has(name));
  };
}

/**
 * dtdr for LangChain.js agents (`langchain` ≥ 1, an optional peer dependency): a drop-in,
 * history-aware alternative to `llmToolSelectorMiddleware` that spends no LLM call.
 *
 *   const agent = createAgent({ model, tools, middleware: [dtdrToolSelector(dtdr, { maxTools: 5 })] });
 *
 * Before each model call it reads the request (the first human message with text) and the tools called so
 * far (the AI messages' tool calls that got a result), asks dtdr for the next tools, and passes
 * the model only those (plus `alwaysInclude`, and any tool dtdr does not know).
 *
 * The guard. Filtering what the model is shown is not enough: a model can still call a tool it
 * was not offered. So the middleware also wraps every tool call (`wrapToolCall`): the call is run
 * only when its tool was among those passed to the model call whose answer made it. The offered
 * set is attached to that answer — the AIMessage object the model call returned, in a WeakMap —
 * so it is per run and per model call, lives in the run's own state (never in the middleware,
 * which every run of the agent shares), and goes when the message goes. For a tool call, the
 * AIMessage in the run's state that holds it (by tool-call id, or the latest AI message) is
 * looked up; a call no model call of ours answered (an AI message given in the input, one
 * replaced by another middleware, or a run restored from a checkpoint in another process) is
 * refused: fail closed. The tool is also checked against the model as it is when the call runs: one
 * removed (`removeTools`) while the model was answering, after it was offered, is refused too. A
 * refused call is answered with an error ToolMessage and never executed.
 *
 * The request. A human message with only images or files is passed over for the first one with
 * text; a conversation with no human text is refused with a DtdrError at the model call (no tools
 * are shown without a request, never every tool past `maxTools`).
 *
 * Tool names. The agent's tool names must follow the tool-name rule (limits.ts), which every
 * provider's own rule is stricter than: a name that breaks it is refused with a DtdrError naming
 * it at the first model call. Tools dtdr does not know stay offered but never enter its history; a
 * tool removed from the model (`removeTools`) is never shown or run, though the agent still has it.
 *
 * @module dtdr/langchain
 */
import type { Dtdr } from '../../core/dtdr.js';
import { checkToolName } from '../../core/base/limits.js';
import { importOptional } from '../../encoders/hub.js';
import {
  availableTools,
  chooseTools,
  noRequestError,
  removedSinceOffered,
  requestText,
  type AdapterOptions,
  type StepChoice,
} from '../shared.js';

const { createMiddleware, ToolMessage } = await importOptional<typeof import('langchain')>(
  'langchain',
  'dtdr/langchain',
);

/** Options of {@link dtdrToolSelector}. */
export interface DtdrToolSelectorOptions extends AdapterOptions {
  /** Called with each model call's choice (the retrieval and the tools passed on). */
  onChoice?: (choice: StepChoice) => void;
}

interface MessageLike {
  type?: string;
  _getType?: () => string;
  getType?: () => string;
  content?: unknown;
  tool_calls?: { name: string; id?: string }[];
  tool_call_id?: string;
}

const kind = (m: MessageLike) => m.type ?? m.getType?.() ?? m._getType?.();

/** The request and the tools that ran, from an agent's messages. */
function requestAndHistory(messages: readonly MessageLike[]): { query: string; history: string[] } {
  const answered = new Set(messages.filter((m) => kind(m) === 'tool').map((m) => m.tool_call_id));
  const history = messages
    .filter((m) => kind(m) === 'ai')
    .flatMap((m) => (m.tool_calls ?? []).filter((c) => c.id === undefined || answered.has(c.id)).map((c) => c.name));
  return { query: requestText(messages.filter((m) => kind(m) === 'human').map((m) => m.content)), history };
}

/** The AI message of a run's state that made a tool call: the one holding its id, else the latest. */
function callingMessage(messages: readonly MessageLike[], id: string | undefined): MessageLike | undefined {
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i];
    if (kind(m) !== 'ai') continue;
    if (id === undefined || (m.tool_calls ?? []).some((c) => c.id === id)) return m;
  }
  return undefined;
}

/**
 * A LangChain `createAgent` middleware that offers the model only dtdr's candidate tools for the request and the calls
 * so far (a drop-in for `llmToolSelectorMiddleware` that spends no LLM call); a call of a tool not offered is answered
 * with an error `ToolMessage`, never run.
 */
export function dtdrToolSelector(model: Dtdr, options: DtdrToolSelectorOptions = {}) {
  for (const [i, name] of (options.alwaysInclude ?? []).entries())
    checkToolName(name, { field: `alwaysInclude[${i}]` });
  /** What each model call was offered, keyed by the AIMessage it answered with. */
  const offeredTo = new WeakMap<object, ReadonlySet<string>>();
  return createMiddleware({
    name: 'DtdrToolSelector',
    wrapModelCall: async (request, handler) => {
      const { query, history } = requestAndHistory(request.messages);
      const tools = (request.tools ?? []) as { name?: string }[];
      tools.forEach((t, i) => typeof t.name === 'string' && checkToolName(t.name, { field: `tools[${i}].name` }));
      const names = tools.map((t) => t.name).filter((n): n is string => typeof n === 'string');
      // No tools, nothing to choose from. A conversation with no user text (only images or files) has no request:
      // refused, as every adapter does, rather than showing every tool past maxTools.
      let keep: ReadonlySet<string> = availableTools(model, names);
      if (tools.length > 0) {
        if (!query) throw noRequestError('dtdrToolSelector', 'give the agent a human message with text');
        const choice = await chooseTools(model, query, history, names, options);
        options.onChoice?.(choice);
        keep = new Set(choice.tools);
      }
      const shown = tools.filter((t) => typeof t.name !== 'string' || keep.has(t.name));
      const response = await handler({ ...request, tools: shown as typeof request.tools });
      if (response && typeof response === 'object')
        offeredTo.set(response, new Set(shown.map((t) => t.name).filter((n): n is string => typeof n === 'string')));
      return response;
    },
    wrapToolCall: async (request, handler) => {
      const call = request.toolCall;
      const message = callingMessage(request.state?.messages ?? [], call.id);
      const offered = message ? offeredTo.get(message) : undefined;
      // Checked against the model as it is now as well: the tool may have been removed while the model answered.
      const removed = offered?.has(call.name) ? removedSinceOffered(model, call.name) : undefined;
      if (offered && offered.has(call.name) && !removed) return handler(request);
      const reason =
        removed ??
        (offered
          ? `Tool "${call.name}" is not available at this step. Available tools: ${[...offered].join(', ')}.`
          : `Tool "${call.name}" is not available at this step: no model call of this run offered it.`);
      return new ToolMessage({ content: reason, tool_call_id: call.id ?? '', name: call.name, status: 'error' });
    },
  });
}

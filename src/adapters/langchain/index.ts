/**
 * dtdr for LangChain.js agents (`langchain` ≥ 1, an optional peer dependency): a drop-in,
 * history-aware alternative to `llmToolSelectorMiddleware` that spends no LLM call.
 *
 *   const agent = createAgent({ model, tools, middleware: [dtdrToolSelector(dtdr, { maxTools: 5 })] });
 *
 * Before each model call it reads the request (the first human message) and the tools called so
 * far (the AI messages' tool calls that got a result), asks dtdr for the next tools, and passes
 * the model only those (plus `alwaysInclude`, and any tool dtdr does not know).
 */
import type { Dtdr } from '../../core/dtdr.js';
import { importOptional } from '../../encoders/hub.js';
import { chooseTools, messageText, type AdapterOptions, type StepChoice } from '../shared.js';

const { createMiddleware } = await importOptional<typeof import('langchain')>('langchain', 'dtdr/langchain');

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
export function requestAndHistory(messages: readonly MessageLike[]): { query: string; history: string[] } {
  const human = messages.find((m) => kind(m) === 'human');
  const answered = new Set(messages.filter((m) => kind(m) === 'tool').map((m) => m.tool_call_id));
  const history = messages
    .filter((m) => kind(m) === 'ai')
    .flatMap((m) => (m.tool_calls ?? []).filter((c) => c.id === undefined || answered.has(c.id)).map((c) => c.name));
  return { query: human ? messageText(human.content) : '', history };
}

export function dtdrToolSelector(model: Dtdr, options: DtdrToolSelectorOptions = {}) {
  return createMiddleware({
    name: 'DtdrToolSelector',
    wrapModelCall: async (request, handler) => {
      const { query, history } = requestAndHistory(request.messages as unknown as MessageLike[]);
      const tools = (request.tools ?? []) as { name?: string }[];
      if (!query || tools.length === 0) return handler(request);
      const names = tools.map((t) => t.name).filter((n): n is string => typeof n === 'string');
      const choice = await chooseTools(model, query, history, names, options);
      options.onChoice?.(choice);
      const keep = new Set(choice.tools);
      return handler({ ...request, tools: tools.filter((t) => typeof t.name !== 'string' || keep.has(t.name)) as typeof request.tools });
    },
  });
}

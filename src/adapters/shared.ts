/**
 * What every framework adapter needs per step: the request and the calls so far in, the tools to
 * offer out (END handled, capped, tools dtdr does not know kept), and a hint for soft modes.
 */
import type { Dtdr, Retrieval } from '../core/dtdr.js';
import { DtdrError } from '../core/base/errors.js';
import type { SelectOptions } from '../core/selection/select.js';
import { END } from '../core/base/types.js';
import { promptReason } from '../core/prompts/reason.js';

export interface AdapterOptions {
  /** At most this many tools offered per step (dtdr's set is cut, best first, and says so). Default 8. */
  maxTools?: number;
  /** Tools always offered, whatever dtdr retrieves. */
  alwaysInclude?: string[];
  /** Candidate-set options passed to `retrieve` (alpha, widening). */
  select?: SelectOptions;
  /** Called with each step's retrieval: for logs and UIs. */
  onRetrieval?: (retrieval: Retrieval, info: { query: string; history: string[] }) => void;
}

export interface StepChoice {
  retrieval: Retrieval;
  /** Tool names to offer, best first (no END): all of them in `available`. */
  tools: string[];
  /** The tools this step may run at all (see availableTools): a soft mode offers these. */
  available: ReadonlySet<string>;
  /** Whether dtdr thinks the plan may be complete (END among the candidates). */
  mayEnd: boolean;
  /** A short hint for the model, e.g. for a soft mode that keeps every tool. */
  hint: string;
}

/**
 * The tools a step may offer and run — the one rule every adapter follows: the current listing
 * (the app's tools, or the server's latest tools/list), less every tool removed from the model.
 * Without a listing: the model's tools and `alwaysInclude`. A tool removed with `removeTools` is
 * never in it, even where the app still passes it; a tool the model knows but the listing lacks
 * (a server dropped it, another server owns it) is not either.
 */
export function availableTools(
  model: Dtdr,
  listing: readonly string[] | undefined,
  alwaysInclude: readonly string[] = [],
): Set<string> {
  const removed = new Set(model.removedTools);
  const names = listing ?? [...model.tools.map((t) => t.name), ...alwaysInclude];
  return new Set(names.filter((n) => !removed.has(n)));
}

export async function chooseTools(
  model: Dtdr,
  query: string,
  history: string[],
  allTools: readonly string[] | undefined,
  options: AdapterOptions,
): Promise<StepChoice> {
  const known = new Set(model.tools.map((t) => t.name));
  // Calls of tools dtdr does not know (e.g. added to the app but not to the model) are left out of its history.
  const usable = history.filter((h) => known.has(h));
  const retrieval = await model.retrieve(query, usable, options.select);
  options.onRetrieval?.(retrieval, { query, history: usable });
  const max = options.maxTools ?? 8;
  if (!Number.isInteger(max) || max < 1)
    throw new DtdrError('options', `maxTools must be a positive integer, got ${options.maxTools}`, {
      field: 'maxTools',
    });
  const always = options.alwaysInclude ?? [];
  const available = availableTools(model, allTools, always);
  const retrieved = retrieval.candidates.map((c) => c.tool).filter((t) => t !== END && available.has(t));
  const unknownToDtdr = [...available].filter((t) => !known.has(t));
  const tools = [
    ...new Set([...always, ...retrieved.slice(0, Math.max(0, max - always.length)), ...unknownToDtdr]),
  ].filter((t) => available.has(t));
  const mayEnd = retrieval.candidates.some((c) => c.tool === END);
  const listed = retrieval.candidates
    .filter((c) => c.tool === END || available.has(c.tool))
    .slice(0, max)
    .map((c) => `${c.tool} (${c.probability.toFixed(2)})`)
    .join(', ');
  const hint =
    `Tools most likely needed for the next step, by dtdr's retrieval: ` +
    `${listed}.${retrieval.widened ? ` dtdr is unsure: ${promptReason(retrieval.reason)}.` : ''}`;
  return { retrieval, tools, available, mayEnd, hint };
}

/**
 * Why a call of `name` may not run now, or undefined when it may: the check every adapter makes
 * when a call runs, on top of the set offered at its step. A tool can be removed from the model
 * (`removeTools`, or watchMcpTools following a server) while the LLM call that names it is in
 * flight; the step's set was decided before that, so the call is checked against the model's
 * tools as they are now, not as they were when offered.
 */
export function removedSinceOffered(model: Dtdr, name: string): string | undefined {
  return model.removedTools.includes(name)
    ? `Tool "${name}" is not available: it was removed after this step offered it.`
    : undefined;
}

/**
 * The request of a conversation: the text of the first user message that has any. A message with
 * only images or files (no text part) is passed over, so a photo followed by "what is this, add
 * it to my list" is retrieved for by that text. A conversation with no user text at all has no
 * request: every adapter then refuses the step with {@link noRequestError} (fail closed) rather
 * than offering every tool.
 */
export function requestText(userContents: Iterable<unknown>): string {
  for (const content of userContents) {
    const text = messageText(content);
    if (text) return text;
  }
  return '';
}

/** The refusal of a step whose conversation has no user text to retrieve tools for (the same in every adapter). */
export function noRequestError(adapter: string, hint: string): DtdrError {
  return new DtdrError(
    'options',
    `${adapter} found no user message with text to retrieve tools for: no tools are offered without a request`,
    { hint: `${hint}; a message with only images or files has no text to retrieve for` },
  );
}

/** The text of a chat message's content: a string, or the text parts of an array. */
export function messageText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content))
    return content
      .map((p) =>
        p && typeof p === 'object' && (p as { type?: string }).type === 'text'
          ? String((p as { text?: unknown }).text ?? '')
          : '',
      )
      .join(' ')
      .trim();
  return '';
}

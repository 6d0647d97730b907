/**
 * dtdr for the Model Context Protocol. Works with `@modelcontextprotocol/sdk` 1.x clients and
 * the 2.x `@modelcontextprotocol/client` (duck-typed: anything with `listTools`).
 *
 *   const tools = await mcpTools(client);                       // every page, JSON Schemas kept
 *   const model = await Dtdr.train({ tools, encoder });          // or a trained model
 *   const watch = await watchMcpTools(client, model);             // follows notifications/tools/list_changed
 *
 * A tool the server adds is retrievable at once from its description; one it removes is never
 * offered again (model.addTools / removeTools).
 *
 *   const run = dtdrMcpRun(client, model, { maxTools: 5 });      // one per run (one user request)
 *   const { tools } = await run.step(request);                    // show the LLM these tools
 *   const result = await run.callTool({ name, arguments });       // refused unless offered
 *
 * The guard. A run object holds the set offered at its latest step and the calls that ran (its
 * history); `callTool` sends a call to the server only when its tool is in that set, and answers
 * any other call — or one made before the first `step` — with an MCP error result
 * (`isError: true`) without sending it: fail closed. A call is also checked when it is made
 * against the model as it is then: a tool removed (`removeTools`, or a list_changed that
 * watchMcpTools applied) after the step offered it is refused. A `step` that throws leaves no
 * set: every call until a step succeeds is refused. State is per run object, never shared:
 * `step` with a different request than the run's first is refused (start a new run). Each step
 * reads the server's tools/list again, so a tool the server dropped, a tool removed from the model
 * and a tool the model knows but this server does not list are never offered, so never sent.
 *
 * Tool names. Every tool name read from a server must follow the tool-name rule (limits.ts; MCP's
 * own SEP-986 names all do): a server listing a name that breaks it gets a DtdrError naming the
 * tool, the rule and the page, and nothing from that listing enters the model or a run.
 *
 * @module dtdr/mcp
 */
import type { Dtdr } from '../../core/dtdr.js';
import { DtdrError } from '../../core/base/errors.js';
import { chooseTools, removedSinceOffered, type AdapterOptions, type StepChoice } from '../shared.js';
import { checkToolName } from '../../core/base/limits.js';
import type { JsonSchema, ToolSpec } from '../../core/base/types.js';
import { importOptional } from '../../encoders/hub.js';

/** A tool as MCP lists it. */
export interface McpTool {
  name: string;
  description?: string;
  inputSchema?: unknown;
  outputSchema?: unknown;
  title?: string;
}

/** What dtdr needs of an MCP client. */
export interface McpClientLike {
  /** One page of `tools/list`. */
  listTools(params?: { cursor?: string }): Promise<{ tools: McpTool[]; nextCursor?: string }>;
  /** Registers a handler for a server notification (used for `notifications/tools/list_changed`). */
  setNotificationHandler?(schema: never, handler: (notification: unknown) => void | Promise<void>): void;
  /** Needed by dtdrMcpRun's callTool. */
  callTool?(params: { name: string; arguments?: Record<string, unknown> }): Promise<unknown>;
}

/** An MCP tool as a dtdr tool spec (input schema → parameters, output schema → returns). */
export function mcpToolToSpec(tool: McpTool, where = 'tools/list'): ToolSpec {
  if (!tool || typeof tool.name !== 'string' || tool.name === '')
    throw new DtdrError('data', 'an MCP tool needs a name', { file: where, field: 'name' });
  checkToolName(tool.name, { code: 'data', file: where, field: 'name' });
  const description = [tool.title, tool.description].filter((s) => typeof s === 'string' && s.trim()).join(': ');
  return {
    name: tool.name,
    description: description || tool.name,
    ...(tool.inputSchema && typeof tool.inputSchema === 'object' ? { parameters: tool.inputSchema as JsonSchema } : {}),
    ...(tool.outputSchema && typeof tool.outputSchema === 'object' ? { returns: tool.outputSchema as JsonSchema } : {}),
  };
}

/** Reads every page of a client's tools (v1's own helpers read only the first). */
export async function mcpTools(client: McpClientLike, options: { maxPages?: number } = {}): Promise<ToolSpec[]> {
  if (!client || typeof client.listTools !== 'function')
    throw new DtdrError('options', 'mcpTools needs an MCP client (something with listTools)', { field: 'client' });
  const out: ToolSpec[] = [];
  const seen = new Set<string>();
  let cursor: string | undefined;
  const maxPages = options.maxPages ?? 1000;
  for (let page = 0; page < maxPages; page++) {
    const result = await client.listTools(cursor === undefined ? undefined : { cursor });
    if (!result || !Array.isArray(result.tools))
      throw new DtdrError('data', 'tools/list returned no tools array', { file: `tools/list page ${page + 1}` });
    for (const t of result.tools) {
      const spec = mcpToolToSpec(t, `tools/list page ${page + 1}`);
      if (seen.has(spec.name)) continue;
      seen.add(spec.name);
      out.push(spec);
    }
    cursor = result.nextCursor;
    if (!cursor) return out;
  }
  throw new DtdrError('data', `tools/list did not end after ${maxPages} pages`, {
    hint: 'the server keeps returning a nextCursor',
  });
}

/** How the server's tool list changed: the names added and removed. */
export interface ToolSetDiff {
  added: string[];
  removed: string[];
}

/** What {@link watchMcpTools} returns: stop following the server, or re-read its list now. */
export interface McpWatch {
  /** Re-reads the server's tools and applies the difference to the model. */
  refresh(): Promise<ToolSetDiff>;
  /** Stops reacting to notifications (the handler stays registered but does nothing). */
  stop(): void;
}

/** Options of {@link watchMcpTools}. */
export interface WatchOptions {
  /** Which of the model's tools this server owns (default: all): others are never removed. */
  owns?: (toolName: string) => boolean;
  /** Called after each change is applied. */
  onChange?: (diff: ToolSetDiff) => void;
  /** Called when a refresh fails (default: rethrown from refresh, logged from notifications). */
  onError?: (error: unknown) => void;
  /**
   * The list_changed notification schema, if your SDK is neither @modelcontextprotocol/sdk 1.x nor
   * @modelcontextprotocol/client.
   */
  notificationSchema?: unknown;
}

/**
 * Keeps `model`'s tool set in step with the server: applies the current list at once, then again
 * on every `notifications/tools/list_changed` (changes are applied one at a time, in order).
 */
export async function watchMcpTools(client: McpClientLike, model: Dtdr, options: WatchOptions = {}): Promise<McpWatch> {
  const owns = options.owns ?? (() => true);
  let stopped = false;
  const refresh = async (): Promise<ToolSetDiff> => {
    const listed = await mcpTools(client);
    const names = new Set(listed.map((t) => t.name));
    const current = new Set(model.tools.map((t) => t.name));
    const added = listed.filter((t) => !current.has(t.name));
    const removed = [...current].filter((n) => owns(n) && !names.has(n));
    if (added.length > 0) await model.addTools(added);
    if (removed.length > 0) await model.removeTools(removed);
    const diff = { added: added.map((t) => t.name), removed };
    if (added.length + removed.length > 0) options.onChange?.(diff);
    return diff;
  };
  // Coalesced: one refresh in flight and at most one waiting; notifications that arrive while one
  // waits join it (it reads the list after all of them), so a burst costs two tools/list calls.
  let inFlight: Promise<ToolSetDiff> | undefined;
  let waiting: Promise<ToolSetDiff> | undefined;
  const start = (): Promise<ToolSetDiff> => {
    const run = refresh();
    inFlight = run;
    const clear = () => {
      if (inFlight === run) inFlight = undefined;
    };
    run.then(clear, clear);
    return run;
  };
  const serial = (): Promise<ToolSetDiff> => {
    if (waiting) return waiting;
    if (!inFlight) return start();
    waiting = inFlight
      .then(
        () => undefined,
        () => undefined,
      )
      .then(() => {
        waiting = undefined;
        return start();
      });
    return waiting;
  };
  await serial();
  if (typeof client.setNotificationHandler === 'function') {
    const schema = options.notificationSchema ?? (await listChangedSchema());
    client.setNotificationHandler(schema as never, () => {
      if (stopped) return;
      serial().catch((error) =>
        options.onError
          ? options.onError(error)
          : console.error(
              `dtdr: could not follow the MCP tool list: ${error instanceof Error ? error.message : String(error)}`,
            ),
      );
    });
  }
  return { refresh: serial, stop: () => void (stopped = true) };
}

/** The SDK's schema for notifications/tools/list_changed (v1, then the v2 client package). */
async function listChangedSchema(): Promise<unknown> {
  for (const name of ['@modelcontextprotocol/sdk/types.js', '@modelcontextprotocol/client']) {
    try {
      const mod = await importOptional<Record<string, unknown>>(name, 'watchMcpTools');
      if (mod.ToolListChangedNotificationSchema) return mod.ToolListChangedNotificationSchema;
    } catch {
      // try the next
    }
  }
  throw new DtdrError(
    'options',
    'watchMcpTools needs @modelcontextprotocol/sdk (1.x) or @modelcontextprotocol/client (2.x) for the list_changed ' +
      'schema',
    { hint: 'npm install @modelcontextprotocol/sdk, or pass notificationSchema' },
  );
}

/** An MCP tools/call result: what the server answered, or dtdr's refusal (`isError: true`). */
export interface McpCallResult {
  content: { type: string; text?: string; [key: string]: unknown }[];
  isError?: boolean;
  [key: string]: unknown;
}

/**
 * One request over an MCP client's tools (see {@link dtdrMcpRun}): the tools to show at each step, and a guarded
 * `callTool`.
 */
export interface McpRun {
  /** Chooses the tools for the next step of this run's request: the MCP tool definitions to show the model. */
  step(query: string): Promise<{ tools: McpTool[]; choice: StepChoice }>;
  /**
   * Calls a tool through the client when it was offered at this run's latest step; otherwise an error result, never
   * sent.
   */
  callTool(params: { name: string; arguments?: Record<string, unknown> }): Promise<McpCallResult>;
  /** The calls of this run that ran, in order (refused and failed calls are not history). */
  readonly history: readonly string[];
}

/** The options of {@link dtdrMcpRun}: at most `maxTools` tools a step, tools always offered, the set's options. */
// eslint-disable-next-line @typescript-eslint/no-empty-object-type -- the adapters' options under this adapter's name
export interface DtdrMcpRunOptions extends AdapterOptions {}

/** One run (one user request) over an MCP client's tools, with an allowed-set guard on tool calls. */
export function dtdrMcpRun(client: McpClientLike, model: Dtdr, options: DtdrMcpRunOptions = {}): McpRun {
  if (!client || typeof client.listTools !== 'function' || typeof client.callTool !== 'function') {
    throw new DtdrError('options', 'dtdrMcpRun needs an MCP client (something with listTools and callTool)', {
      field: 'client',
    });
  }
  for (const [i, name] of (options.alwaysInclude ?? []).entries())
    checkToolName(name, { field: `alwaysInclude[${i}]` });
  let request: string | undefined;
  let offered: ReadonlySet<string> | undefined;
  const history: string[] = [];
  const refuse = (text: string): McpCallResult => ({ content: [{ type: 'text', text }], isError: true });
  return {
    get history() {
      return [...history];
    },
    async step(query: string) {
      // Nothing is offered until this step has chosen: a step that throws (the server's list, the
      // retrieval, another request) leaves no set behind, so callTool refuses every call (fail closed).
      offered = undefined;
      if (request !== undefined && query !== request) {
        throw new DtdrError('options', 'a dtdrMcpRun is for one request: this step asks for another', {
          field: 'query',
          hint: 'create a new run with dtdrMcpRun for each user request',
        });
      }
      request = query;
      // The server's tools now, at every step: a tool it dropped since the last step (and the
      // model removed) is not offered, and one the model knows but this server does not list never is.
      const listed = await mcpTools(client);
      const choice = await chooseTools(
        model,
        query,
        history,
        listed.map((t) => t.name),
        options,
      );
      offered = new Set(choice.tools);
      const byName = new Map(listed.map((t) => [t.name, t]));
      const tools = choice.tools.flatMap((name) => {
        const t = byName.get(name);
        return t ? [{ name, description: t.description, inputSchema: t.parameters ?? { type: 'object' } }] : [];
      });
      return { tools, choice };
    },
    async callTool(params) {
      const name = params?.name;
      if (!offered)
        return refuse(
          `Tool "${String(name)}" is not available at this step: no step of this run has offered tools yet.`,
        );
      if (typeof name !== 'string' || !offered.has(name))
        return refuse(
          `Tool "${String(name)}" is not available at this step. Available tools: ${[...offered].join(', ')}.`,
        );
      // Checked against the model as it is now: a tool removed (removeTools, or a list_changed that
      // watchMcpTools applied) after this step offered it is not sent.
      const removed = removedSinceOffered(model, name);
      if (removed) return refuse(removed);
      const result = (await client.callTool!(params)) as McpCallResult;
      if (!result?.isError) history.push(name);
      return result;
    },
  };
}

/**
 * The gateway's downstream side: one MCP `Server` per client session, over stdio or Streamable
 * HTTP. In `search` mode a client sees two tools, `find_tools` and `call_tool`; in `filter` mode
 * it sees `find_tools` and the step's set itself, and gets `list_changed` after each call.
 */
import { createRequire } from 'node:module';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { DtdrError } from '../core/base/errors.js';
import { MAX_QUERY_CHARS } from '../core/base/limits.js';
import { quoteData } from '../core/prompts/build.js';
import { errorResult, MAX_FIND, type CallResult, type FoundTools, type Gateway, type GatewayMode } from './gateway.js';
import type { GatewaySession } from './session.js';

/** dtdr's version, as the gateway's serverInfo (package.json is two folders up from src/gateway and dist/gateway). */
const VERSION = (createRequire(import.meta.url)('../../package.json') as { version: string }).version;

export const FIND_TOOLS = 'find_tools';
export const CALL_TOOL = 'call_tool';

const findToolsDef = (mode: GatewayMode, defaultLimit: number) => ({
  name: FIND_TOOLS,
  description:
    'Find the tools for a task. Call this first with what the user asked for, in their words; it returns the few ' +
    'tools that fit, with their input schemas, ranked by dtdr from the request and the calls made so far. ' +
    (mode === 'search'
      ? 'Then run one with call_tool. Call find_tools again (same request) after a call to get the tools for the ' +
        'next ' +
        'step, or with a new request when the task changes.'
      : 'They are then listed as tools you can call directly; the list changes after each call.'),
  inputSchema: {
    type: 'object' as const,
    properties: {
      request: { type: 'string', description: "the user's request, in their words", maxLength: MAX_QUERY_CHARS },
      max_tools: {
        type: 'integer',
        minimum: 1,
        maximum: MAX_FIND,
        description: `how many tools to return (default ${defaultLimit})`,
      },
    },
    required: ['request'],
  },
});

const callToolDef = {
  name: CALL_TOOL,
  description:
    'Run a tool that find_tools returned earlier in the same connection, by its name, with arguments that match ' +
    'its input schema.',
  inputSchema: {
    type: 'object' as const,
    properties: {
      name: { type: 'string', description: 'the tool name, as find_tools gave it' },
      arguments: { type: 'object', description: "the tool's arguments" },
    },
    required: ['name'],
  },
};

/**
 * The find_tools answer as text: one JSON document, with `<`, `>` and the Unicode line separators
 * escaped (dtdr's quoteData), so an upstream's description cannot close a tag or a chat turn of the
 * prompt this text is pasted into.
 */
export function foundText(found: FoundTools): string {
  return quoteData({ tools: found.tools, confident: found.confident, reason: found.reason });
}

/** What {@link sessionServer} takes: the mode, and what to do when the session ends. */
export interface SessionServerOptions {
  mode: GatewayMode;
  /**
   * Search mode: also list directly, beside find_tools and call_tool, the tools of the latest
   * find_tools answer when dtdr was confident of its set (its own set only, not the tools that fill up
   * to the limit), so a client can call them by name; `list_changed` tells the client when they
   * change. Off by default (the listing then never changes).
   */
  listConfident?: boolean;
  /** Called once when the session ends (its transport closed). */
  onClose?: () => void;
}

/** What the server tells a client at initialization: how to use it. */
function instructions(mode: SessionServerOptions['mode'], listConfident: boolean): string {
  return (
    'This server fronts many tools. Call find_tools with the user request to get the few tools that fit' +
    (mode === 'search'
      ? ', then call_tool to run one.' +
        (listConfident ? ' Tools dtdr is sure of for the request are also listed, to call by name.' : '')
      : '; they are then listed.')
  );
}

/** find_tools' arguments checked: the request and how many tools, or what is wrong with them. */
function findToolsArguments(args: unknown, defaultLimit: number): { text: string; limit: number } | string {
  const { request: text, max_tools: limit } = (args ?? {}) as { request?: unknown; max_tools?: unknown };
  if (typeof text !== 'string' || text.trim() === '' || text.length > MAX_QUERY_CHARS)
    return `find_tools needs "request": the user's request in words, up to ${MAX_QUERY_CHARS} characters`;
  return { text, limit: typeof limit === 'number' && Number.isFinite(limit) ? limit : defaultLimit };
}

/** An MCP server for one client session of the gateway. */
export function sessionServer(
  gateway: Gateway,
  options: SessionServerOptions,
): { server: Server; session: GatewaySession } {
  const session = gateway.session();
  const { mode } = options;
  const listConfident = mode === 'search' && options.listConfident === true;
  const defaultLimit = gateway.options.findTools ?? 5;
  const server = new Server(
    { name: 'dtdr-gateway', version: VERSION },
    { capabilities: { tools: { listChanged: true } }, instructions: instructions(mode, listConfident) },
  );
  let listed: string[] = [];
  /** listConfident: the confident set of the latest find_tools answer, listed beside the two tools. */
  let direct: string[] = [];
  const notify = () => void server.sendToolListChanged().catch(() => undefined);
  server.setRequestHandler(ListToolsRequestSchema, async () => {
    if (mode === 'search') {
      // Only what is live now (a tool whose server went down since is not listed).
      const sure = direct.filter((n) => gateway.live(n)?.up).map((n) => gateway.view(n)!);
      return { tools: [findToolsDef(mode, defaultLimit), callToolDef, ...sure] };
    }
    // Filter mode: the step's set, from what is live now (a tool that went down since is not listed).
    const found = session.currentRequest === undefined ? undefined : await gateway.step(session, defaultLimit);
    listed = found ? found.tools.map((t) => t.name) : [];
    return { tools: [findToolsDef(mode, defaultLimit), ...(found?.tools ?? [])] };
  });
  server.setRequestHandler(CallToolRequestSchema, async (request): Promise<CallResult> => {
    const { name, arguments: args } = request.params;
    if (name === FIND_TOOLS) {
      const asked = findToolsArguments(args, defaultLimit);
      if (typeof asked === 'string') return errorResult(asked);
      try {
        const found = await gateway.findTools(session, asked.text, asked.limit);
        if (mode === 'filter') notify();
        if (listConfident) {
          const next = found.confident ? found.set : [];
          if (next.join('\n') !== direct.join('\n')) {
            direct = next;
            notify();
          }
        }
        return { content: [{ type: 'text', text: foundText(found) }] };
      } catch (error) {
        if (DtdrError.isInstance(error)) return errorResult(`find_tools: ${error.message}`);
        throw error;
      }
    }
    let target: unknown = name;
    let targetArgs: unknown = args;
    if (mode === 'search' && !(listConfident && direct.includes(name))) {
      if (name !== CALL_TOOL) return errorResult(`unknown tool "${name}": call find_tools, then call_tool`);
      target = (args as { name?: unknown } | undefined)?.name;
      targetArgs = (args as { arguments?: unknown } | undefined)?.arguments;
    }
    const result = await gateway.callTool(session, target, targetArgs);
    if (mode === 'filter' && !result.isError) notify();
    return result;
  });
  let closed = false;
  server.onclose = () => {
    if (closed) return;
    closed = true;
    void gateway.endSession(session);
    options.onClose?.();
  };
  // The listing is re-read on demand; tell the client when the live set moved under it.
  const stop = gateway.onChange(() => {
    if ((mode === 'filter' && listed.length > 0) || direct.length > 0) notify();
  });
  const close = server.onclose;
  server.onclose = () => {
    stop();
    close();
  };
  return { server, session };
}

/**
 * Serves one session over this process's stdin/stdout (`more`: further session options); resolves
 * when the client disconnects.
 */
export async function serveStdio(
  gateway: Gateway,
  mode: GatewayMode,
  maxMessageBytes: number,
  more: Pick<SessionServerOptions, 'listConfident'> = {},
): Promise<void> {
  await new Promise<void>((resolve, reject) => {
    const { server } = sessionServer(gateway, { ...more, mode, onClose: resolve });
    const transport = new StdioServerTransport(process.stdin, process.stdout, { maxBufferSize: maxMessageBytes });
    transport.onerror = (error) => gateway.log(`stdio: ${error.message}`);
    process.stdin.once('end', () => void server.close());
    server.connect(transport).catch(reject);
  });
}

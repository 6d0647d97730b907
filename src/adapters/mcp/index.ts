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
 */
import type { Dtdr } from '../../core/dtdr.js';
import { DtdrError } from '../../core/errors.js';
import { checkToolName } from '../../core/limits.js';
import type { JsonSchema, ToolSpec } from '../../core/types.js';
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
  listTools(params?: { cursor?: string }): Promise<{ tools: McpTool[]; nextCursor?: string }>;
  setNotificationHandler?(schema: never, handler: (notification: unknown) => void | Promise<void>): void;
}

/** An MCP tool as a dtdr tool spec (input schema → parameters, output schema → returns). */
export function mcpToolToSpec(tool: McpTool, where = 'tools/list'): ToolSpec {
  if (!tool || typeof tool.name !== 'string' || tool.name === '') throw new DtdrError('data', 'an MCP tool needs a name', { file: where, field: 'name' });
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
  if (!client || typeof client.listTools !== 'function') throw new DtdrError('options', 'mcpTools needs an MCP client (something with listTools)', { field: 'client' });
  const out: ToolSpec[] = [];
  const seen = new Set<string>();
  let cursor: string | undefined;
  const maxPages = options.maxPages ?? 1000;
  for (let page = 0; page < maxPages; page++) {
    const result = await client.listTools(cursor === undefined ? undefined : { cursor });
    if (!result || !Array.isArray(result.tools)) throw new DtdrError('data', 'tools/list returned no tools array', { file: `tools/list page ${page + 1}` });
    for (const t of result.tools) {
      const spec = mcpToolToSpec(t, `tools/list page ${page + 1}`);
      if (seen.has(spec.name)) continue;
      seen.add(spec.name);
      out.push(spec);
    }
    cursor = result.nextCursor;
    if (!cursor) return out;
  }
  throw new DtdrError('data', `tools/list did not end after ${maxPages} pages`, { hint: 'the server keeps returning a nextCursor' });
}

export interface ToolSetDiff {
  added: string[];
  removed: string[];
}

export interface McpWatch {
  /** Re-reads the server's tools and applies the difference to the model. */
  refresh(): Promise<ToolSetDiff>;
  /** Stops reacting to notifications (the handler stays registered but does nothing). */
  stop(): void;
}

export interface WatchOptions {
  /** Which of the model's tools this server owns (default: all): others are never removed. */
  owns?: (toolName: string) => boolean;
  /** Called after each change is applied. */
  onChange?: (diff: ToolSetDiff) => void;
  /** Called when a refresh fails (default: rethrown from refresh, logged from notifications). */
  onError?: (error: unknown) => void;
  /** The list_changed notification schema, if your SDK is neither @modelcontextprotocol/sdk 1.x nor @modelcontextprotocol/client. */
  notificationSchema?: unknown;
}

/**
 * Keeps `model`'s tool set in step with the server: applies the current list at once, then again
 * on every `notifications/tools/list_changed` (changes are applied one at a time, in order).
 */
export async function watchMcpTools(client: McpClientLike, model: Dtdr, options: WatchOptions = {}): Promise<McpWatch> {
  const owns = options.owns ?? (() => true);
  let stopped = false;
  let queue: Promise<unknown> = Promise.resolve();
  const refresh = async (): Promise<ToolSetDiff> => {
    const listed = await mcpTools(client);
    const names = new Set(listed.map((t) => t.name));
    const current = new Set(model.tools.map((t) => t.name));
    const added = listed.filter((t) => !current.has(t.name));
    const removed = [...current].filter((n) => owns(n) && !names.has(n));
    if (added.length > 0) await model.addTools(added);
    if (removed.length > 0) model.removeTools(removed);
    const diff = { added: added.map((t) => t.name), removed };
    if (added.length + removed.length > 0) options.onChange?.(diff);
    return diff;
  };
  const serial = () => (queue = queue.then(refresh, refresh));
  await serial();
  if (typeof client.setNotificationHandler === 'function') {
    const schema = options.notificationSchema ?? (await listChangedSchema());
    client.setNotificationHandler(schema as never, () => {
      if (stopped) return;
      serial().catch((error) => (options.onError ? options.onError(error) : console.error(`dtdr: could not follow the MCP tool list: ${error instanceof Error ? error.message : String(error)}`)));
    });
  }
  return { refresh: () => serial() as Promise<ToolSetDiff>, stop: () => void (stopped = true) };
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
  throw new DtdrError('options', 'watchMcpTools needs @modelcontextprotocol/sdk (1.x) or @modelcontextprotocol/client (2.x) for the list_changed schema', { hint: 'npm install @modelcontextprotocol/sdk, or pass notificationSchema' });
}

/** What the gateway's tests and its measurement script share: canned tool worlds served by test/fixtures/gateway. */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import type { ToolSpec } from '../src/core/base/types.js';
import type { Gateway, GatewayMode } from '../src/gateway/gateway.js';
import { sessionServer, type SessionServerOptions } from '../src/gateway/server.js';
import { ROOT } from './helpers.js';

export const WORLD_SERVER = join(ROOT, 'test/fixtures/gateway/world-server.mjs');

/** The spec a world server reads (see world-server.mjs). */
export interface WorldSpec {
  name: string;
  tools: { name: string; description: string; inputSchema?: unknown }[];
  pageSize?: number;
  callLog?: string;
  hang?: string[];
  hangStart?: boolean;
  flood?: number;
}

export const tempDir = (prefix = 'dtdr-gateway-'): string => mkdtempSync(join(tmpdir(), prefix));

/** An mcpServers entry that runs a world server on `spec` (written to `dir`). */
export function worldEntry(dir: string, spec: WorldSpec): { command: string; args: string[] } {
  const file = join(dir, `${spec.name}.json`);
  writeFileSync(file, JSON.stringify(spec));
  return { command: process.execPath, args: [WORLD_SERVER, file] };
}

/** Tools as a world server lists them. */
export const asWorldTools = (tools: ToolSpec[]): WorldSpec['tools'] =>
  tools.map((t) => ({ name: t.name, description: t.description, inputSchema: t.parameters ?? { type: 'object' } }));

/** Splits tools into servers by the part of their name before the first "_" (the demo set's categories). */
export function byCategory(tools: ToolSpec[]): Map<string, ToolSpec[]> {
  const out = new Map<string, ToolSpec[]>();
  for (const t of tools) {
    const c = t.name.split('_')[0];
    out.set(c, [...(out.get(c) ?? []), t]);
  }
  return out;
}

/** The demo set's categories grouped into at most `servers` servers, named by their categories ("alarm-calendar-…"). */
export function demoServers(tools: ToolSpec[], servers: number): Map<string, ToolSpec[]> {
  const categories = [...byCategory(tools)];
  const per = Math.ceil(categories.length / servers);
  const out = new Map<string, ToolSpec[]>();
  for (let i = 0; i < categories.length; i += per) {
    const group = categories.slice(i, i + per);
    out.set(
      group.map(([c]) => c).join('-'),
      group.flatMap(([, t]) => t),
    );
  }
  return out;
}

/** A real SDK client connected to one gateway session (in memory). */
export async function gatewayClient(
  gateway: Gateway,
  mode: GatewayMode = 'search',
  more: Omit<SessionServerOptions, 'mode'> = {},
) {
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  const { server, session } = sessionServer(gateway, { ...more, mode });
  const client = new Client({ name: 'dtdr-gateway-test', version: '1.0.0' });
  await Promise.all([server.connect(serverSide), client.connect(clientSide)]);
  return { client, session, server };
}

/** The parsed text of a find_tools answer. */
export interface Found {
  tools: { name: string; description: string; inputSchema: Record<string, unknown> }[];
  confident: boolean;
  reason: string;
}

export async function findTools(client: Client, request: string, max?: number): Promise<Found> {
  const result = (await client.callTool({
    name: 'find_tools',
    arguments: { request, ...(max ? { max_tools: max } : {}) },
  })) as { content: { text: string }[]; isError?: boolean };
  if (result.isError) throw new Error(result.content[0].text);
  return JSON.parse(result.content[0].text) as Found;
}

export async function callTool(client: Client, name: string, args: Record<string, unknown> = {}) {
  return (await client.callTool({ name: 'call_tool', arguments: { name, arguments: args } })) as {
    content: { type: string; text: string }[];
    isError?: boolean;
  };
}

export const until = async (check: () => boolean | Promise<boolean>, ms = 15_000): Promise<void> => {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error('timed out waiting');
};

/** The four servers from npm (devDependencies), as an mcpServers object that runs them offline without a shell. */
export function npmServers(
  dir: string,
): Record<string, { command: string; args: string[]; env?: Record<string, string> }> {
  const bin = (pkg: string) => join(ROOT, 'node_modules/@modelcontextprotocol', pkg, 'dist/index.js');
  return {
    everything: { command: process.execPath, args: [bin('server-everything'), 'stdio'] },
    filesystem: { command: process.execPath, args: [bin('server-filesystem'), dir] },
    memory: {
      command: process.execPath,
      args: [bin('server-memory')],
      env: { MEMORY_FILE_PATH: join(dir, 'memory.jsonl') },
    },
    thinking: { command: process.execPath, args: [bin('server-sequential-thinking')] },
  };
}

/** `node --import tsx src/cli/main.ts gateway …` as a command line for a transport or a spawn. */
export const gatewayCommand = (args: string[]): { command: string; args: string[] } => ({
  command: process.execPath,
  args: ['--import', 'tsx', join(ROOT, 'src/cli/main.ts'), 'gateway', ...args],
});

/** Whether a server answers HTTP at `url` (any status): a stopped gateway refuses the connection. */
export async function answers(url: string, headers: Record<string, string> = {}): Promise<boolean> {
  try {
    const res = await fetch(url, { method: 'GET', headers });
    await res.body?.cancel();
    return true;
  } catch {
    return false;
  }
}

/**
 * `dtdr gateway --http 0 …` under `sh -c '…; true'` (the `; true` keeps the shell as the gateway's
 * parent, no exec, as npx's `sh -c` is), once it listens: the shell and the gateway's URL.
 */
export async function gatewayUnderShell(
  args: string[],
  detached = false,
): Promise<{ shell: ChildProcess; url: string }> {
  const cmd = gatewayCommand(['--http', '0', ...args]);
  const line = [cmd.command, ...cmd.args].map((a) => `'${a}'`).join(' ');
  const shell = spawn('sh', ['-c', `${line}; true`], { cwd: ROOT, stdio: ['ignore', 'ignore', 'pipe'], detached });
  let err = '';
  shell.stderr.on('data', (c: Buffer) => (err += c.toString()));
  const listening = /listening on (http:\/\/127\.0\.0\.1:\d+\/mcp)/;
  await until(() => listening.test(err), 45_000);
  return { shell, url: listening.exec(err)![1] };
}

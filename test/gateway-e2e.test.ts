/**
 * `dtdr gateway` end to end, as a client runs it: the CLI (from source) in front of the four MCP
 * servers from npm (everything, filesystem, memory, sequential-thinking) and a demo tool world,
 * served to a real SDK client over stdio and over Streamable HTTP; then raw JSON-RPC on its stdin
 * (malformed lines), a kill -9 that loses at most the session in progress, the HTTP guards (token,
 * Host, message size) and `dtdr gateway forget`.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { Dtdr } from '../src/core/dtdr.js';
import { DEMO_TOOLS } from '../src/demo/toolset.js';
import { loadEncoder } from '../src/encoders/node.js';
import { readModelFile } from '../src/storage/file.js';
import {
  answers,
  asWorldTools,
  demoServers,
  gatewayCommand,
  gatewayUnderShell,
  npmServers,
  tempDir,
  until,
  worldEntry,
  type Found,
} from './gateway-helpers.js';
import { ROOT } from './helpers.js';
import { gatewayCommand as gatewayCli } from '../src/cli/gateway.js';

let dir: string;
let config: string;
beforeAll(() => {
  dir = tempDir();
  const servers: Record<string, unknown> = npmServers(dir);
  for (const [name, tools] of demoServers(DEMO_TOOLS, 2))
    servers[name] = worldEntry(dir, { name, tools: asWorldTools(tools) });
  config = join(dir, 'mcp.json');
  writeFileSync(config, JSON.stringify({ mcpServers: servers }));
});

const text = (r: unknown) => (r as { content: { text: string }[] }).content[0].text;
const find = async (client: Client, request: string): Promise<Found> =>
  JSON.parse(text(await client.callTool({ name: 'find_tools', arguments: { request, max_tools: 20 } }))) as Found;

/** Offers the tool whose description is `request`, then calls it through call_tool. */
async function findAndCall(client: Client, name: string, request: string, args: Record<string, unknown>) {
  const found = await find(client, request);
  expect(found.tools.map((t) => t.name)).toContain(name);
  return (await client.callTool({ name: 'call_tool', arguments: { name, arguments: args } })) as {
    content: { text: string }[];
    isError?: boolean;
  };
}

/** A session over the four npm servers: each tool runs through the gateway. */
async function exerciseNpmServers(client: Client) {
  expect((await client.listTools()).tools.map((t) => t.name)).toEqual(['find_tools', 'call_tool']);
  const echo = await findAndCall(client, 'everything__echo', 'Echoes back the input', { message: 'hello gateway' });
  expect(echo.isError).toBeFalsy();
  expect(text(echo)).toContain('hello gateway');
  const file = join(dir, 'note.txt');
  const write = await findAndCall(
    client,
    'filesystem__write_file',
    'Create a new file or overwrite a file with content',
    {
      path: file,
      content: 'written through dtdr',
    },
  );
  expect(write.isError).toBeFalsy();
  expect(readFileSync(file, 'utf8')).toBe('written through dtdr');
  const entities = await findAndCall(
    client,
    'memory__create_entities',
    'Create multiple new entities in the knowledge graph',
    {
      entities: [{ name: 'Anna', entityType: 'person', observations: ['likes tea'] }],
    },
  );
  expect(entities.isError).toBeFalsy();
  const thought = await findAndCall(
    client,
    'thinking__sequentialthinking',
    'dynamic and reflective problem-solving through thoughts',
    {
      thought: 'first',
      nextThoughtNeeded: false,
      thoughtNumber: 1,
      totalThoughts: 1,
    },
  );
  expect(thought.isError).toBeFalsy();
}

describe('dtdr gateway, end to end', () => {
  it('serves a real SDK client over stdio in front of the four npm servers', async () => {
    const model = join(dir, 'stdio.model.dtdr');
    const client = new Client({ name: 'e2e', version: '1.0.0' });
    await client.connect(
      new StdioClientTransport({
        ...gatewayCommand(['--startup-wait', '45000', '--config', config, '--model', model, '--quiet']),
        cwd: ROOT,
      }),
    );
    await exerciseNpmServers(client);
    await client.close();
    // The session's runs were learned and saved when it ended.
    await until(() => existsSync(model), 20_000);
    const saved = Dtdr.load(readModelFile(model), await loadEncoder());
    expect(saved.learnedCount).toBeGreaterThan(0);
  }, 60_000);

  describe('over Streamable HTTP', () => {
    let gateway: ChildProcess;
    let port = 0;
    const token = 'test-token-0123456789';
    beforeAll(async () => {
      const cmd = gatewayCommand([
        '--config',
        config,
        '--http',
        '0',
        '--token',
        token,
        '--no-learn',
        '--max-message',
        '4096',
      ]);
      gateway = spawn(cmd.command, cmd.args, { cwd: ROOT, stdio: ['ignore', 'ignore', 'pipe'] });
      let err = '';
      gateway.stderr!.on('data', (c: Buffer) => (err += c.toString()));
      await until(() => /listening on http:\/\/127\.0\.0\.1:(\d+)\/mcp/.test(err), 45_000);
      port = Number(/127\.0\.0\.1:(\d+)\/mcp/.exec(err)![1]);
    }, 60_000);
    afterAll(() => {
      gateway?.kill('SIGTERM');
    });

    it('serves a real SDK client with the bearer token', async () => {
      const client = new Client({ name: 'e2e-http', version: '1.0.0' });
      await client.connect(
        new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${port}/mcp`), {
          requestInit: { headers: { Authorization: `Bearer ${token}` } },
        }),
      );
      await exerciseNpmServers(client);
      await client.close();
    }, 30_000);

    const raw = (headers: Record<string, string>, body: string) =>
      new Promise<number>((resolve, reject) => {
        const req = httpRequest(
          {
            host: '127.0.0.1',
            port,
            path: '/mcp',
            method: 'POST',
            headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
          },
          (res) => {
            res.resume();
            resolve(res.statusCode ?? 0);
          },
        );
        req.on('error', reject);
        req.end(body);
      });
    const init = JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
    });

    it('refuses a missing or wrong token, a foreign Host or Origin, an oversized or malformed body', async () => {
      const auth = { authorization: `Bearer ${token}` };
      expect(await raw({}, init)).toBe(401);
      expect(await raw({ authorization: 'Bearer wrong' }, init)).toBe(401);
      expect(await raw({ ...auth, host: 'evil.example:80' }, init)).toBe(403);
      expect(await raw({ ...auth, origin: 'http://evil.example' }, init)).toBe(403);
      expect(await raw(auth, JSON.stringify({ pad: 'x'.repeat(5000) }))).toBe(413);
      expect(await raw(auth, '{not json')).toBe(400);
      expect(await raw(auth, init)).toBe(200);
    });
  });

  it('answers on after malformed JSON-RPC lines, and a kill -9 loses at most the session in progress', async () => {
    const model = join(dir, 'raw.model.dtdr');
    const cmd = gatewayCommand(['--startup-wait', '45000', '--config', config, '--model', model, '--quiet']);
    const child = spawn(cmd.command, cmd.args, { cwd: ROOT, stdio: ['pipe', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    const replies = () =>
      out
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as { id?: number; result?: { content?: { text: string }[] }; error?: unknown });
    const reply = async (id: number) => {
      await until(() => replies().some((r) => r.id === id), 45_000);
      return replies().find((r) => r.id === id)!;
    };
    const send = (m: unknown) => child.stdin.write(`${typeof m === 'string' ? m : JSON.stringify(m)}\n`);
    const call = (id: number, name: string, args: unknown) =>
      send({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args } });
    send(JSON.parse(init()));
    await reply(1);
    send({ jsonrpc: '2.0', method: 'notifications/initialized' });
    send('{this is not json');
    send('{"jsonrpc": "2.0", "id": 99, "method": 42}');
    send('[1, 2, 3]');
    send({ jsonrpc: '2.0', id: 2, method: 'no/such/method' });
    expect((await reply(2)).error).toBeDefined();
    call(3, 'find_tools', { request: 'Echoes back the input', max_tools: 20 });
    const found = JSON.parse((await reply(3)).result!.content![0].text) as Found;
    expect(found.tools.map((t) => t.name)).toContain('everything__echo');
    call(4, 'call_tool', { name: 'everything__echo', arguments: { message: 'one' } });
    expect((await reply(4)).result!.content![0].text).toContain('one');
    // A new request ends the first run: learned and saved now, before the session ends.
    call(5, 'find_tools', { request: 'Create multiple new entities in the knowledge graph', max_tools: 20 });
    await reply(5);
    await until(() => existsSync(model), 20_000);
    call(6, 'call_tool', { name: 'memory__create_entities', arguments: { entities: [] } });
    await reply(6);
    child.kill('SIGKILL');
    await new Promise((r) => child.once('exit', r));
    const saved = Dtdr.load(readModelFile(model), await loadEncoder());
    expect(saved.learnedCount).toBe(1);
    expect(saved.toJSON().learning).toBeDefined();
  }, 60_000);

  it('stops when the process that started it is gone, as under npx (a SIGTERM to npx ends npx and its shell, not the gateway)', async () => {
    const { shell, url } = await gatewayUnderShell(['--config', config, '--no-learn']);
    expect(await answers(url)).toBe(true);
    shell.kill('SIGKILL'); // the gateway is orphaned, as under a stopped npx
    await until(async () => !(await answers(url)), 20_000);
    expect(await answers(url)).toBe(false);

    // --detach: it outlives the shell that started it (nohup, &), until stopped itself.
    const { shell: group, url: detachedUrl } = await gatewayUnderShell(
      ['--config', config, '--no-learn', '--detach'],
      true,
    );
    try {
      group.kill('SIGKILL'); // the shell alone
      await new Promise((r) => setTimeout(r, 3_000)); // three parent checks
      expect(await answers(detachedUrl)).toBe(true);
    } finally {
      process.kill(-group.pid!, 'SIGTERM'); // the gateway, through its process group
    }
  }, 120_000);

  it('dtdr gateway forget removes runs by request, and --all deletes the model', async () => {
    const model = join(dir, 'raw.model.dtdr');
    const printed: string[] = [];
    const log = vi.spyOn(console, 'log').mockImplementation((line: string) => void printed.push(line));
    try {
      await gatewayCli(['forget', '--model', model, '--request', 'ECHOES back']);
      expect(printed.pop()).toMatch(/forgot 1 run; 0 remain/);
      await gatewayCli(['forget', '--model', model, '--all']);
      expect(printed.pop()).toMatch(/deleted/);
    } finally {
      log.mockRestore();
    }
    expect(existsSync(model)).toBe(false);
    await expect(gatewayCli(['--mode', 'fast', '--config', config])).rejects.toThrow(/--mode must be search or filter/);
    await expect(gatewayCli(['--mode', 'filter', '--list-confident', '--config', config])).rejects.toThrow(
      /--list-confident applies to --mode search/,
    );
    await expect(gatewayCli(['forget', '--model', model])).rejects.toThrow(
      /one of --all, --request TEXT, --since DATE/,
    );
  }, 60_000);
});

function init(): string {
  return JSON.stringify({
    jsonrpc: '2.0',
    id: 1,
    method: 'initialize',
    params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
  });
}

/**
 * `dtdr gateway` as a user runs it from the package: this checkout packed (`npm pack`, once per
 * test run: test/packed.ts), installed into an empty app folder beside `@modelcontextprotocol/sdk`
 * (dtdr's optional peer, which the gateway needs) and the four MCP servers from npm, and started
 * with the command docs/gateway.md gives: `npx -p dtdr -p @modelcontextprotocol/sdk dtdr gateway
 * --config mcp.json`, the servers in mcp.json as `npx -y <package>`. A real SDK client then lists
 * find_tools / call_tool and runs one tool of each server, over stdio and over Streamable HTTP. In a
 * folder with dtdr but not the SDK, the gateway stops with one line that names the SDK.
 *
 * Nothing is downloaded: the install lays out the tarball and links dtdr's production dependencies,
 * the SDK and the servers (with their dependency trees) from this clone's node_modules, as npm
 * would hoist them, with the bin links npm makes; every npx runs with npm's offline switch, so a
 * package missing from the app fails the test instead of being fetched.
 * Skipped with a message where dist/ is not built (`npm run build`).
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { getDefaultEnvironment, StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { answers, until, type Found } from './gateway-helpers.js';
import { ROOT } from './helpers.js';
import { packedTarball } from './packed.js';

const hasBuild = existsSync(join(ROOT, 'dist', 'gateway', 'index.js'));
if (!hasBuild) console.warn('[dtdr tests] dist/ is not built (npm run build): the packed gateway test is skipped');

const SERVERS = ['everything', 'filesystem', 'memory', 'sequential-thinking'].map(
  (s) => `@modelcontextprotocol/server-${s}`,
);
/** What the app installs beside the tarball: the SDK (the gateway's optional peer) and the four servers. */
const INSTALLED = ['@modelcontextprotocol/sdk', ...SERVERS];
/** The command docs/gateway.md gives, word for word (then the gateway's own options). */
const GATEWAY = ['-p', 'dtdr', '-p', '@modelcontextprotocol/sdk', 'dtdr', 'gateway', '--config', 'mcp.json'];

describe.skipIf(!hasBuild)('dtdr gateway from the packed package, started with npx', () => {
  let work: string;
  let app: string;
  /** A minimal environment (no npm_config_* of the test runner), with npm offline. */
  const env = { ...getDefaultEnvironment(), npm_config_offline: 'true', npm_config_update_notifier: 'false' };

  /**
   * An app folder with the packed dtdr, its production dependencies and `packages` with their trees,
   * linked from this clone as npm laid them out here (a package's nested node_modules come with its
   * link), and the bin links npm makes for its direct dependencies.
   */
  function install(dir: string, packages: readonly string[]): void {
    const modules = join(dir, 'node_modules');
    mkdirSync(join(modules, 'dtdr'), { recursive: true });
    const untar = spawnSync('tar', ['-xzf', packedTarball(), '-C', join(modules, 'dtdr'), '--strip-components=1']);
    if (untar.status !== 0) throw new Error(String(untar.stderr));
    const selector = ['.prod', ...packages.flatMap((p) => [`[name="${p}"]`, `[name="${p}"] *`])].join(', ');
    const query = spawnSync('npm', ['query', selector], { cwd: ROOT, encoding: 'utf8' });
    if (query.status !== 0) throw new Error(`npm query failed: ${query.stderr}`);
    const locations = new Set((JSON.parse(query.stdout) as { location: string }[]).map((p) => p.location));
    for (const location of locations) {
      if (!/^node_modules\/(@[^/]+\/)?[^/]+$/.test(location) || existsSync(join(dir, location))) continue;
      mkdirSync(dirname(join(dir, location)), { recursive: true });
      symlinkSync(join(ROOT, location), join(dir, location), 'dir');
    }
    mkdirSync(join(modules, '.bin'));
    const manifest = (pkg: string) =>
      JSON.parse(readFileSync(join(modules, pkg, 'package.json'), 'utf8')) as {
        version: string;
        bin?: Record<string, string>;
      };
    for (const pkg of ['dtdr', ...packages])
      for (const [name, file] of Object.entries(manifest(pkg).bin ?? {}))
        symlinkSync(join('..', pkg, file), join(modules, '.bin', name));
    writeFileSync(
      join(dir, 'package.json'),
      JSON.stringify({
        name: 'gateway-app',
        private: true,
        dependencies: Object.fromEntries(['dtdr', ...packages].map((p) => [p, `^${manifest(p).version}`])),
      }),
    );
  }

  beforeAll(() => {
    work = mkdtempSync(join(tmpdir(), 'dtdr-gateway-packed-'));
    app = join(work, 'app');
    install(app, INSTALLED);
    const modules = join(app, 'node_modules');
    for (const pkg of INSTALLED) expect(existsSync(join(modules, pkg, 'package.json')), pkg).toBe(true);
    // The servers as docs/gateway.md writes them: `npx -y <package>`; the offline switch reaches them
    // through `env`, since the gateway gives its servers a minimal environment.
    mkdirSync(join(app, 'notes'));
    const npx = (pkg: string, args: string[] = [], more: Record<string, string> = {}) => ({
      command: 'npx',
      args: ['-y', pkg, ...args],
      env: { npm_config_offline: 'true', npm_config_update_notifier: 'false', ...more },
    });
    writeFileSync(
      join(app, 'mcp.json'),
      JSON.stringify({
        mcpServers: {
          everything: npx(SERVERS[0], ['stdio']),
          filesystem: npx(SERVERS[1], [join(app, 'notes')]),
          memory: npx(SERVERS[2], [], { MEMORY_FILE_PATH: join(app, 'memory.jsonl') }),
          thinking: npx(SERVERS[3]),
        },
      }),
    );
  }, 120_000);
  afterAll(() => {
    if (work) rmSync(work, { recursive: true, force: true });
  });

  const text = (r: unknown) => (r as { content: { text: string }[] }).content[0].text;

  /** The tools a client sees, then one tool of each of the four servers through find_tools and call_tool. */
  async function session(client: Client, tag: string) {
    expect((await client.listTools()).tools.map((t) => t.name)).toEqual(['find_tools', 'call_tool']);
    const run = async (name: string, request: string, args: Record<string, unknown>) => {
      const found = JSON.parse(
        text(await client.callTool({ name: 'find_tools', arguments: { request, max_tools: 20 } })),
      ) as Found;
      expect(found.tools.map((t) => t.name)).toContain(name);
      const result = (await client.callTool({ name: 'call_tool', arguments: { name, arguments: args } })) as {
        content: { text: string }[];
        isError?: boolean;
      };
      expect(result.isError, text(result)).toBeFalsy();
      return text(result);
    };
    expect(await run('everything__echo', 'Echoes back the input', { message: `hello ${tag}` })).toContain(
      `hello ${tag}`,
    );
    const file = join(app, 'notes', `${tag}.txt`);
    await run('filesystem__write_file', 'Create a new file or overwrite a file with content', {
      path: file,
      content: `written through dtdr over ${tag}`,
    });
    expect(readFileSync(file, 'utf8')).toBe(`written through dtdr over ${tag}`);
    expect(
      await run('memory__create_entities', 'Create multiple new entities in the knowledge graph', {
        entities: [{ name: `Anna-${tag}`, entityType: 'person', observations: ['likes tea'] }],
      }),
    ).toContain(`Anna-${tag}`);
    await run('thinking__sequentialthinking', 'dynamic and reflective problem-solving through thoughts', {
      thought: 'first',
      nextThoughtNeeded: false,
      thoughtNumber: 1,
      totalThoughts: 1,
    });
  }

  it('without the MCP SDK installed, stops with one line that names it', () => {
    const bare = join(work, 'bare');
    install(bare, []);
    expect(existsSync(join(bare, 'node_modules', '@modelcontextprotocol'))).toBe(false);
    writeFileSync(join(bare, 'mcp.json'), JSON.stringify({ mcpServers: {} }));
    const r = spawnSync('npx', ['-p', 'dtdr', 'dtdr', 'gateway', '--config', 'mcp.json'], {
      cwd: bare,
      env,
      encoding: 'utf8',
      timeout: 30_000,
    });
    expect(r.status).not.toBe(0);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toMatch(/dtdr gateway needs the MCP SDK.*npx -p dtdr -p @modelcontextprotocol\/sdk dtdr gateway/);
  }, 60_000);

  it('serves a real SDK client over stdio', async () => {
    const model = join(app, 'stdio.model.dtdr');
    const client = new Client({ name: 'packed-stdio', version: '1.0.0' });
    await client.connect(
      new StdioClientTransport({
        command: 'npx',
        args: [...GATEWAY, '--model', model, '--startup-wait', '45000', '--quiet'],
        cwd: app,
        env,
      }),
    );
    expect(client.getServerVersion()).toMatchObject({ name: 'dtdr-gateway' });
    await session(client, 'stdio');
    await client.close();
    // The session's runs were learned and saved (to the --model file, never elsewhere) when it ended.
    await until(() => existsSync(model), 20_000);
  }, 60_000);

  describe('over Streamable HTTP (--http)', () => {
    let gateway: ChildProcess;
    let url = '';
    const token = 'packed-test-token-0123456789';
    beforeAll(async () => {
      gateway = spawn(
        'npx',
        [...GATEWAY, '--http', '0', '--token', token, '--no-learn', '--list-confident', '--startup-wait', '45000'],
        {
          cwd: app,
          env,
          stdio: ['ignore', 'ignore', 'pipe'],
          // Its own process group: npx, the gateway under it and its servers are stopped together.
          detached: true,
        },
      );
      let err = '';
      gateway.stderr!.on('data', (c: Buffer) => (err += c.toString()));
      await until(() => /listening on (http:\/\/127\.0\.0\.1:\d+\/mcp)/.test(err) || gateway.exitCode !== null, 50_000);
      if (gateway.exitCode !== null) throw new Error(`the gateway exited: ${err}`);
      url = /listening on (http:\/\/127\.0\.0\.1:\d+\/mcp)/.exec(err)![1];
      expect(err).toMatch(/from 4 of 4 servers/);
    }, 60_000);
    afterAll(() => {
      try {
        if (gateway?.pid) process.kill(-gateway.pid, 'SIGTERM'); // whatever of the group is left
      } catch {
        // the group is gone
      }
    });

    it('serves a real SDK client with the bearer token', async () => {
      const client = new Client({ name: 'packed-http', version: '1.0.0' });
      await client.connect(
        new StreamableHTTPClientTransport(new URL(url), {
          requestInit: { headers: { Authorization: `Bearer ${token}` } },
        }),
      );
      await session(client, 'http');
      // --list-confident: a gateway that has learned nothing is unsure, so it still lists the two tools only.
      expect((await client.listTools()).tools.map((t) => t.name)).toEqual(['find_tools', 'call_tool']);
      await client.close();
    }, 30_000);

    it('stops when npx is stopped with SIGTERM (npm passes it to neither its shell nor the gateway)', async () => {
      const listening = () => answers(url, { Authorization: `Bearer ${token}` });
      expect(await listening()).toBe(true);
      process.kill(gateway.pid!, 'SIGTERM'); // npx alone, as a client that started it does
      await until(async () => !(await listening()), 20_000);
      expect(await listening()).toBe(false);
    }, 30_000);
  });
});

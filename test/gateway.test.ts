/**
 * dtdr gateway (src/gateway), in process: its pure parts (names, config, session checks), then a
 * gateway over real MCP servers (world servers from test/fixtures/gateway, spawned over stdio)
 * with a real SDK client downstream: find_tools / call_tool, the guard (nothing not offered is ever
 * forwarded), argument checks, learning, and the faults (a server killed, restarted, hung at start
 * or in a call, a list_changed flood, a tool removed).
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { Encoder } from '../src/core/base/encoder.js';
import { DtdrError } from '../src/core/base/errors.js';
import { Dtdr } from '../src/core/dtdr.js';
import { DEMO_TOOLS } from '../src/demo/toolset.js';
import { loadEncoder } from '../src/encoders/node.js';
import { parseGatewayConfig, readGatewayConfig } from '../src/gateway/config.js';
import { Gateway } from '../src/gateway/gateway.js';
import { CLIENT_NAME_RULE, cleanText, namespacedName, serverPrefix, serverPrefixes } from '../src/gateway/names.js';
import { GatewaySession } from '../src/gateway/session.js';
import { WORDS_NOTE } from '../src/gateway/words.js';
import { readModelFile } from '../src/storage/file.js';
import { ROOT } from './helpers.js';

const DTDR_VERSION = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;
import {
  asWorldTools,
  demoServers,
  callTool,
  findTools,
  gatewayClient,
  tempDir,
  until,
  worldEntry,
  type WorldSpec,
} from './gateway-helpers.js';

describe('gateway names', () => {
  it('namespaces every tool under the strictest client rule, stable and collision-free', () => {
    const names = ['read_file', 'a.b', 'a_b', 'a/b', 'x'.repeat(200), 'résumé', '_hidden', 'with space'];
    const out = names.map((n) => namespacedName('files', n));
    for (const n of out) expect(n).toMatch(CLIENT_NAME_RULE);
    expect(new Set(out).size).toBe(names.length);
    expect(out[0]).toBe('files__read_file');
    expect(names.map((n) => namespacedName('files', n))).toEqual(out);
  });

  it('server prefixes hold no "__", and servers whose names clean alike get distinct prefixes', () => {
    expect(serverPrefix('github.com')).not.toContain('__');
    expect(serverPrefix('a__b')).not.toContain('__');
    expect(serverPrefix('files')).toBe('files');
    // A name that had to be cleaned is tagged, so `a.b` and `a_b` get distinct prefixes.
    expect(new Set(serverPrefixes(['a_b', 'a.b', 'a b']).values()).size).toBe(3);
  });

  it('cleans upstream text: control, bidi and zero-width characters out, length capped', () => {
    expect(cleanText('read\u202Eevil\u200b\u0007 file')).toBe('readevil  file');
    expect(cleanText('x'.repeat(5000)).length).toBe(2000);
    expect(cleanText(42)).toBe('');
  });
});

describe('gateway config', () => {
  const parse = (json: unknown) => () => parseGatewayConfig(json, 'mcp.json');
  it('reads stdio and HTTP servers of the standard mcpServers shape (and VS Code "servers")', () => {
    const servers = parseGatewayConfig(
      {
        mcpServers: {
          files: { command: 'npx', args: ['-y', 'pkg'], env: { K: 'v' } },
          web: { url: 'http://127.0.0.1:9/mcp', headers: { Authorization: 'Bearer x' } },
          off: { command: 'x', disabled: true },
        },
      },
      'mcp.json',
    );
    expect(servers.map((s) => s.name)).toEqual(['files', 'web']);
    expect(servers[0]).toMatchObject({ command: 'npx', args: ['-y', 'pkg'], env: { K: 'v' }, prefix: 'files' });
    expect(parseGatewayConfig({ servers: { a: { command: 'x' } } })).toHaveLength(1);
  });

  it('names the field at fault', () => {
    const expectError = (json: unknown, field: RegExp) => {
      try {
        parse(json)();
        expect.unreachable();
      } catch (error) {
        expect(DtdrError.isInstance(error)).toBe(true);
        expect((error as Error).message).toMatch(field);
      }
    };
    expectError({}, /no "mcpServers"/);
    expectError({ mcpServers: { a: {} } }, /mcpServers\.a\.command/);
    expectError({ mcpServers: { a: { command: 'x', args: 'y' } } }, /mcpServers\.a\.args/);
    expectError({ mcpServers: { a: { command: 'x', env: { K: 1 } } } }, /mcpServers\.a\.env\.K/);
    expectError({ mcpServers: { a: { url: 'nope' } } }, /mcpServers\.a\.url.*not a URL/);
    expectError({ mcpServers: { a: { url: 'ws://h/x' } } }, /mcpServers\.a\.url/);
    const dir = tempDir();
    writeFileSync(join(dir, 'bad.json'), '{"mcpServers": ');
    expect(() => readGatewayConfig(join(dir, 'bad.json'))).toThrow(/bad\.json.*not JSON/);
  });
});

describe('gateway session', () => {
  it('forwards only tools offered to it, still listed, with their server up', () => {
    const s = new GatewaySession('s');
    expect(s.check('a__x', { listed: true, up: true })).toMatchObject({ ok: false });
    s.offer(['a__x']);
    expect(s.check('a__x', { listed: true, up: true })).toEqual({ ok: true });
    expect(s.check('a__x', undefined)).toMatchObject({ ok: false, reason: /removed/ });
    expect(s.check('a__x', { listed: true, up: false })).toMatchObject({ ok: false, reason: /down/ });
    expect(s.check(7, { listed: true, up: true })).toMatchObject({ ok: false });
  });

  it('forms one run per request, with the calls made after it', () => {
    const s = new GatewaySession('s');
    expect(s.ask('mail Anna')).toBeUndefined();
    s.record('a__contacts');
    s.record('a__mail');
    expect(s.ask('mail Anna')).toBeUndefined();
    expect(s.history).toEqual(['a__contacts', 'a__mail']);
    expect(s.ask('weather')).toEqual({ id: 's/1', query: 'mail Anna', tools: ['a__contacts', 'a__mail'] });
    expect(s.finish()).toBeUndefined();
  });

  it('a call still running when its run ends belongs to no run', () => {
    const s = new GatewaySession('s');
    s.ask('mail Anna');
    const started = s.run;
    expect(s.ask('weather in Oslo')).toBeUndefined();
    s.record('a__mail', started);
    expect(s.history).toEqual([]);
  });
});

describe('the gateway over real MCP servers', () => {
  let encoder: Encoder;
  let gateway: Gateway;
  let dir: string;
  let callLog: string;
  /** The namespaced name of a demo tool. */
  const n = (tool: string) => gateway.liveTools().find((t) => t.endsWith(`__${tool}`)) ?? `?__${tool}`;
  const forwarded = (tool: string) =>
    existsSync(callLog)
      ? readFileSync(callLog, 'utf8')
          .split('\n')
          .filter(Boolean)
          .map((l) => JSON.parse(l) as { name: string })
          .filter((c) => c.name === tool).length
      : 0;

  beforeAll(async () => {
    encoder = await loadEncoder();
    dir = tempDir();
    callLog = join(dir, 'calls.jsonl');
    const servers: Record<string, unknown> = {};
    for (const [name, tools] of demoServers(DEMO_TOOLS, 5))
      servers[name] = worldEntry(dir, { name, tools: asWorldTools(tools), pageSize: 2, callLog });
    const faults: WorldSpec = {
      name: 'faults',
      callLog,
      hang: ['slow_report'],
      flood: 200,
      tools: [
        { name: 'crash', description: 'Crash the faults server process at once.' },
        { name: 'flood', description: 'Flood the client with tool list change notifications.' },
        { name: 'shrink', description: 'Shrink the tool list by dropping the victim tool.' },
        { name: 'victim', description: 'A tool its server drops: the victim of shrink.' },
        { name: 'slow_report', description: 'Build a slow report that never finishes.' },
      ],
    };
    servers.faults = worldEntry(dir, faults);
    servers.stuck = worldEntry(dir, { name: 'stuck', hangStart: true, tools: [] });
    writeFileSync(join(dir, 'mcp.json'), JSON.stringify({ mcpServers: servers }));
    gateway = await Gateway.start({
      servers: readGatewayConfig(join(dir, 'mcp.json')),
      encoder,
      modelPath: join(dir, 'gateway.model.dtdr'),
      startupWaitMs: 8000,
      limits: { connectTimeoutMs: 8000, callTimeoutMs: 1500, backoffMs: 100, maxBackoffMs: 400 },
    });
  }, 60_000);
  afterAll(async () => {
    await gateway?.close();
  });

  it('starts although one server hangs: every other server comes up, the hung one does not', async () => {
    expect(gateway.upstreams.get('stuck')!.up).toBe(false);
    // On a loaded machine a server may miss the start-up wait: it joins when it is ready.
    await until(() => [...gateway.upstreams.values()].filter((u) => u.up).length === gateway.upstreams.size - 1);
    await gateway.settled();
    expect(gateway.upstreams.get('stuck')!.up).toBe(false);
    expect(gateway.status().find((s) => s.name === 'faults')).toEqual({ name: 'faults', up: true, tools: 5 });
    // Every page of each paginated list (two tools a page) was read.
    expect(gateway.liveTools()).toHaveLength(DEMO_TOOLS.length + 5);
    expect(gateway.model!.tools).toHaveLength(DEMO_TOOLS.length + 5);
  });

  it('search mode: find_tools gives the few tools for a request with schemas and a reason; call_tool runs them', async () => {
    const { client } = await gatewayClient(gateway);
    const listed = await client.listTools();
    expect(listed.tools.map((t) => t.name)).toEqual(['find_tools', 'call_tool']);
    expect(client.getServerVersion()).toMatchObject({ name: 'dtdr-gateway', version: DTDR_VERSION });
    const found = await findTools(client, 'Send an email to Anna about the meeting notes');
    expect(found.tools.length).toBeGreaterThan(0);
    expect(found.tools.length).toBeLessThanOrEqual(5);
    expect(found.tools.map((t) => t.name)).toContain(n('email_send'));
    for (const t of found.tools) expect(t.name).toMatch(CLIENT_NAME_RULE);
    expect(found.tools.find((t) => t.name === n('email_send'))!.inputSchema).toEqual(
      DEMO_TOOLS.find((t) => t.name === 'email_send')!.parameters,
    );
    // A gateway that has learned nothing ranks by the request's meaning and its words, and says so.
    expect(found.reason).toContain(WORDS_NOTE);
    const result = await callTool(client, n('email_send'), { to: 'anna@example.com', subject: 's', body: 'b' });
    expect(result.isError).toBeFalsy();
    expect(JSON.parse(result.content[0].text)).toMatchObject({ ok: true, tool: 'email_send' });
    await client.close();
  });

  it('refuses, and never forwards, a call to a tool not offered in the session, or with arguments off its schema', async () => {
    const { client } = await gatewayClient(gateway);
    const before = forwarded('weather_forecast');
    let r = await callTool(client, n('weather_forecast'), { location: 'Oslo' });
    expect(r.isError).toBe(true);
    expect(r.content[0].text).toMatch(/not offered in the current session/);
    const found = await findTools(client, 'Send an email to Anna');
    expect(found.tools.map((t) => t.name)).not.toContain(n('weather_forecast'));
    r = await callTool(client, n('weather_forecast'), { location: 'Oslo' });
    expect(r.isError).toBe(true);
    r = await callTool(client, n('email_send'), { to: 42 });
    expect(r.isError).toBe(true);
    expect(r.content[0].text).toMatch(/do not match the input schema/);
    // A tool offered to another session is not offered to this one.
    const other = await gatewayClient(gateway);
    r = await callTool(other.client, n('email_send'), { to: 'a@b.c', subject: 's', body: 'b' });
    expect(r.isError).toBe(true);
    expect(forwarded('weather_forecast')).toBe(before);
    await Promise.all([client.close(), other.client.close()]);
  });

  it('learns each session run and saves it atomically to the model file', async () => {
    const learned = gateway.model!.learnedCount;
    const { client } = await gatewayClient(gateway);
    await findTools(client, 'Find Bob in my contacts and email him the report');
    const offered = await findTools(client, 'Find Bob in my contacts and email him the report', 20);
    expect(offered.tools.map((t) => t.name)).toContain(n('contacts_search'));
    expect((await callTool(client, n('contacts_search'), { name: 'Bob' })).isError).toBeFalsy();
    const next = await findTools(client, 'Find Bob in my contacts and email him the report');
    expect(next.reason).toBeTruthy();
    await client.close();
    await until(() => gateway.model!.learnedCount === learned + 1);
    await gateway.saved();
    const saved = Dtdr.load(readModelFile(join(dir, 'gateway.model.dtdr')), encoder);
    expect(saved.learnedCount).toBe(learned + 1);
    // Once a session is learned, the same request is ranked by dtdr alone: no words ranking.
    const { client: again } = await gatewayClient(gateway);
    expect((await findTools(again, 'Find Bob in my contacts and email him the report')).reason).not.toContain(
      WORDS_NOTE,
    );
    await again.close();
  });

  it('filter mode lists the step set after find_tools, and says list_changed after each call', async () => {
    const { client } = await gatewayClient(gateway, 'filter');
    expect((await client.listTools()).tools.map((t) => t.name)).toEqual(['find_tools']);
    let changes = 0;
    const { ToolListChangedNotificationSchema } = await import('@modelcontextprotocol/sdk/types.js');
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => void changes++);
    await findTools(client, 'What is the weather forecast in Oslo tomorrow?');
    const listed = (await client.listTools()).tools.map((t) => t.name);
    expect(listed[0]).toBe('find_tools');
    expect(listed).toContain(n('weather_forecast'));
    const seen = changes;
    const r = await client.callTool({ name: n('weather_forecast'), arguments: { place: 'Oslo' } });
    expect(r.isError).toBeFalsy();
    await until(() => changes > seen);
    expect((await client.callTool({ name: 'faults__victim', arguments: {} })).isError).toBe(true);
    await client.close();
  });

  it('listConfident: a confident answer lists its set beside the two tools, callable by name; an unsure one lists none', async () => {
    const { client } = await gatewayClient(gateway, 'search', { listConfident: true });
    const { ToolListChangedNotificationSchema } = await import('@modelcontextprotocol/sdk/types.js');
    let changes = 0;
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => void changes++);
    const listed = async () => (await client.listTools()).tools.map((t) => t.name);
    expect(await listed()).toEqual(['find_tools', 'call_tool']);
    // This gateway has seen one session: dtdr is unsure, so nothing more is listed.
    expect((await findTools(client, 'Send an email to Anna about the meeting notes')).confident).toBe(false);
    expect(await listed()).toEqual(['find_tools', 'call_tool']);
    // dtdr is confident only after many demonstrations of a tool: the answer's flag is forced here.
    const real = gateway.findTools.bind(gateway);
    let set: string[] = [];
    const spy = vi.spyOn(gateway, 'findTools').mockImplementation(async (...args) => {
      const found = await real(...args);
      set = found.set;
      return { ...found, confident: true };
    });
    try {
      const found = await findTools(client, 'What is the weather forecast in Oslo tomorrow?', 20);
      expect(found.confident).toBe(true);
      expect(set).toContain(n('weather_forecast'));
      expect(found.tools.length).toBeGreaterThan(set.length);
      await until(() => changes > 0);
      expect(await listed()).toEqual(['find_tools', 'call_tool', ...set]);
      const before = forwarded('weather_forecast');
      const r = await client.callTool({ name: n('weather_forecast'), arguments: { place: 'Oslo' } });
      expect(r.isError).toBeFalsy();
      expect(forwarded('weather_forecast')).toBe(before + 1);
      // A tool of the answer outside dtdr's set is not listed, so not callable by name (call_tool runs it).
      const other = found.tools.map((t) => t.name).find((t) => !set.includes(t))!;
      expect((await client.callTool({ name: other, arguments: {} })).isError).toBe(true);
    } finally {
      spy.mockRestore();
    }
    const seen = changes;
    expect((await findTools(client, 'Send an email to Anna about the meeting notes')).confident).toBe(false);
    await until(() => changes > seen);
    expect(await listed()).toEqual(['find_tools', 'call_tool']);
    await client.close();
  });

  it('a hung call returns an error result after the call timeout, while other servers keep answering', async () => {
    const { client } = await gatewayClient(gateway);
    await findTools(client, 'Build a slow report that never finishes', 20);
    const hung = callTool(client, 'faults__slow_report');
    await findTools(client, 'Send an email to Anna');
    const mail = await callTool(client, n('email_send'), { to: 'a@b.c', subject: 's', body: 'b' });
    expect(mail.isError).toBeFalsy();
    const r = await hung;
    expect(r.isError).toBe(true);
    expect(r.content[0].text).toMatch(/faults.*could not run slow_report/);
    await client.close();
  });

  it('a list_changed flood costs a few re-reads; a tool the server drops is refused and never forwarded', async () => {
    const { client } = await gatewayClient(gateway);
    const faults = gateway.upstreams.get('faults')!;
    const lists = faults.lists;
    await findTools(client, 'Flood the client with tool list change notifications', 20);
    expect((await callTool(client, 'faults__flood')).isError).toBeFalsy();
    await until(() => gateway.liveTools().includes('faults__added_later'));
    await gateway.settled();
    expect(faults.lists - lists).toBeLessThanOrEqual(5);
    expect(gateway.model!.tools.map((t) => t.name)).toContain('faults__added_later');
    await findTools(client, 'A tool its server drops: the victim of shrink', 20);
    await findTools(client, 'Shrink the tool list by dropping the victim tool', 20);
    const offered = (await findTools(client, 'the victim of shrink', 20)).tools.map((t) => t.name);
    expect(offered).toContain('faults__victim');
    expect((await callTool(client, 'faults__shrink')).isError).toBeFalsy();
    await until(() => !gateway.liveTools().includes('faults__victim'));
    await gateway.settled();
    const before = forwarded('victim');
    const r = await callTool(client, 'faults__victim');
    expect(r.isError).toBe(true);
    expect(r.content[0].text).toMatch(/removed by its server/);
    expect(forwarded('victim')).toBe(before);
    expect(gateway.model!.tools.map((t) => t.name)).not.toContain('faults__victim');
    await client.close();
  });

  it('a server killed mid-session: its tools leave the offer, calls to it get an error, it comes back', async () => {
    const { client } = await gatewayClient(gateway);
    await findTools(client, 'Crash the faults server process at once.', 20);
    const r = await callTool(client, 'faults__crash');
    expect(r.isError).toBe(true);
    await until(() => !gateway.upstreams.get('faults')!.up);
    expect(gateway.liveTools().some((t) => t.startsWith('faults__'))).toBe(false);
    const found = await findTools(client, 'Crash the faults server process at once.', 20);
    expect(found.tools.some((t) => t.name.startsWith('faults__'))).toBe(false);
    // Fewer asked for than the down server's tools at the top of the ranking: still filled with live ones.
    for (const max of [1, 3]) {
      const few = await findTools(client, 'Crash the faults server process at once.', max);
      expect(few.tools).toHaveLength(max);
      expect(few.tools.some((t) => t.name.startsWith('faults__'))).toBe(false);
    }
    const mail = await findTools(client, 'Send an email to Anna');
    expect(mail.tools.length).toBeGreaterThan(0);
    expect((await callTool(client, 'faults__crash')).content[0].text).toMatch(/down|not offered/);
    // Reconnected with backoff: its tools are offered again.
    await until(() => gateway.upstreams.get('faults')!.up);
    await until(() => gateway.liveTools().includes('faults__flood'));
    expect(
      (await findTools(client, 'Flood the client with tool list change notifications', 20)).tools.map((t) => t.name),
    ).toContain('faults__flood');
    await client.close();
  });
});

describe('the word fusion follows the encoder it was chosen for', () => {
  // The fusion of meaning and words was chosen with the bundled encoder (docs/gateway.md); with
  // another one (here the same vectors under another name) a gateway keeps dtdr's ranking unless told.
  let encoder: Encoder;
  let dir: string;
  beforeAll(async () => {
    encoder = await loadEncoder();
    dir = tempDir();
  });

  for (const [wordFusion, fused] of [
    [undefined, false],
    [true, true],
  ] as const)
    it(`another encoder, wordFusion ${String(wordFusion)}: an unsure first step ${fused ? 'is' : 'is not'} ordered by words`, async () => {
      const other: Encoder = { id: 'my-encoder', dimension: encoder.dimension, embed: (texts) => encoder.embed(texts) };
      const tools = DEMO_TOOLS.slice(0, 6);
      const name = `mail${String(wordFusion)}`;
      const servers = { [name]: worldEntry(dir, { name, tools: asWorldTools(tools) }) };
      writeFileSync(join(dir, `${name}.mcp.json`), JSON.stringify({ mcpServers: servers }));
      const gateway = await Gateway.start({
        servers: readGatewayConfig(join(dir, `${name}.mcp.json`)),
        encoder: other,
        startupWaitMs: 8000,
        ...(wordFusion === undefined ? {} : { wordFusion }),
      });
      try {
        await until(() => gateway.liveTools().length === tools.length);
        const { client } = await gatewayClient(gateway);
        const found = await findTools(client, `${tools[0].description} now`);
        expect(found.confident).toBe(false);
        expect(found.reason.includes(WORDS_NOTE)).toBe(fused);
        await client.close();
      } finally {
        await gateway.close();
      }
    }, 60_000);
});

/**
 * dtdr gateway, measured (docs/gateway.md): real world servers (test/fixtures/gateway) over stdio
 * behind an in-process Gateway.
 *
 * - quality: each world's test plans replayed as sessions — find_tools with the request, then
 *   call_tool of the gold tools in order, find_tools again before each next step — scored as top-5
 *   recall over the tool steps (a step counts when find_tools' 5 tools hold an acceptable tool).
 *   Against the AI SDK's toolSearch and Orama BM25 (src/cli/peers, query only, over the same tools)
 *   and all tools listed. Then the learning curve: the same after the gateway has learned 10, 30,
 *   100, 300 sessions (training plans replayed the same way; test sessions are never learned). A
 *   gold tool find_tools did not offer is offered to the session by this harness, so the replay
 *   goes on (teacher forcing, as dtdr eval does); a client would have had to ask again.
 * - overhead: call_tool through the gateway CLI (stdio) against the same call straight to the
 *   server (stdio), p50 / p99.
 * - scale: 2,000 tools over 50 servers: start-up, find_tools p50 / p99 (in process, and from an SDK
 *   client over an in-memory transport), the gateway's memory.
 *
 * Usage: npm run experiment -- gateway [--worlds ultratool,restbench-tmdb,demo] [--sessions 10,30,100,300]
 *          [--test N] [--calls 500] [--servers 50] [--tools 2000] [--skip quality,overhead,scale] [--json]
 *          [--results docs/results.json]   (its tables gateway-quality and gateway-cost, rendered in docs/gateway.md)
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { aiSdkPeer } from '../../src/cli/peers/aisdk.js';
import { oramaPeer } from '../../src/cli/peers/orama.js';
import { END, type Dataset, type Plan, type ToolSpec } from '../../src/core/base/types.js';
import { splitDataset } from '../../src/core/evaluation/evaluate.js';
import { planSteps } from '../../src/core/plans/plan.js';
import type { Peer } from '../../src/core/retrieval/types.js';
import { readDatasetDir } from '../../src/data/node.js';
import { demoDataset } from '../../src/demo/toolset.js';
import { loadEncoder } from '../../src/encoders/node.js';
import { parseGatewayConfig } from '../../src/gateway/config.js';
import { Gateway } from '../../src/gateway/gateway.js';
import type { GatewaySession } from '../../src/gateway/session.js';
import {
  asWorldTools,
  demoServers,
  gatewayClient,
  gatewayCommand,
  tempDir,
  worldEntry,
} from '../../test/gateway-helpers.js';
import { ROOT } from '../../test/helpers.js';

const { values: args } = parseArgs({
  options: {
    worlds: { type: 'string', default: 'ultratool,restbench-tmdb,demo' },
    sessions: { type: 'string', default: '10,30,100,300' },
    test: { type: 'string' },
    calls: { type: 'string', default: '500' },
    servers: { type: 'string', default: '50' },
    tools: { type: 'string', default: '2000' },
    skip: { type: 'string', default: '' },
    json: { type: 'boolean', default: false },
    results: { type: 'string' },
  },
});
const skip = new Set(args.skip.split(',').filter(Boolean));
const DATA = join(ROOT, '../shared/data');
const encoder = await loadEncoder();
const out: Record<string, unknown> = {};
const say = (line: string) => args.json || console.log(line);

const quantile = (xs: number[], q: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))];
};
const ms = (x: number) => `${x.toFixed(x < 10 ? 2 : 1)} ms`;

/** A world's tools, grouped into servers: UltraTool by its first domain, the demo set in 5 by category, others in tens. */
function worldServers(name: string, dataset: Dataset): Map<string, ToolSpec[]> {
  const groups = new Map<string, ToolSpec[]>();
  const add = (g: string, t: ToolSpec) => groups.set(g, [...(groups.get(g) ?? []), t]);
  if (name === 'ultratool') {
    const nodes = (
      JSON.parse(readFileSync(join(DATA, 'ultratool/tool_desc.json'), 'utf8')) as {
        nodes: { id: string; domain?: string[] }[];
      }
    ).nodes;
    const domain = new Map(nodes.map((n) => [n.id, (n.domain?.[0] ?? 'misc').toLowerCase().replace(/\W+/g, '-')]));
    for (const t of dataset.tools) add(domain.get(t.name) ?? 'misc', t);
  } else if (name === 'demo') return demoServers(dataset.tools, 5);
  else dataset.tools.forEach((t, i) => add(`part${Math.floor(i / 10) + 1}`, t));
  return groups;
}

async function startWorld(dataset: Dataset, groups: Map<string, ToolSpec[]>, learn: boolean) {
  const dir = tempDir('dtdr-gateway-bench-');
  const servers: Record<string, unknown> = {};
  for (const [g, tools] of groups) servers[g] = worldEntry(dir, { name: g, tools: asWorldTools(tools) });
  const gateway = await Gateway.start({
    servers: parseGatewayConfig({ mcpServers: servers }),
    encoder,
    learn,
    modelPath: join(dir, 'gateway.model.dtdr'),
    startupWaitMs: 120_000,
    limits: { connectTimeoutMs: 120_000 },
  });
  const nameOf = new Map<string, string>();
  for (const n of gateway.liveTools()) nameOf.set(n.slice(n.indexOf('__') + 2), n);
  return { gateway, nameOf, dir };
}

/**
 * One plan replayed as a session; returns per tool step whether find_tools' top 5 held an
 * acceptable tool. The session is ended (learned) only when `learnIt`.
 */
async function replay(gateway: Gateway, nameOf: Map<string, string>, plan: Plan, learnIt: boolean): Promise<boolean[]> {
  const session: GatewaySession = gateway.session();
  const hits: boolean[] = [];
  for (const step of planSteps(plan)) {
    const found = await gateway.findTools(session, plan.query, 5);
    if (step.acceptable[0] === END) break;
    const offered = new Set(found.tools.map((t) => t.name));
    hits.push(step.acceptable.some((a) => offered.has(nameOf.get(a)!)));
    const gold = nameOf.get(plan.nodes[plan.order[step.history.length]].tool)!;
    session.offer([gold]);
    const r = await gateway.callTool(session, gold, cannedArguments(gateway.view(gold)!.inputSchema));
    if (r.isError) throw new Error(`replay: ${gold} failed: ${r.content[0]?.text}`);
  }
  if (learnIt) await gateway.endSession(session);
  return hits;
}

/** Arguments that satisfy a tool's required properties (the world servers answer any call with a canned result). */
function cannedArguments(schema: { properties?: Record<string, { type?: unknown }>; required?: string[] }) {
  const value = (type: unknown): unknown =>
    ({ string: 'x', number: 1, integer: 1, boolean: true, array: [], object: {} })[String(type)] ?? 'x';
  return Object.fromEntries((schema.required ?? []).map((k) => [k, value(schema.properties?.[k]?.type)]));
}

async function peerRecall(peer: Peer, tools: ToolSpec[], plans: Plan[]): Promise<number> {
  const vectors = peer.needs.tools ? await encoder.embed(tools.map((t) => `${t.name}: ${t.description}`)) : undefined;
  const r = await peer.fit(tools, vectors);
  let hit = 0;
  let steps = 0;
  for (const plan of plans) {
    const ranking = await r.rank({ query: plan.query, history: [] });
    const top = new Set<string>();
    for (let i = 0; i < ranking.order.length && top.size < 5; i++) {
      const label = ranking.labels[ranking.order[i]];
      if (label !== END) top.add(label);
    }
    for (const step of planSteps(plan)) {
      if (step.acceptable[0] === END) continue;
      steps++;
      if (step.acceptable.some((a) => top.has(a))) hit++;
    }
  }
  return hit / steps;
}

if (!skip.has('quality')) {
  const points = args.sessions.split(',').map(Number);
  for (const world of args.worlds.split(',')) {
    const dataset = world === 'demo' ? demoDataset(600, 3) : readDatasetDir(join(DATA, world));
    const split = splitDataset(dataset);
    const test = args.test ? split.test.slice(0, Number(args.test)) : split.test;
    const groups = worldServers(world, dataset);
    const { gateway, nameOf } = await startWorld(dataset, groups, true);
    const curve: { sessions: number; recall: number; steps: number }[] = [];
    const evaluate = async (sessions: number) => {
      const hits = (await Promise.all(test.map((p) => replay(gateway, nameOf, p, false)))).flat();
      curve.push({ sessions, recall: hits.filter(Boolean).length / hits.length, steps: hits.length });
    };
    await evaluate(0);
    let seen = 0;
    // A world with fewer training plans than a point ends its curve at all of them.
    for (const n of [...new Set(points.map((p) => Math.min(p, split.train.length)))]) {
      for (; seen < n; seen++) await replay(gateway, nameOf, split.train[seen], true);
      await gateway.saved();
      await gateway.model!.settle();
      await evaluate(n);
    }
    const peers: Record<string, number> = {};
    for (const peer of [oramaPeer('orama-bm25', 'fulltext'), aiSdkPeer()])
      peers[peer.name] = await peerRecall(peer, dataset.tools, test);
    const listedChars = JSON.stringify(gateway.liveTools().map((n) => gateway.view(n))).length;
    out[world] = {
      tools: dataset.tools.length,
      servers: groups.size,
      testPlans: test.length,
      split: split.description,
      curve,
      peers,
      allListed: { recall: 1, tools: dataset.tools.length, chars: listedChars },
      findToolsChars: 0,
    };
    say(
      `${world}: ${dataset.tools.length} tools over ${groups.size} servers, ${test.length} test plans (${split.description})`,
    );
    for (const c of curve)
      say(
        `  dtdr find_tools top-5 recall after ${String(c.sessions).padStart(3)} sessions: ${c.recall.toFixed(3)} (${c.steps} steps)`,
      );
    for (const [p, r] of Object.entries(peers)) say(`  ${p.padEnd(12)} top-5 recall: ${r.toFixed(3)}`);
    say(
      `  all tools listed: recall 1 at ${dataset.tools.length} tools (${listedChars} characters of tool definitions)`,
    );
    await gateway.close();
  }
}

if (!skip.has('overhead')) {
  const dir = tempDir('dtdr-gateway-overhead-');
  const dataset = demoDataset(10, 1);
  const spec = worldEntry(dir, { name: 'demo', tools: asWorldTools(dataset.tools) });
  writeFileSync(join(dir, 'mcp.json'), JSON.stringify({ mcpServers: { demo: spec } }));
  const calls = Number(args.calls);
  const time = async (call: () => Promise<unknown>) => {
    for (let i = 0; i < 50; i++) await call();
    const t: number[] = [];
    for (let i = 0; i < calls; i++) {
      const t0 = performance.now();
      await call();
      t.push(performance.now() - t0);
    }
    return t;
  };
  const direct = new Client({ name: 'bench', version: '1' });
  await direct.connect(new StdioClientTransport(spec));
  const args0 = { place: 'Oslo' };
  const straight = await time(() => direct.callTool({ name: 'weather_forecast', arguments: args0 }));
  await direct.close();
  const viaGateway = new Client({ name: 'bench', version: '1' });
  await viaGateway.connect(
    new StdioClientTransport({
      ...gatewayCommand(['--config', join(dir, 'mcp.json'), '--no-learn', '--quiet']),
      cwd: ROOT,
    }),
  );
  await viaGateway.callTool({
    name: 'find_tools',
    arguments: { request: 'Get the weather forecast for a place and day.', max_tools: 20 },
  });
  const through = await time(() =>
    viaGateway.callTool({ name: 'call_tool', arguments: { name: 'demo__weather_forecast', arguments: args0 } }),
  );
  await viaGateway.close();
  const o = {
    calls,
    direct: { p50: quantile(straight, 0.5), p99: quantile(straight, 0.99) },
    gateway: { p50: quantile(through, 0.5), p99: quantile(through, 0.99) },
  };
  out.overhead = { ...o, p50: o.gateway.p50 - o.direct.p50, p99: o.gateway.p99 - o.direct.p99 };
  say(
    `call_tool over stdio, ${calls} calls: direct p50 ${ms(o.direct.p50)} p99 ${ms(o.direct.p99)}; through the gateway p50 ${ms(o.gateway.p50)} p99 ${ms(o.gateway.p99)}`,
  );
  say(`  overhead p50 ${ms(o.gateway.p50 - o.direct.p50)}, p99 ${ms(o.gateway.p99 - o.direct.p99)}`);
}

if (!skip.has('scale')) {
  const nServers = Number(args.servers);
  const nTools = Number(args.tools);
  const ultra = readDatasetDir(join(DATA, 'ultratool'));
  const base = ultra.tools;
  const groups = new Map<string, ToolSpec[]>();
  for (let i = 0; i < nTools; i++) {
    const t = base[i % base.length];
    const server = `svc${String(i % nServers).padStart(2, '0')}`;
    const copy = Math.floor(i / base.length);
    groups.set(server, [
      ...(groups.get(server) ?? []),
      { name: copy === 0 ? t.name : `${t.name}_${copy}`, description: `${t.description} (provider ${copy + 1})` },
    ]);
  }
  const rss0 = process.memoryUsage().rss;
  const t0 = performance.now();
  const { gateway } = await startWorld(ultra, groups, false);
  const startup = performance.now() - t0;
  const live = gateway.liveTools().length;
  const queries = splitDataset(ultra).test.map((p) => p.query);
  const times: number[] = [];
  // Also the process's CPU time per request: on a shared machine, wall time includes the waits for a
  // core that other jobs cause; CPU time is what the gateway itself spends (all its threads, GC included).
  const cpu: number[] = [];
  for (const q of queries.slice(0, 20)) await gateway.findTools(gateway.session(), q, 5);
  for (const q of queries) {
    const session = gateway.session();
    const c = process.cpuUsage();
    const t = performance.now();
    await gateway.findTools(session, q, 5);
    times.push(performance.now() - t);
    const used = process.cpuUsage(c);
    cpu.push((used.user + used.system) / 1000);
  }
  // The same requests from a real SDK client (in-memory transport): JSON-RPC, argument checks and the
  // answer's serialization on top of find_tools itself.
  const { client } = await gatewayClient(gateway);
  const viaClient: number[] = [];
  const ask = (q: string) => client.callTool({ name: 'find_tools', arguments: { request: q, max_tools: 5 } });
  for (const q of queries.slice(0, 20)) await ask(q);
  for (const q of queries) {
    const t = performance.now();
    await ask(q);
    viaClient.push(performance.now() - t);
  }
  await client.close();
  const rss = process.memoryUsage().rss;
  out.scale = {
    servers: nServers,
    tools: live,
    startupMs: startup,
    findTools: { n: times.length, p50: quantile(times, 0.5), p99: quantile(times, 0.99) },
    findToolsCpu: { p50: quantile(cpu, 0.5), p99: quantile(cpu, 0.99) },
    findToolsClient: { p50: quantile(viaClient, 0.5), p99: quantile(viaClient, 0.99) },
    gatewayRssMiB: rss / 2 ** 20,
    rssGrowthMiB: (rss - rss0) / 2 ** 20,
  };
  say(
    `${live} tools over ${nServers} servers: start-up ${(startup / 1000).toFixed(1)} s; find_tools over ${times.length} requests p50 ${ms(quantile(times, 0.5))} p99 ${ms(quantile(times, 0.99))}` +
      ` (CPU time p50 ${ms(quantile(cpu, 0.5))} p99 ${ms(quantile(cpu, 0.99))})`,
  );
  say(
    `  find_tools from an SDK client (in-memory transport): p50 ${ms(quantile(viaClient, 0.5))} p99 ${ms(quantile(viaClient, 0.99))}`,
  );
  say(
    `  gateway process RSS ${(rss / 2 ** 20).toFixed(0)} MiB (${((rss - rss0) / 2 ** 20).toFixed(0)} MiB for the gateway; upstream processes not counted)`,
  );
  await gateway.close();
}

if (args.json) console.log(JSON.stringify(out));
if (args.results) writeResults(args.results);

/** The tables of docs/gateway.md, into the results file (each part only when it ran). */
function writeResults(path: string): void {
  const results = JSON.parse(readFileSync(path, 'utf8')) as { tables: Record<string, unknown> };
  const date = new Date().toISOString().slice(0, 10);
  const command = `npm run experiment -- gateway${process.argv.slice(2).length ? ` ${process.argv.slice(2).join(' ')}` : ''}`;
  const worlds = Object.entries(out).filter(([, v]) => (v as { curve?: unknown }).curve) as [string, World][];
  if (worlds.length > 0) {
    const points = [...new Set(worlds.flatMap(([, w]) => w.curve.map((c) => c.sessions)))].sort((a, b) => a - b);
    results.tables['gateway-quality'] = {
      title:
        "find_tools top-5 recall over the test plans' tool steps, replayed as sessions through the gateway, against " +
        'peers given the same request and all tools listed; dtdr after the gateway learned N sessions',
      command,
      date,
      columns: [
        'world',
        'all tools listed',
        'Orama BM25',
        'AI SDK toolSearch',
        ...points.map((n) => `dtdr, ${n} sessions`),
      ],
      align: ['left', ...points.map(() => 'right' as const), 'right', 'right', 'right'],
      rows: worlds.map(([name, w]) => [
        `${name} (${w.tools} tools, ${w.servers} servers, ${w.curve[0].steps} steps)`,
        `1 (${w.allListed.chars.toLocaleString('en')} characters)`,
        w.peers['orama-bm25'].toFixed(3),
        w.peers['aisdk-search'].toFixed(3),
        ...points.map((n) => w.curve.find((c) => c.sessions === n)?.recall.toFixed(3) ?? '—'),
      ]),
    };
  }
  const o = out.overhead as Overhead | undefined;
  const s = out.scale as Scale | undefined;
  if (o || s) {
    const f = (x: number) => `${x.toFixed(2)} ms`;
    const rows: string[][] = [];
    if (o) {
      rows.push([`call_tool straight to the server (stdio), ${o.calls} calls`, f(o.direct.p50), f(o.direct.p99)]);
      rows.push([`call_tool through the gateway CLI (stdio)`, f(o.gateway.p50), f(o.gateway.p99)]);
      rows.push(['the gateway adds', f(o.p50), f(o.p99)]);
    }
    if (s) {
      rows.push([
        `find_tools at ${s.tools.toLocaleString('en')} tools over ${s.servers} servers, ${s.findTools.n} requests`,
        f(s.findTools.p50),
        f(s.findTools.p99),
      ]);
      rows.push([`the same, the gateway process's CPU time`, f(s.findToolsCpu.p50), f(s.findToolsCpu.p99)]);
      rows.push([
        `the same requests from an SDK client (in-memory transport: JSON-RPC and the answer's JSON included)`,
        f(s.findToolsClient.p50),
        f(s.findToolsClient.p99),
      ]);
      rows.push([`start-up with ${s.servers} servers`, `${(s.startupMs / 1000).toFixed(1)} s`, '']);
      rows.push([
        `memory of the process running the gateway and this script (RSS; upstreams not counted)`,
        `${Math.round(s.gatewayRssMiB)} MiB`,
        '',
      ]);
    }
    results.tables['gateway-cost'] = {
      title: "The gateway's cost: p50 / p99 per call",
      command,
      date,
      columns: ['what', 'p50', 'p99'],
      align: ['left', 'right', 'right'],
      rows,
    };
  }
  writeFileSync(path, `${JSON.stringify(results, null, 1)}\n`);
}

interface World {
  tools: number;
  servers: number;
  curve: { sessions: number; recall: number; steps: number }[];
  peers: Record<string, number>;
  allListed: { chars: number };
}
interface Overhead {
  calls: number;
  direct: { p50: number; p99: number };
  gateway: { p50: number; p99: number };
  p50: number;
  p99: number;
}
interface Scale {
  servers: number;
  tools: number;
  startupMs: number;
  findTools: { n: number; p50: number; p99: number };
  findToolsCpu: { p50: number; p99: number };
  findToolsClient: { p50: number; p99: number };
  gatewayRssMiB: number;
}
process.exit(0);

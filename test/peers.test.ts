/**
 * The peers dtdr eval compares with: each runs through its real npm package (the AI SDK
 * 7's default toolSearch, Orama's BM25 / vector / hybrid search) and returns a full ranking of the
 * known tools, END last; evaluateMethods and `dtdr eval --methods` accept their names.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { evaluateMethods } from '../src/core/evaluation/evaluate.js';
import { END, type Plan, type ToolSpec } from '../src/core/base/types.js';
import { toolText } from '../src/core/base/text.js';
import { selectCandidates } from '../src/core/selection/select.js';
import { PEERS } from '../src/core/retrieval/methods.js';
import { peersFor } from '../src/cli/peers/index.js';
import { parseMethods } from '../src/cli/shared.js';
import { runCli, wordAxisEncoder } from './helpers.js';

const tools: ToolSpec[] = [
  { name: 'get_weather', description: 'Get the weather forecast for a city' },
  { name: 'send_email', description: 'Send an email message to a contact' },
  { name: 'book_flight', description: 'Book a flight between two airports' },
  { name: 'convert_currency', description: 'Convert an amount between currencies' },
];
const WORDS = [
  'weather',
  'forecast',
  'city',
  'email',
  'message',
  'contact',
  'flight',
  'airports',
  'currency',
  'currencies',
  'amount',
  'book',
  'send',
  'convert',
];
const encoder = wordAxisEncoder(WORDS);
const plan = (id: string, query: string, calls: string[]): Plan => ({
  id,
  query,
  nodes: calls.map((tool) => ({ tool })),
  edges: calls.slice(1).map((_, i) => [i, i + 1] as [number, number]),
  order: calls.map((_, i) => i),
});

describe('peers (their own packages, side by side in dtdr eval)', () => {
  it('each peer ranks every tool, its best match first and END last', async () => {
    const toolVectors = await encoder.embed(tools.map((t) => toolText(t.name, t.description)));
    const [queryVector] = await encoder.embed(['what is the weather forecast in this city']);
    const peers = peersFor(PEERS);
    expect(Object.keys(peers).sort()).toEqual([...PEERS].sort());
    for (const name of PEERS) {
      const retriever = await peers[name]!.fit(tools, peers[name]!.needs.tools ? toolVectors : undefined);
      const ranking = await retriever.rank({
        query: 'what is the weather forecast in this city',
        history: [],
        queryVector,
      });
      const order = Array.from(ranking.order, (i) => ranking.labels[i]);
      expect(order, name).toHaveLength(tools.length + 1);
      expect(new Set(order), name).toEqual(new Set([...tools.map((t) => t.name), END]));
      expect(order[0], name).toBe('get_weather');
      expect(order.at(-1), name).toBe(END);
      expect(
        selectCandidates(ranking).candidates.map((c) => c.tool),
        name,
      ).toContain('get_weather');
    }
  });

  it('the AI SDK peer ranks as the SDK does: a name match counts twice a description match, unmatched tools follow', async () => {
    const retriever = await peersFor(['aisdk-search'])['aisdk-search']!.fit(tools);
    const ranking = await retriever.rank({ query: 'send the currency email', history: [] });
    const order = Array.from(ranking.order, (i) => ranking.labels[i]);
    // send_email: "send" and "email" in the name (2 + 2) and description (1 + 1); convert_currency: "currency" in the name and description.
    expect(order.slice(0, 2)).toEqual(['send_email', 'convert_currency']);
    expect(retriever.lastSearchMicros!()).toBeGreaterThan(0);
  });

  it('evaluateMethods scores peers beside dtdr methods on the same steps, and --methods takes their names', async () => {
    const train = [
      plan('a', 'book a flight then email the contact', ['book_flight', 'send_email']),
      plan('b', 'weather forecast for the city', ['get_weather']),
    ];
    const test = [plan('c', 'convert the amount of currency then send an email', ['convert_currency', 'send_email'])];
    const methods = ['bm25', ...PEERS] as const;
    const r = await evaluateMethods(tools, train, test, encoder, {
      methods,
      peers: peersFor(methods),
      timingPasses: 1,
    });
    expect(Object.keys(r.results)).toEqual([...methods]);
    for (const m of methods) {
      expect(r.results[m]!.steps, m).toBe(3);
      expect(r.results[m]!.mrr, m).toBeGreaterThan(0);
    }
    await expect(
      evaluateMethods(tools, train, test, encoder, { methods: ['orama-bm25'], timingPasses: 0 }),
    ).rejects.toThrow(/options\.peers/);
    expect(parseMethods('bm25,orama-hybrid,aisdk-search', ['bm25'], { peers: true })).toEqual([
      'bm25',
      'orama-hybrid',
      'aisdk-search',
    ]);
    expect(() => parseMethods('orama-bm25', ['bm25'])).toThrow(/unknown method "orama-bm25"/);
  });

  it('dtdr eval --methods runs peers from the command line', () => {
    const dir = mkdtempSync(join(tmpdir(), 'dtdr-peers-'));
    writeFileSync(
      join(dir, 'tool_desc.json'),
      JSON.stringify({ nodes: tools.map((t) => ({ id: t.name, desc: t.description })) }),
    );
    const rows = [
      ['book a flight', ['book_flight']],
      ['email the contact', ['send_email']],
      ['weather in the city', ['get_weather']],
      ['convert currency', ['convert_currency']],
    ] as const;
    writeFileSync(
      join(dir, 'data.jsonl'),
      Array.from({ length: 12 }, (_, i) => {
        const [query, calls] = rows[i % rows.length];
        return JSON.stringify({
          id: `p${i}`,
          user_request: `${query} ${i}`,
          task_nodes: calls.map((task) => ({ task })),
          task_links: [],
        });
      }).join('\n'),
    );
    const r = runCli(['eval', '--data', dir, '--methods', 'bm25,orama-bm25,aisdk-search', '--json']);
    expect(r.code, r.stderr).toBe(0);
    expect(Object.keys(JSON.parse(r.stdout).results)).toEqual(['bm25', 'orama-bm25', 'aisdk-search']);
    const bad = runCli(['eval', '--data', dir, '--methods', 'bm25,orama-fuzzy']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/unknown method "orama-fuzzy".*aisdk-search/);
  });
});

/**
 * Every text path is linear in its input, and one set of bounds
 * (src/core/limits.ts) holds for the library and data files alike.
 *
 * The "linear" tests feed inputs at the bounds that the former backtracking regexes and pair
 * scans took tens of seconds on (quadratic or worse) and check the exact answer; nothing here
 * measures time (scripts/check/stress-inputs.ts prints the figures).
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { datasetFromFiles, parsePlans, parseToolDescriptions, parseToolList } from '../src/core/plans/dataset.js';
import { Dtdr } from '../src/core/dtdr.js';
import { DtdrError } from '../src/core/base/errors.js';
import { MAX_DESCRIPTION_CHARS, MAX_PLAN_LINKS, MAX_PLAN_STEPS, MAX_QUERY_CHARS } from '../src/core/base/limits.js';
import { chainPlan, planFromRecord } from '../src/core/plans/plan.js';
import { parseHermes, parseOpenAI, parseReAct } from '../src/core/prompts/parse.js';
import { asciiTerms, humanizeToolName, terms, unicodeTerms } from '../src/core/base/text.js';
import fc from 'fast-check';
import type { Plan, ToolSpec } from '../src/core/base/types.js';
import { readQuery } from '../src/cli/retrieve.js';
import { readDatasetDir } from '../src/data/node.js';
import { readModelFile } from '../src/storage/file.js';
import { wordAxisEncoder } from './helpers.js';

const TOOLS: ToolSpec[] = [
  { name: 'files_search', description: 'search files' },
  { name: 'email_send', description: 'send email' },
];
const PLANS = [
  chainPlan('1', 'email the file', ['files_search', 'email_send']),
  chainPlan('2', 'find the file', ['files_search']),
];
const encoder = wordAxisEncoder(['search', 'files', 'file', 'send', 'email', 'aaa']);

function thrown(run: () => unknown): DtdrError {
  try {
    run();
  } catch (e) {
    if (DtdrError.isInstance(e)) return e;
    throw new Error(`expected a DtdrError, got ${String(e)}`);
  }
  throw new Error('expected a DtdrError, got success');
}
async function rejected(promise: Promise<unknown>): Promise<DtdrError> {
  try {
    await promise;
  } catch (e) {
    if (DtdrError.isInstance(e)) return e;
    throw new Error(`expected a DtdrError, got ${String(e)}`);
  }
  throw new Error('expected a DtdrError, got success');
}

describe('tool names and text in words, in one pass', () => {
  it('tools with descriptions of 100,000 capitals train and requests of 100,000 capitals are answered; names split as before', async () => {
    expect(humanizeToolName('getPersonMovieCredit')).toBe('get person movie credit');
    expect(humanizeToolName('HTMLParser')).toBe('html parser');
    expect(humanizeToolName('getHTTPResponseCode')).toBe('get http response code');
    expect(humanizeToolName('clock_alarm_cancel')).toBe('clock alarm cancel');
    expect(humanizeToolName('v2Api.search/byID:fast')).toBe('v2 api search by id fast');
    expect(humanizeToolName('ABc')).toBe('a bc');
    expect(humanizeToolName('ABC')).toBe('abc');
    expect(humanizeToolName('AbCD')).toBe('ab cd');
    expect(humanizeToolName('ÉBon')).toBe('ébon'); // only ASCII capitals count, as before
    expect(humanizeToolName('ÉTATBon')).toBe('état bon');
    expect(terms('Please find myHTMLFile for the BOSS')).toEqual(['find', 'html', 'file', 'boss']); // 'my', 'for', 'the': stopwords
    expect(humanizeToolName(`${'A'.repeat(99_999)}b`)).toBe(`${'a'.repeat(99_998)} ab`);
    expect(humanizeToolName('A'.repeat(MAX_DESCRIPTION_CHARS))).toBe('a'.repeat(MAX_DESCRIPTION_CHARS));
    expect(terms(`x ${'Q'.repeat(MAX_QUERY_CHARS - 5)} rs`)).toEqual(['q'.repeat(MAX_QUERY_CHARS - 5), 'rs']);

    const shouting = Array.from({ length: 3 }, (_, i) => ({
      name: `shout_${i}`,
      description: String.fromCharCode(65 + i).repeat(MAX_DESCRIPTION_CHARS),
    }));
    const model = await Dtdr.train({ method: 'dtdr-g', tools: [...TOOLS, ...shouting], plans: PLANS, encoder });
    for (const letter of 'ABCDE')
      expect((await model.retrieve(letter.repeat(MAX_QUERY_CHARS))).candidates.length).toBeGreaterThan(0);
    await model.addTools([{ name: 'shout_more', description: 'Z'.repeat(MAX_DESCRIPTION_CHARS) }]);
    expect(model.tools.map((t) => t.name)).toContain('shout_more');
  });
});

describe('answer parsers, in one pass over the answer', () => {
  it("'<think>' × 100,000 and 100,000 spaces before a closing fence, in every parser; the usual answers as before", () => {
    expect(parseHermes('<think>plan</think>x</think><tool_call>{"name": "a", "arguments": {}}</tool_call>')).toEqual({
      kind: 'call',
      call: { name: 'a', arguments: {} },
      warnings: [],
    });
    expect(parseHermes('<think>one</think>\n<think>two</think> END')).toEqual({ kind: 'end', warnings: [] });
    expect(parseOpenAI('```json\n{"name": "a", "arguments": {"q": 1}}  \n```')).toEqual({
      kind: 'call',
      call: { name: 'a', arguments: { q: 1 } },
      warnings: [],
    });

    const thinking = '<think>'.repeat(100_000);
    expect(parseHermes(thinking)).toMatchObject({ kind: 'error', error: 'no-call' });
    expect(parseReAct(thinking)).toMatchObject({ kind: 'error', error: 'no-call' });
    expect(parseOpenAI(thinking)).toMatchObject({ kind: 'error', error: 'malformed-json' });
    expect(parseOpenAI(`{${' '.repeat(100_000)}y`)).toMatchObject({ kind: 'error', error: 'malformed-json' });
    expect(parseHermes(`{"name": "a"}${' '.repeat(100_000)}\`\`\``)).toEqual({
      kind: 'call',
      call: { name: 'a', arguments: {} },
      warnings: ['the call was not wrapped in <tool_call> tags'],
    });
  });

  it('ReAct: long runs of spaces and line breaks around Action and Action Input; the usual answers as before', () => {
    expect(parseReAct('Thought: look\n\n  Action:  "search"  \nAction Input: {"q": "x"}\nObservation: done')).toEqual({
      kind: 'call',
      call: { name: 'search', arguments: { q: 'x' } },
      warnings: [],
    });
    expect(parseReAct('Action:\n  search\nAction Input: {"q": 1}\n  Thought: more')).toEqual({
      kind: 'call',
      call: { name: 'search', arguments: { q: 1 } },
      warnings: [],
    });
    expect(parseReAct('Action: a\n\n\nAction: b')).toMatchObject({ kind: 'error', error: 'several-calls' });
    expect(parseReAct('Action: END')).toEqual({ kind: 'end', warnings: [] });

    expect(parseReAct(`Action: x${' '.repeat(100_000)}y  `)).toEqual({
      kind: 'call',
      call: { name: `x${' '.repeat(100_000)}y`, arguments: {} },
      warnings: [],
    });
    expect(parseReAct('\n'.repeat(100_000))).toMatchObject({ kind: 'error', error: 'no-call' });
    expect(parseReAct(`Action: x\nAction Input: {${'\n '.repeat(50_000)}x`)).toMatchObject({
      kind: 'error',
      error: 'malformed-json',
    });
    expect(parseReAct(`Action: x\nAction Input: ${' \n'.repeat(50_000)}{}\n Observation: ok`)).toEqual({
      kind: 'call',
      call: { name: 'x', arguments: {} },
      warnings: [],
    });
  });
});

describe('plans: bounded in size, resolved without pair scans', () => {
  const record = (tools: string[], extra: Record<string, unknown> = {}) => ({
    id: 'p',
    user_request: 'do it',
    task_nodes: tools.map((task) => ({ task })),
    task_links: tools.slice(1).map((target, i) => ({ source: tools[i], target })),
    ...extra,
  });

  it(`up to ${MAX_PLAN_STEPS} steps link as before; ${MAX_PLAN_STEPS + 1}, or 4,000, are refused naming the file, line, field and bound`, () => {
    const plan = planFromRecord({
      id: 'r',
      user_request: 'q',
      task_nodes: [{ task: 'A' }, { task: 'B' }, { task: 'A' }],
      task_links: [
        { source: 'A', target: 'B' },
        { source: 'B', target: 'A' },
      ],
    });
    expect(plan.edges).toEqual([
      [0, 1],
      [1, 2],
    ]);
    // A → A three times over four instances: the nearest earlier unlinked source for each target.
    const four = planFromRecord(record(['A', 'A', 'A', 'A']));
    expect(four.edges).toEqual([
      [0, 1],
      [1, 2],
      [0, 2],
    ]);
    expect(
      planFromRecord(
        record(['A', 'B'], {
          task_links: [
            { source: 'B', target: 'A' },
            { source: 'B', target: 'A' },
          ],
        }),
      ).edges,
    ).toEqual([[1, 0]]);
    const distinct = Array.from({ length: MAX_PLAN_STEPS }, (_, i) => `t${i}`);
    const [chain] = parsePlans(JSON.stringify(record(distinct)));
    expect(chain.edges).toEqual(distinct.slice(1).map((_, i) => [i, i + 1]));
    expect(parsePlans(JSON.stringify(record(Array(MAX_PLAN_STEPS).fill('A'))))[0].order).toHaveLength(MAX_PLAN_STEPS);
    for (const steps of [MAX_PLAN_STEPS + 1, 4000]) {
      const text = `\n${JSON.stringify(record(Array.from({ length: steps }, (_, i) => `t${i}`)))}`;
      const e = thrown(() => parsePlans(text, 'd.jsonl'));
      expect(e).toMatchObject({ code: 'data', file: 'd.jsonl', line: 2, field: 'task_nodes' });
      expect(e.message).toContain(`the plan has ${steps.toLocaleString('en')} steps; at most 256 are accepted`);
    }
    const short = thrown(() => parsePlans(JSON.stringify({ query: 'q', tools: Array(MAX_PLAN_STEPS + 1).fill('a') })));
    expect(short).toMatchObject({ code: 'data', line: 1, field: 'tools' });
  });

  it(`more than ${MAX_PLAN_LINKS.toLocaleString('en')} links are refused`, () => {
    const links = Array(MAX_PLAN_LINKS + 1).fill({ source: 'a', target: 'b' });
    const e = thrown(() => parsePlans(JSON.stringify(record(['a', 'b'], { task_links: links }))));
    expect(e).toMatchObject({ code: 'data', line: 1, field: 'task_links' });
    expect(e.message).toContain('the plan has 32,641 links; at most 32,640 are accepted');
  });

  it(`a request of ${MAX_QUERY_CHARS.toLocaleString('en')} characters is accepted, one more is refused`, () => {
    expect(
      parsePlans(JSON.stringify(record(['a'], { user_request: 'x'.repeat(MAX_QUERY_CHARS) })))[0].query,
    ).toHaveLength(MAX_QUERY_CHARS);
    const e = thrown(() =>
      parsePlans(
        `{"query": "q", "tools": ["a"]}\n${JSON.stringify(record(['a'], { user_request: 'x'.repeat(MAX_QUERY_CHARS + 1) }))}`,
        'd.jsonl',
      ),
    );
    expect(e).toMatchObject({ code: 'data', file: 'd.jsonl', line: 2, field: 'user_request' });
    expect(e.message).toContain('the request is 100,001 characters long; at most 100,000 are accepted');
    expect(
      thrown(() => parsePlans(JSON.stringify({ query: 'y'.repeat(MAX_QUERY_CHARS + 1), tools: ['a'] }))),
    ).toMatchObject({ field: 'query', line: 1 });
  });

  it('a plan calling an undescribed tool names its line of data.jsonl', () => {
    const data = [
      '{"id": "1", "query": "q", "tools": ["a"]}',
      '',
      '{"id": "2", "query": "q", "tools": ["a", "zz"]}',
    ].join('\n');
    const e = thrown(() =>
      datasetFromFiles({
        name: 'd',
        data: { text: data, file: 'data.jsonl' },
        toolDescriptions: { text: '{"nodes": [{"id": "a", "desc": "A"}]}', file: 'tool_desc.json' },
      }),
    );
    expect(e).toMatchObject({ code: 'data', file: 'data.jsonl', line: 3 });
    expect(e.message).toContain('plan "2" calls "zz", which tool_desc.json does not describe');
  });
});

describe('the library applies the same bounds to tools and plans', () => {
  const long = (n: number) => 'd'.repeat(n);

  it(`a description of ${MAX_DESCRIPTION_CHARS.toLocaleString('en')} characters is accepted; one more is refused in train and addTools`, async () => {
    const model = await Dtdr.train({
      method: 'dtdr-g',
      tools: [...TOOLS, { name: 'big', description: long(MAX_DESCRIPTION_CHARS) }],
      encoder,
    });
    const e = await rejected(
      Dtdr.train({ tools: [...TOOLS, { name: 'big', description: long(MAX_DESCRIPTION_CHARS + 1) }], encoder }),
    );
    expect(e).toMatchObject({ code: 'options', field: 'tools[2].description' });
    expect(e.message).toContain('the description is 100,001 characters long; at most 100,000 are accepted');
    expect(
      await rejected(model.addTools([{ name: 'bigger', description: long(MAX_DESCRIPTION_CHARS + 1) }])),
    ).toMatchObject({ code: 'options', field: 'tools[0].description' });
  });

  it('plans handed to train or learn: request length, steps and links', async () => {
    const tooLong: Plan = { ...chainPlan('x', 'q', ['files_search']), query: 'q'.repeat(MAX_QUERY_CHARS + 1) };
    const tooMany: Plan = {
      id: 'y',
      query: 'q',
      nodes: Array.from({ length: MAX_PLAN_STEPS + 1 }, () => ({ tool: 'files_search' })),
      edges: [],
      order: Array.from({ length: MAX_PLAN_STEPS + 1 }, (_, i) => i),
    };
    const tooLinked: Plan = {
      ...chainPlan('z', 'q', ['files_search', 'email_send']),
      edges: Array(MAX_PLAN_LINKS + 1).fill([0, 1]),
    };
    const train = (plan: Plan) =>
      rejected(Dtdr.train({ method: 'dtdr-g', tools: TOOLS, plans: [...PLANS, plan], encoder }));
    const e = await train(tooLong);
    expect(e).toMatchObject({ code: 'options', field: 'plans[2].query' });
    expect(e.message).toContain('the request is 100,001 characters long; at most 100,000 are accepted');
    expect(await train(tooMany)).toMatchObject({
      field: 'plans[2].nodes',
      message: expect.stringContaining('the plan has 257 steps; at most 256 are accepted'),
    });
    expect(await train(tooLinked)).toMatchObject({ field: 'plans[2].edges' });
    const longChain = { query: 'q', tools: Array<string>(MAX_PLAN_STEPS + 1).fill('files_search') };
    expect(await rejected(Dtdr.train({ method: 'dtdr-g', tools: TOOLS, plans: [longChain], encoder }))).toMatchObject({
      field: 'plans[0].tools',
      message: expect.stringContaining('the plan has 257 steps'),
    });
    const model = await Dtdr.train({ method: 'dtdr-g', tools: TOOLS, plans: PLANS, encoder });
    expect(await rejected(model.learn([PLANS[0], tooLong]))).toMatchObject({
      code: 'options',
      field: 'plans[1].query',
    });
    expect(await rejected(model.learn([tooMany]))).toMatchObject({ code: 'options', field: 'plans[0].nodes' });
  });
});

describe('dataset tool files apply the description bound', () => {
  it('tool_desc.json and a tool list', () => {
    const e = thrown(() =>
      parseToolDescriptions(
        JSON.stringify({
          nodes: [
            { id: 'a', desc: 'ok' },
            { id: 'b', desc: 'x'.repeat(MAX_DESCRIPTION_CHARS + 1) },
          ],
        }),
        'td.json',
      ),
    );
    expect(e).toMatchObject({ code: 'data', file: 'td.json', field: 'nodes[1].desc' });
    expect(e.message).toContain('the description is 100,001 characters long; at most 100,000 are accepted');
    expect(
      parseToolDescriptions(JSON.stringify({ nodes: [{ id: 'a', desc: 'x'.repeat(MAX_DESCRIPTION_CHARS) }] }))[0]
        .description,
    ).toHaveLength(MAX_DESCRIPTION_CHARS);
    const list = thrown(() =>
      parseToolList(
        JSON.stringify([
          { type: 'function', function: { name: 'a', description: 'x'.repeat(MAX_DESCRIPTION_CHARS + 1) } },
        ]),
        'tools.json',
      ),
    );
    expect(list).toMatchObject({ code: 'data', file: 'tools.json', field: '[0].description' });
  });
});

describe('files that are not UTF-8 are refused, naming the file and line', () => {
  const dir = mkdtempSync(join(tmpdir(), 'dtdr-utf8-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const latin1 = (text: string) => Buffer.from(text, 'latin1'); // é → the single byte 0xE9

  it('data.jsonl with a Latin-1 byte on line 2', () => {
    const d = join(dir, 'data');
    mkdirSync(d);
    writeFileSync(
      join(d, 'data.jsonl'),
      Buffer.concat([
        Buffer.from('{"query": "q", "tools": ["a"]}\n'),
        latin1('{"query": "caf\u00e9", "tools": ["a"]}\n'),
      ]),
    );
    const e = thrown(() => readDatasetDir(d));
    expect(e).toMatchObject({ code: 'data', file: join(d, 'data.jsonl'), line: 2 });
    expect(e.message).toContain('the file is not valid UTF-8');
  });

  it('tool_desc.json with a Latin-1 byte on line 3; a UTF-8 byte-order mark is still accepted', () => {
    const d = join(dir, 'tools');
    mkdirSync(d);
    writeFileSync(
      join(d, 'tool_desc.json'),
      latin1('{"nodes": [\n{"id": "a", "desc": "A"},\n{"id": "b", "desc": "r\u00e9sum\u00e9"}]}'),
    );
    expect(thrown(() => readDatasetDir(d))).toMatchObject({ code: 'data', file: join(d, 'tool_desc.json'), line: 3 });
    writeFileSync(join(d, 'tool_desc.json'), `\uFEFF{"nodes": [{"id": "b", "desc": "r\u00e9sum\u00e9"}]}`);
    expect(readDatasetDir(d).tools).toEqual([{ name: 'b', description: 'r\u00e9sum\u00e9' }]);
  });

  it('a --query-file with a Latin-1 byte on line 2', () => {
    const path = join(dir, 'q.txt');
    writeFileSync(path, latin1('plan my trip\nto the caf\u00e9\n'));
    expect(thrown(() => readQuery('retrieve', { 'query-file': path }))).toMatchObject({
      code: 'data',
      file: path,
      line: 2,
      message: expect.stringContaining('not valid UTF-8'),
    });
    writeFileSync(path, 'plan my trip\nto the caf\u00e9\n');
    expect(readQuery('retrieve', { 'query-file': path })).toBe('plan my trip\nto the caf\u00e9');
  });

  it('a JSON model file with a byte that is not UTF-8', () => {
    const path = join(dir, 'm.json');
    writeFileSync(
      path,
      Buffer.concat([Buffer.from('{"format": "dtdr", "x": "'), Buffer.from([0xff]), Buffer.from('"}')]),
    );
    expect(thrown(() => readModelFile(path))).toMatchObject({
      code: 'artifact',
      file: path,
      line: 1,
      message: expect.stringContaining('not valid UTF-8'),
    });
  });
});

describe('tokenising a request', () => {
  it('splits ASCII text in one pass exactly as the general (Unicode) path does', () => {
    for (const text of [
      'Please find myHTMLFile for the BOSS',
      'getHTTPResponseCode v2Api.search/byID:fast',
      'ABc AbCD x1Y 42nd_street',
      '',
      '  a  ',
      'tell\tme\nNOW!',
    ]) {
      expect(asciiTerms(text)).toEqual(unicodeTerms(text));
    }
    const ascii = fc.string({
      unit: fc.oneof(
        fc.constantFrom(...'aAbBzZyY09 _-./:'),
        fc.integer({ min: 0, max: 127 }).map((c) => String.fromCharCode(c)),
      ),
      maxLength: 40,
    });
    fc.assert(
      fc.property(ascii, (text) => JSON.stringify(asciiTerms(text)) === JSON.stringify(unicodeTerms(text))),
      { numRuns: 5000 },
    );
    // Non-ASCII text takes the general path: only ASCII capitals split words, as before.
    expect(terms('ÉTATBon café')).toEqual(['état', 'bon', 'café']);
  });
});

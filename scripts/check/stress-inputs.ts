/**
 * How long the longest accepted inputs, and the refusal of longer ones, take: every text path is
 * meant to be linear in its input, so none of these may stall an app. Prints a table of medians
 * over a few repeats and exits non-zero when one exceeds LIMIT_MS (model files from elsewhere: MODEL_FILE_LIMIT_MS,
 * each loaded in a worker whose heap is capped at the decoded size + 200 MB) or throws anything but a DtdrError.
 *
 *   node --import tsx scripts/check/stress-inputs.ts            (npm run check -- stress-inputs)
 */
import { Dtdr } from '../../src/core/dtdr.js';
import { parsePlans } from '../../src/core/plans/dataset.js';
import { DtdrError } from '../../src/core/base/errors.js';
import { checkToolName, MAX_DESCRIPTION_CHARS, MAX_PLAN_STEPS, MAX_QUERY_CHARS } from '../../src/core/base/limits.js';
import { parseHermes, parseOpenAI, parseReAct } from '../../src/core/prompts/parse.js';
import { demoDataset } from '../../src/demo/toolset.js';
import { loadEncoder } from '../../src/encoders/node.js';
import { median } from '../bench/stats.js';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { withPersistentCache } from '../../src/core/base/encoder.js';
import { buildSelectionPrompt } from '../../src/core/prompts/build.js';
import { validateCall } from '../../src/core/prompts/parse.js';
import type { ToolSpec } from '../../src/core/base/types.js';
import { fileEmbeddingStore } from '../../src/storage/file.js';
import { watchMcpTools } from '../../src/adapters/mcp/index.js';
import { FUZZ_TOOLS, FUZZ_WORDS, fuzzEncoder, withHeader, withHeaderText } from '../../test/fuzz-targets.js';
import { wordAxisEncoder } from '../../test/helpers.js';
import '../../src/methods.js'; // every method, as the Node entry registers them

const LIMIT_MS = 200;
/** A tool schema of 64 KB or less is checked, or refused, on arguments of 64 KB or less within this (issue 44). */
const SCHEMA_LIMIT_MS = 1000;
const REPEATS = 5;
const rows: { what: string; ms: number; outcome: string; limit?: number }[] = [];
/** Model files (at most 10 MB) are loaded or refused within this, in a heap capped at their decoded size + 200 MB. */
const MODEL_FILE_LIMIT_MS = 2000;

/** Loads a model file in a worker with its heap capped at `decodedBytes` + 200 MB; THREW when the worker died (out of memory). */
async function measureInWorker(what: string, path: string, decodedBytes: number, words: string[]): Promise<void> {
  const times: number[] = [];
  let outcome = '';
  for (let r = 0; r < 3; r++) {
    const result = await new Promise<{ outcome: string; ms: number }>((resolve) => {
      const worker = new Worker(new URL('./workers/decode-worker.mjs', import.meta.url), {
        workerData: { path, words },
        resourceLimits: { maxOldGenerationSizeMb: Math.ceil((decodedBytes * 8) / 2 ** 20) + 200 },
      });
      worker.once('message', resolve);
      worker.once('error', (error) => resolve({ outcome: `THREW ${String(error).slice(0, 80)}`, ms: Infinity }));
    });
    times.push(result.ms);
    outcome = result.outcome;
  }
  rows.push({ what, ms: median(times), outcome, limit: MODEL_FILE_LIMIT_MS });
}

async function measure(what: string, run: () => unknown, limit?: number): Promise<void> {
  let outcome = '';
  const times: number[] = [];
  for (let r = 0; r < REPEATS; r++) {
    const t0 = performance.now();
    try {
      const value = await run();
      outcome = value === undefined ? 'ok' : String(value);
    } catch (error) {
      outcome = DtdrError.isInstance(error) ? `refused (${error.field ?? error.code})` : `THREW ${String(error)}`;
    }
    times.push(performance.now() - t0);
  }
  rows.push({ what, ms: median(times), outcome, ...(limit ? { limit } : {}) });
}

/** `length` characters of `unit` repeated (cut to length). */
const fill = (unit: string, length: number): string => unit.repeat(Math.ceil(length / unit.length)).slice(0, length);

const encoder = await loadEncoder({ cacheSize: 0 });
const demo = demoDataset();
const model = await Dtdr.train({ tools: demo.tools, plans: demo.plans, encoder });
const words = 'Please BookFlight to Paris tomorrow and send_email with the itinerary; weather? ';

// Requests at the bound, through retrieve (embedding, lexical index and ranking).
for (const [name, unit] of [
  ['words', words],
  ['capitals', 'A'],
  ['camelCase', 'aB'],
  ['punctuation', '.'],
  ['spaces+newlines', ' \n'],
] as const) {
  await measure(
    `retrieve, ${MAX_QUERY_CHARS.toLocaleString('en')}-char request (${name})`,
    async () => (await model.retrieve(fill(unit, MAX_QUERY_CHARS))).candidates.length + ' candidates',
  );
}
await measure(`retrieve, ${(MAX_QUERY_CHARS + 1).toLocaleString('en')}-char request`, () =>
  model.retrieve(fill(words, MAX_QUERY_CHARS + 1)),
);

// Tool names: refused by the tool-name rule, before any work.
const longName = fill('A', 100_000);
await measure('tool-name rule, 100,000-char name', () => checkToolName(longName, { field: 'tools[0].name' }));
await measure('Dtdr.train, tools only, one 100,000-char name', () =>
  Dtdr.train({ tools: [...demo.tools, { name: longName, description: 'x' }], encoder }).then(() => 'accepted'),
);

// Descriptions at the bound: training (tools only) and adding a tool.
const longDescription = fill(words, MAX_DESCRIPTION_CHARS);
await measure(`Dtdr.train, tools only, one ${MAX_DESCRIPTION_CHARS.toLocaleString('en')}-char description`, () =>
  Dtdr.train({ tools: [...demo.tools, { name: 'long_tool', description: longDescription }], encoder }).then(
    () => 'trained',
  ),
);
await measure(
  `Dtdr.train, tools only, one ${MAX_DESCRIPTION_CHARS.toLocaleString('en')}-char description of capitals`,
  () =>
    Dtdr.train({
      tools: [...demo.tools, { name: 'long_tool', description: fill('A', MAX_DESCRIPTION_CHARS) }],
      encoder,
    }).then(() => 'trained'),
);
let added = 0;
await measure(`addTools, one ${MAX_DESCRIPTION_CHARS.toLocaleString('en')}-char description`, () =>
  model.addTools([{ name: `long_tool_${added++}`, description: longDescription }]),
);
await measure(`addTools, one ${(MAX_DESCRIPTION_CHARS + 1).toLocaleString('en')}-char description`, () =>
  model.addTools([{ name: 'too_long', description: fill(words, MAX_DESCRIPTION_CHARS + 1) }]),
);

// Model answers through every parser.
const answers: [string, string][] = [
  ["'<think>' × 40,000", '<think>'.repeat(40_000)],
  ['ReAct Action Input \'"\\n "\' × 40,000', `Action: search\nAction Input: ${'"\n "'.repeat(40_000)}`],
  ['40,000 newlines', '\n'.repeat(40_000)],
  ['Action line with 40,000 spaces', `Action: x${' '.repeat(40_000)}y`],
  ['JSON with 40,000 spaces', `{${' '.repeat(40_000)}y`],
  ['Action Input then 40,000 newlines', `Action: x\nAction Input: {${'\n'.repeat(40_000)}y`],
  ["Action Input then '\\n ' × 40,000", `Action: x\nAction Input: {${'\n '.repeat(40_000)}x`],
  ["Action Input then ' \\n' × 40,000", `Action: x\nAction Input: ${' \n'.repeat(40_000)}x`],
  ["'<tool_call>' × 40,000", '<tool_call>'.repeat(40_000)],
  ["'Action: \\n' × 40,000", 'Action: \n'.repeat(40_000)],
];
for (const [name, answer] of answers) {
  for (const [parser, parse] of [
    ['hermes', parseHermes],
    ['react', parseReAct],
    ['openai', parseOpenAI],
  ] as const) {
    await measure(`${parser} parser, ${name}`, () => parse(answer).kind);
  }
}

// Plan lines.
const planLine = (steps: number, tool: (i: number) => string): string => {
  const tools = Array.from({ length: steps }, (_, i) => tool(i));
  return JSON.stringify({
    id: 'p',
    user_request: 'do it',
    task_nodes: tools.map((task) => ({ task })),
    task_links: tools.slice(1).map((target, i) => ({ source: tools[i], target })),
  });
};
for (const steps of [4000, MAX_PLAN_STEPS]) {
  for (const [name, tool] of [
    ['one tool repeated', () => 'A'],
    ['distinct tools', (i: number) => `t${i}`],
  ] as const) {
    const line = planLine(steps, tool);
    await measure(
      `parsePlans, one ${steps.toLocaleString('en')}-step chain (${name})`,
      () => `${parsePlans(line)[0].edges.length} edges`,
    );
  }
}

// Model files from elsewhere (at most 10 MB): each loaded in a worker whose heap is capped at the
// decoded model's own size + 200 MB (a file needing more kills the worker: THREW), refused or
// loaded within the time limit. The crafted files are written to a temporary folder.
const dir = mkdtempSync(join(tmpdir(), 'dtdr-stress-'));
const small = await Dtdr.train({ tools: FUZZ_TOOLS, encoder: fuzzEncoder });
const bigTools = Array.from({ length: 2600 }, (_, i) => ({
  name: `tool_${i}`,
  description: `tool number ${i} for ${words}`,
}));
const bigWords = Array.from({ length: 100 }, (_, i) => `word${i}`);
const big = await Dtdr.train({ tools: bigTools, encoder: wordAxisEncoder(bigWords) }); // a 1 MB section: 2,600 description vectors of 100 floats
const headerOf = (bytes: Uint8Array) =>
  JSON.parse(
    new TextDecoder().decode(bytes.subarray(16, 16 + new DataView(bytes.buffer, bytes.byteOffset).getUint32(12, true))),
  );
const bigBytes = big.toBinary();
const bigHeader = headerOf(bigBytes);
const largest = bigHeader.sections.reduce(
  (best: number, s: { length: number }, i: number) => (s.length > bigHeader.sections[best].length ? i : best),
  0,
);
const refs = (n: number) =>
  Array.from({ length: n }, () => ({
    $dtdrSection: largest,
    ...(bigHeader.sections[largest].rows ? { $dtdrWidth: bigHeader.sections[largest].rows } : {}),
  }));
const files: [string, Uint8Array, number, string[]][] = [
  [
    'a 1 MB section referenced 20,000 times',
    withHeader(bigBytes, { ...bigHeader, body: { ...bigHeader.body, extra: refs(20_000) } }),
    bigBytes.length,
    bigWords,
  ],
  [
    '20,000 section entries over one 1 MB section',
    withHeader(bigBytes, {
      sections: [...bigHeader.sections, ...Array.from({ length: 20_000 }, () => ({ ...bigHeader.sections[largest] }))],
      body: {
        ...bigHeader.body,
        extra: Array.from({ length: 20_000 }, (_, k) => ({
          $dtdrSection: bigHeader.sections.length + k,
          ...(bigHeader.sections[largest].rows ? { $dtdrWidth: bigHeader.sections[largest].rows } : {}),
        })),
      },
    }),
    bigBytes.length,
    bigWords,
  ],
  [
    'header nested 5,000,000 levels (10 MB)',
    withHeaderText(small.toBinary(), `${'['.repeat(5_000_000)}${']'.repeat(5_000_000)}`),
    0,
    FUZZ_WORDS,
  ],
  ['the model as saved', bigBytes, bigBytes.length, bigWords],
];
for (const [name, bytes, decoded, fileWords] of files) {
  const path = join(dir, 'model.dtdr');
  writeFileSync(path, bytes);
  await measureInWorker(
    `load a ${(bytes.length / 2 ** 20).toFixed(1)} MB binary model: ${name}`,
    path,
    decoded,
    fileWords,
  );
}
const deepJson = join(dir, 'model.json');
writeFileSync(deepJson, `${'{"a":'.repeat(2_000_000)}1${'}'.repeat(2_000_000)}`);
await measureInWorker('load a 12 MB JSON model nested 2,000,000 levels', deepJson, 0, FUZZ_WORDS);

// Tool schemas and a model's arguments.
const schemaTools: ToolSpec[] = [
  {
    name: 'tag',
    description: 'tag',
    parameters: {
      type: 'object',
      properties: {
        tags: { type: 'array', uniqueItems: true },
        code: { type: 'string', pattern: '^(a+)+$' },
        id: { type: 'string', pattern: '^[a-z]+-\\d+$' },
      },
    },
  },
];
const check = (args: Record<string, unknown>) =>
  validateCall({ kind: 'call', call: { name: 'tag', arguments: args }, warnings: [] }, schemaTools).kind;
await measure('validateCall, uniqueItems over 5,000 distinct objects (a 100,000-char answer)', () =>
  check({ tags: Array.from({ length: 5000 }, (_, i) => ({ id: i, v: `value ${i}` })) }),
);
await measure("validateCall, pattern '^(a+)+$' on 'a' × 40 + '!'", () => check({ code: `${'a'.repeat(40)}!` }));
await measure("validateCall, pattern '^[a-z]+-\\d+$' on a 100,000-char value", () => check({ id: fill('a', 100_000) }));
// Hostile schemas (issue 44, M-d): each checked or refused with a DtdrError within a second (the
// issue's bound for any schema and arguments up to 64 KB: a check may spend its whole budget).
const checkWith = (parameters: Record<string, unknown>, args: Record<string, unknown>) => () =>
  validateCall({ kind: 'call', call: { name: 'hostile', arguments: args }, warnings: [] }, [
    { name: 'hostile', description: 'hostile', parameters: structuredClone(parameters) },
  ]).kind;
for (const pattern of ['^a*a*a*a*a*a*b$', '^\\s*\\s*\\s*\\s*\\s*x$'])
  await measure(
    `validateCall, pattern '${pattern}' on a 1,000-char value`,
    checkWith({ type: 'object', properties: { s: { type: 'string', pattern } } }, { s: fill(pattern[1], 1000) }),
  );
await measure(
  "validateCall, patternProperties '^(a+)+$' on a 41-char property name",
  checkWith({ type: 'object', patternProperties: { '^(a+)+$': {} } }, { [`${'a'.repeat(40)}!`]: 1 }),
);
const fanOut: Record<string, unknown> = { d30: { type: 'string' } };
for (let i = 0; i < 30; i++)
  fanOut[`d${i}`] = { allOf: [{ $ref: `#/$defs/d${i + 1}` }, { $ref: `#/$defs/d${i + 1}` }] };
await measure(
  'validateCall, a 1.5 KB $ref/allOf fan-out of 2^30 subschemas',
  checkWith({ type: 'object', properties: { s: { $ref: '#/$defs/d0' } }, $defs: fanOut }, { s: 'x' }),
  SCHEMA_LIMIT_MS,
);
await measure(
  "validateCall, format 'url' on 'http://' + 'a' × 32 + '!'",
  checkWith(
    { type: 'object', properties: { u: { type: 'string', format: 'url' } } },
    { u: `http://${'a'.repeat(32)}!` },
  ),
);
let nested: unknown = 1;
for (let i = 0; i < 100_000; i++) nested = [nested];
await measure('validateCall, uniqueItems over arrays nested 100,000 deep', () => check({ tags: [nested, nested] }));
let deepSchema: Record<string, unknown> = { type: 'string' };
for (let i = 0; i < 100_000; i++) deepSchema = { type: 'object', properties: { x: deepSchema } };
await measure('addTools, an inputSchema nested 100,000 levels', () =>
  small.addTools([{ name: 'deep_tool', description: 'deep', parameters: deepSchema }]),
);
await measure(
  `buildSelectionPrompt, a ${MAX_QUERY_CHARS.toLocaleString('en')}-char request of '<|im_end|>'`,
  () =>
    buildSelectionPrompt({
      query: fill('<|im_end|>\u2028', MAX_QUERY_CHARS),
      history: [],
      tools: FUZZ_TOOLS,
      strategy: 'hard',
      format: 'hermes',
      candidates: [{ tool: 'email_send', probability: 0.9 }],
    }).text.split('<|im_start|>').length -
    1 +
    ' turns',
);

// An embedding cache of 10,000 lines holding NaN, read and used.
const cachePath = join(dir, 'embeddings.jsonl');
const nan = Buffer.from(new Float32Array(fuzzEncoder.dimension).fill(NaN).buffer).toString('base64');
writeFileSync(
  cachePath,
  Array.from({ length: 10_000 }, (_, i) => JSON.stringify({ k: `${fuzzEncoder.id}\u0000text ${i}`, v: nan })).join(
    '\n',
  ),
);
await measure('embedding cache: open 10,000 NaN lines, embed 100 of their texts', async () => {
  const vectors = await withPersistentCache(fuzzEncoder, fileEmbeddingStore(cachePath), 0).embed(
    Array.from({ length: 100 }, (_, i) => `text ${i}`),
  );
  return vectors.every((v) => Array.from(v).every(Number.isFinite)) ? 'all finite' : 'NaN';
});

// 500 list_changed notifications at once: tools/list reads.
await measure('watchMcpTools, 500 list_changed notifications at once', async () => {
  let reads = 0;
  let notify = () => {};
  const listed = FUZZ_TOOLS.map((t) => ({ name: t.name, description: t.description }));
  const watch = await watchMcpTools(
    {
      listTools: async () => (reads++, await new Promise((r) => setTimeout(r, 1)), { tools: listed }),
      setNotificationHandler: (_: never, h: (n: unknown) => void) => void (notify = () => void h({})),
    },
    small,
    { notificationSchema: {} },
  );
  for (let i = 0; i < 500; i++) notify();
  await watch.refresh();
  return `${reads} tools/list reads`;
});
rmSync(dir, { recursive: true, force: true });

const width = Math.max(...rows.map((r) => r.what.length));
console.log(`${'input'.padEnd(width)}  median ms  outcome`);
for (const r of rows) console.log(`${r.what.padEnd(width)}  ${r.ms.toFixed(1).padStart(9)}  ${r.outcome}`);
const slow = rows.filter((r) => r.ms > (r.limit ?? LIMIT_MS) || r.outcome.startsWith('THREW'));
if (slow.length > 0) {
  console.error(
    `\n${slow.length} over ${LIMIT_MS} ms (model files: ${MODEL_FILE_LIMIT_MS} ms) or not a DtdrError: ${slow.map((r) => r.what).join('; ')}`,
  );
  process.exit(1);
}
console.log(
  `\nall under ${LIMIT_MS} ms (model files: ${MODEL_FILE_LIMIT_MS} ms, heap capped at the decoded size + 200 MB) (median of ${REPEATS}; ${process.platform} ${process.arch}, Node ${process.version})`,
);

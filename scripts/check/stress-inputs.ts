/**
 * How long the longest accepted inputs, and the refusal of longer ones, take: every text path is
 * meant to be linear in its input, so none of these may stall an app. Prints a table of medians
 * over a few repeats and exits non-zero when one exceeds LIMIT_MS.
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

const LIMIT_MS = 200;
const REPEATS = 5;
const rows: { what: string; ms: number; outcome: string }[] = [];

async function measure(what: string, run: () => unknown): Promise<void> {
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
  rows.push({ what, ms: median(times), outcome });
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

const width = Math.max(...rows.map((r) => r.what.length));
console.log(`${'input'.padEnd(width)}  median ms  outcome`);
for (const r of rows) console.log(`${r.what.padEnd(width)}  ${r.ms.toFixed(1).padStart(9)}  ${r.outcome}`);
const slow = rows.filter((r) => r.ms > LIMIT_MS);
if (slow.length > 0) {
  console.error(`\n${slow.length} over ${LIMIT_MS} ms: ${slow.map((r) => r.what).join('; ')}`);
  process.exit(1);
}
console.log(
  `\nall under ${LIMIT_MS} ms (median of ${REPEATS}; ${process.platform} ${process.arch}, Node ${process.version})`,
);

/**
 * Fuzzing every reader, loader and parser with fast-check, 10,000 cases each (seeded, so a
 * failure reproduces): whatever the input, the result is a value or a DtdrError — never an
 * uncaught TypeError, RangeError or a hang. Then the bounds: huge queries, histories and tool
 * lists are handled in bounded time or refused with a clear error.
 */
import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import { Dtdr, safeLoadModel } from '../src/core/dtdr.js';
import { DtdrError } from '../src/core/base/errors.js';
import { parsePlans, parseSplitIds, parseToolDescriptions } from '../src/core/plans/dataset.js';
import { decodeBinaryModel } from '../src/core/model/binary.js';
import { utf8Decode, utf8Encode } from '../src/core/model/utf8.js';
import { chainPlan } from '../src/core/plans/plan.js';
import { parseAnswer } from '../src/core/prompts/parse.js';
import { sealToolToSpec, toolsFromOpenAI } from '../src/core/plans/tools.js';
import type { ToolSpec } from '../src/core/base/types.js';
import { FUZZ_TARGETS, runTarget } from './fuzz-targets.js';
import { wordAxisEncoder } from './helpers.js';
import '../src/methods.js'; // the paper's methods, as an app that uses them imports them

/** Fuzz cases per target; stated in docs/security.md (from docs/results.json's figures.fuzz-cases-ci). */
export const FUZZ_RUNS = 10_000;

/** True when `f` returns, or throws a DtdrError; anything else fails the property. */
function onlyTypedErrors(f: () => unknown): boolean {
  try {
    f();
    return true;
  } catch (e) {
    if (DtdrError.isInstance(e)) return true;
    throw e;
  }
}

const TOOLS: ToolSpec[] = [
  { name: 'files_search', description: 'search files' },
  { name: 'contacts_search', description: 'find a contact' },
  { name: 'email_send', description: 'send an email' },
];
const encoder = wordAxisEncoder(['search', 'files', 'find', 'contact', 'send', 'email']);
const tinyPlans = [
  chainPlan('1', 'email the file', ['files_search', 'email_send']),
  chainPlan('2', 'find a contact and email them', ['contacts_search', 'email_send']),
];

// Lines that look like data.jsonl: mostly plausible records, sometimes broken.
const taskNode = fc.record(
  {
    task: fc.oneof(fc.constantFrom('a', 'b', 'c', 'END', ''), fc.string()),
    arguments: fc.option(fc.jsonValue(), { nil: undefined }),
  },
  { requiredKeys: [] },
);
const planRecord = fc.record(
  {
    id: fc.oneof(fc.string(), fc.integer(), fc.constant(null)),
    user_request: fc.oneof(fc.string(), fc.constant(''), fc.integer()),
    task_nodes: fc.oneof(fc.array(taskNode, { maxLength: 5 }), fc.jsonValue()),
    task_links: fc.oneof(
      fc.array(
        fc.record(
          {
            source: fc.oneof(fc.constantFrom('a', 'b', 'c'), fc.string()),
            target: fc.oneof(fc.constantFrom('a', 'b', 'c'), fc.string()),
          },
          { requiredKeys: [] },
        ),
        { maxLength: 5 },
      ),
      fc.jsonValue(),
    ),
  },
  { requiredKeys: [] },
);
const jsonlText = fc
  .array(
    fc.oneof(
      planRecord.map((r) => JSON.stringify(r)),
      fc.string(),
      fc.jsonValue().map((v) => JSON.stringify(v)),
    ),
    { maxLength: 6 },
  )
  .map((lines) => lines.join('\n'));

describe(`fuzzing the readers, ${FUZZ_RUNS.toLocaleString('en')} cases each`, () => {
  it('data.jsonl', () => {
    fc.assert(
      fc.property(jsonlText, fc.boolean(), (text, allowEmpty) =>
        onlyTypedErrors(() => parsePlans(text, 'data.jsonl', { allowEmpty })),
      ),
      { numRuns: FUZZ_RUNS, seed: 1 },
    );
  });

  it('tool_desc.json and split_ids.json', () => {
    const text = fc.oneof(
      fc.string(),
      fc.jsonValue().map((v) => JSON.stringify(v)),
      fc
        .record({
          nodes: fc.array(
            fc.record({ id: fc.oneof(fc.string(), fc.integer()), desc: fc.jsonValue() }, { requiredKeys: [] }),
          ),
        })
        .map((v) => JSON.stringify(v)),
    );
    fc.assert(
      fc.property(
        text,
        (t) => onlyTypedErrors(() => parseToolDescriptions(t)) && onlyTypedErrors(() => parseSplitIds(t)),
      ),
      { numRuns: FUZZ_RUNS, seed: 2 },
    );
  });

  it('OpenAI tool lists, MCP-shaped tool lists and Seal-Tools records', () => {
    const tool = fc.oneof(
      fc.record(
        {
          type: fc.constant('function'),
          function: fc.record(
            { name: fc.oneof(fc.string(), fc.jsonValue()), description: fc.jsonValue(), parameters: fc.jsonValue() },
            { requiredKeys: [] },
          ),
        },
        { requiredKeys: [] },
      ),
      fc.record(
        { name: fc.oneof(fc.string(), fc.jsonValue()), description: fc.jsonValue(), inputSchema: fc.jsonValue() },
        { requiredKeys: [] },
      ),
      fc.jsonValue(),
    );
    fc.assert(
      fc.property(
        fc.oneof(fc.array(tool, { maxLength: 5 }), fc.jsonValue()),
        fc.jsonValue(),
        (list, seal) => onlyTypedErrors(() => toolsFromOpenAI(list)) && onlyTypedErrors(() => sealToolToSpec(seal)),
      ),
      { numRuns: FUZZ_RUNS, seed: 3 },
    );
  });

  it('model answers in every format (strings and arbitrary JSON)', () => {
    const answer = fc.oneof(
      fc.string(),
      fc.jsonValue(),
      fc.string().map((s) => `<tool_call>${s}</tool_call>`),
      fc.jsonValue().map((v) => `<tool_call>${JSON.stringify(v)}</tool_call>`),
      fc.string().map((s) => `Action: ${s}\nAction Input: ${s}`),
    );
    fc.assert(
      fc.property(fc.constantFrom('openai', 'hermes', 'react' as const), answer, (format, a) =>
        ['call', 'end', 'error'].includes(parseAnswer(format, a).kind),
      ),
      { numRuns: FUZZ_RUNS, seed: 4 },
    );
  });

  it('UTF-8 (the binary header codec): agrees with TextEncoder and round-trips', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary' }), (s) => {
        const bytes = utf8Encode(s);
        return (
          Buffer.from(bytes).equals(Buffer.from(new TextEncoder().encode(s))) &&
          utf8Decode(bytes) === new TextDecoder().decode(bytes)
        );
      }),
      { numRuns: FUZZ_RUNS, seed: 5 },
    );
  });
});

describe(`fuzzing the model loaders, ${FUZZ_RUNS.toLocaleString('en')} cases each`, () => {
  let json: Record<string, unknown>;
  let bytes: Uint8Array;
  beforeAll(async () => {
    const model = await Dtdr.train({ method: 'dtdr-c', tools: TOOLS, plans: tinyPlans, encoder });
    json = model.toJSON() as unknown as Record<string, unknown>;
    bytes = model.toBinary();
  });

  it('v1 and v2 JSON artifacts with fields replaced by arbitrary values', () => {
    const keys = [
      'format',
      'version',
      'method',
      'encoder',
      'tools',
      'labels',
      'training',
      'examples',
      'state',
      'toolsHash',
      'toolChanges',
      'learning',
    ];
    fc.assert(
      fc.property(fc.constantFrom(...keys), fc.jsonValue(), fc.constantFrom(1, 2, 3), (key, value, version) => {
        const broken = { ...JSON.parse(JSON.stringify(json)), version, [key]: value };
        const r = safeLoadModel(broken, encoder, 'model.json');
        return r.ok || (DtdrError.isInstance(r.error) && r.error.code === 'artifact') || r.error.code === 'encoder';
      }),
      { numRuns: FUZZ_RUNS, seed: 6 },
    );
  });

  it('v2 binary files truncated, bit-flipped or spliced', () => {
    fc.assert(
      fc.property(
        fc.nat({ max: bytes.length - 1 }),
        fc.nat({ max: 255 }),
        fc.constantFrom('flip', 'cut', 'splice'),
        (at, byte, how) => {
          const damaged = how === 'cut' ? bytes.slice(0, at) : bytes.slice();
          if (how === 'flip') damaged[at] ^= 1 << (byte % 8);
          if (how === 'splice') damaged[at] = byte;
          if (how !== 'cut' && damaged[at] === bytes[at]) return true;
          try {
            decodeBinaryModel(damaged, 'model.dtdr');
            return false; // every change must be caught by the checksum
          } catch (e) {
            return DtdrError.isInstance(e);
          }
        },
      ),
      { numRuns: FUZZ_RUNS, seed: 7 },
    );
  });
});

describe(`structure-aware fuzzing, ${FUZZ_RUNS.toLocaleString('en')} seeded cases per target (the long run: npm run check -- fuzz)`, () => {
  // Saved models of every method (trained, learned, extended, with a tool removed) have numbers
  // set to NaN, ±Infinity, 1e308, −1, huge integers, strings, null…, fields dropped and arrays
  // shortened, lengthened or reordered; binary files get broken section tables with a correct
  // checksum. A model that loads must then rank with finite probabilities. Per-case times are
  // printed, never asserted.
  it.each(FUZZ_TARGETS.map((t) => [t.name, t] as const))(
    '%s: nothing but DtdrErrors (and a model that loads ranks with finite probabilities)',
    async (_, target) => {
      const report = await runTarget(target, FUZZ_RUNS, 20);
      console.log(
        `fuzz ${report.target}: ${report.cases} cases, max ${report.maxMs.toFixed(2)} ms, p99 ${report.p99Ms.toFixed(3)} ms per case, the 5 slowest re-run: max ${report.slowestRetimedMs.toFixed(2)} ms`,
      );
      expect(report.failures).toEqual([]);
      expect(report.cases).toBe(FUZZ_RUNS);
    },
    120_000,
  );
});

describe('bounds', () => {
  let model: Dtdr;
  beforeAll(async () => {
    model = await Dtdr.train({ tools: TOOLS, plans: tinyPlans, encoder });
  });

  it('a 1 MB query is refused with a clear error, a 64 KB one is answered', async () => {
    const e = await model.retrieve('email '.repeat(200_000)).catch((x: unknown) => x);
    expect(DtdrError.isInstance(e) && e.field).toBe('query');
    expect((await model.retrieve('email '.repeat(10_000))).candidates.length).toBeGreaterThan(0);
  });

  it('a 10,000-call history is answered', async () => {
    const history = Array.from({ length: 10_000 }, (_, i) => TOOLS[i % 3].name);
    expect((await model.retrieve('email the file', history)).candidates.length).toBeGreaterThan(0);
  });

  it('100,000 tools train (from their descriptions) and rank', async () => {
    const many = Array.from({ length: 100_000 }, (_, i) => ({
      name: `tool_${i}`,
      description: i % 1000 === 7 ? 'send an email' : 'search files',
    }));
    const m = await Dtdr.train({ method: 'bm25', tools: many });
    const r = await m.retrieve('send an email');
    expect(r.candidates[0].tool).toMatch(/^tool_\d*7$/);
  }, 60_000);
});

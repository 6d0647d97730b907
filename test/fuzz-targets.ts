/**
 * The fuzz targets shared by test/fuzz.test.ts (10,000 cases each, in CI) and scripts/check/fuzz.ts (a
 * longer run with --runs and --seed): the JSON and binary model loaders fed structure-aware
 * mutations of real saved models (every loaded model is then asked to rank, and must rank with
 * finite probabilities), the dataset reader and every answer parser. A case passes when it
 * returns or throws a DtdrError; anything else is a failure. Each case is timed.
 */
import { sha256 } from '@noble/hashes/sha2';
import fc from 'fast-check';
import { Dtdr } from '../src/core/dtdr.js';
import { DtdrError } from '../src/core/base/errors.js';
import {
  datasetFromFiles,
  parsePlans,
  parseSplitIds,
  parseToolDescriptions,
  parseToolList,
} from '../src/core/plans/dataset.js';
import { encodeBinaryModel } from '../src/core/model/binary.js';
import { chainPlan } from '../src/core/plans/plan.js';
import { parseAnswer, parseHermes, parseOpenAI, parseReAct, validateCall } from '../src/core/prompts/parse.js';
import { seededRandom } from '../src/core/base/random.js';
import type { MethodName } from '../src/core/retrieval/types.js';
import type { JsonSchema, ToolSpec } from '../src/core/base/types.js';
import { wordAxisEncoder } from './helpers.js';

export const FUZZ_TOOLS: ToolSpec[] = [
  {
    name: 'files_search',
    description: 'search files',
    parameters: { type: 'object', properties: { query: { type: 'string' } }, required: ['query'] },
  },
  { name: 'contacts_search', description: 'find a contact' },
  {
    name: 'email_send',
    description: 'send an email',
    parameters: { type: 'object', properties: { to: { type: 'string' }, n: { type: 'integer', minimum: 0 } } },
  },
];
export const FUZZ_WORDS = ['search', 'files', 'find', 'contact', 'send', 'email'];
export const fuzzEncoder = wordAxisEncoder(FUZZ_WORDS);
const PLANS = [
  chainPlan('1', 'email the file', ['files_search', 'email_send']),
  chainPlan('2', 'find a contact and email them', ['contacts_search', 'email_send']),
  chainPlan('3', 'search files', ['files_search']),
  chainPlan('4', 'find a contact', ['contacts_search']),
  chainPlan('5', 'find the file and send it', ['files_search', 'contacts_search', 'email_send']),
];
const METHODS: MethodName[] = ['dtdr-g', 'dtdr-c', 'dtdr-cb', 'dtdr-h', 'dtdr-l', 'lr', 'qts', 'dr', 'bm25', 'random'];

type Random = () => number;
type Json = unknown;

export interface FuzzTarget {
  name: string;
  /** Builds what the cases need (trained models); run once, not timed. */
  setup?(): Promise<void>;
  /** One case; `random` is seeded per case. Returns or throws. */
  run(random: Random, index: number): unknown;
}

export interface FuzzReport {
  target: string;
  cases: number;
  /** Cases that threw something other than a DtdrError (or ranked with a non-finite probability): the first few. */
  failures: { index: number; error: string }[];
  failureCount: number;
  maxMs: number;
  p99Ms: number;
  /**
   * The five slowest cases run again (best of 3 each), the largest of those: a slow first run that
   * is fast again was the machine (a GC pause, another process), not the input.
   */
  slowestRetimedMs: number;
}

/** Case i's own seeded generator: any case can be run again alone. */
const caseRandom = (seed: number, i: number) => seededRandom((seed * 1_000_003 + i * 7919 + 1) >>> 0);

/** Runs `runs` cases of `target` from `seed`, timing each. */
export async function runTarget(target: FuzzTarget, runs: number, seed: number): Promise<FuzzReport> {
  await target.setup?.();
  const times = new Float64Array(runs);
  const failures: FuzzReport['failures'] = [];
  let failureCount = 0;
  for (let i = 0; i < runs; i++) {
    const random = caseRandom(seed, i);
    const t0 = performance.now();
    try {
      await target.run(random, i);
    } catch (e) {
      if (!DtdrError.isInstance(e)) {
        failureCount++;
        if (failures.length < 5)
          failures.push({
            index: i,
            error:
              e instanceof Error
                ? `${e.name}: ${e.message}\n${e.stack?.split('\n').slice(1, 4).join('\n')}`
                : String(e),
          });
      }
    }
    times[i] = performance.now() - t0;
  }
  const sorted = Float64Array.from(times).sort();
  const slowest = Array.from(times.keys())
    .sort((a, b) => times[b] - times[a])
    .slice(0, 5);
  let slowestRetimedMs = 0;
  for (const i of slowest) {
    let best = Infinity;
    for (let k = 0; k < 3; k++) {
      const t0 = performance.now();
      try {
        await target.run(caseRandom(seed, i), i);
      } catch {
        // Already counted above.
      }
      best = Math.min(best, performance.now() - t0);
    }
    slowestRetimedMs = Math.max(slowestRetimedMs, best);
  }
  return {
    target: target.name,
    cases: runs,
    failures,
    failureCount,
    maxMs: sorted[runs - 1] ?? 0,
    p99Ms: sorted[Math.min(runs - 1, Math.floor(runs * 0.99))] ?? 0,
    slowestRetimedMs,
  };
}

// ——— structure-aware mutation of a saved model ———

const pick = <T>(random: Random, items: readonly T[]): T => items[Math.floor(random() * items.length)];
const DELETE = Symbol('delete');
const ODD_VALUES: unknown[] = [
  NaN,
  Infinity,
  -Infinity,
  -1,
  0,
  -0,
  1,
  2,
  3,
  9999,
  -3,
  0.5,
  1.5,
  2 ** 31,
  2 ** 32 + 1,
  2 ** 53 + 2,
  1e308,
  -1e308,
  1e-320,
  'abc',
  '1',
  '',
  '0.5',
  null,
  true,
  false,
  [],
  {},
  [1, 2],
  [[0, 1]],
  { a: 1 },
  'END',
  'files_search',
  DELETE,
];

/** Every path (list of keys) to a value in `v`. */
function paths(v: Json, prefix: (string | number)[] = [], out: (string | number)[][] = []): (string | number)[][] {
  out.push(prefix);
  if (Array.isArray(v)) v.forEach((x, i) => paths(x, [...prefix, i], out));
  else if (v && typeof v === 'object') for (const [k, x] of Object.entries(v)) paths(x, [...prefix, k], out);
  return out;
}

function mutateAt(root: Json, path: (string | number)[], random: Random): Json {
  if (path.length === 0)
    return pick(
      random,
      ODD_VALUES.filter((x) => x !== DELETE),
    );
  if (!root || typeof root !== 'object') return root;
  let parent = root as Record<string | number, unknown>;
  for (const key of path.slice(0, -1)) {
    parent = parent?.[key] as Record<string | number, unknown>;
    if (!parent || typeof parent !== 'object') return root;
  }
  const key = path[path.length - 1];
  // An earlier mutation may have turned an object into an array: its named keys (a section's "length") are gone.
  if (!parent || typeof parent !== 'object' || (Array.isArray(parent) && typeof key !== 'number')) return root;
  const current = parent[key];
  const op = random();
  if (Array.isArray(current) && op < 0.35) {
    // Change the array's length or order.
    const how = Math.floor(random() * 6);
    if (how === 0) current.pop();
    else if (how === 1) current.push(current.length > 0 ? structuredClone(current[current.length - 1]) : 0);
    else if (how === 2) current.shift();
    else if (how === 3) current.length = 0;
    else if (how === 4 && current.length > 0)
      current.splice(
        Math.floor(random() * current.length),
        0,
        structuredClone(current[Math.floor(random() * current.length)]),
      );
    else current.reverse();
    return root;
  }
  if (typeof current === 'number' && op < 0.6) {
    // A near miss: off by one, negated, scaled, or a large integer.
    parent[key] = pick(random, [
      current + 1,
      current - 1,
      -current,
      current * 1e6,
      current + 0.5,
      Math.round(current) + 2 ** 31,
      current * NaN,
    ]);
    return root;
  }
  const value = pick(random, ODD_VALUES);
  if (value === DELETE) {
    if (Array.isArray(parent)) parent.splice(key as number, 1);
    else delete parent[key];
  } else parent[key] = structuredClone(value);
  return root;
}

/** `base` with 1–3 random mutations (paths into the saved model, weighted to the numeric state). */
function mutated(base: Json, allPaths: (string | number)[][], random: Random): Json {
  const copy = structuredClone(base);
  let root = copy;
  const n = 1 + Math.floor(random() * 3);
  for (let k = 0; k < n; k++) root = mutateAt(root, pick(random, allPaths), random);
  return root;
}

interface SavedModel {
  json: Json;
  paths: (string | number)[][];
  header: Json;
  headerPaths: (string | number)[][];
  bytes: Uint8Array;
}
let models: SavedModel[] | undefined;
/** The saved models the loader targets mutate (after setup), for reproducing a case. */
export const fuzzModels = (): { json: unknown }[] | undefined => models;

async function savedModels(): Promise<SavedModel[]> {
  if (models) return models;
  const out: SavedModel[] = [];
  for (const method of METHODS) {
    const model = await Dtdr.train({ method, tools: FUZZ_TOOLS, plans: PLANS, encoder: fuzzEncoder, seed: 1 });
    await model.learn([chainPlan('l1', 'search files and email them', ['files_search', 'email_send'])]);
    if (method !== 'dtdr-g') await model.addTools([{ name: 'notes_write', description: 'write a note' }]);
    await model.removeTools(['contacts_search']);
    out.push(savedModel(model));
  }
  // DTDR-G with thresholds from new sequences: its saved sequences and their kept held-out steps.
  const bySequence = await Dtdr.train({
    tools: FUZZ_TOOLS,
    plans: PLANS,
    encoder: fuzzEncoder,
    seed: 1,
    gated: { experimental: { thresholdsFrom: 'sequence' } },
  });
  await bySequence.learn([chainPlan('l1', 'search files and email them', ['files_search', 'email_send'])]);
  await bySequence.learn([chainPlan('l2', 'email a contact the file', ['contacts_search', 'files_search'])]);
  out.push(savedModel(bySequence));
  return (models = out);
}

function savedModel(model: Dtdr): SavedModel {
  const json = JSON.parse(JSON.stringify(model.toJSON()));
  const bytes = model.toBinary();
  const header = readHeader(bytes);
  return { json, paths: paths(json), header, headerPaths: paths(header), bytes };
}

function readHeader(bytes: Uint8Array): Json {
  const length = new DataView(bytes.buffer, bytes.byteOffset).getUint32(12, true);
  return JSON.parse(new TextDecoder().decode(bytes.subarray(16, 16 + length)));
}

/** A binary model with `header` in place of its own, its sections kept and its checksum recomputed. */
export function withHeader(bytes: Uint8Array, header: Json): Uint8Array {
  return withHeaderText(bytes, JSON.stringify(header) ?? 'null');
}

/** withHeader for a header given as text (one JSON.stringify cannot write, e.g. nested 100,000 levels). */
export function withHeaderText(bytes: Uint8Array, headerText: string): Uint8Array {
  const oldLength = new DataView(bytes.buffer, bytes.byteOffset).getUint32(12, true);
  const sections = bytes.subarray(Math.ceil((16 + oldLength) / 8) * 8, bytes.length - 32);
  const text = new TextEncoder().encode(headerText);
  const start = Math.ceil((16 + text.length) / 8) * 8;
  const out = new Uint8Array(start + sections.length + 32);
  out.set(bytes.subarray(0, 12));
  new DataView(out.buffer).setUint32(12, text.length, true);
  out.set(text, 16);
  out.set(sections, start);
  out.set(sha256(out.subarray(0, out.length - 32)), out.length - 32);
  return out;
}

/** Loads `saved`; if it loads, it must rank (finite probabilities) for a request and a history of its own tools. */
async function loadAndRank(saved: unknown, random: Random): Promise<void> {
  const model = Dtdr.load(saved, fuzzEncoder, 'model');
  const names = model.tools.map((t) => t.name);
  const history = names.length === 0 ? [] : Array.from({ length: Math.floor(random() * 3) }, () => pick(random, names));
  const r = await model.retrieve(pick(random, ['email the file', 'find a contact', 'write a note', '']), history);
  const p = r.ranking.probabilities;
  for (let i = 0; i < p.length; i++)
    if (!Number.isFinite(p[i]))
      throw new Error(`loaded, then ranked with probability ${p[i]} for ${r.ranking.labels[i]}`);
  if (!r.candidates.every((c) => Number.isFinite(c.probability)))
    throw new Error('a candidate has a non-finite probability');
}

export const jsonModelTarget: FuzzTarget = {
  name: 'JSON model loader',
  async setup() {
    await savedModels();
  },
  run(random) {
    const base = pick(random, models!);
    const artifact = mutated(base.json, base.paths, random);
    return loadAndRank(artifact, random);
  },
};

export const binaryModelTarget: FuzzTarget = {
  name: 'binary model loader',
  async setup() {
    await savedModels();
  },
  run(random) {
    const base = pick(random, models!);
    const how = random();
    let bytes: Uint8Array;
    if (how < 0.3)
      bytes = encodeBinaryModel(mutated(base.json, base.paths, random)); // a valid container of a broken model
    else if (how < 0.6)
      bytes = withHeader(base.bytes, mutated(base.header, base.headerPaths, random)); // a broken section table or body, checksum right
    else if (how < 0.75)
      bytes = withHeader(base.bytes, withSectionReferences(base.header, random)); // sections referenced many times, or overlapping
    else if (how < 0.85)
      bytes = withHeaderText(base.bytes, nestedHeader(base.header, base.headerPaths, random)); // a part of the header nested deep
    else {
      bytes = base.bytes.slice(0, random() < 0.3 ? Math.floor(random() * base.bytes.length) : base.bytes.length);
      if (bytes.length > 0) bytes[Math.floor(random() * bytes.length)] ^= 1 << Math.floor(random() * 8);
    }
    return loadAndRank(bytes, random);
  },
};

/**
 * The header with section-reference mutations: a section referenced again (up to 5,000 times,
 * anywhere in the body), a section table entry copied onto another's bytes or widened to overlap
 * the next, or a section's length grown.
 */
function withSectionReferences(header: Json, random: Random): Json {
  const h = structuredClone(header) as {
    sections: { offset: number; length: number; rows: number; dtype: string }[];
    body: Record<string, unknown>;
  };
  if (h.sections.length === 0) return h;
  const i = Math.floor(random() * h.sections.length);
  const s = h.sections[i];
  const ref = () => ({ $dtdrSection: i, ...(s.rows ? { $dtdrWidth: s.rows } : {}) });
  const how = random();
  if (how < 0.4) {
    const count = pick(random, [2, 3, 10, 1000, 5000]);
    h.body[pick(random, ['extra', 'state', 'tools', 'examples'])] = Array.from({ length: count }, ref);
  } else if (how < 0.6) {
    h.sections.push({ ...s, offset: pick(random, h.sections).offset });
    h.body.extra = { $dtdrSection: h.sections.length - 1, ...(s.rows ? { $dtdrWidth: s.rows } : {}) };
  } else if (how < 0.8) {
    s.length = s.length + pick(random, [1, 2, 8, 1000, 2 ** 20]);
  } else {
    h.body.extra = [ref(), { nested: ref() }];
  }
  return h;
}

/** The header as text with one value (the body, or any path in it) nested 2 to 200,000 levels deep in arrays or objects. */
function nestedHeader(header: Json, headerPaths: (string | number)[][], random: Random): string {
  const depth = pick(random, [2, 63, 97, 1000, 200_000]);
  const path = pick(random, headerPaths);
  const h = structuredClone(header) as Record<string | number, unknown>;
  const mark = '"DTDR_FUZZ_NESTED"';
  let parent = h as Record<string | number, unknown> | undefined;
  for (const key of path.slice(0, -1)) parent = parent?.[key] as Record<string | number, unknown> | undefined;
  const text = (inner: string) =>
    random() < 0.5
      ? `${'['.repeat(depth)}${inner}${']'.repeat(depth)}`
      : `${'{"a":'.repeat(depth)}${inner}${'}'.repeat(depth)}`;
  if (path.length === 0 || !parent || typeof parent !== 'object') return text(JSON.stringify(h));
  const key = path[path.length - 1];
  const inner = JSON.stringify(parent[key]) ?? 'null';
  parent[key] = 'DTDR_FUZZ_NESTED';
  return JSON.stringify(h).replace(mark, text(inner));
}

// ——— dataset reader and answer parsers (fast-check generators, drawn with the case's seed) ———

const taskNode = fc.record(
  {
    task: fc.oneof(fc.constantFrom('a', 'b', 'c', 'END', '', 'a b', 'x<y'), fc.string()),
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
            source: fc.oneof(fc.constantFrom('a', 'b', 'c'), fc.string(), fc.integer()),
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
  .tuple(
    fc.array(
      fc.oneof(
        planRecord.map((r) => JSON.stringify(r)),
        fc.string(),
        fc.jsonValue().map((v) => JSON.stringify(v)),
      ),
      { maxLength: 6 },
    ),
    fc.constantFrom('\n', '\r\n'),
  )
  .map(([lines, sep]) => lines.join(sep));
const toolDescText = fc.oneof(
  fc.string(),
  fc.jsonValue().map((v) => JSON.stringify(v)),
  fc
    .record({
      nodes: fc.array(
        fc.record(
          {
            id: fc.oneof(fc.constantFrom('a', 'b', 'c'), fc.string(), fc.integer()),
            desc: fc.oneof(fc.string(), fc.jsonValue()),
          },
          { requiredKeys: [] },
        ),
        { maxLength: 4 },
      ),
    })
    .map((v) => JSON.stringify(v)),
);
const splitText = fc.oneof(
  fc.string(),
  fc.jsonValue().map((v) => JSON.stringify(v)),
  fc
    .record({ test_ids: fc.array(fc.oneof(fc.string(), fc.integer()), { maxLength: 4 }) })
    .map((v) => JSON.stringify(v)),
);
const datasetCase = fc.record({
  data: fc.option(jsonlText, { nil: undefined }),
  toolDescriptions: fc.option(toolDescText, { nil: undefined }),
  splitIds: fc.option(splitText, { nil: undefined }),
  allowEmpty: fc.boolean(),
});

/** One value of `arb` drawn with a seed from `random`. */
function draw<T>(arb: fc.Arbitrary<T>, random: Random): T {
  return fc.sample(arb, { seed: Math.floor(random() * 2 ** 31), numRuns: 1 })[0];
}

export const datasetTarget: FuzzTarget = {
  name: 'dataset reader',
  run(random) {
    const c = draw(datasetCase, random);
    const attempt = (f: () => unknown) => {
      try {
        f();
      } catch (e) {
        if (!DtdrError.isInstance(e)) throw e;
      }
    };
    if (c.data !== undefined) attempt(() => parsePlans(c.data!, 'data.jsonl', { allowEmpty: c.allowEmpty }));
    if (c.toolDescriptions !== undefined) {
      attempt(() => parseToolDescriptions(c.toolDescriptions!));
      attempt(() => parseToolList(c.toolDescriptions!));
    }
    if (c.splitIds !== undefined) attempt(() => parseSplitIds(c.splitIds!));
    datasetFromFiles({
      name: 'fuzz',
      ...(c.data !== undefined ? { data: { text: c.data, file: 'data.jsonl' } } : {}),
      ...(c.toolDescriptions !== undefined
        ? { toolDescriptions: { text: c.toolDescriptions, file: 'tool_desc.json' } }
        : {}),
      ...(c.splitIds !== undefined ? { splitIds: { text: c.splitIds, file: 'split_ids.json' } } : {}),
    });
  },
};

const callJson = fc.record(
  {
    name: fc.oneof(fc.constantFrom('files_search', 'email_send', 'END', 'nope', ''), fc.string(), fc.jsonValue()),
    arguments: fc.oneof(
      fc.jsonValue(),
      fc.jsonValue().map((v) => JSON.stringify(v)),
      fc.record(
        { query: fc.oneof(fc.string(), fc.integer()), to: fc.jsonValue(), n: fc.jsonValue() },
        { requiredKeys: [] },
      ),
    ),
  },
  { requiredKeys: [] },
);
const answerText = fc.oneof(
  fc.string(),
  fc.string({ unit: 'binary' }),
  fc.jsonValue().map((v) => JSON.stringify(v)),
  callJson.map((c) => `<tool_call>${JSON.stringify(c)}</tool_call>`),
  fc
    .tuple(callJson, fc.string())
    .map(([c, s]) => `<think>${s}</think>\n<tool_call>\n${JSON.stringify(c)}\n</tool_call>${s}`),
  fc.tuple(fc.string(), fc.string()).map(([a, b]) => `Thought: ${b}\nAction: ${a}\nAction Input: ${b}`),
  callJson.map(
    (c) =>
      `Action: ${typeof c.name === 'string' ? c.name : JSON.stringify(c.name)}\nAction Input: ${JSON.stringify(c.arguments)}\nObservation: x`,
  ),
  callJson.map((c) => `\`\`\`json\n${JSON.stringify(c)}\n\`\`\``),
  fc
    .array(
      fc.constantFrom(
        '<tool_call>',
        '</tool_call>',
        '<think>',
        '</think>',
        'Action:',
        'Action Input:',
        '{',
        '}',
        '"',
        '\n',
        'END',
        'Final Answer',
      ),
      { maxLength: 30 },
    )
    .map((parts) => parts.join('')),
);
const openAIAnswer = fc.oneof(
  answerText,
  fc.jsonValue(),
  fc.record(
    {
      tool_calls: fc.array(fc.record({ function: callJson }, { requiredKeys: [] }), { maxLength: 3 }),
      content: fc.option(fc.string()),
    },
    { requiredKeys: [] },
  ),
  fc.array(callJson, { maxLength: 3 }),
);
const parserCase = fc.record({
  text: answerText,
  openai: openAIAnswer,
  format: fc.constantFrom<'openai' | 'hermes' | 'react'>('openai', 'hermes', 'react'),
  allowed: fc.option(fc.subarray(['files_search', 'email_send', 'contacts_search', 'END']), { nil: undefined }),
  check: fc.boolean(),
});

export const parserTarget: FuzzTarget = {
  name: 'answer parsers',
  run(random) {
    const c = draw(parserCase, random);
    const answers = [
      parseHermes(c.text),
      parseReAct(c.text),
      parseOpenAI(c.openai),
      parseAnswer(c.format, c.text),
      parseAnswer(c.format, c.openai),
    ];
    for (const a of answers) {
      if (!['call', 'end', 'error'].includes(a.kind)) throw new Error(`parser answered kind ${String(a.kind)}`);
      const v = validateCall(a, FUZZ_TOOLS, c.allowed, { checkArguments: c.check });
      if (!['call', 'end', 'error'].includes(v.kind)) throw new Error(`validateCall answered kind ${String(v.kind)}`);
    }
  },
};

/**
 * Tool schemas as apps and MCP servers may write them, hostile ones included (issue 44, M-d):
 * patterns and patternProperties keys built from overlapping atoms and quantifiers (valid or not),
 * local $ref fan-outs through allOf/anyOf/oneOf, formats, lengths, enums and required lists.
 */
const patternText = fc
  .array(
    fc.constantFrom(
      'a',
      'b',
      '.',
      '\\s',
      '\\d',
      '[a-z]',
      '[^@]',
      '(',
      ')',
      '(?:',
      '|',
      '*',
      '+',
      '?',
      '{2,}',
      '{0,3}',
      '^',
      '$',
      '\\1',
      '-',
    ),
    { maxLength: 12 },
  )
  .map((parts) => parts.join(''));
const leafSchema: fc.Arbitrary<Json> = fc.oneof(
  fc.constant({}),
  fc.record({ type: fc.constantFrom('string', 'number', 'integer', 'boolean', 'array', 'object', 'null') }),
  fc.record({ type: fc.constant('string'), pattern: patternText }),
  fc.record({ type: fc.constant('string'), minLength: fc.nat(20), maxLength: fc.nat(40) }),
  fc.record({ format: fc.constantFrom('url', 'email', 'uri', 'date-time', 'hostname', 'ipv6', 'regex', 'nonsense') }),
  fc.record({ enum: fc.array(fc.jsonValue({ maxDepth: 2 }), { maxLength: 6 }) }),
  fc.record({ const: fc.jsonValue({ maxDepth: 2 }) }),
);
const schemaCase = fc.record({
  root: fc.letrec<{ schema: Json }>((tie) => ({
    schema: fc.oneof(
      { depthSize: 'small', withCrossShrink: true },
      leafSchema,
      fc.record({
        type: fc.constant('object'),
        properties: fc.dictionary(fc.constantFrom('a', 'b', 'c'), tie('schema'), { maxKeys: 3 }),
        required: fc.array(fc.constantFrom('a', 'b', 'c', 'd'), { maxLength: 4 }),
      }),
      fc.record({
        type: fc.constant('object'),
        patternProperties: fc.dictionary(patternText, tie('schema'), { maxKeys: 2 }),
        additionalProperties: fc.oneof(fc.boolean(), tie('schema')),
      }),
      fc.record({ type: fc.constant('array'), items: tie('schema'), uniqueItems: fc.boolean(), minItems: fc.nat(3) }),
      fc.record({ allOf: fc.array(tie('schema'), { minLength: 1, maxLength: 3 }) }),
      fc.record({ anyOf: fc.array(tie('schema'), { minLength: 1, maxLength: 3 }) }),
      fc.record({ oneOf: fc.array(tie('schema'), { minLength: 1, maxLength: 3 }) }),
      fc.record({ not: tie('schema') }),
      fc.record({ $ref: fc.constantFrom('#/$defs/d0', '#/$defs/d3', '#/$defs/missing', '#') }),
    ),
  })).schema,
  fanOut: fc.nat(4),
  keyword: fc.constantFrom('allOf', 'anyOf', 'oneOf'),
  args: fc.jsonValue({ maxDepth: 4 }),
  text: fc.string({ unit: fc.constantFrom('a', 'b', ' ', '-', '@', '1', 'x'), maxLength: 200 }),
});

export const schemaTarget: FuzzTarget = {
  name: 'tool schemas and arguments',
  run(random) {
    const c = draw(schemaCase, random);
    // A chain of $defs, each applying the next twice: 2^fanOut subschemas for one value (kept small here:
    // test/hardening-inputs.test.ts runs the fan-outs that exhaust the budget).
    const $defs: Record<string, Json> = { [`d${c.fanOut}`]: c.root };
    for (let i = 0; i < c.fanOut; i++)
      $defs[`d${i}`] = { [c.keyword]: [{ $ref: `#/$defs/d${i + 1}` }, { $ref: `#/$defs/d${i + 1}` }] };
    const parameters = { type: 'object', properties: { v: c.root, s: { $ref: '#/$defs/d0' } }, $defs } as JsonSchema;
    const tools: ToolSpec[] = [{ name: 'hostile', description: 'a tool with a fuzzed schema', parameters }];
    for (const args of [
      { v: c.args, s: c.text },
      { v: c.text, s: c.args, [c.text]: c.args },
    ]) {
      const v = validateCall({ kind: 'call', call: { name: 'hostile', arguments: args }, warnings: [] }, tools);
      if (!['call', 'error'].includes(v.kind)) throw new Error(`validateCall answered kind ${String(v.kind)}`);
    }
  },
};

export const FUZZ_TARGETS: FuzzTarget[] = [
  jsonModelTarget,
  binaryModelTarget,
  datasetTarget,
  parserTarget,
  schemaTarget,
];

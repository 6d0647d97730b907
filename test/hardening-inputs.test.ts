/**
 * Hardening III (issue 44), inputs from elsewhere: tool results and arguments nested 200,000
 * levels deep reach prompts as bounded text (L1); hostile JSON Schemas and their arguments are
 * checked or refused in bounded time (M-d); model files that decode to far more than their size
 * are refused within a memory bound (M-e). Each case failed on ea5d34c.
 */
import { sha256 } from '@noble/hashes/sha2';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { Agent, ScriptedModel } from '../src/core/agent/agent.js';
import { Dtdr } from '../src/core/dtdr.js';
import { DtdrError } from '../src/core/base/errors.js';
import { NESTED_TOO_DEEP } from '../src/core/base/limits.js';
import { DECODE_MULTIPLE } from '../src/core/model/binary.js';
import { chainPlan } from '../src/core/plans/plan.js';
import { buildArgumentsPrompt, buildSelectionPrompt, type PromptFormat } from '../src/core/prompts/build.js';
import { validateCall, type ParsedAnswer } from '../src/core/prompts/parse.js';
import { isSafePattern } from '../src/core/prompts/schema-check.js';
import type { ToolSpec } from '../src/core/base/types.js';
import { ROOT, wordAxisEncoder } from './helpers.js';

const TOOLS: ToolSpec[] = [
  { name: 'files_search', description: 'search files' },
  { name: 'contacts_search', description: 'find a contact' },
  { name: 'email_send', description: 'send an email' },
];
const encoder = wordAxisEncoder(['search', 'files', 'find', 'contact', 'send', 'email']);
let model: Dtdr;

beforeAll(async () => {
  model = await Dtdr.train({
    tools: TOOLS,
    plans: [
      chainPlan('1', 'email the file', ['files_search', 'email_send']),
      chainPlan('2', 'find a contact and email them', ['contacts_search', 'email_send']),
    ],
    encoder,
    seed: 1,
  });
});

/** `levels` arrays (or objects) nested in one another around `leaf`. */
const deep = (levels: number, leaf: unknown = 1, object = false): unknown => {
  let v = leaf;
  for (let i = 0; i < levels; i++) v = object ? { a: v } : [v];
  return v;
};

describe('L1: a tool result or arguments nested 200,000 levels deep', () => {
  const FORMATS: PromptFormat[] = ['hermes', 'react', 'openai'];
  const cyclic: Record<string, unknown> = { name: 'loop' };
  cyclic.self = cyclic;
  const history = [
    { tool: 'files_search', arguments: deep(200_000, 'x', true) as Record<string, unknown>, result: deep(200_000) },
    { tool: 'contacts_search', arguments: { q: 'Anna' }, result: cyclic },
  ];

  it.each(FORMATS)('%s: both prompts show their first levels and a marker, as bounded text', (format) => {
    const selection = buildSelectionPrompt({
      query: 'email the file',
      history,
      tools: TOOLS,
      strategy: 'none',
      format,
    });
    const args = buildArgumentsPrompt({ query: 'email the file', history, tool: TOOLS[2], format });
    for (const prompt of [selection, args]) {
      expect(prompt.text).toContain(JSON.stringify(NESTED_TOO_DEEP));
      expect(prompt.text.length).toBeLessThan(10_000);
      // A shallow value is shown as before.
      expect(prompt.text).toContain('{"q":"Anna"}');
    }
  });

  it('the Agent, given a result that deep by its tool, goes on to its next step', async () => {
    const llm = new ScriptedModel([
      '<tool_call>{"name": "files_search", "arguments": {}}</tool_call>',
      '<tool_call>{"name": "files_search", "arguments": {}}</tool_call>',
      'END',
    ]);
    const agent = new Agent({
      retriever: model,
      model: llm,
      format: 'hermes',
      strategy: 'none',
      execute: async () => deep(200_000),
    });
    const run = await agent.run('email the file');
    expect(run.stopReason).toBe('end');
    expect(llm.requests[2].prompt).toContain(JSON.stringify(NESTED_TOO_DEEP));
  });
});

/**
 * The bound is a second for any schema of 64 KB or less on any arguments of 64 KB or less;
 * `npm run check -- stress-inputs` holds the code to it on a quiet machine. A test shares its
 * machine with the rest of the suite, so it asserts four times that: the old code took 20 s to
 * minutes on these inputs, so the test still tells them apart.
 */
const SCHEMA_BOUND_MS = 4000;
const KB64 = 64 * 1024;

/**
 * validateCall on a fresh copy of `parameters` (so the schema is prepared again: that counts too),
 * best of three runs (the machine is shared); what it answered, or the DtdrError it threw.
 */
function checkTimed(parameters: Record<string, unknown>, args: Record<string, unknown>) {
  expect(JSON.stringify(parameters).length).toBeLessThanOrEqual(KB64);
  expect(JSON.stringify(args).length).toBeLessThanOrEqual(KB64);
  let best = Infinity;
  let outcome: ParsedAnswer | DtdrError | undefined;
  for (let i = 0; i < 3; i++) {
    const tools: ToolSpec[] = [{ name: 'tag', description: 'tag', parameters: structuredClone(parameters) }];
    const started = performance.now();
    try {
      outcome = validateCall({ kind: 'call', call: { name: 'tag', arguments: args }, warnings: [] }, tools);
    } catch (error) {
      if (!DtdrError.isInstance(error)) throw error;
      outcome = error;
    }
    best = Math.min(best, performance.now() - started);
  }
  return { ms: best, outcome: outcome! };
}
const stringArg = (pattern: string, value: string) =>
  checkTimed({ type: 'object', properties: { s: { type: 'string', pattern } } }, { s: value });

describe('M-d: hostile JSON Schemas are checked or refused within the bound', () => {
  it.each([
    ['^a*a*a*a*a*a*b$', 'a'],
    ['^\\s*\\s*\\s*\\s*\\s*x$', ' '],
    ['a*a*b', 'a'],
  ])('stacked overlapping quantifiers %s: a 1,000-character value is not run, a short one is checked', (pattern, c) => {
    const long = stringArg(pattern, c.repeat(1000));
    expect(long.ms).toBeLessThan(SCHEMA_BOUND_MS);
    expect(long.outcome).toMatchObject({ kind: 'call' });
    expect(stringArg(pattern, c.repeat(5))).toMatchObject({
      outcome: { kind: 'error', message: expect.stringMatching(/s: String does not match pattern\./) },
    });
  });

  it('the exponential shapes are refused by the price check, ordinary patterns pass it', () => {
    for (const unsafe of ['^(a+)+$', '^(a|aa)*$', '(x)\\1', '^(a?a?)*$', '^((a|aa))+$', '^(\\s*x?)+$'])
      expect(isSafePattern(unsafe), unsafe).toBe(false);
    for (const safe of ['^[a-z]+-\\d+$', '^[^@]+@[^@]+\\.[a-z]{2,}$', '^(\\+\\d{1,3})?\\d{6,12}$', '^(ab)+$'])
      expect(isSafePattern(safe), safe).toBe(true);
    // An ordinary pattern still runs on values up to the input cap.
    expect(stringArg('^[a-z]+-\\d+$', `${'a'.repeat(900)}-1`).outcome).toMatchObject({ kind: 'call' });
    expect(stringArg('^[a-z]+-\\d+$', `${'a'.repeat(900)}-x`).outcome).toMatchObject({ kind: 'error' });
  });

  it('a patternProperties key with nested quantifiers refuses the schema with a DtdrError naming it', () => {
    const { ms, outcome } = checkTimed(
      { type: 'object', patternProperties: { '^(a+)+$': { type: 'string' } } },
      { [`${'a'.repeat(40)}!`]: 'x' },
    );
    expect(ms).toBeLessThan(SCHEMA_BOUND_MS);
    expect(DtdrError.isInstance(outcome) && outcome.code).toBe('options');
    expect((outcome as Error).message).toMatch(/patternProperties key "\^\(a\+\)\+\$" that can take exponential time/);
  });

  it('a polynomial patternProperties key on long property names is charged, then refused', () => {
    const { ms, outcome } = checkTimed(
      { type: 'object', patternProperties: { '^a*a*a*a*a*b$': { type: 'string' } } },
      Object.fromEntries(Array.from({ length: 60 }, (_, i) => [`${'a'.repeat(1000)}${i}`, 'x'])),
    );
    expect(ms).toBeLessThan(SCHEMA_BOUND_MS);
    expect(DtdrError.isInstance(outcome) && outcome.code).toBe('tool-call');
  });

  it('a 1.5 KB $ref/allOf fan-out (2^30 subschemas) is refused with a DtdrError, not run for minutes', () => {
    const $defs: Record<string, unknown> = { d30: { type: 'string', minLength: 1 } };
    for (let i = 0; i < 30; i++)
      $defs[`d${i}`] = { allOf: [{ $ref: `#/$defs/d${i + 1}` }, { $ref: `#/$defs/d${i + 1}` }] };
    const parameters = { type: 'object', properties: { s: { $ref: '#/$defs/d0' } }, $defs };
    expect(JSON.stringify(parameters).length).toBeLessThan(2000);
    const { ms, outcome } = checkTimed(parameters, { s: 'x' });
    expect(ms).toBeLessThan(SCHEMA_BOUND_MS);
    expect(DtdrError.isInstance(outcome) && outcome.code).toBe('tool-call');
    expect((outcome as Error).message).toMatch(/^checking arguments against "tag"'s parameters schema needs more than/);
  });

  it('an anyOf fan-out of 2^16 failing branches is a DtdrError, not a raw RangeError', () => {
    const $defs: Record<string, unknown> = { a16: { type: 'number' } };
    for (let i = 0; i < 16; i++)
      $defs[`a${i}`] = { anyOf: [{ $ref: `#/$defs/a${i + 1}` }, { $ref: `#/$defs/a${i + 1}` }] };
    const { ms, outcome } = checkTimed(
      { type: 'object', properties: { s: { $ref: '#/$defs/a0' } }, $defs },
      { s: 'x' },
    );
    expect(ms).toBeLessThan(SCHEMA_BOUND_MS);
    expect(DtdrError.isInstance(outcome) && outcome.code).toBe('tool-call');
  });

  it('keyword data the validator loops over (enum, required) is counted: 64 KB of each against 64 KB of arguments', () => {
    const enumCase = checkTimed(
      {
        type: 'object',
        properties: { v: { type: 'array', items: { enum: Array.from({ length: 9000 }, (_, i) => i) } } },
      },
      { v: Array(12_000).fill(-1) },
    );
    const requiredCase = checkTimed(
      {
        type: 'object',
        properties: {
          v: { type: 'array', items: { type: 'object', required: Array.from({ length: 7000 }, (_, i) => `k${i}`) } },
        },
      },
      { v: Array(20_000).fill({}) },
    );
    for (const { ms, outcome } of [enumCase, requiredCase]) {
      expect(ms).toBeLessThan(SCHEMA_BOUND_MS);
      expect(DtdrError.isInstance(outcome) && outcome.code).toBe('tool-call');
    }
  });

  it("format: 'url' (a regular expression that backtracks exponentially: seconds on 40 characters) is checked by the URL parser", () => {
    const parameters = { type: 'object', properties: { u: { type: 'string', format: 'url' } } };
    const hostile = checkTimed(parameters, { u: `http://${'a'.repeat(32)}!` });
    expect(hostile.ms).toBeLessThan(SCHEMA_BOUND_MS);
    expect(checkTimed(parameters, { u: 'https://example.org/a?b=c' }).outcome).toMatchObject({ kind: 'call' });
    expect(checkTimed(parameters, { u: 'not a url' }).outcome).toMatchObject({
      kind: 'error',
      message: expect.stringMatching(/u: String does not match format "url"/),
    });
  });

  it('ordinary arguments are checked as before: lengths, formats, required, nested objects', () => {
    const parameters = {
      type: 'object',
      required: ['to', 'items'],
      properties: {
        to: { type: 'string', format: 'email', minLength: 3, maxLength: 50 },
        items: { type: 'array', items: { type: 'object', properties: { n: { type: 'integer', minimum: 1 } } } },
      },
      additionalProperties: false,
    };
    const items = Array.from({ length: 2000 }, (_, i) => ({ n: i + 1 }));
    expect(checkTimed(parameters, { to: 'a@example.org', items }).outcome).toMatchObject({ kind: 'call' });
    const bad = checkTimed(parameters, { to: 'a@', items: [{ n: 0 }], extra: 1 }).outcome as ParsedAnswer;
    expect(bad.kind).toBe('error');
    const message = bad.kind === 'error' ? bad.message : '';
    expect(message).toMatch(/to: String length is not within 3 and 50 characters/);
    expect(message).toMatch(/items\/0\/n: 0 is less than 1/);
  });
});

/**
 * The bounds: a model file of 10 MB or less loads or is refused within 2 s and 200 MB more
 * memory. Memory is asserted as is; time at four times the bound, as for schemas (the exact bound:
 * `npm run check -- stress-inputs`), which the old code's +400–930 MB fails anyway.
 */
const LOAD_BOUND_MS = 8000;
const LOAD_BOUND_MB = 200;
const FILE_BYTES = 9.9e6;

/** A binary model with `header` (JSON text) and `sections` after it, checksummed as the encoder does. */
function binaryFile(headerText: string, sections: Uint8Array): Uint8Array {
  const text = new TextEncoder().encode(headerText);
  const start = Math.ceil((16 + text.length) / 8) * 8;
  const out = new Uint8Array(start + sections.length + 32);
  out.set(new TextEncoder().encode('DTDRMDL\0'));
  new DataView(out.buffer).setUint32(8, 2, true);
  new DataView(out.buffer).setUint32(12, text.length, true);
  out.set(text, 16);
  out.set(sections, start);
  out.set(sha256(out.subarray(0, out.length - 32)), out.length - 32);
  return out;
}

/** A small real model's header and sections, to craft files from. */
function parts(bytes: Uint8Array) {
  const length = new DataView(bytes.buffer, bytes.byteOffset).getUint32(12, true);
  const header = JSON.parse(new TextDecoder().decode(bytes.subarray(16, 16 + length))) as {
    sections: { offset: number; length: number; rows: number; dtype: string }[];
    body: Record<string, unknown>;
  };
  const sections = bytes.subarray(Math.ceil((16 + length) / 8) * 8, bytes.length - 32);
  return { header, sections };
}

/**
 * Loads `file` in a child process (test/load-memory.ts), up to three times until a load is within
 * both bounds: the best time and memory seen (the machine is shared, so a load can only look
 * slower or bigger than it is, never smaller), and what it answered.
 */
function loadInChild(file: string): { ms: number; extraMB: number; outcome: string } {
  const once = () =>
    JSON.parse(
      execFileSync(process.execPath, ['--import', 'tsx', join(ROOT, 'test', 'load-memory.ts'), file], {
        cwd: ROOT,
        encoding: 'utf8',
        maxBuffer: 1 << 20,
      })
        .trim()
        .split('\n')
        .at(-1)!,
    ) as { ms: number; extraMB: number; outcome: string };
  const best = once();
  for (let attempt = 1; attempt < 3 && (best.ms >= LOAD_BOUND_MS || best.extraMB >= LOAD_BOUND_MB); attempt++) {
    const next = once();
    best.ms = Math.min(best.ms, next.ms);
    best.extraMB = Math.min(best.extraMB, next.extraMB);
  }
  return best;
}

describe('M-e: a model file under 10 MB loads or is refused within 2 s and 200 MB', () => {
  const dir = mkdtempSync(join(tmpdir(), 'dtdr-load-'));
  const write = (name: string, bytes: Uint8Array | string) => {
    const path = join(dir, name);
    writeFileSync(path, bytes);
    return path;
  };
  /** A field the loader ignores, filled with `count` copies of `item` (JSON text), in a body of `bytes`. */
  const junkBody = (item: string, count: number, model: Dtdr) => {
    const json = JSON.stringify(model.toJSON());
    return `${json.slice(0, -1)},"notes":[${Array(count).fill(item).join(',')}]}`;
  };

  it.each([
    ['binary: one int32 section of 9.9 MB read as one-element rows', 'rows'],
    ['binary: 2.4 million [0] in a header field the loader ignores', 'arrays'],
    ['binary: 3 million {} in a header field the loader ignores', 'objects'],
    ['JSON: 2.4 million [0] in a field the loader ignores', 'json-arrays'],
    ['JSON: 3 million {} in a field the loader ignores', 'json-objects'],
  ])('%s: refused with a DtdrError within the bounds', (_, kind) => {
    const { header, sections } = parts(model.toBinary());
    let file: string;
    if (kind === 'rows') {
      const offset = Math.ceil(sections.length / 8) * 8;
      const count = Math.floor((FILE_BYTES - offset - 2000) / 4);
      const all = new Uint8Array(offset + count * 4);
      all.set(sections);
      header.sections.push({ dtype: 'i32', length: count, rows: 1, offset });
      header.body.notes = { $dtdrSection: header.sections.length - 1, $dtdrWidth: 1 };
      file = write('rows.dtdr', binaryFile(JSON.stringify(header), all));
    } else if (kind === 'arrays' || kind === 'objects') {
      const text = JSON.stringify(header);
      const junk = kind === 'arrays' ? Array(2_400_000).fill('[0]') : Array(3_000_000).fill('{}');
      file = write(`${kind}.dtdr`, binaryFile(`${text.slice(0, -2)},"notes":[${junk.join(',')}]}}`, sections));
    } else {
      file = write(
        `${kind}.json`,
        kind === 'json-arrays' ? junkBody('[0]', 2_400_000, model) : junkBody('{}', 3_000_000, model),
      );
    }
    const { ms, extraMB, outcome } = loadInChild(file);
    console.log(`load ${kind}: ${ms.toFixed(0)} ms, +${extraMB.toFixed(0)} MB: ${outcome.slice(0, 60)}`);
    expect(outcome).toMatch(/^DtdrError\(artifact\): .*decodes? to more memory than a file of \d+ bytes can hold/);
    expect(ms).toBeLessThan(LOAD_BOUND_MS);
    expect(extraMB).toBeLessThan(LOAD_BOUND_MB);
  });

  it.each(['rows', 'objects'])(
    'a 9.9 MB file of the most one-element %s the budget lets through loads within the bounds too',
    (kind) => {
      const { header, sections } = parts(model.toBinary());
      // What is left of the budget once the file's own bytes (padding, header text) are counted.
      const budget = (DECODE_MULTIPLE - 1) * FILE_BYTES + 4 * 2 ** 20 - 2e6;
      let bytes: Uint8Array;
      if (kind === 'rows') {
        // Each row counted at 8 + 160 bytes; the rest of the file is an unreferenced-free f64 section.
        const offset = Math.ceil(sections.length / 8) * 8;
        const count = Math.floor(budget / 168);
        const padding = Math.floor((FILE_BYTES - offset - count * 4 - 4000) / 8);
        const all = new Uint8Array(offset + count * 4 + 4 + padding * 8);
        all.set(sections);
        header.sections.push({ dtype: 'i32', length: count, rows: 1, offset });
        header.body.notes = { $dtdrSection: header.sections.length - 1, $dtdrWidth: 1 };
        header.sections.push({
          dtype: 'f64',
          length: padding,
          rows: 0,
          offset: Math.ceil((offset + count * 4) / 8) * 8,
        });
        header.body.padding = { $dtdrSection: header.sections.length - 1 };
        bytes = binaryFile(JSON.stringify(header), all);
      } else {
        // Each {} counted at 160 + 16 + 16 bytes; padded to the size with one long string.
        const count = Math.floor(budget / 192);
        const text = JSON.stringify(header);
        const junk = `"notes":[${Array(count).fill('{}').join(',')}],"padding":"${'x'.repeat(Math.max(0, FILE_BYTES - 3 * count - text.length - 100))}"`;
        bytes = binaryFile(`${text.slice(0, -2)},${junk}}}`, sections);
      }
      expect(bytes.length).toBeLessThanOrEqual(10e6);
      const { ms, extraMB, outcome } = loadInChild(write(`inside-${kind}.dtdr`, bytes));
      console.log(
        `load inside ${kind} (${bytes.length} B): ${ms.toFixed(0)} ms, +${extraMB.toFixed(0)} MB: ${outcome.slice(0, 60)}`,
      );
      expect(outcome).not.toMatch(/^RAW/);
      expect(outcome).not.toMatch(/decodes? to more memory/);
      expect(ms).toBeLessThan(LOAD_BOUND_MS);
      expect(extraMB).toBeLessThan(LOAD_BOUND_MB);
    },
  );

  it('models dtdr writes load: binary and JSON', () => {
    for (const file of [write('model.dtdr', model.toBinary()), write('model.json', JSON.stringify(model.toJSON()))])
      expect(loadInChild(file).outcome).toBe('loaded 3 tools');
  });
});

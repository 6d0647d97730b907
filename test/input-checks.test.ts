/**
 * Bad input gets a typed error (library) or one line and a non-zero exit (CLI), naming the field,
 * file or line and what to do — before any long work starts, and never a silent wrong answer.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Dtdr } from '../src/core/dtdr.js';
import { DtdrError } from '../src/core/base/errors.js';
import { chainPlan } from '../src/core/plans/plan.js';
import type { ToolSpec } from '../src/core/base/types.js';
import { readModelFile, writeModelFile } from '../src/storage/file.js';
import { runCli, wordAxisEncoder } from './helpers.js';
import { writeTinyEncoder } from './tiny-encoder.js';
import '../src/methods.js'; // the paper's methods, as an app that uses them imports them

const TOOLS: ToolSpec[] = [
  { name: 'files_search', description: 'search files documents' },
  { name: 'contacts_search', description: 'find contact person' },
  { name: 'email_send', description: 'send email message' },
];
const PLANS = [
  chainPlan('1', 'email the report to anna', ['files_search', 'contacts_search', 'email_send']),
  chainPlan('2', 'email the slides to bob', ['files_search', 'contacts_search', 'email_send']),
  chainPlan('3', 'find the file', ['files_search']),
];
const encoder = wordAxisEncoder([
  'search',
  'files',
  'documents',
  'find',
  'contact',
  'person',
  'send',
  'email',
  'message',
  'report',
  'file',
]);

async function error(promise: Promise<unknown> | (() => unknown)): Promise<DtdrError> {
  try {
    await (typeof promise === 'function' ? promise() : promise);
  } catch (e) {
    if (DtdrError.isInstance(e)) return e;
    throw new Error(`expected a DtdrError, got ${String(e)}`);
  }
  throw new Error('expected a DtdrError, got success');
}

describe('the library refuses bad input with a typed error', () => {
  let model: Dtdr;
  beforeAll(async () => {
    model = await Dtdr.train({ method: 'dtdr-c', tools: TOOLS, plans: PLANS, encoder });
  });

  it('a misspelled tool in the history, suggesting the right name', async () => {
    const e = await error(model.retrieve('email the report', ['files_serch']));
    expect(e.code).toBe('options');
    expect(e.field).toBe('history[0]');
    expect(e.hint).toBe('did you mean "files_search"?');
  });

  it('END in the history', async () => {
    expect((await error(model.retrieve('x', ['files_search', 'END']))).field).toBe('history[1]');
  });

  it('a string passed as the history, with the fix', async () => {
    const e = await error(model.retrieve('x', 'files_search' as unknown as string[]));
    expect(e.field).toBe('history');
    expect(e.hint).toMatch(/\["files_search"\]/);
  });

  it('a query that is not a string', async () => {
    expect((await error(model.retrieve(42 as unknown as string))).field).toBe('query');
  });

  it('alpha outside [0, 1], and widenMin above widenMax', async () => {
    expect((await error(model.retrieve('x', [], { alpha: 5 }))).field).toBe('alpha');
    expect((await error(model.retrieve('x', [], { widenMin: 9, widenMax: 3 }))).field).toBe('widenMin');
  });

  it('duplicate tool names and a tool named END, before training', async () => {
    const dup = await error(
      Dtdr.train({
        method: 'dtdr-c',
        tools: [...TOOLS, { name: 'email_send', description: 'again' }],
        plans: PLANS,
        encoder,
      }),
    );
    expect(dup.field).toBe('tools[3].name');
    expect(dup.message).toMatch(/duplicate tool name "email_send"/);
    expect((await error(Dtdr.train({ tools: [{ name: 'END', description: 'x' }], encoder }))).field).toBe(
      'tools[0].name',
    );
    expect((await error(Dtdr.train({ tools: 'files_search' as unknown as ToolSpec[], encoder }))).field).toBe('tools');
  });

  it('tools without a description, as dtdr train refuses them, unless allowUndescribed says it is meant', async () => {
    const tools = [...TOOLS, { name: 'notes_add', description: '  ' }, { name: 'timer_set', description: '' }];
    const e = await error(Dtdr.train({ tools, plans: PLANS, encoder }));
    expect(e.code).toBe('options');
    expect(e.field).toBe('tools[3].description');
    expect(e.message).toContain('2 tools have no description: notes_add, timer_set');
    expect(e.hint).toMatch(/allowUndescribed: true/);
    const named = await Dtdr.train({ tools, plans: PLANS, encoder, allowUndescribed: true });
    expect(named.tools.map((t) => t.name)).toContain('timer_set');
    // A method that never reads descriptions has nothing to lose by them.
    await expect(Dtdr.train({ method: 'dtdr-c', tools, plans: PLANS, encoder })).resolves.toBeInstanceOf(Dtdr);
  });

  it('a model file that is a folder, or a save under a file: a DtdrError naming the path', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'dtdr-model-paths-'));
    try {
      const read = await error(() => readModelFile(dir));
      expect(read.code).toBe('artifact');
      expect(read.message).toContain(`model file "${dir}" is a folder`);
      const file = join(dir, 'taken');
      writeFileSync(file, 'not a folder');
      const model = await Dtdr.train({ method: 'bm25', tools: TOOLS, plans: PLANS, encoder });
      const write = await error(() => writeModelFile(join(file, 'm.dtdr'), model.toJSON()));
      expect(write.code).toBe('usage');
      expect(write.message).toContain(`lies under "${file}", which is a file, not a folder`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("keeps its own copy of the tools: mutating the caller's array later changes nothing", async () => {
    const tools = TOOLS.map((t) => ({ ...t }));
    const m = await Dtdr.train({ method: 'dtdr-c', tools, plans: PLANS, encoder });
    tools[0].name = 'renamed';
    tools.push({ name: 'extra', description: 'extra' });
    expect(m.tools.map((t) => t.name)).toEqual(['files_search', 'contacts_search', 'email_send']);
  });
});

describe('the CLI refuses bad input with one line and a non-zero exit, before training', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'dtdr-cli-checks-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  const folder = (name: string, files: Record<string, string>) => {
    const d = join(dir, name);
    mkdirSync(d, { recursive: true });
    for (const [f, text] of Object.entries(files)) writeFileSync(join(d, f), text);
    return d;
  };
  const data = PLANS.map((p) =>
    JSON.stringify({
      id: p.id,
      user_request: p.query,
      task_nodes: p.nodes.map((n) => ({ task: n.tool })),
      task_links: [],
    }),
  ).join('\n');
  const toolDesc = JSON.stringify({ nodes: TOOLS.map((t) => ({ id: t.name, desc: t.description })) });

  it('--out pointing at a folder: refused before any training', () => {
    const d = folder('out-dir', { 'data.jsonl': data, 'tool_desc.json': toolDesc });
    const r = runCli(['train', '--data', d, '--out', dir, '--method', 'bm25']);
    expect(r.code).not.toBe(0);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toMatch(/is a folder/);
  });

  it('--out under a file: refused before any training, naming the file in the way', () => {
    const d = folder('out-under-file', { 'data.jsonl': data, 'tool_desc.json': toolDesc });
    const r = runCli(['train', '--data', d, '--out', join(d, 'data.jsonl', 'm.dtdr'), '--method', 'bm25']);
    expect(r.code).toBe(2);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toContain(`lies under "${join(d, 'data.jsonl')}", which is a file, not a folder`);
  });

  it('a folder given as the model to read: one line naming it, no Node error', () => {
    const r = runCli(['retrieve', '--model', dir, '--query', 'find the file']);
    expect(r.code).toBe(1);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toContain(`model file "${dir}" is a folder`);
    expect(r.stderr).not.toMatch(/EISDIR|unexpected error/);
  });

  it('a dataset without tool_desc.json: refused unless --allow-undescribed', () => {
    const d = folder('no-desc', { 'data.jsonl': data });
    const r = runCli(['train', '--data', d, '--out', join(dir, 'm.json'), '--method', 'bm25']);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/no tool_desc\.json .*--allow-undescribed/);
    expect(
      runCli(['train', '--data', d, '--out', join(dir, 'm.json'), '--method', 'dr', '--allow-undescribed']).code,
    ).toBe(0);
  });

  it('tools without descriptions: refused, naming them and the file', () => {
    const d = folder('empty-desc', {
      'data.jsonl': data,
      'tool_desc.json': JSON.stringify({
        nodes: [{ id: 'files_search', desc: '' }, { id: 'contacts_search' }, { id: 'email_send', desc: 'send' }],
      }),
    });
    const r = runCli(['train', '--data', d, '--out', join(dir, 'm.json'), '--method', 'bm25']);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/tool_desc\.json: 2 tools have no description: files_search, contacts_search/);
  });

  it('a UTF-8 BOM at the start of data.jsonl is accepted', () => {
    const d = folder('bom', { 'data.jsonl': `\uFEFF${data}`, 'tool_desc.json': toolDesc });
    expect(runCli(['train', '--data', d, '--out', join(dir, 'bom.json'), '--method', 'bm25']).code).toBe(0);
  });

  it('a model trained with an encoder folder finds it again from another working directory', () => {
    const enc = writeTinyEncoder(join(dir, 'tiny-encoder'));
    const d = folder('with-encoder', { 'data.jsonl': data, 'tool_desc.json': toolDesc });
    const model = join(dir, 'tiny.json');
    // Trained with a relative folder path, from the folder that holds it…
    expect(enc).toBe(join(dir, 'tiny-encoder'));
    expect(
      runCli(['train', '--data', d, '--out', model, '--method', 'qts', '--encoder', './tiny-encoder'], undefined, dir)
        .code,
    ).toBe(0);
    // …and used from somewhere else.
    const elsewhere = mkdtempSync(join(tmpdir(), 'dtdr-cwd-'));
    const r = runCli(['retrieve', '--model', model, '--query', 'alpha beta'], undefined, elsewhere);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    rmSync(elsewhere, { recursive: true, force: true });
  });
});

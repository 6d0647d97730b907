/**
 * What a new user meets first, each one answer: a blank request is refused by the library as by
 * the CLI (a DtdrError, not END), a mistyped flag or command gets a "did you mean", and
 * `dtdr eval --report` names its calibration groups as the HTML report does.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { Dtdr, DtdrError } from '../src/node.js';
import { demoDataset } from '../src/demo/index.js';
import { ROOT, runCli } from './helpers.js';

describe('an empty request: one answer in library and CLI', () => {
  it.each(['', '   ', '\n\t'])(
    'Dtdr.retrieve(%j) throws DtdrError "options" (it used to answer END)',
    async (query) => {
      const { tools, plans } = demoDataset(60);
      const model = await Dtdr.train({ tools, plans: plans.slice(0, 40), method: 'bm25' });
      const error = await model.retrieve(query, []).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(DtdrError.isInstance(error)).toBe(true);
      expect((error as DtdrError).code).toBe('options');
      expect((error as DtdrError).message).toMatch(/must not be empty/);
    },
  );

  it('the CLI refuses it with exit 2 and the same words', () => {
    const r = runCli(['retrieve', '--model', 'public/dtdr-demo.model.dtdr', '--query', ' ']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/must not be empty/);
  });
});

describe('did you mean, for flags and commands', () => {
  it('a mistyped flag: --dat', () => {
    const r = runCli(['eval', '--dat', 'x']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/Unknown option '--dat'; did you mean --data\?/);
  });

  it('a value starting with a dash: says how to give it, then checks it as any value', () => {
    const data = join(ROOT, 'data/worlds/tau-retail');
    const out = join(tmpdir(), 'dtdr-never-written.dtdr');
    const r = runCli(['train', '--data', data, '--out', out, '--threads', '-1']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/--threads needs a value, and "-1" reads as an option — give .* as --threads=-1/);
    const given = runCli(['train', '--data', data, '--out', out, '--threads=-1']);
    expect(given.code).toBe(2);
    expect(given.stderr).toMatch(/--threads must be an integer/);
  });

  it('a mistyped tool for prompt --arguments', () => {
    const model = join(ROOT, 'public/dtdr-demo.model.dtdr');
    const r = runCli(['prompt', '--model', model, '--query', 'email anna', '--arguments', 'email_sned']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/the model has no tool "email_sned" — did you mean "email_send"\?/);
  });

  it('a mistyped command: trian', () => {
    const r = runCli(['trian']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/unknown command "trian"; did you mean "train"\?/);
  });

  it('no guess for something far from every name', () => {
    const r = runCli(['frobnicate']);
    expect(r.code).toBe(2);
    expect(r.stderr).not.toMatch(/did you mean/);
  });
});

describe('dtdr eval --report', () => {
  const dir = mkdtempSync(join(tmpdir(), 'dtdr-report-groups-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('prints the calibration groups by name, not 0…4', () => {
    const { tools, plans } = demoDataset(240);
    writeFileSync(
      join(dir, 'tool_desc.json'),
      JSON.stringify({ nodes: tools.map((t) => ({ id: t.name, desc: t.description })) }),
    );
    writeFileSync(
      join(dir, 'data.jsonl'),
      plans
        .map((p) => JSON.stringify({ id: p.id, query: p.query, tools: p.order.map((i) => p.nodes[i].tool) }))
        .join('\n'),
    );
    const r = runCli(
      ['eval', '--data', dir, '--methods', 'default', '--no-ablations', '--report', join(dir, 'report.html')],
      undefined,
      undefined,
      300_000,
    );
    expect(r.code, r.stderr).toBe(0);
    const groups = r.stdout
      .slice(r.stdout.indexOf('by calibration group'))
      .split('\n')
      .slice(2)
      .filter((l) => l.trim());
    expect(groups.length).toBeGreaterThan(0);
    for (const line of groups) expect(line).not.toMatch(/^\d+\s/);
    expect(groups.join('\n')).toMatch(/^(seen|new)/m);
  }, 300_000);
});

import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { runCli } from './helpers.js';

const dir = mkdtempSync(join(tmpdir(), 'dtdr-cli-'));
const oneLineError = (r: { stderr: string }) => {
  const lines = r.stderr.trim().split('\n');
  expect(lines).toHaveLength(1);
  expect(r.stderr).not.toMatch(/\n\s+at /); // no stack trace
  return lines[0];
};

describe('dtdr embed', () => {
  it('prints one unit-norm vector per input line, offline', () => {
    const r = runCli(['embed'], 'book a flight\nreserve a plane ticket\n');
    expect(r.code).toBe(0);
    const vectors = r.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as number[]);
    expect(vectors).toHaveLength(2);
    for (const v of vectors) {
      expect(v).toHaveLength(100);
      expect(Math.hypot(...v)).toBeCloseTo(1, 4);
    }
  });

  it('rejects an unknown flag with one line and exit 2', () => {
    const r = runCli(['embed', '--bogus']);
    expect(r.code).toBe(2);
    expect(oneLineError(r)).toMatch(/Unknown option '--bogus'.*dtdr embed --help/);
  });

  it('rejects a missing encoder folder with exit 1', () => {
    const r = runCli(['embed', '--encoder', './no/such/model'], '');
    expect(r.code).toBe(1);
    expect(oneLineError(r)).toMatch(/encoder folder ".\/no\/such\/model" does not exist/);
  });

  it('says how to fix an encoder that cannot be loaded offline', () => {
    const r = runCli(['embed', '--encoder', 'Xenova/all-MiniLM-L6-v2'], '');
    expect(r.code).toBe(1);
    expect(oneLineError(r)).toMatch(/cannot load encoder "Xenova\/all-MiniLM-L6-v2".*local ONNX model folder/);
  });
});

describe('dtdr train / retrieve', () => {
  const model = join(dir, 'demo.json');
  beforeAll(() => {
    const r = runCli(['train', '--demo', '--method', 'dtdr-c', '--out', model]);
    expect(r.code, r.stderr).toBe(0);
  });

  it('retrieves ranked candidates with probabilities and the back-off signal', () => {
    const r = runCli([
      'retrieve',
      '--model',
      model,
      '--query',
      'email the invoice to Anna',
      '--history',
      'files_search,contacts_search',
      '--json',
    ]);
    expect(r.code, r.stderr).toBe(0);
    const out = JSON.parse(r.stdout);
    expect(out.ranked[0].tool).toBe('email_send');
    expect(out.ranked[0].probability).toBeGreaterThan(0.5);
    expect(out.backoff).toMatchObject({ scope: 'cluster' });
  });

  it('prints the prompt with its Qwen3 token counts', () => {
    const r = runCli([
      'prompt',
      '--model',
      model,
      '--query',
      'email the invoice to Anna',
      '--history',
      'files_search,contacts_search',
      '--strategy',
      'hard-weighted',
      '--format',
      'hermes',
      '--json',
    ]);
    expect(r.code, r.stderr).toBe(0);
    const out = JSON.parse(r.stdout);
    expect(out.prompt).toContain('"name":"email_send"');
    expect(out.tokens.total).toBe(out.tokens.constant + out.tokens.variable);
    expect(out.tokens.total).toBeGreaterThan(50);
    expect(out.candidates[0].tool).toBe('email_send');
    const bad = runCli(['prompt', '--model', model, '--query', 'x', '--strategy', 'loud']);
    expect(bad.code).toBe(2);
    expect(oneLineError(bad)).toMatch(/--strategy must be one of none, raw-demos/);
  });

  it('rejects a history tool the model does not know', () => {
    const r = runCli(['retrieve', '--model', model, '--query', 'x', '--history', 'teleport']);
    expect(r.code).toBe(2);
    expect(oneLineError(r)).toMatch(/--history names tools the model does not know: teleport/);
  });

  it('a misspelled history tool gets a "did you mean", and the hint lists every tool, not the first 8', () => {
    const r = runCli(['retrieve', '--model', model, '--query', 'x', '--history', 'files_search,contacts_serch']);
    expect(r.code).toBe(2);
    const line = oneLineError(r);
    expect(line).toMatch(/does not know: contacts_serch/);
    expect(line).toMatch(/did you mean "contacts_search" for "contacts_serch"\?/);
    // the demo set's 27 tools, every one of them named (weather_forecast sorts last)
    expect(line).toMatch(/27 tools: .*weather_forecast/);
    const far = runCli(['prompt', '--model', model, '--query', 'x', '--history', 'teleport']);
    expect(far.code).toBe(2);
    expect(oneLineError(far)).not.toMatch(/did you mean/);
  });

  it('retrieve --help and prompt --help list --encoder, which both accept', () => {
    for (const command of ['retrieve', 'prompt']) {
      const r = runCli([command, '--help']);
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout + r.stderr).toMatch(/--encoder X/);
      expect(r.stdout + r.stderr).toMatch(/--allow-remote/);
    }
  });

  it('rejects a file that is not a model, naming it', () => {
    const bad = join(dir, 'bad.json');
    writeFileSync(bad, '{not json');
    const r = runCli(['retrieve', '--model', bad, '--query', 'x']);
    expect(r.code).toBe(1);
    expect(oneLineError(r)).toMatch(/bad\.json: not valid JSON/);
  });

  it('rejects a model of a newer format version', () => {
    const newer = join(dir, 'newer.json');
    writeFileSync(newer, JSON.stringify({ format: 'dtdr-model', version: 7 }));
    const r = runCli(['retrieve', '--model', newer, '--query', 'x']);
    expect(r.code).toBe(1);
    expect(oneLineError(r)).toMatch(/newer\.json, version: model format version 7 is newer/);
  });

  it('names the file and line of a malformed dataset', () => {
    const data = join(dir, 'data');
    mkdirSync(data, { recursive: true });
    writeFileSync(join(data, 'data.jsonl'), '{"user_request":"q","task_nodes":[{"task":"a"}]}\n{"user_request": 3}\n');
    const r = runCli(['train', '--data', data, '--method', 'dr', '--out', join(dir, 'x.json')]);
    expect(r.code).toBe(1);
    expect(oneLineError(r)).toMatch(/data\.jsonl, line 2, user_request: missing or empty user_request/);
  });

  it('rejects an unknown command and an unknown method', () => {
    expect(runCli(['frobnicate']).code).toBe(2);
    const r = runCli(['train', '--demo', '--method', 'magic', '--out', join(dir, 'y.json')]);
    expect(r.code).toBe(2);
    expect(oneLineError(r)).toMatch(/unknown method "magic"/);
  });
});

describe('dtdr demo', () => {
  it('rejects an unknown method with a usage error, not an unexpected one', () => {
    const r = runCli(['demo', '--method', 'magic']);
    expect(r.code).toBe(2);
    expect(r.stderr.trim()).toMatch(/^dtdr: --method: unknown method "magic" — one of: random, bm25/);
  });
});

describe('dtdr train / retrieve with the default method', () => {
  it('trains on the tools alone (tool_desc.json and an empty data.jsonl), then retrieves with a reason', () => {
    const data = join(dir, 'tools-only');
    mkdirSync(data, { recursive: true });
    writeFileSync(join(data, 'data.jsonl'), '');
    writeFileSync(
      join(data, 'tool_desc.json'),
      JSON.stringify({
        nodes: [
          { id: 'weather_forecast', desc: 'Get the weather forecast for a city' },
          { id: 'sms_send', desc: 'Send a text message to a phone number' },
          { id: 'alarm_set', desc: 'Set a wake-up alarm' },
        ],
      }),
    );
    const model = join(dir, 'tools-only.json');
    const t = runCli(['train', '--data', data, '--out', model]);
    expect(t.code, t.stderr).toBe(0);
    expect(t.stderr).toMatch(/trained dtdr-g on the tools alone/);
    const r = runCli(
      ['retrieve', '--model', model, '--query-file', '-', '--json'],
      'Will it rain in Paris tomorrow?\n',
    );
    expect(r.code, r.stderr).toBe(0);
    const out = JSON.parse(r.stdout);
    expect(out.method).toBe('dtdr-g');
    expect(out.query).toBe('Will it rain in Paris tomorrow?');
    expect(out.ranked[0].tool).toBe('weather_forecast');
    expect(out.reason).toMatch(/no demonstrations: ranked by tool descriptions alone/);
  });

  it('an empty tool_desc.json is said to be empty, not malformed', () => {
    const data = join(dir, 'empty-tools');
    mkdirSync(data, { recursive: true });
    writeFileSync(join(data, 'tool_desc.json'), '');
    const r = runCli(['train', '--data', data, '--out', join(dir, 'x.json')]);
    expect(r.code).toBe(1);
    expect(oneLineError(r)).toMatch(/tool_desc\.json: the file is empty/);
  });

  it('eval --split novel keeps only new tool sequences, --methods default picks dtdr-g, --json has ece and confidentMissRate', () => {
    const data = join(dir, 'novel');
    mkdirSync(data, { recursive: true });
    const plan = (id: string, q: string, tools: string[]) =>
      JSON.stringify({
        id,
        user_request: q,
        task_nodes: tools.map((task) => ({ task })),
        task_links: tools.slice(1).map((t, i) => ({ source: tools[i], target: t })),
      });
    const lines = [
      ...Array.from({ length: 12 }, (_, i) => plan(`a${i}`, `text anna ${i}`, ['contacts_search', 'sms_send'])),
      ...Array.from({ length: 12 }, (_, i) => plan(`b${i}`, `email ben ${i}`, ['contacts_search', 'email_send'])),
    ];
    writeFileSync(join(data, 'data.jsonl'), lines.join('\n'));
    const test = join(dir, 'novel-test');
    mkdirSync(test, { recursive: true });
    writeFileSync(
      join(test, 'data.jsonl'),
      [
        plan('n0', 'email and text anna', ['contacts_search', 'email_send', 'sms_send']),
        plan('o0', 'text anna', ['contacts_search', 'sms_send']),
      ].join('\n'),
    );
    const r = runCli([
      'eval',
      '--data',
      test,
      '--train',
      data,
      '--split',
      'novel',
      '--methods',
      'default',
      '--json',
      '--allow-undescribed',
    ]);
    expect(r.code, r.stderr).toBe(0);
    const out = JSON.parse(r.stdout);
    expect(out).toMatchObject({ defaultMethod: 'dtdr-g', testPlans: 1, steps: 4 });
    expect(Object.keys(out.results)).toEqual(['dtdr-g']);
    expect(out.results['dtdr-g']).toHaveProperty('ece');
    expect(out.results['dtdr-g']).toHaveProperty('confidentMissRate');
    const bad = runCli(['eval', '--data', test, '--split', 'sideways']);
    expect(bad.code).toBe(2);
    expect(oneLineError(bad)).toMatch(/--split must be default or novel/);
    // Test plans calling a tool the training set lacks: every method would score 0 there, so it is refused.
    const other = join(dir, 'other-tools-test');
    mkdirSync(other, { recursive: true });
    writeFileSync(
      join(other, 'data.jsonl'),
      [plan('c0', 'text anna', ['contacts_search', 'sms_send']), plan('c1', 'book lunch', ['calendar_add'])].join('\n'),
    );
    const foreign = runCli(['eval', '--data', other, '--train', data, '--methods', 'default', '--allow-undescribed']);
    expect(foreign.code).toBe(1);
    expect(oneLineError(foreign)).toContain(
      `1 of the 2 test plans calls tools that --train ${data} does not have: calendar_add`,
    );
  });
});

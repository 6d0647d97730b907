/**
 * The documentation a user reads: every measured figure in README.md and docs/ is rendered from
 * docs/results.json (`npm run docs:check`, in CI), and the README is a user's guide — short, with
 * the install near the top and no internal issue numbers or work-log wording anywhere.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  checkDocs,
  docFiles,
  evalRunFromJson,
  lookup,
  readResults,
  renderBlock,
  rewrite,
  ROOT,
} from './docs-results.js';

const results = readResults();
const dir = mkdtempSync(join(tmpdir(), 'dtdr-docs-check-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** checkDocs on one Markdown text, written to a scratch file. */
function problemsOf(text: string): string[] {
  const file = join(dir, 'page.md');
  writeFileSync(file, text);
  return checkDocs(results, [file], dir).map((p) => p.message);
}

describe('npm run docs:check', () => {
  it('passes on this checkout: every block current, no figure typed by hand', () => {
    expect(checkDocs(results)).toEqual([]);
  });

  it('fails on a stale results block', () => {
    const fresh = `<!-- results:eval-summary -->\n${renderBlock(results, 'eval-summary')}\n<!-- /results -->\n`;
    expect(problemsOf(fresh)).toEqual([]);
    // The first three-decimal figure of the table, edited by hand.
    const stale = fresh.replace(/\| (0\.\d{3}) \|/, (_, v: string) => `| ${v === '0.111' ? '0.222' : '0.111'} |`);
    expect(stale).not.toBe(fresh);
    expect(problemsOf(stale).join('\n')).toMatch(/results:eval-summary is stale/);
  });

  it('fails when two places state one figure differently', () => {
    // The README's table and a guide's sentence render the same figure of results.json; one
    // edited by hand now disagrees with the other.
    const coverage = lookup(results, 'eval.ultratool.results.dtdr-g.coverage');
    const page = `<!-- results:eval-summary -->\n${renderBlock(results, 'eval-summary')}\n<!-- /results -->\n\nIts sets hold the tool in <!-- figure:eval.ultratool.results.dtdr-g.coverage -->${coverage}<!-- /figure --> of steps.\n`;
    expect(problemsOf(page)).toEqual([]);
    const edited = page.replace(`-->${coverage}<!-- /figure -->`, '-->0.990<!-- /figure -->');
    expect(problemsOf(edited).join('\n')).toMatch(
      /figure eval\.ultratool\.results\.dtdr-g\.coverage reads "0\.990" where results\.json has/,
    );
  });

  it('fails on a figure typed in prose, and names the line', () => {
    expect(
      problemsOf('# Page\n\nDTDR-G holds the tool in 97.1% of steps at 3.48 tools, ranking in 25 µs.\n').join('\n'),
    ).toMatch(/"97\.1%"[\s\S]*"3\.48"[\s\S]*"25 µs"/);
    expect(problemsOf('An added tool joins the set for 131 of 135 requests.\n').join('\n')).toMatch(/"131 of 135"/);
    // not figures: versions, option values in code, integers that count things
    expect(problemsOf('Node ≥ 20, version 0.2.0, `target: 0.95`, 27 tools and 3,000 demonstrations.\n')).toEqual([]);
  });

  it('fails on a block that names nothing in results.json', () => {
    expect(problemsOf('<!-- results:table:no-such-table -->\n<!-- /results -->\n').join('\n')).toMatch(
      /no table "no-such-table"/,
    );
  });

  it('a figure restated inside results.json is a reference, so it cannot disagree', () => {
    const ablation = results.tables.ablation.rows[0];
    expect(ablation.slice(1)).toEqual(
      ['ultratool', 'ultratool-novel', 'restbench-tmdb', 'seal-tools'].map((k) => ({
        ref: `eval.${k}.results.dtdr-g.mrr`,
      })),
    );
    expect(renderBlock(results, 'table:ablation')).toContain(
      `| none (DTDR-G) | ${lookup(results, 'eval.ultratool.results.dtdr-g.mrr')} |`,
    );
  });

  it('a `dtdr eval --json` output replaces its run (npm run check -- docs-results -- --from FILE)', () => {
    const json = {
      dataset: 'ultratool',
      split: 'novel sequences',
      trainPlans: 3027,
      testPlans: 58,
      steps: 231,
      results: {
        'dtdr-g': {
          mrr: 0.7,
          f1: 0.6,
          top1: 0.6,
          recall5: 0.9,
          coverage: 0.93,
          setSize: 4.5,
          ece: 0.05,
          confidentMissRate: 0.04,
          widenedRate: 0.5,
          firstStepMrr: 0.6,
          fitMs: 9000,
          embedMs: 10,
          rankMicrosPerStep: 30,
        },
        bm25: {
          mrr: 0.3,
          f1: 0.1,
          top1: 0.1,
          recall5: 0.4,
          coverage: 0.5,
          setSize: 11.9,
          ece: 0.2,
          confidentMissRate: 0.5,
          widenedRate: 0,
          firstStepMrr: 0.4,
          fitMs: 10,
          embedMs: 0,
          rankMicrosPerStep: 9,
        },
      },
    };
    const [key, run] = evalRunFromJson(json, results.eval['ultratool-novel'], 'novel.json', '2026-12-01');
    expect(key).toBe('ultratool-novel');
    expect(run).toMatchObject({
      split: 'novel',
      steps: 231,
      date: '2026-12-01',
      title: results.eval['ultratool-novel'].title,
      command: 'dtdr eval --data ../shared/data/ultratool --split novel --methods dtdr-g,bm25 --json',
    });
    expect(run.results['dtdr-g']).toEqual({
      mrr: 0.7,
      firstStepMrr: 0.6,
      f1: 0.6,
      top1: 0.6,
      recall5: 0.9,
      coverage: 0.93,
      setSize: 4.5,
      ece: 0.05,
      confidentMissRate: 0.04,
    });
    // every block that shows the run follows: the README's table and the guides' sentences
    const next = { ...results, eval: { ...results.eval, [key]: run } };
    expect(renderBlock(next, 'eval-summary')).toMatch(
      /\| UltraTool, novel sequences \| 231 \| 0\.700 \| BM25 0\.300 \| {2}\| 0\.930 \| 4\.50 \|/,
    );
    expect(lookup(next, 'eval.ultratool-novel.results.dtdr-g.coverage')).toBe('0.930');
  });

  it('rewriting renders every block from results.json (an idempotent pass)', () => {
    for (const file of docFiles()) {
      const text = readFileSync(file, 'utf8');
      expect(rewrite(text, results), file).toBe(text);
    }
  });
});

describe("the README is a user's guide", () => {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
  const lines = readme.split('\n');

  it('is at most 300 lines, with the install within the first 40', () => {
    expect(lines.length).toBeLessThanOrEqual(300);
    const install = lines.findIndex((l) => /^## Install/.test(l));
    expect(install).toBeGreaterThanOrEqual(0);
    expect(install).toBeLessThan(40);
    expect(lines.slice(install, 40).join('\n')).toMatch(/npm install dtdr/);
  });

  it('shows each data file with a complete example, and what learn takes', () => {
    expect(readme).toMatch(/<!-- file:my-app\/tool_desc\.json[\s\S]*?```json\n\{"nodes": \[/);
    expect(readme).toMatch(/<!-- file:my-app\/data\.jsonl[\s\S]*?```json\n\{"query": /);
    expect(readme).toMatch(/A run is a finished request and the tools that served it/);
    expect(readme).toMatch(/dtdrMcpRun/);
  });

  it.each(docFiles().map((f) => [f.slice(ROOT.length)]))('%s: no internal issue numbers or work-log wording', (rel) => {
    const text = readFileSync(join(ROOT, rel), 'utf8');
    for (const pattern of [
      /\bissues? #?\d+/i,
      /\bthis session\b/i,
      /\bprevious session/i,
      /\bhelper\b/i,
      /\bscratch run\b/i,
      /\bsession's\b/i,
      /\.scratch\/bench/,
    ]) {
      expect(text, `${rel} matches ${pattern}`).not.toMatch(pattern);
    }
  });
});

describe('the docs site', () => {
  it('lists every guide in the order a newcomer reads them, getting started first', () => {
    const listed: string[] = (
      JSON.parse(readFileSync(join(ROOT, 'typedoc.json'), 'utf8')) as { projectDocuments: string[] }
    ).projectDocuments;
    expect(listed[0]).toBe('docs/getting-started.md');
    const pages = readdirSync(join(ROOT, 'docs')).filter((f) => f.endsWith('.md'));
    for (const page of pages) expect(listed, `typedoc.json does not list docs/${page}`).toContain(`docs/${page}`);
    expect(listed).toContain('docs/decisions/*.md');
  });
});

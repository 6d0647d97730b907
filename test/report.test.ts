/**
 * The HTML evaluation report: collected from real runs, written as one self-contained file, and
 * opened from disk in headless Chromium with no network. Every chart must draw, with no console
 * error and no request other than the file itself. Skipped with a message where Debian's
 * chromium is absent; the UltraTool check skips where ../shared/data is absent.
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { splitDataset } from '../src/core/evaluation/evaluate.js';
import { demoDataset } from '../src/demo/toolset.js';
import { loadEncoder } from '../src/encoders/node.js';
import { collectDatasetReport, reportData, type ReportData } from '../src/report/collect.js';
import { peersFor } from '../src/cli/peers/index.js';
import { renderReportHtml } from '../src/report/html.js';
import { writeReport } from '../src/report/node.js';
import { loadQwen3TokenCounter } from '../src/tokens/qwen3.js';
import { CHROMIUM, launchChromium } from './browser-page.js';
import { hasSharedData, ROOT, runCli, SHARED_DATA } from './helpers.js';

const hasChromium = existsSync(CHROMIUM);
if (!hasChromium)
  console.warn(
    `[dtdr tests] ${CHROMIUM} is absent: the report's browser checks are skipped (apt-get install chromium)`,
  );
if (!hasSharedData) console.warn(`[dtdr tests] ${SHARED_DATA} is absent: the UltraTool report check is skipped`);

describe('renderReportHtml', () => {
  it('embeds the data so that no text in it can close the script element early', () => {
    const data = {
      version: 1,
      createdAt: '2026-01-01T00:00:00.000Z',
      encoder: null,
      defaultMethod: 'dtdr-g',
      datasets: [{ name: '</script><script>alert(1)</script>' }],
    } as unknown as ReportData;
    const html = renderReportHtml(data, 'console.log("page")');
    expect(html.match(/<\/script>/g)).toHaveLength(2); // the JSON block's and the page script's own
    const json = html.slice(html.indexOf('id="report-data">') + 17, html.indexOf('</script>'));
    expect(JSON.parse(json).datasets[0].name).toBe('</script><script>alert(1)</script>');
    expect(html).toContain("default-src 'none'"); // nothing may be fetched, even by mistake
  });
});

type Opened = { charts: number; figures: number; errors: string[]; requests: string[]; groupRows: number };

describe.skipIf(!hasChromium)('the HTML evaluation report, opened offline in headless Chromium', () => {
  let browser: import('playwright-core').Browser;
  let folder: string;
  beforeAll(async () => {
    folder = mkdtempSync(join(tmpdir(), 'dtdr-report-'));
    mkdirSync(join(ROOT, '.cache'), { recursive: true });
    browser = await launchChromium();
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    if (folder) rmSync(folder, { recursive: true, force: true });
  });

  async function open(file: string, screenshot: string): Promise<Opened> {
    const context = await browser.newContext({ viewport: { width: 1400, height: 1000 }, offline: true });
    const page = await context.newPage();
    const errors: string[] = [];
    const requests: string[] = [];
    page.on('console', (m) => m.type() === 'error' && errors.push(m.text()));
    page.on('pageerror', (e) => errors.push(e.message));
    page.on('request', (r) => r.url() !== `file://${file}` && requests.push(r.url()));
    await page.goto(`file://${file}`);
    await page.waitForSelector('body[data-rendered]', { timeout: 30_000 });
    const charts = Number(await page.getAttribute('body', 'data-rendered'));
    const figures = await page.locator('figure.chart').count();
    const groupRows = await page.locator('table.groups tbody tr').count();
    await page.screenshot({ path: join(ROOT, '.cache', screenshot), fullPage: false });
    await context.close();
    return { charts, figures, errors, requests, groupRows };
  }

  it('stays readable when crowded: no overprinted labels, ten methods told apart by dash and marker', async () => {
    // Hand-made data built to collide: dtdr-h and dtdr-g end at the same reliability point, ten
    // methods sweep near-identical coverage curves, and the tallest |F_t| bar is the first one.
    const methods = ['dtdr-g', 'random', 'bm25', 'qts', 'dr', 'lr', 'dtdr-c', 'dtdr-l', 'dtdr-h', 'dtdr-cb'] as const;
    const metric = (i: number) => ({
      mrr: 0.5 + i / 40,
      f1: 0.4,
      top1: 0.4,
      recall5: 0.7,
      coverage: 0.9,
      setSize: 12 - i,
      ece: 0.05,
      confidentMissRate: 0.02,
      widenedRate: 0.3,
    });
    const dataset = {
      name: 'crowded',
      split: 'seeded',
      trainPlans: 100,
      testPlans: 30,
      steps: 90,
      tools: 27,
      methods: methods.map((method, i) => ({ method, ...metric(i), fitSeconds: 1, rankMicrosPerStep: 10 })),
      curves: methods.flatMap((method, i) =>
        [0.5, 0.2, 0.1, 0.05].map((value, k) => ({
          method,
          knob: 'alpha',
          value,
          coverage: 0.6 + k * 0.1 + i * 0.003,
          setSize: 1 + k * 2 + i * 0.02,
        })),
      ),
      reliability: methods.flatMap((method) =>
        [0.2, 0.5, 0.95].map((confidence, k) => ({
          method,
          lo: k / 3,
          hi: (k + 1) / 3,
          steps: 30,
          confidence,
          accuracy: method === 'dtdr-h' || method === 'dtdr-g' ? confidence - 0.02 : confidence - 0.1,
        })),
      ),
      misses: [],
      ablations: ['dtdr-h', 'dtdr-c'].flatMap((method) =>
        [1, 2, 3].map((value) => ({ axis: 'history', method, value, mrr: 0.8 + value / 100, coverage: 0.9 })),
      ),
    };
    const data = {
      version: 1,
      createdAt: '2026-01-01T00:00:00.000Z',
      encoder: 'test',
      defaultMethod: 'dtdr-g',
      datasets: [dataset],
    } as unknown as ReportData;
    const file = join(folder, 'crowded.html');
    writeReport(file, data);
    const context = await browser.newContext({ viewport: { width: 1400, height: 1000 }, offline: true });
    const page = await context.newPage();
    await page.goto(`file://${file}`);
    await page.waitForSelector('body[data-rendered]');
    const measured = await page.evaluate(() => {
      const box = (e: Element) => e.getBoundingClientRect();
      const overlap = (a: DOMRect, b: DOMRect) =>
        a.left < b.right && b.left < a.right && a.top < b.bottom && b.top < a.bottom;
      const pairs = (boxes: { name: string; r: DOMRect }[]) => {
        const hits: string[] = [];
        for (let i = 0; i < boxes.length; i++)
          for (let j = i + 1; j < boxes.length; j++)
            if (overlap(boxes[i].r, boxes[j].r)) hits.push(`${boxes[i].name} × ${boxes[j].name}`);
        return hits;
      };
      return Array.from(document.querySelectorAll('figure.chart')).map((f) => {
        const svg = f.querySelector('svg[class*="plot"]')!;
        const texts = (selector: string) =>
          Array.from(svg.querySelectorAll(`${selector} text`)).map((t) => ({ name: t.textContent ?? '', r: box(t) }));
        const labels = texts('.end-label');
        const axisLabels = Array.from(
          svg.querySelectorAll('[aria-label="y-axis label"] text, [aria-label="y-axis label"]'),
        )
          .filter((e) => e.tagName === 'text')
          .map((t) => ({ name: `axis:${t.textContent}`, r: box(t) }));
        const values = texts('.bar-value').map((b) => ({ ...b, name: `bar:${b.name}` }));
        const lines = Array.from(svg.querySelectorAll('.method-line path')).map((p) => ({
          method:
            p.closest('[aria-description]')?.getAttribute('aria-description') ??
            p.getAttribute('aria-description') ??
            '',
          dash: getComputedStyle(p).strokeDasharray || p.closest('g')!.getAttribute('stroke-dasharray') || 'none',
        }));
        return {
          chart: (f as HTMLElement).dataset.chart!,
          labels: labels.map((l) => l.name),
          labelOverlaps: pairs(labels),
          axisOverlaps: pairs([...axisLabels, ...values]).filter((p) => p.includes('axis:')),
          lines,
          symbols: [
            ...new Set(Array.from(svg.querySelectorAll('[aria-label="dot"] path')).map((p) => p.getAttribute('d'))),
          ].length,
        };
      });
    });
    await page.screenshot({ path: join(ROOT, '.cache', 'report-crowded.png'), fullPage: true });
    for (const [chart, name] of [
      ['Coverage against set size', 'coverage'],
      ['Reliability diagram', 'reliability'],
      ['Mean |F_t| per method', 'set-size'],
    ]) {
      await page
        .locator(`figure[data-chart="${chart}"]`)
        .screenshot({ path: join(ROOT, '.cache', `report-crowded-${name}.png`) });
    }
    await context.close();
    const chart = (name: string) => measured.find((m) => m.chart === name)!;
    // every method labels its line's end, and no two labels (or a label and a bar value) overprint
    expect(chart('Reliability diagram').labels.sort()).toEqual(['dr', 'dtdr-c', 'dtdr-g', 'dtdr-h']);
    expect(chart('Coverage against set size').labels).toHaveLength(10);
    for (const m of measured) {
      expect(m.labelOverlaps, m.chart).toEqual([]);
      expect(m.axisOverlaps, m.chart).toEqual([]);
    }
    // ten lines, ten dash patterns, ten marker shapes
    const coverage = chart('Coverage against set size');
    expect(coverage.lines).toHaveLength(10);
    expect(new Set(coverage.lines.map((l) => l.dash)).size).toBe(10);
    expect(coverage.symbols).toBeGreaterThanOrEqual(10);
  }, 60_000);

  it('draws every chart for the demo tool set (tools, demonstrations, ablations), from one file', async () => {
    const dataset = demoDataset(600);
    const split = splitDataset(dataset, { seed: 0 });
    const encoder = await loadEncoder();
    const counter = await loadQwen3TokenCounter();
    // With one peer (Orama's BM25, through @orama/orama): a row in the table and bars, no curve.
    const methods = ['bm25', 'dtdr-c', 'dtdr-h', 'dtdr-g', 'orama-bm25'] as const;
    const report = await collectDatasetReport(dataset, split, encoder, { methods, peers: peersFor(methods), counter });
    const file = join(folder, 'demo-report.html');
    const written = reportData([report], encoder);
    expect(written.peers).toEqual(['orama-bm25']);
    writeReport(file, written);

    // What the charts are drawn from, checked by hand on the demo set: every method scored on every step.
    expect(report.methods.map((m) => m.method)).toEqual([...methods]);
    expect(
      report.curves.some((c) => c.method === 'orama-bm25') || report.reliability.some((b) => b.method === 'orama-bm25'),
    ).toBe(false);
    expect(report.curves.filter((c) => c.method === 'dtdr-g').every((c) => c.knob === 'target')).toBe(true);
    expect(report.curves.filter((c) => c.method === 'dtdr-c').map((c) => c.value)).toEqual([
      0.5, 0.3, 0.2, 0.1, 0.05, 0.02, 0.01,
    ]);
    for (const m of report.methods.filter((m) => m.method !== 'orama-bm25'))
      expect(report.reliability.filter((b) => b.method === m.method).reduce((n, b) => n + b.steps, 0)).toBe(
        report.steps,
      );
    expect(report.prompts!.rows.find((r) => r.strategy === 'hard')!.total).toBeLessThan(
      report.prompts!.rows.find((r) => r.strategy === 'none')!.total,
    );
    expect(new Set(report.ablations.map((a) => a.axis))).toEqual(new Set(['history', 'clusters', 'demonstrations']));
    // Per calibration group: dtdr-g's groups, with their steps adding up to every step.
    const groups = report.methods.find((m) => m.method === 'dtdr-g')!.groups!;
    expect(groups.length).toBeGreaterThan(0);
    expect(groups.reduce((n, g) => n + g.steps, 0)).toBe(report.steps);
    for (const g of groups)
      for (const v of [g.coverage, g.confidentMissRate, g.ece, g.widenedRate]) expect(v).toBeGreaterThanOrEqual(0);

    const opened = await open(file, 'report-demo.png');
    expect(opened.errors).toEqual([]);
    expect(opened.requests).toEqual([]);
    expect(opened.figures).toBe(9);
    expect(opened.charts).toBe(9);
    expect(opened.groupRows).toBe(groups.length);
    await encoder.dispose?.();
  }, 180_000);

  it.skipIf(!hasSharedData)(
    '`dtdr eval --data ultratool --report` writes a report that opens offline with every chart',
    async () => {
      const file = join(folder, 'ultratool.html');
      // Every method, the prompt study and three ablations: ~3 min on a quiet 2-core machine, more
      // when other jobs share it; the limit only stops a hang.
      const result = runCli(['eval', '--data', `${SHARED_DATA}/ultratool`, '--report', file], undefined, ROOT, 560_000);
      expect(result.code, result.stderr).toBe(0);
      expect(result.stderr).toContain(`report written to ${file}`);
      const html = readFileSync(file, 'utf8');
      const data = JSON.parse(
        html.slice(html.indexOf('id="report-data">') + 17, html.indexOf('</script>')),
      ) as ReportData;
      const ultratool = data.datasets[0];
      expect(ultratool.steps).toBe(1691);
      expect(ultratool.methods.find((m) => m.method === data.defaultMethod)!.mrr).toBeGreaterThanOrEqual(0.86);
      expect(ultratool.misses.length).toBe(20);
      expect(ultratool.ablations.filter((a) => a.axis === 'history').map((a) => a.value)).toEqual([
        0, 1, 2, 3, 4, 5, 1, 2, 3, 4, 5,
      ]);
      const opened = await open(file, 'report-ultratool.png');
      expect(opened.errors).toEqual([]);
      expect(opened.requests).toEqual([]);
      expect(opened.charts).toBeGreaterThanOrEqual(6);
      expect(opened.charts).toBe(opened.figures);
    },
    600_000,
  );
});

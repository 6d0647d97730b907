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
import { renderReportHtml } from '../src/report/html.js';
import { writeReport } from '../src/report/node.js';
import { loadQwen3TokenCounter } from '../src/tokens/qwen3.js';
import { hasSharedData, ROOT, runCli, SHARED_DATA } from './helpers.js';

const CHROMIUM = '/usr/bin/chromium';
const hasChromium = existsSync(CHROMIUM);
if (!hasChromium) console.warn(`[dtdr tests] ${CHROMIUM} is absent: the report's browser checks are skipped (apt-get install chromium)`);
if (!hasSharedData) console.warn(`[dtdr tests] ${SHARED_DATA} is absent: the UltraTool report check is skipped`);

describe('renderReportHtml', () => {
  it('embeds the data so that no text in it can close the script element early', () => {
    const data = { version: 1, createdAt: '2026-01-01T00:00:00.000Z', encoder: null, defaultMethod: 'dtdr-g', datasets: [{ name: '</script><script>alert(1)</script>' }] } as unknown as ReportData;
    const html = renderReportHtml(data, 'console.log("page")');
    expect(html.match(/<\/script>/g)).toHaveLength(2); // the JSON block's and the page script's own
    const json = html.slice(html.indexOf('id="report-data">') + 17, html.indexOf('</script>'));
    expect(JSON.parse(json).datasets[0].name).toBe('</script><script>alert(1)</script>');
    expect(html).toContain("default-src 'none'"); // nothing may be fetched, even by mistake
  });
});

type Opened = { charts: number; figures: number; errors: string[]; requests: string[] };

describe.skipIf(!hasChromium)('the HTML evaluation report, opened offline in headless Chromium', () => {
  let browser: import('playwright-core').Browser;
  let folder: string;
  beforeAll(async () => {
    folder = mkdtempSync(join(tmpdir(), 'dtdr-report-'));
    mkdirSync(join(ROOT, '.cache'), { recursive: true });
    const { chromium } = await import('playwright-core');
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    });
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
    await page.screenshot({ path: join(ROOT, '.cache', screenshot), fullPage: false });
    await context.close();
    return { charts, figures, errors, requests };
  }

  it('draws every chart for the demo tool set (tools, demonstrations, ablations), from one file', async () => {
    const dataset = demoDataset(600);
    const split = splitDataset(dataset, { seed: 0 });
    const encoder = await loadEncoder();
    const counter = await loadQwen3TokenCounter();
    const report = await collectDatasetReport(dataset, split, encoder, { methods: ['bm25', 'dtdr-c', 'dtdr-h', 'dtdr-g'], counter });
    const file = join(folder, 'demo-report.html');
    writeReport(file, reportData([report], encoder));

    // What the charts are drawn from, checked by hand on the demo set: every method scored on every step.
    expect(report.methods.map((m) => m.method)).toEqual(['bm25', 'dtdr-c', 'dtdr-h', 'dtdr-g']);
    expect(report.curves.filter((c) => c.method === 'dtdr-g').every((c) => c.knob === 'target')).toBe(true);
    expect(report.curves.filter((c) => c.method === 'dtdr-c').map((c) => c.value)).toEqual([0.5, 0.3, 0.2, 0.1, 0.05, 0.02, 0.01]);
    for (const m of report.methods) expect(report.reliability.filter((b) => b.method === m.method).reduce((n, b) => n + b.steps, 0)).toBe(report.steps);
    expect(report.prompts!.rows.find((r) => r.strategy === 'hard')!.total).toBeLessThan(report.prompts!.rows.find((r) => r.strategy === 'none')!.total);
    expect(new Set(report.ablations.map((a) => a.axis))).toEqual(new Set(['history', 'clusters', 'demonstrations']));

    const opened = await open(file, 'report-demo.png');
    expect(opened.errors).toEqual([]);
    expect(opened.requests).toEqual([]);
    expect(opened.figures).toBe(9);
    expect(opened.charts).toBe(9);
    await encoder.dispose?.();
  }, 180_000);

  it.skipIf(!hasSharedData)('`dtdr eval --data ultratool --report` writes a report that opens offline with every chart', async () => {
    const file = join(folder, 'ultratool.html');
    const result = runCli(['eval', '--data', `${SHARED_DATA}/ultratool`, '--report', file], undefined, ROOT, 280_000);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toContain(`report written to ${file}`);
    const html = readFileSync(file, 'utf8');
    const data = JSON.parse(html.slice(html.indexOf('id="report-data">') + 17, html.indexOf('</script>'))) as ReportData;
    const ultratool = data.datasets[0];
    expect(ultratool.steps).toBe(1691);
    expect(ultratool.methods.find((m) => m.method === data.defaultMethod)!.mrr).toBeGreaterThanOrEqual(0.86);
    expect(ultratool.misses.length).toBe(20);
    expect(ultratool.ablations.filter((a) => a.axis === 'history').map((a) => a.value)).toEqual([0, 1, 2, 3, 4, 5, 1, 2, 3, 4, 5]);
    const opened = await open(file, 'report-ultratool.png');
    expect(opened.errors).toEqual([]);
    expect(opened.requests).toEqual([]);
    expect(opened.charts).toBeGreaterThanOrEqual(6);
    expect(opened.charts).toBe(opened.figures);
  }, 300_000);
});

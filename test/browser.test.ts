/**
 * The browser build, for real: `npm run build:demo`'s static output, served by Python's
 * `http.server` (any static file server would do), in headless Chromium. The page loads the
 * bundled encoder through ONNX Runtime Web (WASM) from files in the build, trains DTDR-C, plans a
 * request and keeps the model in IndexedDB. Any failed request or request off localhost fails
 * the test. Skipped with a message where Debian's chromium is not installed (.ci/run installs it).
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT } from './helpers.js';

const CHROMIUM = '/usr/bin/chromium';
const hasChromium = existsSync(CHROMIUM);
const hasPython = spawnSync('python3', ['--version']).status === 0;
if (!hasChromium) console.warn(`[dtdr tests] ${CHROMIUM} is absent: the browser test is skipped (apt-get install chromium)`);
if (!hasPython) console.warn('[dtdr tests] python3 is absent: the browser test of the built demo is skipped');

/** The size budget of the built demo, stated in the README: runtime wasm + encoder + code. */
export const DEMO_BUDGET_BYTES = 24 * 1024 * 1024;

function folderBytes(folder: string): number {
  return readdirSync(folder, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .reduce((sum, e) => sum + statSync(join(e.parentPath, e.name)).size, 0);
}

async function freePort(): Promise<number> {
  return new Promise((done) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => done(port));
    });
  });
}

describe.skipIf(!hasChromium || !hasPython)('the built in-browser demo (npm run build:demo, served statically, headless Chromium)', () => {
  let outDir: string;
  let serverProcess: ChildProcess;
  let browser: import('playwright-core').Browser;
  let page: import('playwright-core').Page;
  let url: string;
  const outsideRequests: string[] = [];
  const failedRequests: string[] = [];
  const pageErrors: string[] = [];

  beforeAll(async () => {
    outDir = mkdtempSync(join(tmpdir(), 'dtdr-demo-'));
    const { build } = await import('vite');
    await build({ configFile: join(ROOT, 'demos/web/vite.config.ts'), logLevel: 'error', build: { outDir, emptyOutDir: true } });
    const port = await freePort();
    serverProcess = spawn('python3', ['-m', 'http.server', String(port), '--bind', '127.0.0.1', '--directory', outDir], { stdio: 'ignore' });
    url = `http://127.0.0.1:${port}/index.html`;
    for (let i = 0; i < 100; i++) {
      const up = await fetch(url).then((r) => r.ok, () => false);
      if (up) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    const { chromium } = await import('playwright-core');
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    });
    page = await browser.newPage();
    page.on('request', (r) => {
      if (!/^(http:\/\/127\.0\.0\.1[:/]|data:|blob:)/.test(r.url())) outsideRequests.push(r.url());
    });
    page.on('requestfailed', (r) => failedRequests.push(`${r.url()} (${r.failure()?.errorText})`));
    page.on('response', (r) => {
      if (r.status() >= 400) failedRequests.push(`${r.url()} (HTTP ${r.status()})`);
    });
    page.on('pageerror', (e) => pageErrors.push(e.message));
  }, 180_000);
  afterAll(async () => {
    await browser?.close();
    serverProcess?.kill();
    if (outDir) rmSync(outDir, { recursive: true, force: true });
  });

  it(`builds into a static folder within its size budget (${DEMO_BUDGET_BYTES / 2 ** 20} MiB)`, () => {
    const files = readdirSync(join(outDir, 'assets'));
    expect(files.some((f) => f.endsWith('.wasm'))).toBe(true);
    expect(files.some((f) => f.endsWith('.onnx'))).toBe(true);
    expect(folderBytes(outDir)).toBeLessThanOrEqual(DEMO_BUDGET_BYTES);
  });

  it('trains in the page, plans a request step by step, with no failed request and none off localhost', async () => {
    await page.goto(url);
    await page.waitForSelector('#status[data-state="ready"], #status[data-state="error"]', { timeout: 150_000 });
    expect(await page.textContent('#status')).toMatch(/^ready · trained in/);
    await page.fill('#query', 'Email the quarterly report to Maria');
    await page.click('#go');
    await page.waitForSelector('#plan', { timeout: 30_000 });
    const planText = await page.textContent('#plan');
    expect(planText).toMatch(/files_search/);
    expect(planText).toMatch(/contacts_search/);
    expect(planText).toMatch(/email_send → END$/);
    expect(await page.textContent('#prompt')).toContain('<tools>');
    await page.screenshot({ path: join(ROOT, '.cache', 'demo.png'), fullPage: true });
    expect(pageErrors).toEqual([]);
    expect(failedRequests).toEqual([]);
    expect(outsideRequests).toEqual([]);
  }, 200_000);

  it('loads the trained model back from IndexedDB on the next visit', async () => {
    await page.reload();
    await page.waitForSelector('#status[data-state="ready"], #status[data-state="error"]', { timeout: 150_000 });
    expect(await page.textContent('#status')).toMatch(/model loaded from IndexedDB/);
    expect(failedRequests).toEqual([]);
  }, 200_000);
});

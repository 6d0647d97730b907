/**
 * The browser build, for real: the Vite demo page in headless Chromium loads the bundled encoder
 * through ONNX Runtime Web (WASM), trains DTDR-C, plans a request, and keeps the model in
 * IndexedDB. Skipped with a message where Debian's chromium is not installed (.ci/run installs it).
 */
import { existsSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT } from './helpers.js';

const CHROMIUM = '/usr/bin/chromium';
const hasChromium = existsSync(CHROMIUM);
if (!hasChromium) console.warn(`[dtdr tests] ${CHROMIUM} is absent: the browser test is skipped (apt-get install chromium)`);

describe.skipIf(!hasChromium)('the in-browser demo (headless Chromium, WASM)', () => {
  let close: () => Promise<void>;
  let url: string;
  let page: import('playwright-core').Page;
  const outsideRequests: string[] = [];
  const pageErrors: string[] = [];

  beforeAll(async () => {
    const { createServer } = await import('vite');
    const { chromium } = await import('playwright-core');
    const server = await createServer({ root: ROOT, configFile: `${ROOT}/vite.config.ts`, logLevel: 'error', server: { host: '127.0.0.1', port: 0, hmr: false } });
    await server.listen();
    url = `${server.resolvedUrls!.local[0]}demos/web/index.html`;
    const browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    });
    close = async () => {
      await browser.close();
      await server.close();
    };
    page = await browser.newPage();
    page.on('request', (r) => {
      if (!/^(https?:\/\/(127\.0\.0\.1|localhost)[:/]|data:|blob:)/.test(r.url())) outsideRequests.push(r.url());
    });
    page.on('pageerror', (e) => pageErrors.push(e.message));
  }, 180_000);
  afterAll(() => close?.());

  it('trains in the page, plans a request step by step, and uses no network', async () => {
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
    expect(pageErrors).toEqual([]);
    expect(outsideRequests).toEqual([]);
  }, 200_000);

  it('loads the trained model back from IndexedDB on the next visit', async () => {
    await page.reload();
    await page.waitForSelector('#status[data-state="ready"], #status[data-state="error"]', { timeout: 150_000 });
    expect(await page.textContent('#status')).toMatch(/model loaded from IndexedDB/);
  }, 200_000);
});

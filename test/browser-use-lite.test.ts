/**
 * models/dtdr-use-lite in headless Chromium: a page built by Vite from the library's browser entry
 * (test/browser-use-lite/) loads the folder, served with the page, through `loadEncoder({ model:
 * './models/dtdr-use-lite/' })` on ONNX Runtime Web, embeds sentences and ranks the demo tools from
 * their descriptions. Its vectors must be Node's (cosine ≥ 0.999) and its first candidates Node's;
 * nothing may be fetched off localhost. Once in Chromium as launched for the tests (no GPU, so no
 * WebGPU adapter: WASM), once with Chromium's software WebGPU adapter (SwiftShader), where the page
 * asks for WebGPU. Then the playground (demos/web) with `?encoder=./models/dtdr-use-lite/`: it runs
 * on that folder, trains a tools-only model in its worker on it and steps through a request.
 * Screenshots land in .cache/ (docs/images/browser-use-lite.png and playground-use-lite.png are
 * copies of the WASM ones).
 */
import { cpSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { beforeAll, describe, expect, it } from 'vitest';
import { cosine } from './vectors.js';
import type { Encoder } from '../src/core/base/encoder.js';
import { Dtdr } from '../src/index.js';
import { DEMO_TOOLS } from '../src/demo/index.js';
import { loadEncoder } from '../src/encoders/node.js';
import { CHROMIUM, browserReady, pageStatus, servedPage } from './browser-page.js';
import { ROOT } from './helpers.js';
import { REQUESTS, SENTENCES } from './browser-use-lite/sentences.js';

const FOLDER = join(ROOT, 'models', 'dtdr-use-lite');
const ready = browserReady && existsSync(join(FOLDER, 'onnx', 'model_quantized.onnx'));
if (!ready)
  console.warn('[dtdr tests] chromium, python3 or models/dtdr-use-lite missing: the browser USE lite test is skipped');

interface PageResult {
  id: string;
  backend: string;
  vectors: number[][];
  candidates: string[][];
}

describe.skipIf(!ready)('dtdr-use-lite in the browser (ONNX Runtime Web, headless Chromium)', () => {
  const served = servedPage('test/browser-use-lite', (outDir) =>
    cpSync(FOLDER, join(outDir, 'models', 'dtdr-use-lite'), { recursive: true }),
  );
  let node: Encoder;
  let expected: Float32Array[];
  let firstInNode: string[];
  beforeAll(async () => {
    node = await loadEncoder({ model: FOLDER });
    expected = await node.embed(SENTENCES);
    const model = await Dtdr.train({ tools: DEMO_TOOLS, encoder: node });
    firstInNode = await Promise.all(REQUESTS.map(async (r) => (await model.retrieve(r, [])).candidates[0]?.tool));
  }, 60_000);

  /** The page's vectors against Node's, and (with `retrieved`) its retrievals: a non-empty set per request, Node's tool first. */
  async function check(page: Page, label: string, retrieved = true): Promise<PageResult> {
    const result = (await page.evaluate(() => (window as unknown as { useLite: unknown }).useLite)) as PageResult;
    expect(result.id).toBe('dtdr-use-lite');
    const cosines = expected.map((v, i) => cosine(v, result.vectors[i]));
    console.log(
      `[dtdr tests] dtdr-use-lite, ${label} (${result.backend}) vs Node: min cosine ${Math.min(...cosines).toFixed(7)} ` +
        `(1 − min ${(1 - Math.min(...cosines)).toExponential(1)}); ` +
        `first candidates ${result.candidates.map((c) => c[0]).join(', ')}`,
    );
    expect(result.vectors.map((v) => v.length)).toEqual(expected.map(() => node.dimension));
    for (const c of cosines) expect(c).toBeGreaterThanOrEqual(0.999);
    if (!retrieved) return result;
    expect(result.candidates).toHaveLength(REQUESTS.length);
    for (const candidates of result.candidates) expect(candidates.length).toBeGreaterThan(0);
    expect(result.candidates.map((c) => c[0])).toEqual(firstInNode);
    expect(await page.locator('#retrievals tr').count()).toBe(REQUESTS.length + 1);
    return result;
  }

  it('embeds on WASM as Node does and retrieves candidates on the page', async () => {
    const { page, outside, failed } = served();
    const status = await pageStatus(served(), 'browser-use-lite.png');
    expect(status).toMatch(new RegExp(`^done: ${SENTENCES.length} sentences embedded on wasm in \\d+ ms`));
    // Chromium as the tests launch it (--disable-gpu) offers no WebGPU adapter, so the page stays on WASM.
    expect(await page.textContent('#backend')).toContain('no WebGPU adapter: running on wasm');
    expect((await check(page, 'WASM')).backend).toBe('wasm');
    expect(outside).toEqual([]);
    expect(failed).toEqual([]);
  }, 120_000);

  it("with Chromium's software WebGPU adapter (SwiftShader), the page runs on WebGPU and embeds as Node does", async () => {
    const { chromium } = await import('playwright-core');
    const browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: [
        '--headless',
        '--no-sandbox',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
        '--enable-unsafe-webgpu',
        '--enable-unsafe-swiftshader',
        '--use-webgpu-adapter=swiftshader',
      ],
    });
    try {
      const page = await browser.newPage();
      // Embedding the sentences is the WebGPU check; the retrieval (27 more texts, each batch shape
      // compiling shaders on the software adapter) is the WASM test's.
      await page.goto(`${served().url}?retrieve=no`);
      await page.waitForSelector('#status[data-state="done"], #status[data-state="error"]', { timeout: 120_000 });
      await page.screenshot({ path: join(ROOT, '.cache', 'browser-use-lite-webgpu.png'), fullPage: true });
      expect(await page.textContent('#status')).toMatch(
        new RegExp(`^done: ${SENTENCES.length} sentences embedded on webgpu in \\d+ ms`),
      );
      expect(await page.textContent('#backend')).toContain('WebGPU adapter found: running on webgpu');
      expect((await check(page, 'SwiftShader WebGPU', false)).backend).toBe('webgpu');
    } finally {
      await browser.close();
    }
  }, 120_000);
});

describe.skipIf(!ready)('the playground with ?encoder=./models/dtdr-use-lite/ (headless Chromium, WASM)', () => {
  const served = servedPage('demos/web', (outDir) =>
    cpSync(FOLDER, join(outDir, 'models', 'dtdr-use-lite'), { recursive: true }),
  );

  it('runs on the folder, trains tools-only in its worker with it, and shows the candidates Node ranks first', async () => {
    const { page, url, outside, failed } = served();
    const request = 'Email the quarterly report to Maria';
    const node = await loadEncoder({ model: FOLDER });
    const first = (await (await Dtdr.train({ tools: DEMO_TOOLS, encoder: node })).retrieve(request, [])).candidates[0]
      ?.tool;

    const onnx: string[] = [];
    page.on('request', (r) => {
      if (r.url().endsWith('.onnx')) onnx.push(new URL(r.url()).pathname);
    });
    await page.setViewportSize({ width: 1200, height: 900 });
    await page.goto(`${url}?backend=wasm&encoder=./models/dtdr-use-lite/`);
    await page.waitForSelector('#status[data-state="ready"], #status[data-state="error"]', { timeout: 120_000 });
    expect(await page.textContent('#status')).toBe('dtdr-use-lite · running on wasm · ?backend=wasm');
    await page.click('#tools-only');
    expect(await page.textContent('#data-summary')).toMatch(/^27 tools, no demonstrations/);
    await page.fill('#model-name', 'use-lite-tools-only');
    await page.click('#train-go');
    await page.waitForSelector('#train-status[data-state="done"], #train-status[data-state="error"]', {
      timeout: 120_000,
    });
    expect(await page.textContent('#train-status')).toMatch(/saved to IndexedDB as "use-lite-tools-only"/);
    await page.fill('#query', request);
    await page.click('#step-reset');
    await page.waitForSelector('#candidates tr[data-tool]');
    expect(await page.getAttribute('#candidates tbody tr:first-child', 'data-tool')).toBe(first);
    // The page down to the candidates (the prompt and the sections below it are the playground's own shots).
    await page.screenshot({
      path: join(ROOT, '.cache', 'playground-use-lite.png'),
      fullPage: true,
      clip: { x: 0, y: 0, width: 1200, height: 1700 },
    });
    // The page and its training worker (an absolute URL on this site) fetched the folder's weights, never the bundled encoder's.
    expect(onnx.length).toBeGreaterThanOrEqual(2);
    expect(onnx.filter((path) => path !== '/models/dtdr-use-lite/onnx/model_quantized.onnx')).toEqual([]);
    // Another site's folder is refused before anything is fetched from it.
    await page.goto(`${url}?backend=wasm&encoder=https://example.com/models/x/`);
    await page.waitForSelector('#status[data-state="error"]', { timeout: 60_000 });
    expect(await page.textContent('#status')).toBe(
      'error: ?encoder= must be a folder on this site, not https://example.com',
    );
    expect(outside).toEqual([]);
    expect(failed).toEqual([]);
  }, 180_000);
});

/**
 * The same tiny random-weight LM, loaded by transformers.js in headless Chromium (WASM, from a
 * local folder served with the page, nothing off localhost), answering under dtdr's logit mask.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT } from './helpers.js';
import { writeTinyLm } from './tiny-lm.js';

const CHROMIUM = '/usr/bin/chromium';
const ready = existsSync(CHROMIUM) && spawnSync('python3', ['--version']).status === 0;
if (!ready) console.warn('[dtdr tests] chromium or python3 missing: the in-browser local model test is skipped');

describe.skipIf(!ready)('a local model in the browser (transformers.js, WASM, headless Chromium)', () => {
  let outDir: string;
  let server: ChildProcess;
  let close: () => Promise<void>;
  let page: import('playwright-core').Page;
  const outside: string[] = [];
  const failed: string[] = [];
  let url: string;

  beforeAll(async () => {
    outDir = mkdtempSync(join(tmpdir(), 'dtdr-browser-lm-'));
    const { build } = await import('vite');
    await build({
      root: join(ROOT, 'test/browser-lm'),
      base: './',
      logLevel: 'error',
      configFile: false,
      publicDir: false,
      build: { outDir, emptyOutDir: true, target: 'es2022', chunkSizeWarningLimit: 4096 },
    });
    writeTinyLm(join(outDir, 'models', 'tiny-lm'), 3);
    // transformers.js's own ONNX Runtime build, served locally (it would come from a CDN otherwise).
    const ort = join(ROOT, 'node_modules/@huggingface/transformers/node_modules/onnxruntime-web/dist');
    mkdirSync(join(outDir, 'ort'));
    for (const f of ['ort-wasm-simd-threaded.asyncify.mjs', 'ort-wasm-simd-threaded.asyncify.wasm'])
      copyFileSync(join(ort, f), join(outDir, 'ort', f));
    const port = await new Promise<number>((done) => {
      const s = createServer().listen(0, '127.0.0.1', () => {
        const { port } = s.address() as { port: number };
        s.close(() => done(port));
      });
    });
    server = spawn('python3', ['-m', 'http.server', String(port), '--bind', '127.0.0.1', '--directory', outDir], {
      stdio: 'ignore',
    });
    url = `http://127.0.0.1:${port}/index.html`;
    for (
      let i = 0;
      i < 100 &&
      !(await fetch(url).then(
        (r) => r.ok,
        () => false,
      ));
      i++
    )
      await new Promise((r) => setTimeout(r, 100));
    const { chromium } = await import('playwright-core');
    const browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
      ],
    });
    close = () => browser.close();
    page = await browser.newPage();
    page.on('request', (r) => {
      if (!/^(http:\/\/127\.0\.0\.1[:/]|data:|blob:)/.test(r.url())) outside.push(r.url());
    });
    page.on('response', (r) => {
      if (r.status() >= 400) failed.push(`${r.url()} (HTTP ${r.status()})`);
    });
  }, 240_000);
  afterAll(async () => {
    await close?.();
    server?.kill();
    if (outDir) rmSync(outDir, { recursive: true, force: true });
  });

  it('loads the model from the served folder and every masked answer is valid', async () => {
    await page.goto(url);
    await page.waitForSelector('#status[data-state="done"], #status[data-state="error"]', { timeout: 180_000 });
    const status = await page.textContent('#status');
    await page.screenshot({ path: join(ROOT, '.cache', 'browser-llm.png'), fullPage: true });
    expect(status).toBe('done: 12/12 answers valid');
    expect(outside).toEqual([]);
    // transformers.js probes optional files (generation_config.json …); a 404 for those is expected.
    expect(
      failed.filter((f) => !/generation_config\.json|preprocessor_config\.json|processor_config\.json/.test(f)),
    ).toEqual([]);
  }, 240_000);
});

/**
 * The playground, for real: its static Vite build (demos/web/vite.config.ts) served by Python's `http.server`
 * (any static file server would do), in headless Chromium. It loads the bundled encoder through ONNX
 * Runtime Web from files in the build, trains in a Web Worker, keeps models in IndexedDB and steps
 * through requests. Any failed request or request off localhost fails a test. A second browser
 * with a software WebGPU adapter (SwiftShader) runs the encoder on ONNX Runtime's WebGPU backend.
 * Screenshots land in .cache/ (docs/browser-and-mobile.md's come from there). Skipped with a message where
 * Debian's chromium or python3 is absent (.ci/run installs chromium).
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT } from './helpers.js';

const CHROMIUM = '/usr/bin/chromium';
const hasChromium = existsSync(CHROMIUM);
const hasPython = spawnSync('python3', ['--version']).status === 0;
if (!hasChromium)
  console.warn(`[dtdr tests] ${CHROMIUM} is absent: the browser tests are skipped (apt-get install chromium)`);
if (!hasPython) console.warn('[dtdr tests] python3 is absent: the browser tests of the built demo are skipped');

/** What a visitor downloads on the default (WASM) path: runtime wasm + encoder + code. */
export const DEMO_BUDGET_BYTES = 24 * 1024 * 1024;
/** The whole folder, with the lazily loaded WebGPU runtime and transformers.js (for the optional LLM). */
export const DEMO_FOLDER_BUDGET_BYTES = 80 * 1024 * 1024;
const BASE_ARGS = [
  '--headless',
  '--no-sandbox',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];
const SHOTS = join(ROOT, '.cache');

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

const MCP_TOOLS = JSON.stringify({
  tools: [
    {
      name: 'weather_get',
      description: 'Current weather and forecast for a city',
      inputSchema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
    },
    {
      name: 'calendar_add',
      description: 'Add an event to the calendar at a date and time',
      inputSchema: { type: 'object', properties: { title: { type: 'string' } } },
    },
    {
      name: 'umbrella_reminder',
      description: 'Remind the user to take an umbrella',
      inputSchema: { type: 'object', properties: {} },
    },
    {
      name: 'music_play',
      description: 'Play a song, album or playlist',
      inputSchema: { type: 'object', properties: { query: { type: 'string' } } },
    },
  ],
});
const MCP_DEMOS = [
  {
    query: 'Will it rain in Oslo tomorrow? remind me to take an umbrella if so',
    tools: ['weather_get', 'umbrella_reminder'],
  },
  { query: 'Check the weather in Paris and remind me about an umbrella', tools: ['weather_get', 'umbrella_reminder'] },
  { query: 'Put lunch with Ana on my calendar for Friday', tools: ['calendar_add'] },
  { query: 'Add the dentist appointment to my calendar', tools: ['calendar_add'] },
  { query: 'Play some jazz', tools: ['music_play'] },
  { query: 'Play my running playlist', tools: ['music_play'] },
]
  .map((d) => JSON.stringify(d))
  .join('\n');
const OPENAI_TOOLS = JSON.stringify([
  {
    type: 'function',
    function: { name: 'flight_search', description: 'Search flights between two airports on a date' },
  },
  { type: 'function', function: { name: 'hotel_book', description: 'Book a hotel room in a city' } },
  {
    type: 'function',
    function: { name: 'currency_convert', description: 'Convert an amount of money between currencies' },
  },
]);

type Page = import('playwright-core').Page;
type Browser = import('playwright-core').Browser;

describe.skipIf(!hasChromium || !hasPython)(
  'the playground (static Vite build, served statically, headless Chromium)',
  () => {
    let outDir: string;
    let serverProcess: ChildProcess;
    let browser: Browser;
    let url: string;
    const outsideRequests: string[] = [];
    const failedRequests: string[] = [];
    const pageErrors: string[] = [];
    const consoleErrors: string[] = [];

    function watch(page: Page): { bytes: () => number } {
      // Distinct files: the training worker loads the same runtime and encoder files, which the HTTP cache serves.
      const sizes = new Map<string, number>();
      page.on('request', (r) => {
        if (!/^(http:\/\/127\.0\.0\.1[:/]|data:|blob:)/.test(r.url())) outsideRequests.push(r.url());
      });
      page.on('requestfailed', (r) => failedRequests.push(`${r.url()} (${r.failure()?.errorText})`));
      page.on('response', async (r) => {
        if (r.status() >= 400) failedRequests.push(`${r.url()} (HTTP ${r.status()})`);
        sizes.set(r.url(), Number(r.headers()['content-length'] ?? 0));
      });
      page.on('pageerror', (e) => pageErrors.push(e.message));
      page.on('console', (m) => {
        if (m.type() === 'error') consoleErrors.push(m.text());
      });
      return { bytes: () => [...sizes.values()].reduce((a, b) => a + b, 0) };
    }

    async function ready(page: Page) {
      await page.waitForSelector('#status[data-state="ready"], #status[data-state="error"]', { timeout: 150_000 });
      expect(await page.textContent('#status')).toMatch(/running on/);
    }

    async function trainAs(page: Page, name: string, method = 'dtdr-g') {
      await page.fill('#model-name', name);
      await page.selectOption('#method', method);
      await page.click('#train-go');
      await page.waitForSelector('#train-status[data-state="done"], #train-status[data-state="error"]', {
        timeout: 150_000,
      });
      expect(await page.textContent('#train-status')).toMatch(new RegExp(`saved to IndexedDB as "${name}"`));
    }

    beforeAll(async () => {
      mkdirSync(SHOTS, { recursive: true });
      outDir = mkdtempSync(join(tmpdir(), 'dtdr-demo-'));
      const { build } = await import('vite');
      await build({
        configFile: join(ROOT, 'demos/web/vite.config.ts'),
        logLevel: 'error',
        build: { outDir, emptyOutDir: true },
      });
      const port = await freePort();
      serverProcess = spawn(
        'python3',
        ['-m', 'http.server', String(port), '--bind', '127.0.0.1', '--directory', outDir],
        { stdio: 'ignore' },
      );
      url = `http://127.0.0.1:${port}/index.html`;
      for (let i = 0; i < 100; i++) {
        if (
          await fetch(url).then(
            (r) => r.ok,
            () => false,
          )
        )
          break;
        await new Promise((r) => setTimeout(r, 100));
      }
      const { chromium } = await import('playwright-core');
      browser = await chromium.launch({ executablePath: CHROMIUM, args: [...BASE_ARGS, '--disable-gpu'] });
    }, 180_000);
    afterAll(async () => {
      await browser?.close();
      serverProcess?.kill();
      if (outDir) rmSync(outDir, { recursive: true, force: true });
    });

    it(`builds into a static folder: the default path within ${DEMO_BUDGET_BYTES / 2 ** 20} MiB, the folder within ${DEMO_FOLDER_BUDGET_BYTES / 2 ** 20} MiB`, () => {
      const files = readdirSync(join(outDir, 'assets'));
      expect(files.some((f) => f.endsWith('.wasm'))).toBe(true);
      expect(files.some((f) => f.endsWith('.onnx'))).toBe(true);
      expect(folderBytes(outDir)).toBeLessThanOrEqual(DEMO_FOLDER_BUDGET_BYTES);
    });

    describe('one visitor, one browser profile', () => {
      let page: Page;
      let traffic: { bytes: () => number };
      beforeAll(async () => {
        page = await browser.newPage({ viewport: { width: 1200, height: 900 } });
        traffic = watch(page);
      });

      it('trains the demo set in a Web Worker with progress while the page stays responsive, then plans a request', async () => {
        await page.goto(url);
        await ready(page);
        expect(await page.textContent('#data-summary')).toBe('27 tools, 3000 demonstrations.');
        await page.click('#train-go');
        // Mid-training: progress has moved, training is not over, and the page still answers.
        await page.waitForFunction(
          () => Number(document.querySelector<HTMLProgressElement>('#train-progress')!.dataset.updates) >= 3,
          null,
          { timeout: 60_000 },
        );
        const during = await page.evaluate(() => ({
          state: document.querySelector<HTMLElement>('#train-status')!.dataset.state,
          phase: document.querySelector('#train-phase')!.textContent,
        }));
        expect(during.state).toBe('training');
        expect(during.phase).not.toBe('idle');
        const shot = await page.locator('#train').screenshot({ path: join(SHOTS, 'playground-training.png') });
        expect(shot.length).toBeGreaterThan(5_000); // a real picture of the progress bar mid-training
        await page.waitForSelector('#train-status[data-state="done"]', { timeout: 150_000 });
        expect(Number(await page.getAttribute('#train-progress', 'data-updates'))).toBeGreaterThan(5);

        await page.fill('#query', 'Email the quarterly report to Maria');
        await page.click('#step-reset');
        await page.waitForSelector('#candidates table');
        expect(await page.textContent('#why')).toMatch(/^(Confident|Unsure)/);
        await page.click('#step-auto');
        await page.waitForSelector('#plan', { timeout: 30_000 });
        const plan = await page.textContent('#plan');
        expect(plan).toMatch(/email_send → END$/);
        expect(await page.textContent('#prompt')).toContain('<tools>');
        expect(await page.textContent('#prompt-tokens')).toMatch(/saving of \d+%/);
        // What a visitor downloaded on this path: code, encoder, tokenizer, the WASM runtime.
        expect(traffic.bytes()).toBeLessThanOrEqual(DEMO_BUDGET_BYTES);
        console.log(
          `[dtdr tests] the playground's default path fetched ${(traffic.bytes() / 1e6).toFixed(1)} MB of distinct files`,
        );
        // No WebGPU adapter in this browser (--disable-gpu): the page starts on WASM and says why.
        expect(await page.getAttribute('#status', 'data-backend')).toBe('wasm');
        expect(await page.textContent('#status')).toMatch(/running on wasm · no WebGPU adapter in this browser$/);
        expect(
          (await page.screenshot({ path: join(SHOTS, 'playground-start-wasm.png'), fullPage: true })).length,
        ).toBeGreaterThan(5_000);
        await page.click('#step-reset');
        await page.waitForSelector('#candidates table');
        expect(
          (await page.locator('#step').screenshot({ path: join(SHOTS, 'playground-demo.png') })).length,
        ).toBeGreaterThan(5_000);
      }, 240_000);

      it('trains on your own tools (an MCP tools/list result) and demonstrations, and steps through by hand', async () => {
        await page.fill('#tools', MCP_TOOLS);
        await page.fill('#demos', MCP_DEMOS);
        expect(await page.textContent('#data-summary')).toBe('4 tools, 6 demonstrations.');
        await trainAs(page, 'weather-tools');
        await page.fill('#query', 'What is the weather in Rome? remind me about an umbrella');
        await page.click('#step-reset');
        await page.waitForSelector('#candidates tr[data-tool]');
        expect(await page.getAttribute('#candidates tbody tr:first-child', 'data-tool')).toBe('weather_get');
        await page.click('#candidates tr[data-tool="weather_get"] button');
        await page.waitForFunction(() => document.querySelector('#history')!.textContent.includes('weather_get'));
        await page.waitForSelector('#candidates tr[data-tool="umbrella_reminder"]');
        const hermes = await page.textContent('#prompt');
        expect(hermes).toContain('<tools>');
        await page.selectOption('#format', 'openai');
        await page.waitForFunction((before) => document.querySelector('#prompt')!.textContent !== before, hermes);
        expect(await page.textContent('#prompt')).toContain('"tool_choice": "auto"');
        expect(
          (await page.locator('#step').screenshot({ path: join(SHOTS, 'playground-own-tools.png') })).length,
        ).toBeGreaterThan(5_000);
        // The playground offers the paper's methods: they train in its worker and rank on its page (dtdr/methods).
        await trainAs(page, 'weather-c', 'dtdr-c');
        await page.click('#step-reset');
        await page.waitForSelector('#candidates tr[data-tool]');
        await page.click('button[aria-label="delete model weather-c"]');
        await page.waitForFunction(() => !document.querySelector('#model-list li[data-model="weather-c"]'));
      }, 200_000);

      it('starts from the tools alone (OpenAI tools, no demonstrations), and says why it widens', async () => {
        await page.fill('#tools', OPENAI_TOOLS);
        await page.click('#tools-only');
        expect(await page.textContent('#data-summary')).toMatch(/^3 tools, no demonstrations/);
        await trainAs(page, 'tools-only');
        await page.selectOption('#format', 'hermes');
        await page.fill('#query', 'Convert 200 euros to yen');
        await page.click('#step-reset');
        await page.waitForSelector('#candidates tr[data-tool]');
        expect(await page.getAttribute('#candidates tbody tr:first-child', 'data-tool')).toBe('currency_convert');
        expect(await page.textContent('#why')).toMatch(/no demonstrations/);
        expect(
          (await page.locator('#step').screenshot({ path: join(SHOTS, 'playground-tools-only.png') })).length,
        ).toBeGreaterThan(5_000);
      }, 200_000);

      it('rejects bad input with a message naming the problem, before training', async () => {
        await page.fill('#tools', '[{"type": "function", "function": {"description": "no name"}}]');
        expect(await page.textContent('#data-summary')).toMatch(/\[0\]\.function\.name/);
        await page.fill('#tools', OPENAI_TOOLS);
        await page.fill('#demos', '{"query": "fly to Rome", "tools": ["teleport"]}');
        expect(await page.textContent('#data-summary')).toMatch(/"teleport", which is not in the tool list/);
        await page.click('#train-go');
        expect(await page.textContent('#train-status')).toMatch(/teleport/);
      });

      it('keeps models in IndexedDB across a reload; lists, compares and deletes them', async () => {
        await page.reload();
        await ready(page);
        const names = async () =>
          page.$$eval('#model-list li[data-model]', (items) => items.map((i) => (i as HTMLElement).dataset.model));
        expect(await names()).toEqual(['demo', 'tools-only', 'weather-tools']);
        await page.click('button[aria-label="use model weather-tools"]');
        await page.waitForSelector('#model-list li.selected[data-model="weather-tools"]');
        await page.click('button[aria-label="use model demo"]');
        await page.waitForSelector('#model-list li.selected[data-model="demo"]');
        await page.fill('#query', 'Find me a pharmacy that is open and guide me there');
        await page.click('#step-reset');
        await page.waitForSelector('#candidates table');
        await page.check('#model-list li[data-model="weather-tools"] input[type=checkbox]');
        await page.waitForSelector('#compare table');
        expect(await page.$$eval('#compare > table > thead th', (ths) => ths.map((t) => t.textContent))).toEqual([
          'demo (dtdr-g)',
          'weather-tools (dtdr-g)',
        ]);
        await page.locator('#compare').scrollIntoViewIfNeeded();
        expect(
          (await page.screenshot({ path: join(SHOTS, 'playground-compare.png'), fullPage: false })).length,
        ).toBeGreaterThan(5_000);
        await page.click('button[aria-label="delete model tools-only"]');
        await page.waitForFunction(() => !document.querySelector('#model-list li[data-model="tools-only"]'));
        expect(await names()).toEqual(['demo', 'weather-tools']);
        expect(pageErrors).toEqual([]);
        expect(consoleErrors).toEqual([]);
        expect(failedRequests).toEqual([]);
        expect(outsideRequests).toEqual([]);
      }, 200_000);
    });

    it('works on a phone-sized viewport: nothing wider than the screen, controls reachable by keyboard', async () => {
      const context = await browser.newContext({
        viewport: { width: 390, height: 844 },
        deviceScaleFactor: 2,
        isMobile: true,
        hasTouch: true,
      });
      const page = await context.newPage();
      watch(page);
      await page.goto(url);
      await ready(page);
      const overflow = await page.evaluate(
        () => document.documentElement.scrollWidth - document.documentElement.clientWidth,
      );
      expect(overflow).toBeLessThanOrEqual(0);
      // Every form control has a label a screen reader can announce.
      const unlabelled = await page.$$eval('input, select, textarea', (els) =>
        els.filter((e) => !(e as HTMLInputElement).labels?.length && !e.getAttribute('aria-label')).map((e) => e.id),
      );
      expect(unlabelled).toEqual([]);
      // Keyboard only: tools pasted, demonstrations cleared, trained, a request started.
      await page.fill('#tools', OPENAI_TOOLS);
      await page.focus('#tools-only');
      await page.keyboard.press('Enter');
      await page.fill('#model-name', 'phone');
      await page.focus('#train-go');
      await page.keyboard.press('Enter');
      await page.waitForSelector('#train-status[data-state="done"]', { timeout: 60_000 });
      await page.fill('#query', 'Book a hotel in Lisbon');
      await page.focus('#query');
      await page.keyboard.press('Tab');
      expect(await page.evaluate(() => document.activeElement?.id)).toBe('step-reset');
      await page.keyboard.press('Enter');
      await page.waitForSelector('#candidates tr[data-tool="hotel_book"]');
      expect(
        await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth),
      ).toBeLessThanOrEqual(0);
      await page.locator('#step').scrollIntoViewIfNeeded();
      expect(
        (await page.screenshot({ path: join(SHOTS, 'playground-phone.png'), fullPage: false })).length,
      ).toBeGreaterThan(5_000);
      await context.close();
      expect(pageErrors).toEqual([]);
    }, 120_000);

    describe('the WebGPU backend, on a software adapter (SwiftShader)', () => {
      let gpuBrowser: Browser;
      let adapter: string | null = null;
      beforeAll(async () => {
        const { chromium } = await import('playwright-core');
        gpuBrowser = await chromium.launch({
          executablePath: CHROMIUM,
          args: [
            ...BASE_ARGS,
            '--enable-unsafe-webgpu',
            '--enable-unsafe-swiftshader',
            '--use-webgpu-adapter=swiftshader',
          ],
        });
        const probe = await gpuBrowser.newPage();
        await probe.goto(url.replace('index.html', 'favicon-probe'), { waitUntil: 'commit' }).catch(() => undefined);
        adapter = await probe.evaluate(async () => {
          const gpu = (
            navigator as Navigator & {
              gpu?: { requestAdapter(): Promise<{ info?: { architecture?: string } } | null> };
            }
          ).gpu;
          const a = await gpu?.requestAdapter();
          return a ? (a.info?.architecture ?? 'unknown') : null;
        });
        await probe.close();
        if (!adapter)
          console.warn(
            '[dtdr tests] this Chromium exposes no WebGPU adapter even with SwiftShader: the WebGPU test is skipped',
          );
      }, 60_000);
      afterAll(async () => gpuBrowser?.close());

      it('starts on WebGPU where an adapter exists, says so, plans a request, states what the LLM needs before any request, and logs no console error', async (ctx) => {
        if (!adapter) return ctx.skip();
        const page = await gpuBrowser.newPage({ viewport: { width: 1200, height: 900 } });
        const hub: string[] = [];
        page.on('request', (r) => {
          if (/huggingface|hf\.co/.test(r.url())) hub.push(r.url());
        });
        watch(page);
        await page.goto(url);
        await ready(page);
        expect(await page.getAttribute('#status', 'data-backend')).toBe('webgpu');
        expect(await page.textContent('#status')).toMatch(
          /running on webgpu \(swiftshader\) · WebGPU adapter found \(swiftshader\)$/,
        );
        expect(await page.inputValue('#backend-choice')).toBe('webgpu');
        await trainAs(page, 'demo');
        await page.fill('#query', 'Email the quarterly report to Maria');
        await page.click('#step-reset');
        await page.waitForSelector('#candidates table');
        await page.click('#step-auto');
        await page.waitForSelector('#plan', { timeout: 30_000 });
        expect(await page.textContent('#plan')).toMatch(/email_send → END$/);
        // The LLM: what it needs is on the page before anything is asked; the hub only with the box ticked.
        const llm = await page.textContent('#llm-status');
        expect(llm).toMatch(/its folder served by this site at \/models\/onnx-community\/Qwen3-0\.6B-ONNX\//);
        expect(llm).toMatch(/permission to download it from the Hugging Face hub/);
        expect(llm).toContain('Nothing is requested from the hub unless you tick the box.');
        expect(await page.isChecked('#llm-remote')).toBe(false);
        expect(
          (await page.screenshot({ path: join(SHOTS, 'playground-start-webgpu.png'), fullPage: true })).length,
        ).toBeGreaterThan(5_000);
        expect(hub).toEqual([]);
        expect(pageErrors).toEqual([]);
        expect(consoleErrors).toEqual([]);
        expect(failedRequests).toEqual([]);
        expect(outsideRequests).toEqual([]);
        await page.close();
      }, 240_000);

      it("runs the bundled encoder on ONNX Runtime Web's WebGPU backend: the page says so, embeddings match WASM within 1e-4, plans are identical", async (ctx) => {
        if (!adapter) return ctx.skip();
        const page = await gpuBrowser.newPage({ viewport: { width: 1200, height: 900 } });
        watch(page);
        await page.goto(`${url}?backend=webgpu`);
        await ready(page);
        expect(await page.getAttribute('#status', 'data-backend')).toBe('webgpu');
        expect(await page.textContent('#status')).toContain('running on webgpu (swiftshader)');
        await trainAs(page, 'demo');
        await page.click('#backend-check');
        await page.waitForSelector('#backend-result[data-max-diff], #backend-result[data-error]', { timeout: 120_000 });
        expect(await page.getAttribute('#backend-result', 'data-error')).toBeNull();
        expect(Number(await page.getAttribute('#backend-result', 'data-max-diff'))).toBeLessThanOrEqual(1e-4);
        expect(await page.getAttribute('#backend-result', 'data-plans-same')).toBe(
          await page.getAttribute('#backend-result', 'data-plans'),
        );
        expect(
          (await page.locator('#backend').screenshot({ path: join(SHOTS, 'playground-webgpu.png') })).length,
        ).toBeGreaterThan(5_000);
        expect(pageErrors).toEqual([]);
        expect(consoleErrors).toEqual([]);
        expect(failedRequests).toEqual([]);
        expect(outsideRequests).toEqual([]);
      }, 240_000);
    });
  },
);

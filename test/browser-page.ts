/**
 * A test page in headless Chromium: `root` (an index.html and its modules) built by Vite into a
 * temporary folder, served there by Python's `http.server` on localhost, opened in a page that
 * records every request off localhost (`outside`) and every failed one (`failed`). Used by the
 * in-browser tests of a local LM and of the refit worker; `ready` is false where Debian's chromium
 * or python3 is absent.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll } from 'vitest';
import { ROOT } from './helpers.js';

export const CHROMIUM = '/usr/bin/chromium';
export const browserReady = existsSync(CHROMIUM) && spawnSync('python3', ['--version']).status === 0;

/** Debian's headless Chromium, sandbox and GPU off, no background traffic (a request off localhost fails tests). */
export async function launchChromium(): Promise<Browser> {
  const { chromium } = await import('playwright-core');
  return chromium.launch({
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
}

export interface ServedPage {
  url: string;
  page: Page;
  outside: string[];
  failed: string[];
  close(): Promise<void>;
}

/** Builds `root` (relative to the repository), lets `prepare` add files to the build, serves it and opens a page. */
export async function servePage(root: string, prepare?: (outDir: string) => void): Promise<ServedPage> {
  const outDir = mkdtempSync(join(tmpdir(), 'dtdr-page-'));
  let server: ChildProcess | undefined;
  let closeBrowser: (() => Promise<void>) | undefined;
  const close = async () => {
    await closeBrowser?.();
    server?.kill();
    rmSync(outDir, { recursive: true, force: true });
  };
  try {
    const { build } = await import('vite');
    await build({
      root: join(ROOT, root),
      base: './',
      logLevel: 'error',
      configFile: false,
      publicDir: false,
      build: { outDir, emptyOutDir: true, target: 'es2022', chunkSizeWarningLimit: 4096 },
      worker: { format: 'es' },
    });
    prepare?.(outDir);
    const port = await new Promise<number>((done) => {
      const s = createServer().listen(0, '127.0.0.1', () => {
        const { port } = s.address() as { port: number };
        s.close(() => done(port));
      });
    });
    server = spawn('python3', ['-m', 'http.server', String(port), '--bind', '127.0.0.1', '--directory', outDir], {
      stdio: 'ignore',
    });
    const url = `http://127.0.0.1:${port}/index.html`;
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
    const browser = await launchChromium();
    closeBrowser = () => browser.close();
    const page = await browser.newPage();
    const outside: string[] = [];
    const failed: string[] = [];
    page.on('request', (r) => {
      if (!/^(http:\/\/127\.0\.0\.1[:/]|data:|blob:)/.test(r.url())) outside.push(r.url());
    });
    page.on('response', (r) => {
      if (r.status() >= 400) failed.push(`${r.url()} (HTTP ${r.status()})`);
    });
    return { url, page, outside, failed, close };
  } catch (error) {
    await close();
    throw error;
  }
}

/** Serves `root` for the enclosing describe block (built before its tests, closed after them). */
export function servedPage(root: string, prepare?: (outDir: string) => void): () => ServedPage {
  let served: ServedPage | undefined;
  beforeAll(async () => {
    served = await servePage(root, prepare);
  }, 240_000);
  afterAll(async () => {
    await served?.close();
  });
  return () => served!;
}

/** Opens the page, waits until its `#status` says done or error, saves a screenshot to .cache/`shot`, and returns the status. */
export async function pageStatus(served: ServedPage, shot: string): Promise<string | null> {
  await served.page.goto(served.url);
  await served.page.waitForSelector('#status[data-state="done"], #status[data-state="error"]', { timeout: 180_000 });
  await served.page.screenshot({ path: join(ROOT, '.cache', shot), fullPage: true });
  return served.page.textContent('#status');
}

/**
 * The bundler and runtime recipes of docs/browser-and-mobile.md (the README's browser section links them), run exactly as written against the package a user
 * installs: `npm pack` of this folder (its built dist/), unpacked into an empty app folder's
 * node_modules beside a copy of dtdr's production dependencies (what `npm install dtdr` puts
 * there, copied from this clone so that nothing is downloaded). Each recipe is the code block after
 * a `<!-- recipe:FILE` marker there, written to FILE in the app:
 *
 *   - vite.config.js, main.js, worker.js: a page that plans in a Web Worker with the shipped demo
 *     model (`dtdr/demo-model?url`), in Vite's dev server (a clean .vite cache) and from `vite
 *     build` served statically, in headless Chromium: it must show the candidates, with no page
 *     error and no failed request;
 *   - demo-model.mjs: Node resolves `dtdr/demo-model` through the package and plans with it;
 *   - build.mjs, app.js: esbuild bundles a page and copies the encoder, ONNX Runtime's wasm and the
 *     demo model beside it, as the README says; served statically, the page must plan.
 *
 * Skipped with a message where dist/ is not built or Debian's chromium is absent.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHROMIUM, launchChromium } from './browser-page.js';
import { ROOT } from './helpers.js';
import { packedTarball } from './packed.js';

const hasBuild = existsSync(join(ROOT, 'dist', 'index.js'));
const hasChromium = existsSync(CHROMIUM);
if (!hasBuild) console.warn('[dtdr tests] dist/ is not built (npm run build): the README recipe tests are skipped');
if (!hasChromium) console.warn(`[dtdr tests] ${CHROMIUM} is absent: the README's browser recipes are not run`);

/** The code block after `<!-- recipe:NAME` in docs/browser-and-mobile.md (linked from the README). */
export function readmeRecipe(name: string): string {
  const readme = readFileSync(join(ROOT, 'docs', 'browser-and-mobile.md'), 'utf8');
  const marker = readme.indexOf(`<!-- recipe:${name}`);
  const start = readme.indexOf('```', marker);
  const body = readme.indexOf('\n', start) + 1;
  const end = readme.indexOf('\n```', body);
  if (marker < 0 || start < 0 || end < 0) throw new Error(`docs/browser-and-mobile.md has no recipe:${name} block`);
  return readme.slice(body, end + 1);
}

async function freePort(): Promise<number> {
  return new Promise((done) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => done(port));
    });
  });
}

async function waitForHttp(url: string): Promise<void> {
  for (let i = 0; i < 150; i++) {
    if (
      await fetch(url).then(
        (r) => r.ok,
        () => false,
      )
    )
      return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${url} never answered`);
}

const PAGE =
  '<!doctype html>\n<html><head><meta charset="utf-8"><link rel="icon" href="data:,"></head>\n<body><p id="out">loading</p><script type="module" src="./main.js"></script></body></html>\n';

describe.skipIf(!hasBuild)('the README recipes, against the packed package', () => {
  let work: string;
  let app: string;
  beforeAll(() => {
    work = mkdtempSync(join(tmpdir(), 'dtdr-recipes-'));
    app = join(work, 'app');
    const tarball = packedTarball();
    mkdirSync(join(app, 'node_modules', 'dtdr'), { recursive: true });
    const untar = spawnSync('tar', ['-xzf', tarball, '-C', join(app, 'node_modules', 'dtdr'), '--strip-components=1']);
    if (untar.status !== 0) throw new Error(String(untar.stderr));
    // dtdr's production dependency tree, as npm laid it out here (copied: a symlink would put the
    // files outside the app, which Vite's dev server refuses to serve).
    const tree = spawnSync('npm', ['ls', '--omit=dev', '--all', '--parseable'], { cwd: ROOT, encoding: 'utf8' });
    for (const path of tree.stdout.trim().split('\n').slice(1)) {
      const rel = relative(ROOT, path);
      if (rel.startsWith('..') || !existsSync(path)) continue;
      mkdirSync(dirname(join(app, rel)), { recursive: true });
      cpSync(path, join(app, rel), { recursive: true });
    }
    symlinkSync(join(ROOT, 'node_modules', 'vite'), join(app, 'node_modules', 'vite'), 'dir'); // the app's dev dependencies
    symlinkSync(join(ROOT, 'node_modules', 'esbuild'), join(app, 'node_modules', 'esbuild'), 'dir');
    mkdirSync(join(app, 'node_modules', '@esbuild'), { recursive: true });
    for (const platform of readdirSync(join(ROOT, 'node_modules', '@esbuild')))
      symlinkSync(
        join(ROOT, 'node_modules', '@esbuild', platform),
        join(app, 'node_modules', '@esbuild', platform),
        'dir',
      );
    writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'recipes', private: true, type: 'module' }));
    writeFileSync(join(app, 'index.html'), PAGE);
    for (const file of ['vite.config.js', 'main.js', 'worker.js', 'demo-model.mjs', 'build.mjs', 'app.js'])
      writeFileSync(join(app, file), readmeRecipe(file));
  }, 120_000);
  afterAll(() => {
    if (work) rmSync(work, { recursive: true, force: true });
  });

  it('the package exports its demo model as dtdr/demo-model', () => {
    const pkg = JSON.parse(readFileSync(join(app, 'node_modules', 'dtdr', 'package.json'), 'utf8'));
    expect(pkg.exports['./demo-model']).toBe('./public/dtdr-demo.model.dtdr');
    expect(existsSync(join(app, 'node_modules', 'dtdr', 'public', 'dtdr-demo.model.dtdr'))).toBe(true);
  });

  it('Node: demo-model.mjs resolves dtdr/demo-model through the package and plans with it', () => {
    const r = spawnSync(process.execPath, ['demo-model.mjs'], { cwd: app, encoding: 'utf8' });
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    expect(r.stdout.trim().split(', ')).toContain('contacts_search');
  }, 60_000);

  describe.skipIf(!hasChromium)('in Chromium: the page plans in a Web Worker with the demo model', () => {
    let browser: import('playwright-core').Browser;
    const children: ChildProcess[] = [];
    beforeAll(async () => {
      browser = await launchChromium();
    }, 60_000);
    afterAll(async () => {
      await browser?.close();
      for (const c of children) c.kill();
    });

    async function planned(url: string): Promise<{ text: string; problems: string[] }> {
      const page = await browser.newPage();
      const problems: string[] = [];
      page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
      // Chromium reports a HEAD fetch (loadEncoder asking whether an optional file exists) as
      // aborted once its headers arrive; its status is still checked by the response handler.
      page.on('requestfailed', (r) => {
        if (r.method() !== 'HEAD') problems.push(`failed: ${r.url()}`);
      });
      page.on('response', (r) => {
        if (r.status() >= 400) problems.push(`HTTP ${r.status()}: ${r.url()}`);
      });
      page.on('console', (m) => {
        if (m.type() === 'error') problems.push(`console error: ${m.text()}`);
      });
      await page.goto(url);
      await page
        .waitForFunction(() => document.querySelector('#out')!.textContent !== 'loading', null, { timeout: 60_000 })
        .catch(() => undefined);
      const text = (await page.textContent('#out')) ?? '';
      await page.close();
      return { text, problems };
    }

    it("in Vite's dev server, from a clean .vite cache", async () => {
      rmSync(join(app, 'node_modules', '.vite'), { recursive: true, force: true });
      const port = await freePort();
      const server = spawn(
        process.execPath,
        [join(ROOT, 'node_modules/vite/bin/vite.js'), '--port', String(port), '--strictPort', '--host', '127.0.0.1'],
        { cwd: app, stdio: 'ignore' },
      );
      children.push(server);
      await waitForHttp(`http://127.0.0.1:${port}/`);
      const { text, problems } = await planned(`http://127.0.0.1:${port}/`);
      expect(problems).toEqual([]);
      expect(text).toMatch(/^Email the quarterly report to Maria: (\w+ \d\.\d\d, )*contacts_search \d\.\d\d/);
    }, 120_000);

    it('from vite build, served as static files', async () => {
      const build = spawnSync(
        process.execPath,
        [join(ROOT, 'node_modules/vite/bin/vite.js'), 'build', '--logLevel', 'error'],
        { cwd: app, encoding: 'utf8' },
      );
      expect(build.stderr).toBe('');
      expect(build.status).toBe(0);
      const port = await freePort();
      const server = spawn(
        'python3',
        ['-m', 'http.server', String(port), '--bind', '127.0.0.1', '--directory', join(app, 'dist')],
        { stdio: 'ignore' },
      );
      children.push(server);
      await waitForHttp(`http://127.0.0.1:${port}/index.html`);
      const { text, problems } = await planned(`http://127.0.0.1:${port}/index.html`);
      expect(problems).toEqual([]);
      expect(text).toMatch(/^Email the quarterly report to Maria: (\w+ \d\.\d\d, )*contacts_search \d\.\d\d/);
    }, 180_000);

    it('from esbuild: build.mjs bundles app.js and copies what the README lists, served as static files', async () => {
      const build = spawnSync(process.execPath, ['build.mjs'], { cwd: app, encoding: 'utf8' });
      expect(build.stderr).toBe('');
      expect(build.status).toBe(0);
      writeFileSync(join(app, 'public', 'index.html'), PAGE.replace('./main.js', './app.js'));
      const port = await freePort();
      const server = spawn(
        'python3',
        ['-m', 'http.server', String(port), '--bind', '127.0.0.1', '--directory', join(app, 'public')],
        { stdio: 'ignore' },
      );
      children.push(server);
      await waitForHttp(`http://127.0.0.1:${port}/index.html`);
      const { text, problems } = await planned(`http://127.0.0.1:${port}/index.html`);
      expect(problems).toEqual([]);
      expect(text.split(', ')).toContain('contacts_search');
    }, 180_000);
  });
});

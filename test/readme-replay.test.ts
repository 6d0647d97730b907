/**
 * A person following only the README trains on their own tools and demonstrations in a new app:
 * the README's "Your own data" is replayed in an empty folder. The package is what `npm pack`
 * ships (this checkout's built dist/), unpacked into the app's node_modules beside dtdr's
 * production dependencies (linked from this clone, so nothing is downloaded); the README's files
 * (`<!-- file:PATH` blocks) are written as they stand, its commands (`<!-- commands:your-data`)
 * run with npx, and its app code (`app.mjs`) run with node. The output of the last command must
 * be the README's printed block, and the whole replay must take minutes, not more.
 * Skipped with a message where dist/ is not built (`npm run build`).
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { allBlocks, readmeCommands, readmeDataFiles } from './readme-outputs.js';
import { ROOT } from './helpers.js';
import { packedTarball } from './packed.js';

const hasBuild = existsSync(join(ROOT, 'dist', 'node.js'));
if (!hasBuild) console.warn('[dtdr tests] dist/ is not built (npm run build): the README replay test is skipped');

describe.skipIf(!hasBuild)('the README\'s "Your own data", replayed in a new app', () => {
  let work: string;
  let app: string;
  const files = readmeDataFiles();
  const started = performance.now();

  beforeAll(() => {
    work = mkdtempSync(join(tmpdir(), 'dtdr-replay-'));
    app = join(work, 'app');
    mkdirSync(join(app, 'node_modules', '.bin'), { recursive: true });
    mkdirSync(join(app, 'node_modules', 'dtdr'));
    const untar = spawnSync('tar', [
      '-xzf',
      packedTarball(),
      '-C',
      join(app, 'node_modules', 'dtdr'),
      '--strip-components=1',
    ]);
    if (untar.status !== 0) throw new Error(String(untar.stderr));
    // dtdr's production dependencies, linked at the top of the app's node_modules as npm would hoist them.
    const tree = spawnSync('npm', ['ls', '--omit=dev', '--all', '--parseable'], { cwd: ROOT, encoding: 'utf8' });
    for (const path of tree.stdout.trim().split('\n').slice(1)) {
      const rel = relative(join(ROOT, 'node_modules'), path);
      if (rel.startsWith('..') || rel.includes('node_modules') || existsSync(join(app, 'node_modules', rel))) continue;
      mkdirSync(dirname(join(app, 'node_modules', rel)), { recursive: true });
      symlinkSync(path, join(app, 'node_modules', rel), 'dir');
    }
    symlinkSync('../dtdr/bin/dtdr.js', join(app, 'node_modules', '.bin', 'dtdr'));
    writeFileSync(
      join(app, 'package.json'),
      JSON.stringify({ name: 'my-app', private: true, type: 'module', dependencies: { dtdr: '^0.2.0' } }),
    );
    for (const [path, text] of files) {
      mkdirSync(dirname(join(app, path)), { recursive: true });
      writeFileSync(join(app, path), text);
    }
  }, 120_000);
  afterAll(() => {
    if (work) rmSync(work, { recursive: true, force: true });
  });

  it('the README gives eight tools and twenty demonstrations, each a chain over those tools', () => {
    const tools = (JSON.parse(files.get('my-app/tool_desc.json')!) as { nodes: { id: string; desc: string }[] }).nodes;
    expect(tools).toHaveLength(8);
    for (const t of tools) expect(t.desc.length).toBeGreaterThan(10);
    const chains = files
      .get('my-app/data.jsonl')!
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { query: string; tools: string[] });
    expect(chains).toHaveLength(20);
    const names = new Set(tools.map((t) => t.id));
    for (const c of chains) for (const t of c.tools) expect(names.has(t), t).toBe(true);
    expect(readdirSync(join(app, 'my-app')).sort()).toEqual(['data.jsonl', 'tool_desc.json']);
  });

  it("its commands train and answer with npx, offline, and print the README's block", () => {
    let last = '';
    for (const line of readmeCommands('your-data')) {
      const r = spawnSync('bash', ['-c', line], {
        cwd: app,
        encoding: 'utf8',
        timeout: 300_000,
        env: { ...process.env, npm_config_offline: 'true', npm_config_yes: 'false' },
      });
      expect(r.status, `${line}\n${r.stderr}`).toBe(0);
      last = r.stdout;
    }
    expect(existsSync(join(app, 'my-app.dtdr'))).toBe(true);
    expect('```\n' + last.trimEnd() + '\n```').toBe(allBlocks().get('your-data'));
  }, 300_000);

  it('its app code loads the model, answers, learns a run and saves it', () => {
    const r = spawnSync(process.execPath, ['app.mjs'], { cwd: app, encoding: 'utf8', timeout: 120_000 });
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    const [candidates, learned] = r.stdout.trim().split('\n');
    expect(candidates.split(', ')).toContain('contacts_find');
    expect(learned).toBe('runs learned: 1; demonstrations on file: 20');
    // the saved model keeps the run: loading it again knows it learned one
    const again = spawnSync(
      process.execPath,
      [
        '--input-type=module',
        '-e',
        "import { Dtdr, loadEncoder, readModelFile } from 'dtdr/node'; console.log(Dtdr.load(readModelFile('my-app.dtdr'), await loadEncoder()).learnedCount)",
      ],
      { cwd: app, encoding: 'utf8' },
    );
    expect(again.stdout.trim(), again.stderr).toBe('1');
  }, 120_000);

  it('takes minutes, not more (the whole replay, install included)', () => {
    expect((performance.now() - started) / 1000).toBeLessThan(600);
  });
});

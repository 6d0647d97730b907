/**
 * This checkout as `npm pack` ships it (its built dist/), packed once per test run however many
 * test files ask: the first caller packs into the run's folder (test/global-setup.ts), the others
 * wait for the tarball. Test files run in parallel processes, so the folder holds a lock.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { inject } from 'vitest';
import { ROOT } from './helpers.js';

const sleep = (ms: number) => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);

/** The path of the packed tarball of this checkout (`npm pack --ignore-scripts`: dist/ as built). */
export function packedTarball(timeoutMs = 120_000): string {
  const dir = inject('dtdrPackDir');
  const done = join(dir, 'tarball');
  const failed = join(dir, 'failed');
  try {
    mkdirSync(join(dir, 'lock'));
  } catch {
    // Another test file packs: wait for its tarball (or its error).
    const end = Date.now() + timeoutMs;
    while (!existsSync(done) && !existsSync(failed)) {
      if (Date.now() > end) throw new Error(`npm pack in another test file took over ${timeoutMs} ms`);
      sleep(100);
    }
    if (existsSync(failed)) throw new Error(readFileSync(failed, 'utf8'));
    return readFileSync(done, 'utf8');
  }
  const packed = spawnSync('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', dir], {
    cwd: ROOT,
    encoding: 'utf8',
  });
  if (packed.status !== 0) {
    writeFileSync(failed, `npm pack failed: ${packed.stderr}`);
    throw new Error(`npm pack failed: ${packed.stderr}`);
  }
  const tarball = join(dir, (JSON.parse(packed.stdout) as { filename: string }[])[0].filename);
  writeFileSync(`${done}.tmp`, tarball);
  renameSync(`${done}.tmp`, done);
  return tarball;
}

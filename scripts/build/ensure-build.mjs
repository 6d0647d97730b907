#!/usr/bin/env node
/**
 * `npm start` and `npm test` in a clone: builds dist/ (`npm run build`) when it is missing or older
 * than a source file, since the build runs at pack time (`prepack`), not at install. Quiet when
 * dist/ is current.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../..', import.meta.url));
const built = join(root, 'dist', 'cli', 'main.js');

function newestSource(dir) {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    newest = Math.max(newest, entry.isDirectory() ? newestSource(path) : statSync(path).mtimeMs);
  }
  return newest;
}

if (!existsSync(built) || statSync(built).mtimeMs < newestSource(join(root, 'src'))) {
  console.error(
    existsSync(built)
      ? 'dist/ is older than src/: building it (npm run build)'
      : 'dist/ is not built yet: building it (npm run build)',
  );
  const r = spawnSync('npm', ['run', '--silent', 'build'], { cwd: root, stdio: 'inherit' });
  process.exit(r.status ?? 1);
}

import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { Encoder } from '../src/core/base/encoder.js';

export const ROOT = fileURLToPath(new URL('..', import.meta.url));
export const SHARED_DATA = fileURLToPath(new URL('../../shared/data', import.meta.url));
export const hasSharedData = existsSync(`${SHARED_DATA}/ultratool/data.jsonl`);
// test/global-setup.ts says once that the real-data tests skip without it.

/** A tiny deterministic encoder: one axis per known word, so similarities are easy to reason about. */
export function wordAxisEncoder(words: string[]): Encoder {
  return {
    id: 'test-words',
    dimension: words.length,
    async embed(texts) {
      return texts.map((t) => {
        const v = new Float32Array(words.length);
        for (const w of t.toLowerCase().split(/\W+/)) {
          const i = words.indexOf(w);
          if (i >= 0) v[i] += 1;
        }
        const n = Math.hypot(...v);
        return n > 0 ? v.map((x) => x / n) : v;
      });
    },
  };
}

/** Runs the CLI from source (no build needed) and returns its exit code and output. */
export function runCli(args: string[], input?: string, cwd = ROOT, timeoutMs = 120_000) {
  const loader = `${ROOT}/node_modules/tsx/dist/loader.mjs`;
  const r = spawnSync(
    process.execPath,
    ['--import', cwd === ROOT ? 'tsx' : new URL(`file://${loader}`).href, `${ROOT}/src/cli/main.ts`, ...args],
    { cwd, input, encoding: 'utf8', timeout: timeoutMs },
  );
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

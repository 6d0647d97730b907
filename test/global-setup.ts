/**
 * Runs once before the suite (vitest globalSetup): says once, not once per test file, that the
 * real-data tests skip because ../shared/data is absent; and gives the test files one folder for
 * the packed tarball (test/packed.ts packs into it on first use, once for the whole run).
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { TestProject } from 'vitest/node';

declare module 'vitest' {
  export interface ProvidedContext {
    /** Where test/packed.ts packs this checkout once per run. */
    dtdrPackDir: string;
  }
}

/**
 * vitest runs a global setup once per project (`fast`, `slow`), in one process: the message is
 * keyed on that process, so one command says it once.
 */
const said = globalThis as { dtdrSharedAbsentSaid?: boolean };

export default function setup(project: TestProject): () => void {
  const shared = fileURLToPath(new URL('../../shared/data', import.meta.url));
  if (!said.dtdrSharedAbsentSaid && !existsSync(`${shared}/ultratool/data.jsonl`))
    console.warn(`[dtdr tests] ${shared} is absent: the real-data tests are skipped`);
  said.dtdrSharedAbsentSaid = true;
  const packDir = mkdtempSync(join(tmpdir(), 'dtdr-pack-'));
  project.provide('dtdrPackDir', packDir);
  return () => rmSync(packDir, { recursive: true, force: true });
}

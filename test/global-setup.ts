/**
 * Runs once before the suite (vitest globalSetup): says once, not once per test file, that the
 * real-data tests skip because ../shared/data is absent.
 */
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

export default function setup(): void {
  const shared = fileURLToPath(new URL('../../shared/data', import.meta.url));
  if (!existsSync(`${shared}/ultratool/data.jsonl`))
    console.warn(`[dtdr tests] ${shared} is absent: the real-data tests are skipped`);
}

/**
 * `npm run eval:app-life -- --from run.json --results FILE`: a saved run becomes the docs' app-life table, one row
 * per world, draw, path and N, with means over the seeds and the worst seed in brackets. (A helper declared as a
 * const below the script's entry point once made this end in a ReferenceError after the whole run.)
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const point = (seed: number, coverage: number, confidentMissRate: number) => ({
  world: 'demo',
  order: 'random',
  path: 'train',
  n: 30,
  seed,
  mrr: 0.5 + seed / 10,
  coverage,
  setSize: 4 + seed,
  confidentShare: 0.25,
  confidentMissRate,
});

describe('eval:app-life --from a saved run', () => {
  it('writes the app-life table: means over the seeds, the worst coverage and confident-miss in brackets', () => {
    const dir = mkdtempSync(join(tmpdir(), 'dtdr-app-life-'));
    const run = join(dir, 'run.json');
    const results = join(dir, 'results.json');
    writeFileSync(run, JSON.stringify([point(0, 0.9, 0.02), point(1, 0.96, 0.06)]));
    writeFileSync(results, JSON.stringify({ tables: { other: { kept: true } } }));
    execFileSync(
      process.execPath,
      ['--import', 'tsx', 'scripts/experiments/app-life.ts', '--from', run, '--results', results],
      { stdio: 'pipe' },
    );
    const tables = JSON.parse(readFileSync(results, 'utf8')).tables;
    expect(tables.other).toEqual({ kept: true });
    // MRR (0.5 + 0.6) / 2; coverage mean 0.93, worst 0.90; set (4 + 5) / 2; confident-miss mean 0.04, worst 0.06.
    expect(tables['app-life'].rows).toEqual([
      ['demo', 'random', 'train', '30', '2', '0.550', '0.930 (0.900)', '4.50', '0.250', '0.040 (0.060)'],
    ]);
  }, 60_000);
});

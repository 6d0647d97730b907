/**
 * The long fuzz run: the targets of test/fuzz.test.ts (JSON and binary model loaders with
 * structure-aware mutations of real saved models, each loaded model asked to rank; the dataset
 * reader; every answer parser), 100,000 cases each by default. Prints, per target, the cases run,
 * the exceptions that were not a DtdrError (with the first few), the max and p99 time per case, and
 * the five slowest cases run again (a slow case that is fast again was the machine, not the input).
 *
 *   npm run check -- fuzz [--runs N] [--seed S] [--target "JSON model loader"]
 *
 * Exits 1 when any case threw something other than a DtdrError.
 */
import { parseArgs } from 'node:util';
import { FUZZ_TARGETS, runTarget } from '../../test/fuzz-targets.js';
import '../../src/methods.js'; // every method, as the Node entry registers them

const { values } = parseArgs({
  options: {
    runs: { type: 'string', default: '100000' },
    seed: { type: 'string', default: '1' },
    target: { type: 'string' },
  },
});
const runs = Number(values.runs);
const seed = Number(values.seed);
if (!Number.isInteger(runs) || runs < 1 || !Number.isInteger(seed)) {
  console.error('usage: npm run check -- fuzz [--runs N ≥ 1] [--seed integer] [--target NAME]');
  process.exit(2);
}
const targets = FUZZ_TARGETS.filter((t) => !values.target || t.name === values.target);
console.log(`fuzz: ${runs.toLocaleString('en')} cases per target, seed ${seed}, node ${process.version}`);
console.log('| target | cases | non-DtdrError exceptions | max ms | p99 ms | 5 slowest re-run, max ms | wall s |');
console.log('|---|---:|---:|---:|---:|---:|---:|');
let bad = 0;
const details: string[] = [];
for (const target of targets) {
  const t0 = performance.now();
  const r = await runTarget(target, runs, seed);
  bad += r.failureCount;
  console.log(
    `| ${r.target} | ${r.cases.toLocaleString('en')} | ${r.failureCount} | ${r.maxMs.toFixed(2)} | ${r.p99Ms.toFixed(3)} | ${r.slowestRetimedMs.toFixed(2)} | ${((performance.now() - t0) / 1000).toFixed(1)} |`,
  );
  for (const f of r.failures) details.push(`${r.target} case ${f.index}: ${f.error}`);
}
if (details.length > 0) console.log(`\n${details.join('\n\n')}`);
process.exit(bad > 0 ? 1 : 0);

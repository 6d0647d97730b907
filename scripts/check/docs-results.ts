/**
 * Renders every figure block of README.md and docs/ from docs/results.json (test/docs-results.ts);
 * `--check` only compares (part of `npm run docs:check`); `--from a.json …` first replaces the
 * `eval` runs with `dtdr eval --json` outputs.
 * Usage: npm run check -- docs-results [--check] [--from FILE...]
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { relative } from 'node:path';
import {
  checkDocs,
  docFiles,
  evalRunFromJson,
  readResults,
  RESULTS_FILE,
  rewrite,
  ROOT,
} from '../../test/docs-results.js';

const args = process.argv.slice(2);
const results = readResults();
const from = args.includes('--from') ? args.slice(args.indexOf('--from') + 1).filter((a) => !a.startsWith('--')) : [];
if (from.length > 0) {
  const date = new Date().toISOString().slice(0, 10);
  for (const file of from) {
    const json = JSON.parse(readFileSync(file, 'utf8'));
    const [key, run] = evalRunFromJson(
      json,
      results.eval[`${json.dataset}${/novel/.test(json.split) ? '-novel' : ''}`],
      file,
      date,
    );
    results.eval[key] = run;
    console.log(`docs/results.json: eval.${key} from ${file}`);
  }
  writeFileSync(RESULTS_FILE, `${JSON.stringify(results, null, 1)}\n`);
}
if (args.includes('--check')) {
  const problems = checkDocs(results);
  for (const p of problems) console.error(`${p.file}: ${p.message}`);
  console.log(
    problems.length
      ? `docs:check: ${problems.length} problem(s)`
      : `docs: every figure comes from docs/results.json (${docFiles().length} files)`,
  );
  process.exitCode = problems.length ? 1 : 0;
} else {
  for (const file of docFiles()) {
    const text = readFileSync(file, 'utf8');
    const next = rewrite(text, results);
    if (next !== text) {
      writeFileSync(file, next);
      console.log(`${relative(ROOT, file)}: rewritten`);
    }
  }
}

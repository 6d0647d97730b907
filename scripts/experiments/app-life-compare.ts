/**
 * Two saved runs of `eval:app-life` (`--json`), before and after a change, side by side: every point where some
 * step is confident in either run (means over seeds, worst run in brackets), and, where given, full-data
 * `dtdr eval --json` outputs of DTDR-G before and after. For a decision's evidence table.
 *
 *   npm run eval:app-life -- --json before.json        (on the commit before)
 *   npm run eval:app-life -- --json after.json         (on the change)
 *   npm run experiment -- app-life-compare before.json after.json
 *     [--path train|learn] [--eval ultratool-before.json:ultratool-after.json …] [--command TEXT]
 *     [--results docs/results.json --table NAME]
 */
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { writeResultsTable } from '../bench/results.js';
import { bySeeds, meanOf as mean, worstOf, type Point } from './app-life.js';

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    eval: { type: 'string', multiple: true, default: [] },
    // One path (train or learn) only: at most a thousand runs the learn path refits to the trained model.
    path: { type: 'string' },
    results: { type: 'string' },
    table: { type: 'string' },
    command: { type: 'string' },
  },
});
if (positionals.length !== 2) {
  console.error(
    'usage: npm run experiment -- app-life-compare before.json after.json [--path train|learn] [--eval a.json:b.json …] [--results FILE --table NAME]',
  );
  process.exit(2);
}
const [before, after] = positionals.map((f) => JSON.parse(readFileSync(f, 'utf8')) as Point[]);

const [was, now] = [bySeeds(before), bySeeds(after)];

const rows: string[][] = [];
for (const [k, b] of was) {
  const a = now.get(k);
  if (!a || (mean(b, (p) => p.confidentShare) === 0 && mean(a, (p) => p.confidentShare) === 0)) continue;
  const p = b[0];
  if (values.path && p.path !== values.path) continue;
  const miss = (list: Point[]) =>
    `${mean(list, (q) => q.confidentMissRate).toFixed(3)} (${worstOf(list, (q) => q.confidentMissRate).toFixed(3)})`;
  rows.push([
    p.world,
    p.order,
    p.path,
    String(p.n),
    `${mean(b, (q) => q.confidentShare).toFixed(3)} → ${mean(a, (q) => q.confidentShare).toFixed(3)}`,
    `${miss(b)} → ${miss(a)}`,
    `${mean(b, (q) => q.setSize).toFixed(2)} → ${mean(a, (q) => q.setSize).toFixed(2)}`,
    `${mean(b, (q) => q.coverage).toFixed(3)} → ${mean(a, (q) => q.coverage).toFixed(3)}`,
  ]);
}

interface EvalRun {
  dataset: string;
  split: string;
  steps: number;
  results: Record<string, { coverage: number; setSize: number; confidentMissRate: number }>;
}
for (const pair of values.eval) {
  const [b, a] = pair.split(':').map((f) => JSON.parse(readFileSync(f, 'utf8')) as EvalRun);
  const [x, y] = [b.results['dtdr-g'], a.results['dtdr-g']];
  rows.push([
    `${b.dataset} (full data)`,
    b.split,
    'train',
    String(b.steps),
    '',
    `${x.confidentMissRate.toFixed(4)} → ${y.confidentMissRate.toFixed(4)}`,
    `${x.setSize.toFixed(3)} → ${y.setSize.toFixed(3)}`,
    `${x.coverage.toFixed(4)} → ${y.coverage.toFixed(4)}`,
  ]);
}

const columns = [
  'world',
  'draw',
  'path',
  'N (full data: test steps)',
  'confident',
  'confident-miss (worst)',
  'mean set',
  'coverage',
];
console.log(`| ${columns.join(' | ')} |`);
for (const r of rows) console.log(`| ${r.join(' | ')} |`);
if (values.results && values.table)
  writeResultsTable(values.results, values.table, {
    title: 'Before → after, every point where some step is confident',
    command:
      values.command ??
      `npm run experiment -- app-life-compare ${positionals.join(' ')}` +
        (values.path ? ` --path ${values.path}` : '') +
        values.eval.map((e) => ` --eval ${e}`).join(''),
    columns,
    align: ['left', 'left', 'left', 'right', 'right', 'right', 'right', 'right'],
    rows,
  });

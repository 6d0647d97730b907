/**
 * What the first-step fill (SelectOptions.fillFirstSteps, on by default) costs and gives on the full data: DTDR-G
 * trained on each shared dataset's training plans, every test step retrieved with the fill on and off. Mean set,
 * coverage (a set holding an acceptable tool), and at each plan's first step the share of the plan's tools in the
 * set (test/worlds/first-step.ts, at the first step of plans calling two tools or more, as the held-out benchmark
 * scores it). The fill only acts on a first day's first steps, where no step can be confident: a slice of the tools (Seal-Tools'
 * runs call a quarter of them) or too few held-out steps for a confident group (RestBench-TMDB's seventy runs).
 * Elsewhere the two rows are the same.
 *
 *   npm run experiment -- first-step-fill [--data ultratool,restbench-tmdb,seal-tools] [--results docs/results.json]
 */
import { existsSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { Dtdr } from '../../src/core/dtdr.js';
import { splitDataset } from '../../src/core/evaluation/evaluate.js';
import { planSteps } from '../../src/core/plans/plan.js';
import { readDatasetDir } from '../../src/data/node.js';
import { loadEncoder } from '../../src/encoders/node.js';
import { firstSteps, scoreFirstStepsEach } from '../../test/worlds/first-step.js';
import { printTable, recordFullRunOnly, refuser, writeResultsTable } from '../bench/results.js';
import '../../src/methods.js';

const DATA = 'ultratool,restbench-tmdb,seal-tools';
const { values } = parseArgs({
  options: { data: { type: 'string', default: DATA }, results: { type: 'string' } },
});
recordFullRunOnly(values, { data: DATA }, refuser('first-step-fill'));
const root = new URL('../../../shared/data/', import.meta.url).pathname;
const encoder = await loadEncoder();

const columns = [
  'data',
  'fillFirstSteps',
  'steps',
  'mean set',
  'coverage',
  "first step of plans calling two tools or more: the plan's tools in the set",
];
const FILL = [true, false];
const rows: string[][] = [];
for (const name of values.data.split(',')) {
  if (!existsSync(`${root}${name}/data.jsonl`)) {
    console.error(`${root}${name} is absent: skipped`);
    continue;
  }
  const dataset = readDatasetDir(`${root}${name}`);
  const split = splitDataset(dataset, { seed: 0 }); // dtdr eval's split
  const model = await Dtdr.train({ tools: dataset.tools, plans: split.train, encoder });
  const first = await scoreFirstStepsEach(
    model,
    firstSteps(split.test),
    FILL.map((fill) => ({ fillFirstSteps: fill })),
  );
  for (const [k, fill] of FILL.entries()) {
    let [steps, size, held] = [0, 0, 0];
    for (const plan of split.test)
      for (const step of planSteps(plan)) {
        const r = await model.retrieve(step.query, step.history, { fillFirstSteps: fill });
        steps++;
        size += r.candidates.length;
        if (r.candidates.some((c) => step.acceptable.includes(c.tool))) held++;
      }
    rows.push([
      name,
      fill ? 'true (default)' : 'false',
      String(steps),
      (size / steps).toFixed(3),
      (held / steps).toFixed(4),
      first[k].planRecall.toFixed(4),
    ]);
  }
}
printTable(columns, rows);
if (values.results)
  writeResultsTable(values.results, 'first-step-fill', {
    title: 'The first-step fill on the full data: DTDR-G with fillFirstSteps on and off',
    command: 'npm run experiment -- first-step-fill',
    columns,
    align: ['left', 'left', 'right', 'right', 'right', 'right'],
    rows,
  });

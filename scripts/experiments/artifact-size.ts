/**
 * Model file size and load time, measured: trains DTDR-C, DTDR-H and the default DTDR-G on every
 * UltraTool plan and reports each model's JSON and binary (v2) size, bytes per learned number,
 * and the median time to load the binary file back (decode + checks + rebuild; encoder excluded).
 *
 *   npm run experiment -- artifact-size [--data ../shared/data/ultratool] [--results docs/results.json]
 */
import { parseArgs } from 'node:util';
import { Dtdr } from '../../src/core/dtdr.js';
import { readDatasetDir } from '../../src/data/node.js';
import { loadEncoder } from '../../src/encoders/node.js';
import type { MethodName } from '../../src/core/retrieval/types.js';
import { median } from '../bench/stats.js';
import { recordFullRunOnly, refuser, writeResultsTable } from '../bench/results.js';
import '../../src/methods.js'; // every method, as the Node entry registers them

const { values } = parseArgs({
  options: { data: { type: 'string', default: '../shared/data/ultratool' }, results: { type: 'string' } },
});
recordFullRunOnly(values, { data: '../shared/data/ultratool' }, refuser('artifact-size'));
const rows: string[][] = [];
const dataset = readDatasetDir(values.data);
const encoder = await loadEncoder();

function countNumbers(v: unknown): number {
  if (typeof v === 'number') return 1;
  if (Array.isArray(v)) return v.reduce((s: number, x) => s + countNumbers(x), 0);
  if (v && typeof v === 'object') return Object.values(v).reduce((s: number, x) => s + countNumbers(x), 0);
  return 0;
}

console.log(
  `| model (${dataset.name}, ${dataset.plans.length} plans) | learned numbers | JSON | bytes/number | binary v2 | bytes/number | load binary (median of 7) |`,
);
console.log('|---|---:|---:|---:|---:|---:|---:|');
for (const method of ['dtdr-c', 'dtdr-h', 'dtdr-g'] as MethodName[]) {
  const model = await Dtdr.train({
    method,
    tools: dataset.tools,
    plans: dataset.plans,
    encoder,
    dataset: dataset.name,
  });
  const artifact = model.toJSON();
  const numbers = countNumbers(artifact.state);
  const json = JSON.stringify(artifact).length;
  const binary = model.toBinary();
  const times: number[] = [];
  for (let i = 0; i < 7; i++) {
    const t = performance.now();
    Dtdr.load(binary, encoder);
    times.push(performance.now() - t);
  }
  const kb = (n: number) => `${Math.round(n / 1024).toLocaleString('en')} KB`;
  const row = [method.toUpperCase(), numbers.toLocaleString('en'), kb(json), (json / numbers).toFixed(1)];
  row.push(kb(binary.length), (binary.length / numbers).toFixed(1), `${median(times).toFixed(0)} ms`);
  console.log(`| ${row.join(' | ')} |`);
  rows.push(row);
}
if (values.results)
  writeResultsTable(values.results, 'artifacts', {
    title: 'Model files on every UltraTool plan',
    command: 'npm run experiment -- artifact-size',
    columns: ['model', 'learned numbers', 'JSON', 'bytes/number', 'binary v2', 'bytes/number', 'load (median of 7)'],
    align: ['left', 'right', 'right', 'right', 'right', 'right', 'right'],
    rows,
  });

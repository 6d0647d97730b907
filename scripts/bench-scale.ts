/**
 * Cost against scale on seeded synthetic data (scripts/synthetic.ts): per method, the median time
 * per step of the ranking and its candidate set at 260, 4,000 and 16,000 tools, the fit time,
 * and the process's peak resident memory. Heads train 1 epoch here (ranking cost does not depend
 * on it). `npm run bench:scale [-- --tools 260,4000,16000 --plans 20000 --methods … --json out.json]`
 */
import { writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { splitDataset } from '../src/core/evaluate.js';
import { planSteps } from '../src/core/plan.js';
import type { MethodName, RankInput } from '../src/core/retrievers/types.js';
import { selectCandidates } from '../src/core/select.js';
import { contextText } from '../src/core/text.js';
import { fitRetriever, fitVectors, METHODS } from '../src/core/train.js';
import { loadEncoder } from '../src/encoders/node.js';
import { syntheticDataset } from './synthetic.js';

const { values } = parseArgs({ options: { tools: { type: 'string', default: '260,4000,16000' }, plans: { type: 'string', default: '20000' }, methods: { type: 'string' }, json: { type: 'string' }, passes: { type: 'string', default: '3' } } });
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const methods = (values.methods?.split(',') ?? METHODS) as MethodName[];
const encoder = await loadEncoder();
let peak = 0;
const sample = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 50);
const rows: { tools: number; plans: number; method: string; fitMs: number; rankMicros: number }[] = [];
for (const tools of values.tools!.split(',').map(Number)) {
  const data = syntheticDataset(tools, Number(values.plans), 0);
  const { train, test } = splitDataset(data, { seed: 0, testRatio: 0.02 });
  const steps = test.flatMap((p) => planSteps(p)).slice(0, 500);
  const queries = await encoder.embed(steps.map((s) => s.query));
  console.log(`\n${data.name}: ${train.length} demonstrations, ${tools} tools, ${steps.length} timed steps`);
  for (const method of methods) {
    const vectors = await fitVectors(method, data.tools, train, encoder, 3);
    const t0 = performance.now();
    const retriever = fitRetriever(method, data.tools, train, vectors, { head: { epochs: 1 } });
    const fitMs = performance.now() - t0;
    const contexts = retriever.needs.context ? await encoder.embed(steps.map((s) => contextText(s.query, s.history, retriever.historyLength))) : undefined;
    const inputs: RankInput[] = steps.map((s, i) => ({ query: s.query, history: s.history, queryVector: queries[i], contextVector: contexts?.[i] }));
    const passes: number[] = [];
    for (let p = 0; p < Number(values.passes); p++) {
      const start = performance.now();
      for (const input of inputs) selectCandidates(retriever.rank(input));
      passes.push(((performance.now() - start) * 1000) / inputs.length);
    }
    const rankMicros = median(passes);
    peak = Math.max(peak, process.memoryUsage().rss);
    rows.push({ tools, plans: train.length, method, fitMs, rankMicros });
    console.log(`${method.padEnd(8)} fit ${(fitMs / 1000).toFixed(1).padStart(6)} s   rank + set ${rankMicros.toFixed(0).padStart(6)} µs/step`);
  }
}
clearInterval(sample);
console.log(`\npeak resident memory: ${(peak / 2 ** 30).toFixed(2)} GiB`);
if (values.json) writeFileSync(values.json, JSON.stringify({ rows, peakBytes: peak }, null, 2));

/**
 * npm run bench [-- --data DIR] [--passes 5]
 *
 * What a step costs: for each method, the median time per step of rank() and its candidate set
 * (selectCandidates; embedding excluded)
 * over several passes of the test steps, its ratio to the DR baseline timed in the same process,
 * the fit time, and the encoder's cost for the one text a step embeds. Runs on the built-in demo
 * set, and on ../shared/data/ultratool when it is there. Medians, because this machine is shared.
 */
import { existsSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { planSteps } from '../src/core/plan.js';
import type { RankInput } from '../src/core/retrievers/types.js';
import { contextText } from '../src/core/text.js';
import { fitRetriever, fitVectors, METHODS } from '../src/core/train.js';
import { splitDataset } from '../src/core/evaluate.js';
import { usesWasmKernel } from '../src/core/retrievers/matvec.js';
import { selectCandidates } from '../src/core/select.js';
import type { Dataset } from '../src/core/types.js';
import { readDatasetDir } from '../src/data/node.js';
import { demoDataset } from '../src/demo/toolset.js';
import { loadEncoder } from '../src/encoders/node.js';

const { values } = parseArgs({ options: { data: { type: 'string' }, passes: { type: 'string', default: '5' } } });
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

async function bench(dataset: Dataset) {
  const encoder = await loadEncoder({ cacheSize: 0 });
  const { train, test } = splitDataset(dataset, { seed: 0 });
  const steps = test.flatMap((p) => planSteps(p));
  const queries = await encoder.embed(steps.map((s) => s.query));
  const contexts = await encoder.embed(steps.map((s) => contextText(s.query, s.history, 3)));
  const inputs: RankInput[] = steps.map((s, i) => ({ query: s.query, history: s.history, queryVector: queries[i], contextVector: contexts[i] }));

  const texts = steps.slice(0, 300).map((s) => contextText(s.query, s.history, 3));
  const perText: number[] = [];
  for (let p = 0; p < 3; p++) {
    const t0 = performance.now();
    for (const t of texts) await encoder.embed([t]); // one step, one text: the app's real pattern
    perText.push(((performance.now() - t0) * 1000) / texts.length);
  }
  console.log(`\n${dataset.name}: ${train.length} demonstrations, ${dataset.tools.length} tools, ${steps.length} test steps`);
  console.log(`encoder: ${median(perText).toFixed(0)} µs to embed one step's text (unbatched, uncached)`);
  console.log(`matrix kernel: ${usesWasmKernel() ? 'WebAssembly SIMD' : 'JavaScript'}`);
  console.log('method     fit ms    rank µs/step (median)   × dr');
  const rows: { method: string; fit: number; rank: number }[] = [];
  for (const method of METHODS) {
    const vectors = await fitVectors(method, dataset.tools, train, encoder, 3);
    const t0 = performance.now();
    const retriever = fitRetriever(method, dataset.tools, train, vectors, {});
    const fit = performance.now() - t0;
    const passes: number[] = [];
    for (let p = 0; p < Number(values.passes); p++) {
      const start = performance.now();
      for (const input of inputs) selectCandidates(retriever.rank(input));
      passes.push(((performance.now() - start) * 1000) / inputs.length);
    }
    rows.push({ method, fit, rank: median(passes) });
  }
  const dr = rows.find((r) => r.method === 'dr')!.rank;
  for (const r of rows) console.log(`${r.method.padEnd(9)} ${r.fit.toFixed(0).padStart(7)}    ${r.rank.toFixed(1).padStart(12)}            ${(r.rank / dr).toFixed(2)}`);
  await encoder.dispose?.();
}

async function main() {
  await bench(demoDataset());
  const ultratool = values.data ?? new URL('../../shared/data/ultratool', import.meta.url).pathname;
  if (existsSync(`${ultratool}/data.jsonl`)) await bench(readDatasetDir(ultratool));
  else console.log(`\n(${ultratool} is absent: real-data benchmark skipped)`);
}

main();

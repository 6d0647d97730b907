/**
 * Bit-identity check for refactors: trains methods on UltraTool, Seal-Tools, RestBench and a
 * synthetic 3,000-tool world through the public Node entry, and prints the sha256 of each model
 * file (JSON and binary) and of every test step's probabilities, candidate set and top-10 order.
 *
 *   npm run check -- model-hashes [dtdr-g,dtdr-c]      then diff the output of two commits
 */
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { Dtdr, loadEncoder, readDatasetDir } from '../../src/node.js';
import { splitDataset } from '../../src/eval/index.js';
import { planSteps } from '../../src/core/plans/plan.js';
import { syntheticDataset } from '../../test/worlds/synthetic.js';

Date.prototype.toISOString = () => '2026-01-01T00:00:00.000Z'; // model files carry createdAt: fix the clock so files compare
if (!existsSync('../shared/data/ultratool')) {
  console.error('model-hashes: ../shared/data (UltraTool, Seal-Tools, RestBench) is not beside this folder');
  process.exit(1);
}
const methods = (process.argv[2] ?? 'dtdr-g,dtdr-c,dtdr-h,dr,bm25').split(',');
const encoder = await loadEncoder();
const worlds: [string, () => { tools: any[]; plans: any[] }][] = [
  ['ultratool', () => readDatasetDir('../shared/data/ultratool')],
  ['seal-tools', () => readDatasetDir('../shared/data/seal-tools')],
  ['restbench', () => readDatasetDir('../shared/data/restbench-tmdb')],
  ['synthetic-3k', () => syntheticDataset(3000, 2000, 0)],
];
for (const [name, load] of worlds) {
  const data = load() as any;
  const split = splitDataset(data, { seed: 0 });
  const test = split.test.slice(0, name === 'seal-tools' ? 200 : 300);
  for (const method of methods) {
    if (name === 'seal-tools' && method === 'dtdr-h') continue;
    const t0 = performance.now();
    const model = await Dtdr.train({ method: method as any, tools: data.tools, plans: split.train, encoder });
    const fitS = ((performance.now() - t0) / 1000).toFixed(1);
    const json = createHash('sha256').update(JSON.stringify(model.toJSON())).digest('hex').slice(0, 16);
    const bin = createHash('sha256').update(model.toBinary()).digest('hex').slice(0, 16);
    const ranks = createHash('sha256');
    for (const plan of test)
      for (const step of planSteps(plan)) {
        const r = await model.retrieve(plan.query, step.history);
        ranks.update(
          Buffer.from(
            r.ranking.probabilities.buffer,
            r.ranking.probabilities.byteOffset,
            r.ranking.probabilities.byteLength,
          ),
        );
        ranks.update(
          JSON.stringify([
            r.candidates.map((c) => c.tool),
            r.confident,
            r.widened,
            Array.from(r.ranking.order.slice(0, 10)),
          ]),
        );
      }
    console.log(
      `${name}\t${method}\tjson ${json}\tbin ${bin}\tranks ${ranks.digest('hex').slice(0, 16)}\t(fit ${fitS}s)`,
    );
  }
}
await encoder.dispose?.();

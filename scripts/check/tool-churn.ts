/**
 * Tools that come and go: the demo model, then N cycles (default 1,000) of adding a tool with a
 * new name and removing it. Prints the labels against the visible tools + END, the binary size
 * and the median rank cost against a fresh model with the same tools, and whether the other
 * tools' order is unchanged on a few requests. Exits 1 when a bound fails: labels exact, size
 * and rank cost within 10 %, order unchanged.
 *
 *   npm run check -- tool-churn [--cycles 1000]
 */
import { parseArgs } from 'node:util';
import { Dtdr } from '../../src/core/dtdr.js';
import { DEMO_TOOLS, generateDemoPlans } from '../../src/demo/toolset.js';
import { loadEncoder } from '../../src/encoders/node.js';
import { median } from '../bench/stats.js';
import '../../src/methods.js'; // every method, as the Node entry registers them

const { values } = parseArgs({ options: { cycles: { type: 'string', default: '1000' } } });
const cycles = Number(values.cycles);
const encoder = await loadEncoder();
const saved = (await Dtdr.train({ tools: DEMO_TOOLS, plans: generateDemoPlans(1500, 3), encoder, seed: 1 })).toJSON();
const fresh = Dtdr.load(saved, encoder);
const model = Dtdr.load(saved, encoder);
const queries = [
  'Email the quarterly report to Maria',
  'Wake me up at 7',
  'What is the weather in Paris tomorrow?',
  'Play some jazz',
  'Book a table for two tonight',
  'Translate hello into French',
];
const order = async (m: Dtdr, q: string) => {
  const r = await m.rank(q);
  return Array.from(r.order, (i) => r.labels[i]).join(',');
};
const before = await Promise.all(queries.map((q) => order(model, q)));
const t0 = performance.now();
for (let i = 0; i < cycles; i++) {
  const name = `plugin_${i}_lookup`;
  await model.addTools([{ name, description: `Plugin ${i}: look up order ${i} in the shop's back office` }]);
  await model.removeTools([name]);
}
const cycleMs = (performance.now() - t0) / cycles;
async function rankCost(m: Dtdr): Promise<number> {
  const times: number[] = [];
  for (let k = 0; k < 2000; k++) {
    const q = queries[k % queries.length];
    const s = performance.now();
    await m.rank(q, k % 2 ? ['contacts_search'] : []);
    times.push(performance.now() - s);
  }
  return median(times);
}
// Warmed up first (the first model timed would otherwise pay the JIT's warm-up), then interleaved, so both see the
// same machine.
await rankCost(model);
await rankCost(fresh);
const [a1, b1, a2, b2] = [await rankCost(model), await rankCost(fresh), await rankCost(model), await rankCost(fresh)];
const churned = Math.min(a1, a2);
const reference = Math.min(b1, b2);
const labelsOk = model.retriever.labels.join(',') === [...model.tools.map((t) => t.name), 'END'].join(',');
const size = model.toBinary().length;
const freshSize = fresh.toBinary().length;
const after = await Promise.all(queries.map((q) => order(model, q)));
const orderOk = after.every((o, k) => o === before[k]);
const ok = labelsOk && size <= freshSize * 1.1 && churned <= reference * 1.1 && orderOk;
console.log(
  `tool-churn: ${cycles.toLocaleString('en')} add/remove cycles on the demo model (${DEMO_TOOLS.length} tools), ${cycleMs.toFixed(1)} ms per cycle, node ${process.version}`,
);
console.log('| measure | after the cycles | fresh model | bound | ok |');
console.log('|---|---:|---:|---|---|');
console.log(
  `| labels | ${model.retriever.labels.length} | ${fresh.retriever.labels.length} | visible tools + END | ${labelsOk ? 'yes' : 'NO'} |`,
);
console.log(
  `| binary model, bytes | ${size.toLocaleString('en')} | ${freshSize.toLocaleString('en')} | within 10 % | ${size <= freshSize * 1.1 ? 'yes' : 'NO'} |`,
);
console.log(
  `| rank, median ms | ${churned.toFixed(3)} | ${reference.toFixed(3)} | within 10 % | ${churned <= reference * 1.1 ? 'yes' : 'NO'} |`,
);
console.log(
  `| the other tools' order on ${queries.length} requests | ${orderOk ? 'unchanged' : 'CHANGED'} | | unchanged | ${orderOk ? 'yes' : 'NO'} |`,
);
process.exit(ok ? 0 : 1);

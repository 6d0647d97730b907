/**
 * What the tools alone allow: on each `eval:app-life` world's test steps, the needed label's rank
 * under a model trained on the tools alone (`Dtdr.train({ tools })`), as the share of steps whose
 * needed label is within the first k, and the k that reaches 90%. It says how small a set with no
 * demonstrations can be while it holds the needed tool in nine steps of ten.
 *
 *   npm run experiment -- tools-only-ranks [--worlds demo,restbench,ultratool,seal]
 */
import { parseArgs } from 'node:util';
import { Dtdr } from '../../src/core/dtdr.js';
import { planSteps } from '../../src/core/plans/plan.js';
import { loadEncoder } from '../../src/encoders/node.js';
import { loadWorld } from '../../test/worlds/app-life.js';
import '../../src/methods.js'; // every method, as the Node entry registers them

const { values } = parseArgs({
  options: {
    worlds: { type: 'string', default: 'demo,restbench,ultratool,seal' },
    data: { type: 'string', default: '../shared/data' },
  },
});
const encoder = await loadEncoder();
const KS = [1, 3, 5, 6, 8, 10, 12];
for (const name of values.worlds.split(',')) {
  const world = loadWorld(name, values.data);
  if (!world) {
    console.log(`${name}: skipped (its data is not under ${values.data})`);
    continue;
  }
  const model = await Dtdr.train({ tools: world.tools, plans: [], encoder });
  const ranks: number[] = [];
  for (const plan of world.test)
    for (const step of planSteps(plan)) {
      const { order, labels } = (await model.retrieve(step.query, step.history)).ranking;
      let r = 0;
      while (r < order.length && !step.acceptable.includes(labels[order[r]])) r++;
      ranks.push(r + 1);
    }
  const within = (k: number) => ranks.filter((r) => r <= k).length / ranks.length;
  let k90 = 1;
  while (within(k90) < 0.9) k90++;
  const shares = KS.map((k) => `≤${k} ${within(k).toFixed(3)}`).join('  ');
  console.log(`${name} (${world.tools.length} tools, ${ranks.length} steps): ${shares}  · 90% needs ${k90}`);
}

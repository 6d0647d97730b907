/**
 * The added-tool check: for each of the 27 demo tools, train on demo plans without it,
 * add it with `addTools`, and ask its requests from test/fixtures/added-tool-requests.json. A
 * request's tool must be in the candidate set, and a set that misses it must not be confident.
 *
 *   npm run check -- added-tools [requests|heldOut] [PLANS=600] [tool,tool,…]
 */
import { readFileSync } from 'node:fs';
import { Dtdr } from '../../src/core/dtdr.js';
import { planTools } from '../../src/core/plans/plan.js';
import { DEMO_TOOLS, generateDemoPlans } from '../../src/demo/toolset.js';
import { loadEncoder } from '../../src/encoders/node.js';
import '../../src/methods.js'; // every method, as the Node entry registers them

const fixture = JSON.parse(
  readFileSync(new URL('../../test/fixtures/added-tool-requests.json', import.meta.url), 'utf8'),
) as Record<string, Record<string, string[]>>;
const batch = process.argv[2] ?? 'requests';
const count = Number(process.argv[3] ?? 600);
const only = process.argv[4]?.split(',');
if (!fixture[batch]) throw new Error(`no batch "${batch}" (requests or heldOut)`);
const encoder = await loadEncoder();
const all = generateDemoPlans(count, 1);
let asked = 0;
let inSet = 0;
let confidentMisses = 0;
let size = 0;
for (const tool of DEMO_TOOLS) {
  if (only && !only.includes(tool.name)) continue;
  const model = await Dtdr.train({
    tools: DEMO_TOOLS.filter((t) => t !== tool),
    plans: all.filter((p) => !planTools(p).includes(tool.name)),
    encoder,
    seed: 0,
  });
  await model.addTools([tool]);
  for (const request of fixture[batch][tool.name] ?? []) {
    const r = await model.retrieve(request);
    const hit = r.candidates.some((c) => c.tool === tool.name);
    asked++;
    size += r.candidates.length;
    if (hit) inSet++;
    else if (!r.widened) confidentMisses++;
    if (!hit || !r.widened)
      console.log(
        `${hit ? 'HIT ' : 'MISS'}${r.widened ? '' : ' CONFIDENT'} ${tool.name}: "${request}" → ${r.candidates.map((c) => `${c.tool} ${c.probability.toFixed(2)}`).join(', ')} [${r.ranking.group ?? ''}]`,
      );
  }
}
console.log(
  `${batch}: ${inSet}/${asked} in set (${(inSet / asked).toFixed(3)}), confident misses ${confidentMisses}, mean |F_t| ${(size / asked).toFixed(2)}`,
);

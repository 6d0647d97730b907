/**
 * Why sets miss at ten to thirty runs on a world of many tools (decision 0007). For each N and seed
 * (eval:app-life's random draws, scored on its test plans):
 *
 * - how many of the test's tool steps need a tool none of the N runs called, against what the runs
 *   say of themselves: the share of their tool steps whose tool only one run calls (plan-level
 *   Good–Turing, the rate the held-out steps calibration scores would show);
 * - the default method's coverage and mean set size with unsure sets capped at each of `--caps`
 *   tools (`widenMax`, default 12), and uncapped.
 *
 * A run of 30 requests repeats its tools by chance more or less than the app's requests do: the
 * two shares disagree by ±0.15 from seed to seed, so thresholds set on the runs' held-out steps
 * make sets too small on some draws. And where the needed tool was never demonstrated, reaching
 * nine steps in ten takes far more than 12 of UltraTool's 260 tools.
 *
 *   npm run experiment -- small-n-coverage [--world ultratool] [--sizes 0,10,30,100] [--seeds 3]
 *                                          [--caps 12,20,32] [--data ../shared/data] [--results docs/results.json]
 */
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { Dtdr } from '../../src/core/dtdr.js';
import { seededRandom, shuffleInPlace } from '../../src/core/base/random.js';
import type { Plan } from '../../src/core/base/types.js';
import { planSteps } from '../../src/core/plans/plan.js';
import { loadEncoder } from '../../src/encoders/node.js';
import { loadWorld } from '../../test/worlds/app-life.js';
import '../../src/methods.js'; // every method, as the Node entry registers them

const { values } = parseArgs({
  options: {
    world: { type: 'string', default: 'ultratool' },
    sizes: { type: 'string', default: '0,10,30,100' },
    seeds: { type: 'string', default: '3' },
    caps: { type: 'string', default: '12,20,32' },
    data: { type: 'string', default: '../shared/data' },
    results: { type: 'string' },
  },
});
const world = loadWorld(values.world, values.data);
if (!world) {
  console.log(`${values.world}: skipped (its data is not under ${values.data})`);
  process.exit(0);
}
const encoder = await loadEncoder();
const caps = values.caps.split(',').map(Number);
const UNCAPPED = 1_000_000;

/** Per tool, how many of `plans` call it. */
function plansCalling(plans: readonly Plan[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const p of plans)
    for (const tool of new Set(p.nodes.map((n) => n.tool))) counts.set(tool, (counts.get(tool) ?? 0) + 1);
  return counts;
}

const toolSteps = (plans: readonly Plan[]) => plans.flatMap((p) => p.nodes.map((n) => n.tool));
const testTools = toolSteps(world.test);
const rows: string[][] = [];
for (const n of values.sizes.split(',').map(Number)) {
  for (let seed = 0; seed < (n === 0 ? 1 : Number(values.seeds)); seed++) {
    const plans = shuffleInPlace([...world.pool], seededRandom(1000 + seed)).slice(0, n);
    const calling = plansCalling(plans);
    const own = toolSteps(plans);
    const onlyOne = own.filter((t) => calling.get(t) === 1).length;
    const unseen = testTools.filter((t) => !calling.has(t)).length;
    const model = await Dtdr.train({ tools: world.tools, plans, encoder });
    const tally = [...caps, UNCAPPED].map(() => ({ covered: 0, size: 0 }));
    let steps = 0;
    for (const plan of world.test)
      for (const step of planSteps(plan)) {
        steps++;
        for (const [i, cap] of [...caps, UNCAPPED].entries()) {
          const r = await model.retrieve(step.query, step.history, { widenMax: cap });
          tally[i].covered += r.candidates.some((c) => step.acceptable.includes(c.tool)) ? 1 : 0;
          tally[i].size += r.candidates.length;
        }
      }
    const row = [
      String(n),
      n === 0 ? '–' : String(seed),
      (unseen / testTools.length).toFixed(2),
      own.length ? (onlyOne / own.length).toFixed(2) : '–',
      ...tally.map((t) => `${(t.covered / steps).toFixed(3)} · ${(t.size / steps).toFixed(1)}`),
    ];
    rows.push(row);
    console.log(row.join('  '));
  }
}
if (values.results) {
  const { writeFileSync } = await import('node:fs');
  const results = JSON.parse(readFileSync(values.results, 'utf8')) as { tables: Record<string, unknown> };
  results.tables['small-n-coverage'] = {
    title: `${values.world}: test tool steps needing a tool the N runs never called, against the runs' own estimate, and coverage · mean set size by the cap on unsure sets`,
    command: 'npm run experiment -- small-n-coverage',
    date: new Date().toISOString().slice(0, 10),
    columns: [
      'N',
      'seed',
      'test steps needing an undemonstrated tool',
      "the runs' estimate (tools one run calls)",
      ...caps.map((c) => `cap ${c}${c === 12 ? ' (default)' : ''}`),
      'uncapped',
    ],
    align: ['right', 'right', 'right', 'right', ...caps.map(() => 'right'), 'right'],
    rows,
  };
  writeFileSync(values.results, `${JSON.stringify(results, null, 1)}\n`);
}

/**
 * Whether the coverage a step's set claims is the coverage such steps get. DTDR-G's `retrieve` says of each set
 * what share of such steps hold a right tool (`target`: "sets like this one … hold a right tool in 95% of such
 * steps", or what cut sets of that size held on held-out steps). For each `eval:app-life` world and first-day draw
 * (random with `--seeds` seeds, skewed, scenes; test/worlds/app-life.ts) at N demonstrations, every test step is
 * retrieved as an app would, the steps are grouped by the claim they print and by whether they are confident, and
 * each group's measured coverage is set beside its claim. Groups of fewer than `--min` steps are left out.
 *
 *   npm run experiment -- claim-coverage [--worlds demo,…] [--sizes 30,100,300] [--min 50] [--seeds 3]
 *     [--results docs/results.json]
 */
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { Dtdr } from '../../src/core/dtdr.js';
import { planSteps } from '../../src/core/plans/plan.js';
import { seededRandom, shuffleInPlace } from '../../src/core/base/random.js';
import type { Plan } from '../../src/core/base/types.js';
import { ALL_WORLDS, firstDayDraws, worldsNamed } from '../../test/worlds/app-life.js';
import { encoderByName } from '../../test/worlds/encoders.js';
import { positiveSizes, recordFullRunOnly, refuser, writeResultsTable } from '../bench/results.js';
import '../../src/methods.js';

const ROOT = join(import.meta.dirname, '../..');
const DEFAULTS = { worlds: ALL_WORLDS.join(','), sizes: '30,100,300', min: '50', seeds: '3' };
const { values: args } = parseArgs({
  options: {
    worlds: { type: 'string', default: DEFAULTS.worlds },
    sizes: { type: 'string', default: DEFAULTS.sizes },
    min: { type: 'string', default: DEFAULTS.min },
    // Random draws, each its own seed (as eval:app-life's): a claim resting on 30 runs moves with the draw.
    seeds: { type: 'string', default: DEFAULTS.seeds },
    data: { type: 'string', default: join(ROOT, '../shared/data') },
    results: { type: 'string' },
  },
});
const refuse: (message: string) => never = refuser('claim-coverage');
recordFullRunOnly(args, DEFAULTS, refuse);
const sizes = positiveSizes(args.sizes, refuse);
const min = Number(args.min);
if (!(Number.isInteger(min) && min > 0)) refuse(`--min must be a positive integer (got ${args.min})`);
const seeds = Number(args.seeds);
if (!(Number.isInteger(seeds) && seeds > 0)) refuse(`--seeds must be a positive integer (got ${args.seeds})`);
const worlds = worldsNamed(args.worlds, args.data, refuse);
const encoder = await encoderByName('glove');

const rows: string[][] = [];
let worst = { gap: 0, where: '' };
for (const world of worlds) {
  const { random, ...skews } = await firstDayDraws(world.pool, encoder);
  // Random seed s as eval:app-life draws it (seed 0 is firstDayDraws' own).
  const randoms = Array.from({ length: seeds }, (_, s) =>
    s === 0 ? random : shuffleInPlace([...world.pool], seededRandom(1000 + s)),
  );
  const draws: [string, Plan[]][] = [
    ...randoms.map((plans, s): [string, Plan[]] => [seeds > 1 ? `random, seed ${s}` : 'random', plans]),
    ['skewed', skews.skewed],
    ['scenes', skews.scenes],
  ];
  for (const [draw, pool] of draws)
    for (const n of sizes) {
      if (n > pool.length) continue;
      const model = await Dtdr.train({ tools: world.tools, plans: pool.slice(0, n), encoder });
      /** Per claim and confidence: steps, and those whose set holds a right tool. */
      const groups = new Map<
        string,
        { claim: number; confident: boolean; steps: number; held: number; size: number }
      >();
      for (const plan of world.test)
        for (const step of planSteps(plan)) {
          const r = await model.retrieve(step.query, step.history);
          if (r.target === undefined) continue;
          const claim = Math.round(r.target * 100) / 100;
          const key = `${claim} ${r.confident}`;
          const g = groups.get(key) ?? { claim, confident: r.confident, steps: 0, held: 0, size: 0 };
          g.steps++;
          g.held += +r.candidates.some((c) => step.acceptable.includes(c.tool));
          g.size += r.candidates.length;
          groups.set(key, g);
        }
      for (const g of [...groups.values()].sort((a, b) => b.steps - a.steps)) {
        if (g.steps < min) continue;
        const measured = g.held / g.steps;
        const row = [
          world.name,
          draw,
          String(n),
          g.confident ? 'confident' : 'unsure',
          `${Math.round(g.claim * 100)}%`,
          String(g.steps),
          (g.size / g.steps).toFixed(1),
          measured.toFixed(3),
          `${measured - g.claim < 0 ? '−' : '+'}${Math.abs(measured - g.claim).toFixed(3)}`,
        ];
        console.log(row.join(' | '));
        rows.push(row);
        if (g.claim - measured > worst.gap) worst = { gap: g.claim - measured, where: row.slice(0, 5).join(' ') };
      }
    }
}
console.log(`largest shortfall below a claim: ${worst.gap.toFixed(3)} (${worst.where || 'none'})`);
// Over the groups of every world, draw and N: how many fall more than 0.05 short of their claim (or above it), and
// what share of their steps are in a group more than 0.05 off its claim either way.
const gaps = rows.map((r) => ({ steps: Number(r[5]), gap: Number(r[8].replace('−', '-')), step: r[3] }));
const off = (g: { gap: number }) => Math.abs(g.gap) > 0.05;
const count = (pick: (g: (typeof gaps)[number]) => boolean) => gaps.filter(pick).length;
const sum = (list: typeof gaps) => list.reduce((a, g) => a + g.steps, 0);
const summary = {
  short: `${count((g) => g.gap < -0.05)} of ${gaps.length} groups`,
  over: `${count((g) => g.gap > 0.05)} of ${gaps.length} groups`,
  stepsOff: `${Math.round((100 * sum(gaps.filter(off))) / Math.max(1, sum(gaps)))}%`,
  confidentShort: `${count((g) => g.step === 'confident' && g.gap < -0.05)} of ${count((g) => g.step === 'confident')}`,
};
console.log(JSON.stringify(summary));
if (args.results)
  writeResultsTable(
    args.results,
    'claim-coverage',
    {
      title: `Printed coverage claims against the measured coverage of the steps that print them (groups of ≥ ${min} steps)`,
      command: 'npm run experiment -- claim-coverage',
      columns: ['world', 'draw', 'N', 'step', 'claim', 'steps', 'mean set', 'measured coverage', 'measured − claim'],
      align: ['left', 'left', 'right', 'left', 'right', 'right', 'right', 'right', 'right'],
      rows,
    },
    {
      'claims-short': { value: summary.short, what: 'claim groups more than 0.05 below their claim' },
      'claims-over': { value: summary.over, what: 'claim groups more than 0.05 above their claim' },
      'claims-steps-off': {
        value: summary.stepsOff,
        what: 'share of claiming steps in a group more than 0.05 off its claim',
      },
      'claims-confident-short': {
        value: summary.confidentShort,
        what: 'confident groups more than 0.05 below their claim',
      },
    },
  );

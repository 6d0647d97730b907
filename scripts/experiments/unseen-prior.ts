/**
 * The unseen-tool prior (ExperimentalGatedSettings.unseenPrior), chosen leaving each world out.
 *
 * For each world and each prior of the grid, DTDR-G is trained on the first-day draws (N = 10, 30, 100, 300 plans,
 * at random, first-tool skewed and scenes: test/worlds/app-life.ts) and every test plan is ranked step by step:
 * the MRR of the first step (what a request's first retrieval gets) and of the tool steps (END aside). Each world's
 * prior is then the one with the best mean of those two MRRs over every other world's points, and the world is
 * reported at it, beside tools-only (N = 0) and Good–Turing alone (prior 0). The shipped default is the prior all
 * worlds together choose.
 *
 *   npm run experiment -- unseen-prior [--worlds demo,api-bank,…] [--priors 0,100,300,1000,3000,10000] [--json out.json]
 *                                      [--from out.json] [--results docs/results.json]
 */
import { parseArgs } from 'node:util';
import { Dtdr } from '../../src/core/dtdr.js';
import { END } from '../../src/core/base/types.js';
import { planSteps } from '../../src/core/plans/plan.js';
import { UNSEEN_PRIOR } from '../../src/core/retrieval/default/options.js';
import { loadEncoder } from '../../src/encoders/node.js';
import { ALL_WORLDS, firstDayDraws, loadWorld } from '../../test/worlds/app-life.js';
import { printTable, savedOrMeasured, writeResultsTable } from '../bench/results.js';
import '../../src/methods.js'; // every method, as the Node entry registers them

interface Point {
  world: string;
  draw: 'none' | 'random' | 'skewed' | 'scenes';
  n: number;
  prior: number;
  first: number;
  tool: number;
}

const { values } = parseArgs({
  options: {
    worlds: { type: 'string', default: ALL_WORLDS.join(',') },
    priors: { type: 'string', default: '0,100,300,1000,3000,10000' },
    sizes: { type: 'string', default: '10,30,100,300' },
    data: { type: 'string', default: '../shared/data' },
    json: { type: 'string' },
    from: { type: 'string' },
    results: { type: 'string' },
  },
});

async function measure(): Promise<Point[]> {
  const encoder = await loadEncoder();
  // The library's default is always a candidate, so the table can say whether it is still the one chosen.
  const priors = [...new Set([...values.priors.split(',').map(Number), UNSEEN_PRIOR])].sort((a, b) => a - b);
  const sizes = values.sizes.split(',').map(Number);
  const points: Point[] = [];
  for (const name of values.worlds.split(',')) {
    const world = loadWorld(name, values.data);
    if (!world) continue;
    const draws = await firstDayDraws(world.pool, encoder);
    const score = async (model: Dtdr) => {
      let [first, firsts, tool, tools] = [0, 0, 0, 0];
      for (const plan of world.test) {
        const steps = planSteps(plan);
        for (let t = 0; t < steps.length; t++) {
          const { order, labels } = await model.rank(steps[t].query, steps[t].history);
          const ok = new Set(steps[t].acceptable);
          const rank = Array.from(order).findIndex((i) => ok.has(labels[i]));
          const rr = rank < 0 ? 0 : 1 / (rank + 1);
          if (t === 0) [first, firsts] = [first + rr, firsts + 1];
          if (!ok.has(END)) [tool, tools] = [tool + rr, tools + 1];
        }
      }
      return { first: first / firsts, tool: tool / tools };
    };
    const base = await score(await Dtdr.train({ tools: world.tools, encoder }));
    points.push({ world: name, draw: 'none', n: 0, prior: -1, ...base });
    for (const [draw, pool] of Object.entries(draws))
      for (const n of sizes) {
        if (n >= pool.length) continue;
        for (const prior of priors) {
          const model = await Dtdr.train({
            tools: world.tools,
            plans: pool.slice(0, n),
            encoder,
            gated: { experimental: { unseenPrior: prior } },
          });
          const p: Point = { world: name, draw: draw as Point['draw'], n, prior, ...(await score(model)) };
          points.push(p);
          console.log(JSON.stringify(p));
        }
      }
  }
  return points;
}

const points = await savedOrMeasured<Point>(values.from, values.json, measure);

const worlds = [...new Set(points.map((p) => p.world))];
const priors = [...new Set(points.filter((p) => p.prior >= 0).map((p) => p.prior))].sort((a, b) => a - b);
const toolsOnly = new Map(points.filter((p) => p.draw === 'none').map((p) => [p.world, p]));
/**
 * A prior's score on the worlds `keep` holds: the mean shortfall of its points below tools-only − 0.02 (first-step
 * and tool-step MRR; the first day's line is "never worse than tools alone"), then, to break ties, the mean MRR.
 */
const objective = (prior: number, keep: (world: string) => boolean) => {
  const mine = points.filter((p) => p.prior === prior && keep(p.world));
  let shortfall = 0;
  let mean = 0;
  for (const p of mine) {
    const base = toolsOnly.get(p.world)!;
    shortfall += Math.max(0, base.first - 0.02 - p.first) + Math.max(0, base.tool - 0.02 - p.tool);
    mean += (p.first + p.tool) / 2;
  }
  return { shortfall: shortfall / Math.max(1, mine.length), mean: mean / Math.max(1, mine.length) };
};
/** Shortfalls within half a hundredth are alike (the runs' noise); then the better mean MRR. */
const SHORTFALL_STEP = 0.005;
const better = (a: ReturnType<typeof objective>, b: ReturnType<typeof objective>) => {
  const [sa, sb] = [Math.round(a.shortfall / SHORTFALL_STEP), Math.round(b.shortfall / SHORTFALL_STEP)];
  return sa < sb || (sa === sb && a.mean > b.mean + 1e-9);
};
const choose = (keep: (world: string) => boolean) =>
  priors.reduce((best, prior) => (better(objective(prior, keep), objective(best, keep)) ? prior : best), priors[0]);
const chosenAll = choose(() => true);

const rows: string[][] = [];
for (const world of worlds) {
  const prior = choose((w) => w !== world);
  const base = points.find((p) => p.world === world && p.draw === 'none')!;
  for (const draw of ['random', 'skewed', 'scenes'] as const)
    for (const n of [...new Set(points.filter((p) => p.world === world && p.draw === draw).map((p) => p.n))]) {
      const at = (q: number) => points.find((p) => p.world === world && p.draw === draw && p.n === n && p.prior === q);
      const held = at(prior);
      const gt = at(0);
      if (!held) continue;
      rows.push([
        world,
        draw,
        String(n),
        String(prior),
        base.first.toFixed(3),
        gt ? gt.first.toFixed(3) : '–',
        held.first.toFixed(3),
        base.tool.toFixed(3),
        gt ? gt.tool.toFixed(3) : '–',
        held.tool.toFixed(3),
      ]);
    }
}
const columns = [
  'world',
  'draw',
  'N',
  'prior chosen without it',
  'first-step MRR: tools only',
  'Good–Turing alone',
  'with the prior',
  'tool-step MRR: tools only',
  'Good–Turing alone',
  'with the prior',
];
printTable(columns, rows);
console.log(`chosen on every world: ${chosenAll} (the default, UNSEEN_PRIOR, is ${UNSEEN_PRIOR})`);

if (values.results)
  writeResultsTable(values.results, 'unseen-prior', {
    title: `The unseen-tool prior chosen leaving each world out (grid ${priors.join(', ')}; every world together: ${chosenAll})`,
    command: 'npm run experiment -- unseen-prior',
    columns,
    align: ['left', 'left', 'right', 'right', 'right', 'right', 'right', 'right', 'right', 'right'],
    rows,
  });

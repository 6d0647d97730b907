/**
 * How a set the cap cuts short is filled (SelectOptions.keepLearned), chosen leaving each world out. Where a step's
 * threshold asks for more tools than the cap (`widenMax`, 12) allows, or a first day's step without a threshold
 * widens to the cap short of `widenMass`, the set keeps the first k of DTDR-G's ranking and fills the rest with
 * the descriptions' favourites (k = 12: the learned ranking alone). For each `eval:app-life`
 * world, draw (random: one fixed shuffle; skewed; scenes) and N, and each k: the coverage of the capped steps among
 * all test steps (a set holding an acceptable tool), and at the first steps of plans calling two tools or more the
 * held-out benchmark's lines against the tools alone (first-step-recall: MRR, and both recalls where no step is
 * confident). Each world's k is the one the other worlds' points favour: the largest mean gain in capped coverage
 * over k = 12, then the fewest points short, then the larger k. Its figures on that world are held-out ones.
 *
 *   npm run experiment -- capped-fill [--worlds demo,…] [--sizes 30,100,300] [--results docs/results.json]
 */
import { join } from 'node:path';
import { Dtdr } from '../../src/core/dtdr.js';
import { planSteps } from '../../src/core/plans/plan.js';
import { selectCandidates } from '../../src/core/selection/select.js';
import { ALL_WORLDS, firstDayDraws } from '../../test/worlds/app-life.js';
import { encoderByName } from '../../test/worlds/encoders.js';
import {
  firstSteps,
  scoreFirstSteps,
  scoreFirstStepsEach,
  type FirstStepScores,
} from '../../test/worlds/first-step.js';
import { writeResultsTable } from '../bench/results.js';
import { worldExperiment } from '../bench/world-args.js';
import '../../src/methods.js';

const ROOT = join(import.meta.dirname, '../..');
const { args, sizes, worlds } = worldExperiment('capped-fill', {
  worlds: ALL_WORLDS.join(','),
  sizes: '30,100,300',
  data: join(ROOT, '../shared/data'),
});
const encoder = await encoderByName('glove');

/** The learned ranking's places in a capped set of 12 that are tried. */
const KEPT = [12, 10, 9, 8, 6, 3, 0];
const CAP = 12;
const share = (k: number) => k / CAP;

/** One world × draw × N: capped test steps and the coverage of their sets per k; whether first steps fall short. */
interface Point {
  world: string;
  draw: string;
  n: number;
  steps: number;
  capped: number;
  covered: number[];
  short: boolean[];
}

const points: Point[] = [];
for (const world of worlds) {
  const first = firstSteps(world.test);
  const alone = await scoreFirstSteps(await Dtdr.train({ tools: world.tools, encoder }), first);
  const shortOf = (p: FirstStepScores) =>
    p.mrr < alone.mrr - 0.02 ||
    (p.confident === 0 && (p.planRecall < alone.planRecall || p.frontierRecall < alone.frontierRecall));
  const steps = world.test.flatMap((plan) => planSteps(plan));
  const draws = await firstDayDraws(world.pool, encoder);
  for (const draw of ['random', 'skewed', 'scenes'] as const)
    for (const n of sizes) {
      if (n > draws[draw].length) continue;
      const model = await Dtdr.train({ tools: world.tools, plans: draws[draw].slice(0, n), encoder });
      const point: Point = { world: world.name, draw, n, steps: steps.length, capped: 0, covered: [], short: [] };
      point.covered = KEPT.map(() => 0);
      for (const step of steps) {
        const ranking = await model.rank(step.query, step.history);
        // Every capped step says so where it could be filled (keep 1); a widened one only then.
        if (!selectCandidates(ranking, { keepLearned: 0 }).reason?.includes('capped at')) continue;
        point.capped++;
        KEPT.forEach((k, i) => {
          const set = selectCandidates(ranking, { keepLearned: share(k) }).candidates;
          if (set.some((c) => step.acceptable.includes(c.tool))) point.covered[i]++;
        });
      }
      if (first.length) {
        const each = KEPT.map((k) => ({ keepLearned: share(k) }));
        point.short = (await scoreFirstStepsEach(model, first, each)).map(shortOf);
      }
      points.push(point);
      console.log(
        `${world.name} ${draw} ${n}: ${point.capped} of ${point.steps} steps capped; coverage ` +
          KEPT.map((k, i) => `${k}: ${(point.covered[i] / Math.max(1, point.capped)).toFixed(3)}`).join(', '),
      );
    }
}

/** Mean gain in capped coverage over the learned ranking alone (k = 12), over points with capped steps. */
function gain(list: Point[], i: number): number {
  const capped = list.filter((p) => p.capped > 0);
  const sum = capped.reduce((s, p) => s + (p.covered[i] - p.covered[0]) / p.capped, 0);
  return capped.length ? sum / capped.length : 0;
}
const shortCount = (list: Point[], i: number) => list.filter((p) => p.short[i]).length;

const f3 = (x: number) => x.toFixed(3);
const signed = (x: number) => `${x >= 0 ? '+' : '−'}${Math.abs(x).toFixed(3)}`;
const rows: string[][] = [];
const chosenK = new Set<number>();
for (const world of new Set(points.map((p) => p.world))) {
  const others = points.filter((p) => p.world !== world);
  const own = points.filter((p) => p.world === world);
  // The best k on the other worlds: gain (to 3 decimals), then fewest points short, then the larger k.
  const best = KEPT.map((_, i) => i).sort(
    (a, b) =>
      +gain(others, b).toFixed(3) - +gain(others, a).toFixed(3) ||
      shortCount(others, a) - shortCount(others, b) ||
      KEPT[b] - KEPT[a],
  )[0];
  chosenK.add(KEPT[best]);
  const capped = own.reduce((s, p) => s + p.capped, 0);
  const cov = (i: number) => own.reduce((s, p) => s + p.covered[i], 0) / Math.max(1, capped);
  const firsts = own.filter((p) => p.short.length);
  rows.push([
    world,
    String(KEPT[best]),
    `${capped} of ${own.reduce((s, p) => s + p.steps, 0)}`,
    capped ? f3(cov(0)) : '–',
    capped ? f3(cov(best)) : '–',
    capped ? signed(gain(own, best)) : '–',
    firsts.length ? `${shortCount(firsts, 0)} of ${firsts.length}` : '–',
    firsts.length ? `${shortCount(firsts, best)} of ${firsts.length}` : '–',
  ]);
  console.log(rows.at(-1)!.join(' | '));
}
const all = KEPT.map((k, i) => `${k}: ${signed(gain(points, i))}, ${shortCount(points, i)} short`).join('; ');
console.log(`every world, by k: ${all}`);
if (args.results)
  writeResultsTable(
    args.results,
    'capped-fill',
    {
      title:
        "Capped sets filled after the learned ranking's first k of 12 with the descriptions' favourites, k chosen on the other worlds",
      command: 'npm run experiment -- capped-fill',
      columns: [
        'world (held out)',
        'k chosen on the others',
        'capped steps',
        'their coverage, learned top 12',
        'their coverage, filled',
        'mean gain per point',
        'first-step points short, learned top 12',
        'first-step points short, filled',
      ],
      align: ['left', 'right', 'right', 'right', 'right', 'right', 'right', 'right'],
      rows,
    },
    {
      'capped-fill-k': {
        value: [...chosenK].join(' or '),
        what: "the learned ranking's places in a capped set of 12 that the other worlds choose, over every world held out",
      },
    },
  );

/**
 * The held-out benchmark's measure on the `eval:app-life` worlds: the first step of every test plan
 * that calls two tools or more, as a request arrives. DTDR-G trained on the first N demonstrations
 * of each draw (random: one fixed shuffle; skewed; scenes), against a model of the tools alone on
 * the same steps: MRR of the first needed tool, the mean set, and two recalls of the set, the
 * share of the plan's tools in it and the share of the step's acceptable tools (the DAG frontier:
 * the tools that may come first), with the share of confident steps and how many of those missed.
 * A point passes the benchmark's lines when its MRR is at least the tools alone's less 0.02 and,
 * where no step is confident, both recalls are at least the tools alone's.
 *
 *   npm run experiment -- first-step-recall [--worlds demo,…] [--sizes 30,100,300,1000] [--results docs/results.json]
 */
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { Dtdr } from '../../src/core/dtdr.js';
import { planSteps } from '../../src/core/plans/plan.js';
import type { Plan } from '../../src/core/base/types.js';
import { ALL_WORLDS, firstDayDraws, worldsNamed } from '../../test/worlds/app-life.js';
import { encoderByName } from '../../test/worlds/encoders.js';
import { recordFullRunOnly, refuser, writeResultsTable } from '../bench/results.js';
import '../../src/methods.js';

const ROOT = join(import.meta.dirname, '../..');
const DEFAULTS = { worlds: ALL_WORLDS.join(','), sizes: '30,100,300,1000', data: join(ROOT, '../shared/data') };
const { values: args } = parseArgs({
  options: {
    worlds: { type: 'string', default: DEFAULTS.worlds },
    sizes: { type: 'string', default: DEFAULTS.sizes },
    data: { type: 'string', default: DEFAULTS.data },
    results: { type: 'string' },
  },
});

const refuse: (message: string) => never = refuser('first-step-recall');
recordFullRunOnly(args, DEFAULTS, refuse);
const sizes = args.sizes.split(',').map(Number);
if (sizes.some((n) => !(Number.isInteger(n) && n > 0))) refuse(`--sizes must be positive integers (got ${args.sizes})`);
const worlds = worldsNamed(args.worlds, args.data, refuse);
const encoder = await encoderByName('glove');

interface Point {
  mrr: number;
  set: number;
  planRecall: number;
  frontierRecall: number;
  confident: number;
  confidentMiss: number;
}

/** A plan's first step, its acceptable tools and the distinct tools the plan calls. */
interface FirstStep {
  query: string;
  acceptable: string[];
  tools: string[];
}

function firstSteps(test: readonly Plan[]): FirstStep[] {
  return test
    .map((p) => ({ ...planSteps(p)[0], tools: [...new Set(p.nodes.map((n) => n.tool))] }))
    .filter((s) => s.tools.length >= 2);
}

async function measure(model: Dtdr, steps: readonly FirstStep[]): Promise<Point> {
  const sum = { mrr: 0, set: 0, planRecall: 0, frontierRecall: 0, confident: 0, confidentMiss: 0 };
  const share = (needed: string[], set: string[]) => needed.filter((t) => set.includes(t)).length / needed.length;
  for (const step of steps) {
    const r = await model.retrieve(step.query, []);
    const { order, labels } = r.ranking;
    const at = Array.from(order).findIndex((l) => step.acceptable.includes(labels[l]));
    const set = r.candidates.map((c) => c.tool);
    sum.mrr += at >= 0 ? 1 / (at + 1) : 0;
    sum.set += set.length;
    sum.planRecall += share(step.tools, set);
    sum.frontierRecall += share(step.acceptable, set);
    if (r.ranking.confident) {
      sum.confident++;
      if (!set.some((t) => step.acceptable.includes(t))) sum.confidentMiss++;
    }
  }
  const n = Math.max(1, steps.length);
  return {
    mrr: sum.mrr / n,
    set: sum.set / n,
    planRecall: sum.planRecall / n,
    frontierRecall: sum.frontierRecall / n,
    confident: sum.confident / n,
    confidentMiss: sum.confident ? sum.confidentMiss / sum.confident : 0,
  };
}

const f3 = (x: number) => x.toFixed(3);
const rows: string[][] = [];
let failing = 0;
let points = 0;
for (const world of worlds) {
  const steps = firstSteps(world.test);
  if (steps.length === 0) continue;
  const alone = await measure(await Dtdr.train({ tools: world.tools, encoder }), steps);
  const cells = (p: Point) => [f3(p.mrr), p.set.toFixed(1), f3(p.planRecall), f3(p.frontierRecall)];
  rows.push([world.name, 'tools only', '0', String(steps.length), ...cells(alone), f3(0), '–', '']);
  const draws = await firstDayDraws(world.pool, encoder);
  for (const draw of ['random', 'skewed', 'scenes'] as const)
    for (const n of sizes) {
      if (n > draws[draw].length) continue;
      const p = await measure(await Dtdr.train({ tools: world.tools, plans: draws[draw].slice(0, n), encoder }), steps);
      const short: string[] = [];
      if (p.mrr < alone.mrr - 0.02) short.push('MRR');
      if (p.confident === 0 && p.planRecall < alone.planRecall) short.push('plan recall');
      if (p.confident === 0 && p.frontierRecall < alone.frontierRecall) short.push('frontier recall');
      points++;
      if (short.length) failing++;
      const miss = p.confident > 0 ? f3(p.confidentMiss) : '–';
      const row = [world.name, draw, String(n), String(steps.length), ...cells(p), f3(p.confident), miss];
      rows.push([...row, short.length ? `short: ${short.join(', ')}` : 'yes']);
      console.log(rows.at(-1)!.join(' | '));
    }
}
console.log(`${failing} of ${points} points fall short of the benchmark's lines`);
if (args.results)
  writeResultsTable(
    args.results,
    'first-step-recall',
    {
      title: "The first step of test plans that call two tools or more, against the tools alone's (N = 0)",
      command: 'npm run experiment -- first-step-recall',
      columns: [
        'world',
        'draw',
        'N',
        'steps',
        'MRR',
        'mean set',
        "plan's tools in the set",
        'first tools in the set',
        'confident',
        'confident-miss',
        "meets the benchmark's lines",
      ],
      align: ['left', 'left', 'right', 'right', 'right', 'right', 'right', 'right', 'right', 'right', 'left'],
      rows,
    },
    {
      'first-step-recall-short': {
        value: `${failing} of ${points}`,
        what: "points below the held-out benchmark's lines (MRR, or recall where no step is confident)",
      },
    },
  );

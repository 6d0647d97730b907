/**
 * The held-out benchmark's measure on the `eval:app-life` worlds: the first step of every test plan
 * that calls two tools or more, as a request arrives. DTDR-G trained on the first N demonstrations
 * of each draw (random: one fixed shuffle; skewed; scenes), against a model of the tools alone on
 * the same steps: MRR of the first needed tool, the mean set, and two recalls of the set, the
 * share of the plan's tools in it and the share of the step's acceptable tools (the DAG frontier:
 * the tools that may come first), with the share of confident steps and how many of those missed.
 * A point passes the benchmark's lines when its MRR is at least the tools alone's less 0.02 and,
 * where no step is confident, both recalls are at least the tools alone's. It also prints, per world, the share of
 * the plans' tools a perfect next-step set would hold (exactly the tools that may come first). (`capped-fill`
 * measures how a capped set is filled.)
 *
 *   npm run experiment -- first-step-recall [--worlds demo,…] [--sizes 30,100,300,1000] [--results docs/results.json]
 */
import { join } from 'node:path';
import { Dtdr } from '../../src/core/dtdr.js';
import { ALL_WORLDS, firstDayDraws } from '../../test/worlds/app-life.js';
import { encoderByName } from '../../test/worlds/encoders.js';
import { firstSteps, scoreFirstSteps, type FirstStepScores } from '../../test/worlds/first-step.js';
import { writeResultsTable } from '../bench/results.js';
import { worldExperiment } from '../bench/world-args.js';
import '../../src/methods.js';

const ROOT = join(import.meta.dirname, '../..');
const { args, sizes, worlds } = worldExperiment('first-step-recall', {
  worlds: ALL_WORLDS.join(','),
  sizes: '30,100,300,1000',
  data: join(ROOT, '../shared/data'),
});
const encoder = await encoderByName('glove');

const f3 = (x: number) => x.toFixed(3);
const rows: string[][] = [];
let failing = 0;
let points = 0;
for (const world of worlds) {
  const steps = firstSteps(world.test);
  if (steps.length === 0) continue;
  const toolsOnly = await Dtdr.train({ tools: world.tools, encoder });
  const alone = await scoreFirstSteps(toolsOnly, steps);
  const cells = (p: FirstStepScores) => [f3(p.mrr), p.set.toFixed(1), f3(p.planRecall), f3(p.frontierRecall)];
  rows.push([world.name, 'tools only', '0', String(steps.length), ...cells(alone), f3(0), '–', '']);
  // What a perfect next-step set would hold of the plans' tools: exactly the tools that may come first.
  const exact = steps.reduce(
    (s, st) => s + st.tools.filter((t) => st.acceptable.includes(t)).length / st.tools.length,
    0,
  );
  console.log(`${world.name}: a set of exactly the first tools holds ${f3(exact / steps.length)} of the plan's tools`);
  const draws = await firstDayDraws(world.pool, encoder);
  for (const draw of ['random', 'skewed', 'scenes'] as const)
    for (const n of sizes) {
      if (n > draws[draw].length) continue;
      const p = await scoreFirstSteps(
        await Dtdr.train({ tools: world.tools, plans: draws[draw].slice(0, n), encoder }),
        steps,
      );
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

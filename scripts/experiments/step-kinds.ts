/**
 * Where a few demonstrations cost against the tools alone: DTDR-G's MRR split by the kind of step
 * (the first call, a call after others, END), trained on the first N demonstrations of each
 * `eval:app-life` world drawn at random (one fixed shuffle), skewed and by scenes, against a
 * model of the tools alone on the same test steps. Where a point's MRR falls below the tools
 * alone's, this says which steps lose.
 *
 *   npm run experiment -- step-kinds [--worlds demo,…] [--sizes 30,100] [--results docs/results.json]
 */
import { join } from 'node:path';
import { Dtdr } from '../../src/core/dtdr.js';
import { scoreStep } from '../../src/core/base/metrics.js';
import { END } from '../../src/core/base/types.js';
import { planSteps } from '../../src/core/plans/plan.js';
import { ALL_WORLDS, firstDayDraws } from '../../test/worlds/app-life.js';
import { encoderByName } from '../../test/worlds/encoders.js';
import { writeResultsTable } from '../bench/results.js';
import { worldExperiment } from '../bench/world-args.js';
import '../../src/methods.js';

const ROOT = join(import.meta.dirname, '../..');
const { args, sizes, worlds } = worldExperiment('step-kinds', {
  worlds: ALL_WORLDS.join(','),
  sizes: '30,100',
  data: join(ROOT, '../shared/data'),
});

const KINDS = ['first', 'middle', 'end'] as const;
type Kind = (typeof KINDS)[number];
const encoder = await encoderByName('glove');

/** Reciprocal ranks of every test step, by kind. */
async function ranks(model: Dtdr, test: (typeof worlds)[number]['test']): Promise<Record<Kind, number[]>> {
  const out: Record<Kind, number[]> = { first: [], middle: [], end: [] };
  for (const plan of test)
    for (const step of planSteps(plan)) {
      const r = await model.rank(step.query, step.history);
      const kind: Kind = step.acceptable.includes(END) ? 'end' : step.history.length === 0 ? 'first' : 'middle';
      out[kind].push(scoreStep(r.order, r.labels, step.acceptable, []).reciprocalRank);
    }
  return out;
}
const mean = (xs: number[]) => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : NaN);

const rows: string[][] = [];
for (const world of worlds) {
  const alone = await ranks(await Dtdr.train({ tools: world.tools, encoder }), world.test);
  const draws = await firstDayDraws(world.pool, encoder);
  for (const draw of ['random', 'skewed', 'scenes'] as const)
    for (const n of sizes) {
      if (n > draws[draw].length) continue;
      const learned = await ranks(
        await Dtdr.train({ tools: world.tools, plans: draws[draw].slice(0, n), encoder }),
        world.test,
      );
      const cells = KINDS.map((k) => `${mean(learned[k]).toFixed(3)} (${mean(alone[k]).toFixed(3)})`);
      const all = (r: Record<Kind, number[]>) => mean(KINDS.flatMap((k) => r[k]));
      const row = [world.name, draw, String(n), `${all(learned).toFixed(3)} (${all(alone).toFixed(3)})`, ...cells];
      console.log(row.join(' | '));
      rows.push(row);
    }
}
if (args.results)
  writeResultsTable(args.results, 'step-kinds', {
    title: 'DTDR-G MRR by kind of step after N demonstrations, the tools alone in brackets',
    command: 'npm run experiment -- step-kinds',
    columns: ['world', 'draw', 'N', 'every step', 'first call', 'a later call', 'END'],
    align: ['left', 'left', 'right', 'right', 'right', 'right', 'right'],
    rows,
  });

/**
 * Held-out steps scored over every label, or over a pool of each step's likely labels (the needed ones, END and
 * each signal's top 12; the default)? The gate, its temperature and the conformal thresholds are fitted on those
 * held-out probabilities, and a softmax over the pool leaves out the share the other labels take at rank time:
 * held-out probabilities come out higher than the model's, where its ranking is flat. Each `eval:app-life` world
 * (at most 2,000 labels: the whole softmax costs a fit its labels' worth per held-out step) is trained on N
 * demonstrations per draw (random, scenes) both ways (ExperimentalGatedSettings.wholeSoftmaxUpTo), and every test
 * step is retrieved as an app would: MRR, coverage, mean set, top-1 calibration error, confident-miss, and the
 * unsure steps that claim the target: their measured coverage against it.
 *
 *   npm run experiment -- whole-softmax [--worlds demo,…] [--sizes 30,100,300] [--results docs/results.json]
 */
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { summarize } from '../../src/core/base/metrics.js';
import type { Plan } from '../../src/core/base/types.js';
import { Dtdr } from '../../src/core/dtdr.js';
import { ALL_WORLDS, firstDayDraws, scoreRetrievals, worldsNamed } from '../../test/worlds/app-life.js';
import { encoderByName } from '../../test/worlds/encoders.js';
import { positiveSizes, recordFullRunOnly, refuser, printTable, writeResultsTable } from '../bench/results.js';
import '../../src/methods.js';

const ROOT = join(import.meta.dirname, '../..');
const DEFAULTS = { worlds: ALL_WORLDS.join(','), sizes: '30,100,300' };
const { values: args } = parseArgs({
  options: {
    worlds: { type: 'string', default: DEFAULTS.worlds },
    sizes: { type: 'string', default: DEFAULTS.sizes },
    data: { type: 'string', default: join(ROOT, '../shared/data') },
    results: { type: 'string' },
  },
});
const refuse: (message: string) => never = refuser('whole-softmax');
recordFullRunOnly(args, DEFAULTS, refuse);
const sizes = positiveSizes(args.sizes, refuse);
const MAX_LABELS = 2000;
const encoder = await encoderByName('glove');

/** One trained model's figures on the world's test steps; `claimGap`: unsure steps claiming the target, measured − claim. */
async function figures(model: Dtdr, test: readonly Plan[]) {
  let [claiming, held] = [0, 0];
  const scores = await scoreRetrievals(model, test, (r, s) => {
    if (!r.confident && r.target !== undefined && Math.abs(r.target - 0.95) < 1e-9)
      [claiming, held] = [claiming + 1, held + s.covered];
  });
  return { ...summarize(scores), claimGap: claiming > 0 ? held / claiming - 0.95 : NaN, claiming };
}

const rows: string[][] = [];
const f3 = (x: number) => (Number.isNaN(x) ? '–' : x.toFixed(3));
const signed = (x: number) => (Number.isNaN(x) ? '–' : `${x < 0 ? '−' : '+'}${Math.abs(x).toFixed(3)}`);
for (const world of worldsNamed(args.worlds, args.data, refuse)) {
  if (world.tools.length + 1 > MAX_LABELS) {
    console.log(`${world.name}: ${world.tools.length} tools, over ${MAX_LABELS} labels: skipped`);
    continue;
  }
  const draws = await firstDayDraws(world.pool, encoder);
  for (const draw of ['random', 'scenes'] as const)
    for (const n of sizes) {
      if (n > draws[draw].length) continue;
      const plans = draws[draw].slice(0, n);
      const both = [];
      for (const upTo of [0, MAX_LABELS]) {
        const gated = { experimental: { wholeSoftmaxUpTo: upTo } };
        both.push(await figures(await Dtdr.train({ tools: world.tools, plans, encoder, gated }), world.test));
      }
      for (const [k, f] of both.entries()) {
        const row = [world.name, draw, String(n), k === 0 ? 'pool' : 'every label'];
        row.push(f3(f.mrr), f3(f.coverage), f.setSize.toFixed(2), f3(f.ece), f3(f.confidentMissRate));
        row.push(`${signed(f.claimGap)} (${f.claiming})`);
        console.log(row.join(' | '));
        rows.push(row);
      }
    }
}
const columns = ['world', 'draw', 'N', 'scored over', 'MRR', 'coverage', 'mean set', 'top-1 ECE', 'confident-miss'];
columns.push('unsure at 95%: measured − claim (steps)');
printTable(columns, rows);
if (args.results)
  writeResultsTable(args.results, 'whole-softmax', {
    title: 'Held-out steps scored over a pool of likely labels (default) or over every label',
    command: 'npm run experiment -- whole-softmax',
    columns,
    align: ['left', 'left', 'right', 'left', 'right', 'right', 'right', 'right', 'right', 'right'],
    rows,
  });

/**
 * The prior on DTDR-G's gate (ExperimentalGatedSettings.priorSteps and pulledSignals), chosen leaving each world out.
 *
 * A model of a few dozen runs fits its gate on a few hundred held-out steps; unchecked, the weights of what the runs
 * teach (the graphs, the head) grow until, after a first call, the runs of a few scenes predict the call they
 * memorised rather than the one the rest of the request asks for (`npm run experiment -- step-kinds`). The prior
 * pulls chosen weights back to the untrained gate's with the strength of `priorSteps` steps. For each world, each
 * setting of the grid (which signals are pulled, how strongly) trains DTDR-G on the first-day draws (N = 30 and 100
 * plans, at random, first-tool skewed and scenes: test/worlds/app-life.ts) and ranks every test step. Each world's
 * setting is the one with the best score over every other world's points: the mean shortfall below the tools
 * alone − 0.02 (the first day's line) in steps of half a hundredth, then the mean MRR. The world is reported at it,
 * beside the tools alone and no prior. The shipped default is the setting all worlds together choose.
 *
 *   npm run experiment -- prior-pull [--worlds demo,api-bank,…] [--steps 0,5,10,20,50] [--sizes 30,100]
 *                                    [--json out.json] [--from out.json] [--results docs/results.json]
 */
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { Dtdr } from '../../src/core/dtdr.js';
import { summarize } from '../../src/core/base/metrics.js';
import { SIGNALS, type SignalName } from '../../src/core/retrieval/default/layout.js';
import { PRIOR_STEPS, PULLED_SIGNALS } from '../../src/core/retrieval/default/options.js';
import { ALL_WORLDS, firstDayDraws, scoreRetrievals, worldsNamed } from '../../test/worlds/app-life.js';
import { encoderByName } from '../../test/worlds/encoders.js';
import {
  positiveSizes,
  recordFullRunOnly,
  refuser,
  printTable,
  savedOrMeasured,
  writeResultsTable,
} from '../bench/results.js';
import '../../src/methods.js';

/** The sets of signals the grid pulls: what the runs teach; that and the called and schema signals; all but END. */
const SIGNAL_SETS: Record<string, SignalName[]> = {
  learned: ['cluster-graph', 'pooled-graph', 'cluster-tools', 'head'],
  'learned+history': PULLED_SIGNALS,
  'all but END': SIGNALS.filter((s) => s !== 'end'),
};

interface Point {
  world: string;
  draw: string;
  n: number;
  /** `${set} ${steps}`, or 'none' for no prior and 'tools' for the tools alone. */
  setting: string;
  mrr: number;
}

const ROOT = join(import.meta.dirname, '../..');
const DEFAULTS = { worlds: ALL_WORLDS.join(','), steps: '0,5,10,20,50', sizes: '30,100' };
const { values: args } = parseArgs({
  options: {
    worlds: { type: 'string', default: DEFAULTS.worlds },
    steps: { type: 'string', default: DEFAULTS.steps },
    sizes: { type: 'string', default: DEFAULTS.sizes },
    data: { type: 'string', default: join(ROOT, '../shared/data') },
    json: { type: 'string' },
    from: { type: 'string' },
    results: { type: 'string' },
  },
});
const refuse: (message: string) => never = refuser('prior-pull');
recordFullRunOnly(args, DEFAULTS, refuse);
const grid = args.steps.split(',').map(Number);
if (grid.some((s) => !(s >= 0))) refuse(`--steps must be numbers ≥ 0 (got ${args.steps})`);
const sizes = positiveSizes(args.sizes, refuse);

async function measure(): Promise<Point[]> {
  const encoder = await encoderByName('glove');
  const points: Point[] = [];
  for (const world of worldsNamed(args.worlds, args.data, refuse)) {
    const score = async (model: Dtdr) => summarize(await scoreRetrievals(model, world.test)).mrr;
    const alone = await score(await Dtdr.train({ tools: world.tools, encoder }));
    points.push({ world: world.name, draw: 'none', n: 0, setting: 'tools', mrr: alone });
    const draws = await firstDayDraws(world.pool, encoder);
    for (const draw of ['random', 'skewed', 'scenes'] as const)
      for (const n of sizes) {
        if (n > draws[draw].length) continue;
        const settings = Object.entries(SIGNAL_SETS).flatMap(([set, signals]) =>
          grid.filter((s) => s > 0).map((steps) => ({ setting: `${set} ${steps}`, signals, steps })),
        );
        for (const { setting, signals, steps } of [{ setting: 'none', signals: [], steps: 0 }, ...settings]) {
          const experimental = { priorSteps: steps, pulledSignals: signals };
          const plans = draws[draw].slice(0, n);
          const model = await Dtdr.train({ tools: world.tools, plans, encoder, gated: { experimental } });
          const p: Point = { world: world.name, draw, n, setting, mrr: await score(model) };
          points.push(p);
          console.log(JSON.stringify(p));
        }
      }
  }
  return points;
}

const points = await savedOrMeasured<Point>(args.from, args.json, measure);

const worlds = [...new Set(points.map((p) => p.world))];
const settings = [...new Set(points.filter((p) => p.draw !== 'none').map((p) => p.setting))];
const toolsAlone = new Map(points.filter((p) => p.setting === 'tools').map((p) => [p.world, p.mrr]));
/** Shortfalls within half a hundredth are alike (the runs' noise); then the better mean MRR. */
const SHORTFALL_STEP = 0.005;
const objective = (setting: string, keep: (world: string) => boolean) => {
  const mine = points.filter((p) => p.setting === setting && keep(p.world));
  const shortfall = mine.reduce((s, p) => s + Math.max(0, toolsAlone.get(p.world)! - 0.02 - p.mrr), 0);
  const mean = mine.reduce((s, p) => s + p.mrr, 0) / Math.max(1, mine.length);
  return { shortfall: Math.round(shortfall / Math.max(1, mine.length) / SHORTFALL_STEP), mean };
};
const choose = (keep: (world: string) => boolean) =>
  settings.reduce((best, s) => {
    const [a, b] = [objective(s, keep), objective(best, keep)];
    return a.shortfall < b.shortfall || (a.shortfall === b.shortfall && a.mean > b.mean + 1e-9) ? s : best;
  }, settings[0]);
const chosenAll = choose(() => true);

const rows: string[][] = [];
for (const world of worlds) {
  const setting = choose((w) => w !== world);
  const mine = (s: string) => points.filter((p) => p.world === world && p.setting === s);
  const [held, none] = [mine(setting), mine('none')];
  const mean = (ps: Point[]) => ps.reduce((s, p) => s + p.mrr, 0) / ps.length;
  const worst = (ps: Point[]) => Math.min(...ps.map((p) => p.mrr - toolsAlone.get(world)!));
  rows.push([
    world,
    setting,
    String(held.length),
    toolsAlone.get(world)!.toFixed(3),
    mean(none).toFixed(3),
    mean(held).toFixed(3),
    signed(worst(none)),
    signed(worst(held)),
  ]);
}
function signed(x: number): string {
  return `${x < 0 ? '−' : '+'}${Math.abs(x).toFixed(3)}`;
}
const columns = [
  'world',
  'prior chosen without it',
  'points',
  'MRR: tools alone',
  'no prior',
  'with the prior',
  'worst point − tools alone: no prior',
  'with the prior',
];
printTable(columns, rows);
const shipped = `${Object.keys(SIGNAL_SETS).find((k) => SIGNAL_SETS[k].join() === PULLED_SIGNALS.join())} ${PRIOR_STEPS}`;
console.log(`chosen on every world: ${chosenAll} (the default is ${shipped})`);

if (args.results)
  writeResultsTable(args.results, 'prior-pull', {
    title: `The gate's prior chosen leaving each world out (strengths ${grid.join(', ')} steps; every world together: ${chosenAll})`,
    command: 'npm run experiment -- prior-pull',
    columns,
    align: ['left', 'left', 'right', 'right', 'right', 'right', 'right', 'right'],
    rows,
  });

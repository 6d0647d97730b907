/**
 * Every step rule removed in turn, on every first-day world: does it earn its place where it was not designed?
 *
 * For each world, draw (random, first-tool skewed, scenes: test/worlds/app-life.ts) and N (default 10, 30, 100,
 * 300 and all), DTDR-G is trained once; each rule is then left out (`withoutRules`, saved with the model: the same fit
 * without that rule) and every test step is retrieved as an app would. Per rule and world: the change its removal
 * makes to MRR, coverage, mean set and confident-miss, averaged over the world's points. A rule pays on a world when
 * removing it costs more than it saves there: coverage − 2 × confident-miss falls, or MRR falls, by more than 0.002.
 * The last column says whether the rule pays on the other worlds taken together (leave one world out).
 *
 *   npm run experiment -- rule-ablation [--worlds LIST] [--sizes 10,30,100,300,all] [--json out.json] [--from out.json]
 *                                       [--results docs/results.json]
 */
import { parseArgs } from 'node:util';
import { Dtdr } from '../../src/core/dtdr.js';
import { summarize } from '../../src/core/base/metrics.js';
import { STEP_RULE_NAMES } from '../../src/core/retrieval/default/step-rules.js';
import { loadEncoder } from '../../src/encoders/node.js';
import { ALL_WORLDS, firstDayDraws, loadWorld, scoreRetrievals } from '../../test/worlds/app-life.js';
import { printTable, savedOrMeasured, writeResultsTable } from '../bench/results.js';
import '../../src/methods.js'; // every method, as the Node entry registers them

interface Point {
  world: string;
  draw: string;
  n: number;
  /** The rule left out; '' for none. */
  without: string;
  mrr: number;
  coverage: number;
  setSize: number;
  confidentMiss: number;
}

const { values } = parseArgs({
  options: {
    worlds: { type: 'string', default: ALL_WORLDS.join(',') },
    sizes: { type: 'string', default: '10,30,100,300,all' },
    data: { type: 'string', default: '../shared/data' },
    json: { type: 'string' },
    from: { type: 'string' },
    results: { type: 'string' },
  },
});

async function measure(): Promise<Point[]> {
  const encoder = await loadEncoder();
  const points: Point[] = [];
  for (const name of values.worlds.split(',')) {
    const world = loadWorld(name, values.data);
    if (!world) continue;
    const draws = await firstDayDraws(world.pool, encoder);
    for (const [draw, pool] of Object.entries(draws))
      for (const size of values.sizes.split(',')) {
        // `all`: the whole pool; a size at or past it is left to `all`.
        const n = size === 'all' ? pool.length : Number(size);
        if (size !== 'all' && n >= pool.length) continue;
        const saved = (await Dtdr.train({ tools: world.tools, plans: pool.slice(0, n), encoder })).toJSON() as {
          state: { withoutRules?: string[] };
        };
        for (const without of ['', ...STEP_RULE_NAMES]) {
          const copy = structuredClone(saved);
          if (without) copy.state.withoutRules = [without];
          const s = summarize(await scoreRetrievals(Dtdr.load(copy, encoder), world.test));
          const p = { world: name, draw, n, without, mrr: s.mrr, coverage: s.coverage, setSize: s.setSize };
          const point: Point = { ...p, confidentMiss: s.confidentMissRate * (1 - s.widenedRate) };
          points.push(point);
          console.log(JSON.stringify(point));
        }
      }
  }
  return points;
}

const points = await savedOrMeasured<Point>(values.from, values.json, measure);

const key = (p: Point) => `${p.world}|${p.draw}|${p.n}`;
const full = new Map(points.filter((p) => p.without === '').map((p) => [key(p), p]));
/** Mean change removing `rule` makes on the worlds `keep` holds (removed − with). */
const change = (rule: string, keep: (world: string) => boolean) => {
  const mine = points.filter((p) => p.without === rule && keep(p.world) && full.has(key(p)));
  const d = { mrr: 0, coverage: 0, setSize: 0, confidentMiss: 0, n: mine.length };
  for (const p of mine) {
    const f = full.get(key(p))!;
    d.mrr += (p.mrr - f.mrr) / mine.length;
    d.coverage += (p.coverage - f.coverage) / mine.length;
    d.setSize += (p.setSize - f.setSize) / mine.length;
    d.confidentMiss += (p.confidentMiss - f.confidentMiss) / mine.length;
  }
  return d;
};
const pays = (d: ReturnType<typeof change>) => d.coverage - 2 * d.confidentMiss < -0.002 || d.mrr < -0.002;
const worlds = [...new Set(points.map((p) => p.world))];
const signed = (v: number, digits = 3) => `${v >= 0 ? '+' : '−'}${Math.abs(v).toFixed(digits)}`;
const rows: string[][] = [];
for (const rule of STEP_RULE_NAMES)
  for (const world of worlds) {
    const d = change(rule, (w) => w === world);
    if (d.n === 0) continue;
    rows.push([
      rule,
      world,
      String(d.n),
      signed(d.mrr),
      signed(d.coverage),
      signed(d.setSize, 2),
      signed(d.confidentMiss),
      pays(change(rule, (w) => w !== world)) ? 'yes' : 'no',
    ]);
  }
const columns = [
  'rule removed',
  'world',
  'points',
  'Δ MRR',
  'Δ coverage',
  'Δ mean set',
  'Δ confident-miss',
  'pays on the other worlds',
];
printTable(columns, rows);

if (values.results)
  writeResultsTable(values.results, 'rule-ablation', {
    title:
      'Each step rule removed in turn: the change on each world (means over its draws and N), and whether the ' +
      'rule pays on the other worlds',
    command: 'npm run experiment -- rule-ablation',
    columns,
    align: ['left', 'left', 'right', 'right', 'right', 'right', 'right', 'left'],
    rows,
  });

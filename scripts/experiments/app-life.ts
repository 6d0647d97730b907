/**
 * The app's first year: how DTDR-G does as demonstrations arrive. For each world (the demo tools,
 * RestBench-TMDB, UltraTool, Seal-Tools from ../shared/data; MetaTool, NESTFUL and tau-bench retail
 * from data/worlds, built by scripts/build/worlds.ts), train on N = 0, 10, 30, 100, 300, 1,000 and
 * all of a world's training plans, drawn (a) at random, three seeds, (b) skewed: only plans whose
 * first tool is one of the pool's 3 most frequent first tools, in file order, and (c) scenes: the
 * plans of 3 of the pool's request clusters (one per ~20 plans, at least 10) first, then the rest
 * (test/worlds/app-life.ts `scenesPool`). Each by `Dtdr.train` and by
 * a tools-only model that then `learn()`s the same plans, ten at a time, with `refitWorker()` as an
 * app would give it (refits past REFIT_UP_TO run in the background: each learn call waits for the
 * refit it started, `settle()`, as when runs arrive slower than a refit takes). Every step of the world's test plans is
 * scored through the public API (`Dtdr.rank` and `selectCandidates`, as `retrieve` does): MRR,
 * coverage, mean |F_t|, the share of confident steps and the share of those whose set missed.
 *
 * Test plans are never trained on: the demo world tests on the hand-written compositional requests
 * (test/fixtures/demo-compositional.jsonl); UltraTool on 500 of its training plans held out (seed
 * 0; its official test plans stay untouched here); the other worlds on a seeded 30%.
 *
 *   npm run eval:app-life -- [--worlds demo,restbench] [--seeds 3] [--orders random,skewed,scenes] [--scene-clusters 10] [--encoder DIR] [--json out.json] [--results docs/results.json]
 *   npm run eval:app-life -- --from out.json --results docs/results.json   (a saved run into the docs' results file)
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { Dtdr } from '../../src/core/dtdr.js';
import type { Refitter } from '../../src/core/model/refit.js';
import { refitWorker } from '../../src/workers/node.js';
import { summarize, type MetricSummary } from '../../src/core/base/metrics.js';
import { seededRandom, shuffleInPlace } from '../../src/core/base/random.js';
import type { Plan } from '../../src/core/base/types.js';
import { encoderByName } from '../../test/worlds/encoders.js';
import {
  ALL_WORLDS,
  loadWorld,
  scenesPool,
  scoreRetrievals,
  skewedPool,
  type World,
} from '../../test/worlds/app-life.js';
import type { Encoder } from '../../src/core/base/encoder.js';
import '../../src/methods.js'; // every method, as the Node entry registers them

/** Runs handed to each `learn()` call on the learn path. */
const LEARN_BATCH = 10;

export interface Point extends MetricSummary {
  world: string;
  order: 'random' | 'skewed' | 'scenes' | 'none';
  path: 'train' | 'learn';
  n: number;
  seed: number;
  confidentShare: number;
}

/** The learn path's refits run here, as an app's would. */
let refitter: Refitter | undefined;

async function point(
  world: World,
  encoder: Encoder,
  plans: Plan[],
  path: 'train' | 'learn',
  meta: Omit<Point, keyof MetricSummary | 'confidentShare'>,
): Promise<Point> {
  let model: Dtdr;
  if (path === 'train' || plans.length === 0) model = await Dtdr.train({ tools: world.tools, plans, encoder });
  else {
    // Runs arrive a few at a time, as in an app.
    model = await Dtdr.train({ tools: world.tools, encoder, refitter: (refitter ??= refitWorker()) });
    for (let i = 0; i < plans.length; i += LEARN_BATCH) {
      await model.learn(plans.slice(i, i + LEARN_BATCH));
      await model.settle();
    }
  }
  const s = summarize(await scoreRetrievals(model, world.test));
  return { ...meta, ...s, confidentShare: 1 - s.widenedRate };
}

const fmt = (p: Point) =>
  `${p.world.padEnd(9)} ${p.order.padEnd(6)} ${p.path.padEnd(5)} N=${String(p.n).padStart(5)} s${p.seed}  MRR ${p.mrr.toFixed(3)}  cov ${p.coverage.toFixed(3)}  |F| ${p.setSize.toFixed(2).padStart(6)}  confident ${p.confidentShare.toFixed(3)}  c-miss ${p.confidentMissRate.toFixed(3)}`;

async function main() {
  const { values } = parseArgs({
    options: {
      worlds: { type: 'string', default: ALL_WORLDS.join(',') },
      seeds: { type: 'string', default: '3' },
      sizes: { type: 'string', default: '0,10,30,100,300,1000,all' },
      paths: { type: 'string', default: 'train,learn' },
      orders: { type: 'string', default: 'random,skewed,scenes' },
      // Request clusters of the scenes draw (3 of them come first); default one per ~20 pool plans, at least 10.
      'scene-clusters': { type: 'string' },
      json: { type: 'string' },
      // docs/results.json: the app-life table (means over seeds; worst coverage and confident-miss) is replaced.
      results: { type: 'string' },
      from: { type: 'string' },
      data: { type: 'string', default: '../shared/data' },
      // glove (default), a model folder, or A+B (test/worlds/encoders.ts)
      encoder: { type: 'string' },
    },
  });
  if (values.from) {
    // A saved run (--json) into the results file, without running again.
    const saved = JSON.parse(readFileSync(values.from, 'utf8')) as Point[];
    if (values.results) writeResultsTable(values.results, saved);
    return;
  }
  const encoder = await encoderByName(values.encoder);
  const sizes = values.sizes.split(',');
  const seeds = Number(values.seeds);
  const paths = values.paths.split(',') as ('train' | 'learn')[];
  const orders = values.orders.split(',');
  const points: Point[] = [];
  const t0 = performance.now();
  for (const name of values.worlds.split(',')) {
    const world = loadWorld(name, values.data);
    if (!world) continue;
    console.log(
      `\n${name}: ${world.tools.length} tools, pool ${world.pool.length} plans, test ${world.test.length} plans`,
    );
    const base = await point(world, encoder, [], 'train', { world: name, order: 'none', path: 'train', n: 0, seed: 0 });
    points.push(base);
    console.log(fmt(base));
    const skewed = skewedPool(world.pool);
    // The scenes draw: 3 request clusters first, then the rest of the pool (both in pool order).
    const clusters = values['scene-clusters'] === undefined ? undefined : Number(values['scene-clusters']);
    const scenes = orders.includes('scenes') ? await scenesPool(world.pool, encoder, { clusters }) : undefined;
    if (scenes)
      console.log(
        `scenes: ${scenes.sceneCount} plans in 3 of ${scenes.clusters} request clusters, then the rest of the pool`,
      );
    for (const size of sizes) {
      if (size === '0') continue;
      for (const order of orders) {
        const pool = order === 'skewed' ? skewed : order === 'scenes' ? scenes!.plans : world.pool;
        const n = size === 'all' ? pool.length : Number(size);
        if (size !== 'all' && n >= pool.length) continue; // 'all' covers it
        for (let seed = 0; seed < (order === 'random' && size !== 'all' ? seeds : 1); seed++) {
          const plans =
            order === 'random' ? shuffleInPlace([...pool], seededRandom(1000 + seed)).slice(0, n) : pool.slice(0, n);
          for (const path of paths) {
            const p = await point(world, encoder, plans, path, {
              world: name,
              order: order as Point['order'],
              path,
              n,
              seed,
            });
            points.push(p);
            console.log(`${fmt(p)}  (${((performance.now() - t0) / 1000).toFixed(0)} s)`);
          }
        }
      }
    }
  }
  if (values.json) writeFileSync(values.json, JSON.stringify(points, null, 1));
  if (values.results) writeResultsTable(values.results, points);
  // The lines: MRR ≥ tools-only − 0.02, confident-miss ≤ 0.05, coverage ≥ 0.90.
  const fails: string[] = [];
  for (const p of points) {
    const base = points.find((q) => q.world === p.world && q.n === 0)!;
    if (p.mrr < base.mrr - 0.02)
      fails.push(`MRR ${p.mrr.toFixed(3)} < tools-only ${base.mrr.toFixed(3)} − 0.02: ${fmt(p)}`);
    if (p.confidentMissRate > 0.05) fails.push(`confident-miss ${p.confidentMissRate.toFixed(3)} > 0.05: ${fmt(p)}`);
    if (p.coverage < 0.9) fails.push(`coverage ${p.coverage.toFixed(3)} < 0.90: ${fmt(p)}`);
  }
  console.log(`\n${points.length} points, ${fails.length} below a line`);
  for (const f of fails) console.log(`  ${f}`);
  await refitter?.close();
}

if (import.meta.url === `file://${process.argv[1]}`) await main();

/** The points of each world, draw, path and N (their seeds together), keyed `world|draw|path|N`, in run order. */
export function bySeeds(points: readonly Point[]): Map<string, Point[]> {
  const groups = new Map<string, Point[]>();
  for (const p of points) {
    const key = `${p.world}|${p.order}|${p.path}|${p.n}`;
    groups.set(key, [...(groups.get(key) ?? []), p]);
  }
  return groups;
}

// Function declarations, not consts: `main` runs above them at import (a const there is not yet initialised).

/** The mean of `f` over the seeds' points. */
export function meanOf(list: readonly Point[], f: (p: Point) => number): number {
  return list.reduce((a, p) => a + f(p), 0) / list.length;
}

/** The worst seed's `f`: the largest, or with `lowest` the smallest (coverage). */
export function worstOf(list: readonly Point[], f: (p: Point) => number, lowest = false): number {
  return (lowest ? Math.min : Math.max)(...list.map(f));
}

/** Writes the app-life table into a docs results file (test/docs-results.ts renders it). */
function writeResultsTable(file: string, points: Point[]): void {
  const results = JSON.parse(readFileSync(file, 'utf8')) as { tables: Record<string, unknown> };
  const rows = [...bySeeds(points).values()].map((list) => {
    const p = list[0];
    return [
      p.world,
      p.order === 'none' ? 'tools only' : p.order,
      p.order === 'none' ? '' : p.path,
      String(p.n),
      String(list.length),
      meanOf(list, (q) => q.mrr).toFixed(3),
      `${meanOf(list, (q) => q.coverage).toFixed(3)} (${worstOf(list, (q) => q.coverage, true).toFixed(3)})`,
      meanOf(list, (q) => q.setSize).toFixed(2),
      meanOf(list, (q) => q.confidentShare).toFixed(3),
      `${meanOf(list, (q) => q.confidentMissRate).toFixed(3)} (${worstOf(list, (q) => q.confidentMissRate).toFixed(3)})`,
    ];
  });
  results.tables['app-life'] = {
    title: "The app's first year: DTDR-G by demonstrations (means over seeds; worst run in brackets)",
    command: 'npm run eval:app-life -- --results docs/results.json',
    date: new Date().toISOString().slice(0, 10),
    columns: [
      'world',
      'draw',
      'path',
      'N',
      'runs',
      'MRR',
      'coverage (worst)',
      'mean |F_t|',
      'confident',
      'confident-miss (worst)',
    ],
    align: ['left', 'left', 'left', 'right', 'right', 'right', 'right', 'right', 'right', 'right'],
    rows,
  };
  writeFileSync(file, `${JSON.stringify(results, null, 1)}\n`);
  console.log(`${file}: tables.app-life (${rows.length} rows)`);
}

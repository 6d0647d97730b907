/**
 * The novelty flag's level and power: how often "the request is unlike every demonstration" (which gives the
 * tools-only answer) fires on requests like the demonstrations', and how often on requests from scenes they never
 * showed. Sentence vectors of long requests sit close together, so a flag that rarely fires on familiar requests
 * may also rarely fire on unfamiliar ones: its level says little without its power.
 *
 * Each world's pool is clustered as the scenes draw clusters it (test/worlds/app-life.ts `scenesPool`), and DTDR-G is
 * trained on the draw's first N demonstrations, N within the drawn scenes. Each test request lies in a drawn scene
 * (its nearest centroid is a drawn cluster's) or not. Reported per world and N: the share flagged among in-scene
 * requests (the level) and among the others (the power); the AUC of the request's novelty p-value (the chance an
 * out-of-scene request's is lower than an in-scene one's, ties half); the share flagged when the same N come from
 * the random draw (exchangeable requests: the level the flag is built for, 1 / (kept + 1)); and the first-step MRR of
 * the out-of-scene requests, tools alone against DTDR-G (the flag's purpose: those requests lose nothing).
 *
 * Then, trained on N random runs (--confident-sizes), whether the p-value marks the test steps called confident
 * whose set missed: its AUC (a missed step's request below a held one's) and how many of each lie below 0.1.
 *
 *   npm run experiment -- novelty-power [--worlds demo,…] [--sizes 10,30,100] [--confident-sizes 300,1000]
 *                                       [--results docs/results.json]
 */
import { join } from 'node:path';
import { Dtdr } from '../../src/core/dtdr.js';
import { planSteps } from '../../src/core/plans/plan.js';
import { noveltyFromState, noveltyPValue, unlikeEvery } from '../../src/core/retrieval/default/novelty.js';
import { ALL_WORLDS, firstDayDraws, scenesPool } from '../../test/worlds/app-life.js';
import { encoderByName } from '../../test/worlds/encoders.js';
import { positiveSizes, writeResultsTable } from '../bench/results.js';
import { worldExperiment } from '../bench/world-args.js';
import '../../src/methods.js';

const ROOT = join(import.meta.dirname, '../..');
const { args, sizes, worlds, refuse } = worldExperiment('novelty-power', {
  worlds: ALL_WORLDS.join(','),
  sizes: '10,30,100',
  'confident-sizes': '300,1000',
  data: join(ROOT, '../shared/data'),
});
const confidentSizes = positiveSizes(args['confident-sizes'], refuse, '--confident-sizes');
const encoder = await encoderByName('glove');

/** A model's kept demonstration requests (its saved novelty state), or undefined where it keeps none. */
function noveltyOf(model: Dtdr) {
  const state = (model.toJSON().state as { novelty?: Parameters<typeof noveltyFromState>[0] }).novelty;
  return state && noveltyFromState(state, encoder.dimension);
}

/** Each request's novelty p-value (exact) and flag under a model's kept requests. */
function flags(model: Dtdr, vectors: readonly Float32Array[]): { p: number[]; flagged: boolean[] } | undefined {
  const novelty = noveltyOf(model);
  if (!novelty) return undefined;
  const p = vectors.map((v) => noveltyPValue(novelty, v, 1));
  return { p, flagged: p.map((x) => unlikeEvery(novelty, x)) };
}

/** The chance a value of `low` is below one of `high` (ties half): the p-value's power to tell them apart. */
function auc(low: readonly number[], high: readonly number[]): number {
  let wins = 0;
  for (const a of low) for (const b of high) wins += a < b ? 1 : a === b ? 0.5 : 0;
  return wins / Math.max(1, low.length * high.length);
}

/** The MRR of each request's first step under `model`. */
async function firstStepMrr(model: Dtdr, steps: readonly { query: string; acceptable: string[] }[]): Promise<number> {
  let sum = 0;
  for (const step of steps) {
    const { order, labels } = await model.rank(step.query, []);
    const at = Array.from(order).findIndex((l) => step.acceptable.includes(labels[l]));
    sum += at >= 0 ? 1 / (at + 1) : 0;
  }
  return sum / Math.max(1, steps.length);
}

const share = (xs: readonly boolean[]) => xs.filter(Boolean).length / Math.max(1, xs.length);
const f3 = (x: number) => x.toFixed(3);
const rows: string[][] = [];
for (const world of worlds) {
  const steps = world.test.map((plan) => planSteps(plan)[0]).filter((s) => s !== undefined);
  const vectors = await encoder.embed(steps.map((s) => s.query));
  const scenes = await scenesPool(world.pool, encoder);
  const inScene = vectors.map((v) => scenes.inScene(v));
  const outSteps = steps.filter((_, i) => !inScene[i]);
  const alone = await firstStepMrr(await Dtdr.train({ tools: world.tools, encoder }), outSteps);
  const random = (await firstDayDraws(world.pool, encoder)).random;
  for (const n of sizes) {
    if (n > scenes.sceneCount) continue;
    const model = await Dtdr.train({ tools: world.tools, plans: scenes.plans.slice(0, n), encoder });
    const f = flags(model, vectors);
    const r = flags(await Dtdr.train({ tools: world.tools, plans: random.slice(0, n), encoder }), vectors);
    if (!f || !r) continue;
    const pick = <T>(xs: readonly T[], inside: boolean) => xs.filter((_, i) => inScene[i] === inside);
    rows.push([
      world.name,
      String(n),
      String(pick(inScene, true).length),
      String(outSteps.length),
      inScene.includes(true) ? f3(share(pick(f.flagged, true))) : '–',
      f3(share(pick(f.flagged, false))),
      inScene.includes(true) && inScene.includes(false) ? f3(auc(pick(f.p, false), pick(f.p, true))) : '–',
      f3(share(r.flagged)),
      f3(alone),
      f3(await firstStepMrr(model, outSteps)),
    ]);
    console.log(rows.at(-1)!.join(' | '));
  }
}

// Would the p-value mark the steps called confident that miss? Trained on N random runs, every test step retrieved.
const missRows: string[][] = [];
for (const world of worlds) {
  const random = (await firstDayDraws(world.pool, encoder)).random;
  for (const n of confidentSizes) {
    if (n > random.length) continue;
    const model = await Dtdr.train({ tools: world.tools, plans: random.slice(0, n), encoder });
    const novelty = noveltyOf(model);
    if (!novelty) continue;
    const pOf = new Map<string, number>();
    const hits: number[] = [];
    const misses: number[] = [];
    for (const plan of world.test)
      for (const step of planSteps(plan)) {
        const r = await model.retrieve(step.query, step.history);
        if (!r.confident) continue;
        if (!pOf.has(step.query))
          pOf.set(step.query, noveltyPValue(novelty, (await encoder.embed([step.query]))[0], 1));
        const hit = r.candidates.some((c) => step.acceptable.includes(c.tool));
        (hit ? hits : misses).push(pOf.get(step.query)!);
      }
    if (misses.length === 0) continue;
    const below = (xs: number[]) => xs.filter((p) => p < 0.1).length;
    missRows.push([
      world.name,
      String(n),
      String(hits.length + misses.length),
      String(misses.length),
      f3(auc(misses, hits)),
      String(below(hits) + below(misses)),
      String(below(misses)),
    ]);
    console.log(missRows.at(-1)!.join(' | '));
  }
}

/** One of the two tables into --results: the first column left, the figures right. */
const record = (name: string, title: string, columns: string[], tableRows: string[][]) =>
  args.results &&
  writeResultsTable(args.results, name, {
    title,
    command: 'npm run experiment -- novelty-power',
    columns,
    align: columns.map((_, i) => (i < 1 ? 'left' : 'right')),
    rows: tableRows,
  });
record(
  'novelty-power',
  "The novelty flag's level and power: test requests in the drawn scenes and outside them",
  [
    'world',
    'N (scenes)',
    'requests in the scenes',
    'outside',
    'flagged: in the scenes',
    'outside (power)',
    'p-value AUC',
    'flagged: N at random',
    'outside, first-step MRR: tools only',
    'DTDR-G',
  ],
  rows,
);
record(
  'novelty-confident-misses',
  "The novelty p-value of confident steps' requests: steps whose set missed against those whose set held",
  [
    'world',
    'N (random)',
    'confident steps',
    'of them missed',
    'p-value AUC (missed below held)',
    'confident steps at p < 0.1',
    'missed at p < 0.1',
  ],
  missRows,
);
await encoder.dispose?.();

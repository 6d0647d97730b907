/**
 * The tool-tuned rows for the description signals only, GloVe's for everything the demonstrations
 * teach: does that keep the tools-only gain of `dtdr-wise-100d` without its cost with
 * demonstrations (decision 0008)? A prototype that needs no change to DTDR-G: requests are embedded
 * as [√(1 − ε²) · GloVe ; ε · wise] and tool descriptions as [0 ; wise / ε], so a request's dot
 * product with a description is the wise cosine exactly, and with another request GloVe's up to ε²
 * (ε = 0.05). What it does not reproduce: products of two descriptions (the called tools'
 * similarity rows, the added-tools rule's centred match) are the wise ones times 1/ε², and the
 * request's residual after the called tools' directions are projected out keeps about unit length
 * where the wise residual would be rescaled; a real two-encoder DTDR-G would differ there.
 *
 *   npm run experiment -- split-encoder [--worlds demo,…] [--sizes 0,30,100,300] [--tuned models/dtdr-use-lite]
 *     [--results docs/results.json]
 *
 * `--tuned` puts another model folder on the description side (default: the wise rows), e.g. USE lite: "USE for the
 * description ranker, GloVe for the learned head"; its table is `split-encoder-<folder name>`.
 *
 * DTDR-G's MRR for GloVe, the mix and the split: with the tools alone on every plan of each
 * `eval:app-life` world, with N demonstrations drawn at random (two seeds) on its test plans, and
 * with every training plan of the public sets (seed 0, as `dtdr eval`).
 */
import { existsSync } from 'node:fs';
import { basename, dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { scoreStep } from '../../src/core/base/metrics.js';
import { seededRandom, shuffleInPlace } from '../../src/core/base/random.js';
import { toolText } from '../../src/core/base/text.js';
import type { Plan, ToolSpec } from '../../src/core/base/types.js';
import { splitDataset } from '../../src/core/evaluation/evaluate.js';
import { planSteps } from '../../src/core/plans/plan.js';
import { GatedRetriever } from '../../src/core/retrieval/default/index.js';
import { loadTraining } from '../../src/core/retrieval/load-training.js';
import { readDatasetDir } from '../../src/data/node.js';
import { ALL_WORLDS, worldsNamed } from '../../test/worlds/app-life.js';
import { encoderByName } from '../../test/worlds/encoders.js';
import { recordFullRunOnly, refuser, writeResultsTable } from '../bench/results.js';
import '../../src/methods.js';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '../..');
const DEFAULTS = { worlds: ALL_WORLDS.join(','), sizes: '0,30,100,300', data: join(ROOT, '../shared/data') };
const WISE = join(ROOT, 'models/dtdr-wise-100d');
const { values: args } = parseArgs({
  options: {
    worlds: { type: 'string', default: DEFAULTS.worlds },
    sizes: { type: 'string', default: DEFAULTS.sizes },
    data: { type: 'string', default: DEFAULTS.data },
    // The encoder of the description side (a model folder): the wise rows, or e.g. models/dtdr-use-lite.
    tuned: { type: 'string', default: WISE },
    results: { type: 'string' },
  },
});
const EPSILON = 0.05;
const FULL_SETS = ['ultratool', 'restbench-tmdb', 'seal-tools'];
const refuse: (message: string) => never = refuser('split-encoder');
recordFullRunOnly(args, DEFAULTS, refuse);
const worlds = worldsNamed(args.worlds, args.data, refuse);
for (const set of FULL_SETS)
  if (!existsSync(join(args.data, set))) refuse(`${join(args.data, set)} not found (the full-data part needs it)`);

await loadTraining('dtdr-g');
const glove = await encoderByName('glove');
const wise = await encoderByName(args.tuned);
type Mode = 'GloVe' | 'tuned' | 'split';
const MODES: Mode[] = ['GloVe', 'tuned', 'split'];
const TUNED = basename(args.tuned);
// Each description-side encoder has its own table: split-encoder (the wise rows), split-encoder-dtdr-use-lite, …
const TABLE = args.tuned === WISE ? 'split-encoder' : `split-encoder-${TUNED}`;
const SHORT = args.tuned === WISE ? 'wise' : TUNED;
console.log(`MRR: GloVe | ${TUNED} | ${TUNED} for descriptions, GloVe for the rest`);

function side(a: Float32Array, b: Float32Array, scaleA: number, scaleB: number): Float32Array {
  const v = new Float32Array(a.length + b.length);
  a.forEach((x, i) => (v[i] = x * scaleA));
  b.forEach((x, i) => (v[a.length + i] = x * scaleB));
  return v;
}

/** Vectors of requests (`request`) or tool descriptions in the mode's space. */
async function vectors(mode: Mode, texts: string[], request: boolean): Promise<Float32Array[]> {
  if (mode !== 'split') return (mode === 'GloVe' ? glove : wise).embed(texts);
  const [g, w] = [await glove.embed(texts), await wise.embed(texts)];
  return g.map((gv, i) =>
    request ? side(gv, w[i], Math.sqrt(1 - EPSILON ** 2), EPSILON) : side(gv, w[i], 0, 1 / EPSILON),
  );
}

/** DTDR-G trained on `train` in the mode's space, its MRR over every step of `test`. */
async function mrr(mode: Mode, tools: ToolSpec[], train: Plan[], test: Plan[]): Promise<number> {
  const toolVectors = await vectors(
    mode,
    tools.map((t) => toolText(t.name, t.description)),
    false,
  );
  const queries = await vectors(
    mode,
    train.map((p) => p.query),
    true,
  );
  const model = GatedRetriever.fit(tools, train, queries, toolVectors);
  const texts = [...new Set(test.map((p) => p.query))];
  const byText = new Map((await vectors(mode, texts, true)).map((v, i) => [texts[i], v]));
  let [sum, steps] = [0, 0];
  for (const plan of test)
    for (const step of planSteps(plan)) {
      const r = model.rank({ query: step.query, history: step.history, queryVector: byText.get(step.query)! });
      [sum, steps] = [sum + scoreStep(r.order, r.labels, step.acceptable, []).reciprocalRank, steps + 1];
    }
  return sum / steps;
}

const rows: string[][] = [];
const sizes = args.sizes.split(',').map(Number);
for (const world of worlds) {
  for (const n of sizes) {
    if (n >= world.pool.length) {
      console.log(`${world.name}: ${n} demonstrations skipped (its pool holds ${world.pool.length})`);
      continue;
    }
    const draws =
      n === 0 ? [[]] : [0, 1].map((s) => shuffleInPlace([...world.pool], seededRandom(1000 + s)).slice(0, n));
    const test = n === 0 ? [...world.pool, ...world.test] : world.test;
    const figures: number[] = [];
    for (const mode of MODES) {
      let total = 0;
      for (const train of draws) total += await mrr(mode, world.tools, train, test);
      figures.push(total / draws.length);
    }
    console.log(world.name, n, figures.map((f) => f.toFixed(3)).join(' | '));
    rows.push([
      `${world.name}, ${n === 0 ? 'tools only, every plan' : `${n} demonstrations`}`,
      ...figures.map((f) => f.toFixed(3)),
    ]);
  }
}
for (const set of FULL_SETS) {
  const dataset = readDatasetDir(join(args.data, set));
  const { train, test } = splitDataset(dataset, { seed: 0, split: 'default' });
  const figures: number[] = [];
  for (const mode of MODES) figures.push(await mrr(mode, dataset.tools, train, test));
  console.log('full', set, figures.map((f) => f.toFixed(3)).join(' | '));
  rows.push([`${set}, every training plan (${test.length} test plans)`, ...figures.map((f) => f.toFixed(3))]);
}
if (args.results)
  writeResultsTable(args.results, TABLE, {
    title: `DTDR-G MRR with GloVe, with ${TUNED}, and with ${TUNED} for the descriptions only`,
    command: `npm run experiment -- split-encoder${args.tuned === WISE ? '' : ` --tuned ${relative(ROOT, args.tuned)}`}`,
    columns: [
      'world, demonstrations',
      ...MODES.map((m) => ({ GloVe: m, tuned: TUNED, split: `${SHORT} for descriptions, GloVe for the rest` })[m]),
    ],
    align: ['left', 'right', 'right', 'right'],
    rows,
  });

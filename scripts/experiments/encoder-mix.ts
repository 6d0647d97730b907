/**
 * How far to move GloVe toward the tool-retrieval encoder tuned from it (`dtdr-wise-100d`, built by
 * scripts/build/wise-encoder.ts): row = (1 − α) · GloVe + α · tuned (dtdr-tool-open-100d unless --tuned),
 * for α on a grid. Every input is checked before the first model is trained; the tables are
 * written at the end.
 *
 *   npm run experiment -- encoder-mix [--alphas 0,0.5,0.6,0.7,0.75,0.8,0.85,0.9,0.95,1] [--worlds …] [--seeds 3] [--tuned DIR] [--results docs/results.json]
 *
 * 1. Every α: paraphrase nearest-neighbour accuracy, and DTDR-G's tools-only MRR on every
 *    `eval:app-life` world, every step of all its plans through `retrieve` (a model of the tools
 *    alone is trained on no plan, so every plan tests it; on Seal-Tools' test plans alone, 723
 *    steps, the mix lost more than a hundredth from α 0.8 on; on all its 2,504 steps, less up to α 0.9).
 * 2. α chosen leaving each world out, among the worlds none of whose requests trained the tuned
 *    rows (read from its manifest: dtdr-tool-open-100d's corpus is MetaTool and the Berkeley
 *    function-calling leaderboard, dtdr-tool-100d's also UltraTool; those worlds are reported but
 *    never choose): the α with the best mean tools-only MRR over the other worlds, among those
 *    losing no more than 0.01 to GloVe on any of them.
 * 3. GloVe against the α chosen over all of those worlds, with demonstrations: the random draw
 *    (seeds) and the scenes draw (scenes found with GloVe for both) at N = 10, 30, 100, 300.
 * 4. The same two on the full data sets, every training plan, seed 0 (as `dtdr eval`).
 *
 * With --at α, parts 3 and 4 compare GloVe with that α instead of the chosen one (their tables are
 * written under names ending in -at-α; the tools-only table is left as it is).
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { summarize, type MetricSummary } from '../../src/core/base/metrics.js';
import { seededRandom, shuffleInPlace } from '../../src/core/base/random.js';
import type { Encoder } from '../../src/core/base/encoder.js';
import type { Plan } from '../../src/core/base/types.js';
import { Dtdr } from '../../src/core/dtdr.js';
import { evaluateMethods, splitDataset } from '../../src/core/evaluation/evaluate.js';
import { readDatasetDir } from '../../src/data/node.js';
import { ALL_WORLDS, scenesPool, scoreRetrievals, worldsNamed, type World } from '../../test/worlds/app-life.js';
import { encoderByName } from '../../test/worlds/encoders.js';
import { paraphraseAccuracy } from '../../test/worlds/paraphrase.js';
import { wiseEncoderFiles } from '../build/wise-encoder.js';
import { recordFullRunOnly, refuser, variantRun, writeResultsTable } from '../bench/results.js';
import '../../src/methods.js';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '../..');
const LOSS_ALLOWED = 0.01;
/** The world each source of the tool corpus (scripts/build/tool-corpus.ts, `kept` in the manifest) has requests of. */
const SOURCE_WORLD: Record<string, string | undefined> = {
  metatool: 'metatool',
  'metatool-multi': 'metatool',
  bfcl: undefined, // the function-calling leaderboard: no eval:app-life world
  ultratool: 'ultratool',
};
const DEFAULTS = {
  alphas: '0,0.5,0.6,0.7,0.75,0.8,0.85,0.9,0.95,1',
  worlds: ALL_WORLDS.join(','),
  seeds: '3',
  sizes: '10,30,100,300',
};
const FULL_SETS = [
  ['ultratool', 'default'],
  ['ultratool', 'novel'],
  ['restbench-tmdb', 'default'],
  ['seal-tools', 'default'],
] as const;

const { values: args } = parseArgs({
  options: {
    alphas: { type: 'string', default: DEFAULTS.alphas },
    worlds: { type: 'string', default: DEFAULTS.worlds },
    seeds: { type: 'string', default: DEFAULTS.seeds },
    sizes: { type: 'string', default: DEFAULTS.sizes },
    data: { type: 'string', default: join(ROOT, '../shared/data') },
    results: { type: 'string' },
    // The tuned folder to mix GloVe with (its tokenizer must be GloVe's).
    tuned: { type: 'string', default: join(ROOT, 'models/dtdr-tool-open-100d') },
    // Compare GloVe with this α, not the chosen one, with demonstrations and on the full data sets.
    at: { type: 'string' },
  },
});

/** The encoder at α: the committed folders at the ends, a mix written to .cache/ in between. */
async function encoderAt(alpha: number): Promise<Encoder> {
  if (alpha === 0) return encoderByName('glove');
  if (alpha === 1) return encoderByName(args.tuned);
  const dir = join(ROOT, '.cache/encoder-mix', basename(resolve(args.tuned)), String(alpha));
  const files = wiseEncoderFiles(join(ROOT, 'models/dtdr-glove-100d'), args.tuned, alpha);
  for (const [name, content] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, name)), { recursive: true });
    writeFileSync(join(dir, name), content);
  }
  return encoderByName(dir);
}

async function score(world: World, encoder: Encoder, plans: Plan[]): Promise<MetricSummary> {
  const model = await Dtdr.train({ tools: world.tools, plans, encoder });
  return summarize(await scoreRetrievals(model, world.test));
}

/** The tools alone, scored on every plan of the world (none trained it). */
async function scoreToolsOnly(world: World, encoder: Encoder): Promise<MetricSummary> {
  const model = await Dtdr.train({ tools: world.tools, encoder });
  return summarize(await scoreRetrievals(model, [...world.pool, ...world.test]));
}

// Every input checked before the first model is trained.
const refuse: (message: string) => never = refuser('encoder-mix');
recordFullRunOnly(args, DEFAULTS, refuse);
const manifest = (() => {
  try {
    return JSON.parse(readFileSync(join(args.tuned, 'manifest.json'), 'utf8')) as {
      training?: { corpus?: { kept?: Record<string, number> } };
    };
  } catch (error) {
    return refuse(`${args.tuned}/manifest.json: ${(error as Error).message}`);
  }
})();
const kept = manifest.training?.corpus?.kept;
if (!kept)
  refuse(`${args.tuned}/manifest.json has no training.corpus.kept: is it a folder train-tool-encoder.ts wrote?`);
for (const src of Object.keys(kept))
  if (!(src in SOURCE_WORLD))
    refuse(`${args.tuned}: corpus source "${src}" is not in SOURCE_WORLD; say which world it is`);
/** Worlds with requests in the tuned rows' training corpus: reported, never used to choose α. */
const IN_CORPUS = new Set(Object.keys(kept).flatMap((src) => SOURCE_WORLD[src] ?? []));
console.log(`worlds in the tuned rows' corpus (never choosing α): ${[...IN_CORPUS].join(', ') || 'none'}`);

const alphas = args.alphas.split(',').map(Number);
if (!alphas.includes(0)) refuse('--alphas must include 0 (GloVe, the baseline)');
if (alphas.some((a) => !(a >= 0 && a <= 1))) refuse(`--alphas must lie in [0, 1] (got ${args.alphas})`);
const at = args.at === undefined ? undefined : Number(args.at);
if (at !== undefined && !(at > 0 && at <= 1)) refuse(`--at must lie in (0, 1] (got ${args.at})`);
const worlds = worldsNamed(args.worlds, args.data, refuse).map((world) => ({ name: world.name, world }));
const choosers = worlds.map((w) => w.name).filter((name) => !IN_CORPUS.has(name));
if (choosers.length < 3)
  refuse(`α is chosen leaving one of at least 3 worlds out; only ${choosers.join(', ')} can choose`);
for (const [set] of FULL_SETS)
  if (!existsSync(join(args.data, set))) refuse(`${join(args.data, set)} not found (the full-data part needs it)`);
const tunedName = basename(resolve(args.tuned));

// 1. Tools only, every α (with --at, GloVe and that α only: nothing is chosen).
const swept = at === undefined ? alphas : [0, at];
const toolsOnly = new Map<number, Map<string, MetricSummary>>();
const paraphrase = new Map<number, number>();
for (const alpha of swept) {
  const encoder = await encoderAt(alpha);
  paraphrase.set(alpha, (await paraphraseAccuracy(encoder)).accuracy);
  const byWorld = new Map<string, MetricSummary>();
  for (const { name, world } of worlds) byWorld.set(name, await scoreToolsOnly(world, encoder));
  toolsOnly.set(alpha, byWorld);
  await encoder.dispose?.();
  console.log(
    JSON.stringify({
      alpha,
      paraphrase: paraphrase.get(alpha),
      toolsOnlyMrr: Object.fromEntries([...byWorld].map(([w, s]) => [w, +s.mrr.toFixed(4)])),
    }),
  );
}

// 2. α chosen without each world.
const mrr = (alpha: number, world: string) => toolsOnly.get(alpha)!.get(world)!.mrr;
function choose(among: string[]): number {
  const allowed = swept.filter((a) => among.every((w) => mrr(a, w) >= mrr(0, w) - LOSS_ALLOWED));
  const mean = (a: number) => among.reduce((s, w) => s + mrr(a, w), 0) / among.length;
  return allowed.reduce((best, a) => (mean(a) > mean(best) ? a : best), 0);
}
const heldOut = choosers.map((world) => ({ world, alpha: choose(choosers.filter((w) => w !== world)) }));
const shipped = choose(choosers);
if (at === undefined) {
  for (const h of heldOut)
    console.log(
      `${h.world}: chosen without it α = ${h.alpha}; tools-only MRR ${mrr(h.alpha, h.world).toFixed(3)} (GloVe ${mrr(0, h.world).toFixed(3)})`,
    );
  console.log(`chosen over all ${choosers.length} worlds: α = ${shipped}`);
}
const compared = at ?? shipped;

// 3. With demonstrations: GloVe against the chosen α (or --at).
const glove = await encoderAt(0);
const chosen = await encoderAt(compared);
const demoRows: string[][] = [];
for (const { name, world } of worlds) {
  const scenes = (await scenesPool(world.pool, glove)).plans;
  const draws: { order: string; plans: Plan[] }[] = [];
  for (const size of args.sizes.split(',').map(Number)) {
    if (size >= world.pool.length) continue;
    for (let seed = 0; seed < Number(args.seeds); seed++)
      draws.push({ order: 'random', plans: shuffleInPlace([...world.pool], seededRandom(1000 + seed)).slice(0, size) });
    draws.push({ order: 'scenes', plans: scenes.slice(0, size) });
  }
  const figures: { mrr: number; coverage: number; set: number; worstMiss: number; ece: number }[] = [];
  for (const encoder of [glove, chosen]) {
    const points: MetricSummary[] = [];
    for (const d of draws) points.push(await score(world, encoder, d.plans));
    const mean = (f: (s: MetricSummary) => number) => points.reduce((s, p) => s + f(p), 0) / points.length;
    figures.push({
      mrr: mean((p) => p.mrr),
      coverage: mean((p) => p.coverage),
      set: mean((p) => p.setSize),
      worstMiss: Math.max(...points.map((p) => p.confidentMissRate)),
      ece: mean((p) => p.ece),
    });
  }
  const [g, c] = figures;
  console.log(JSON.stringify({ world: name, draws: draws.length, glove: g, chosen: c }));
  const pair = (a: number, b: number, digits = 3) => `${a.toFixed(digits)} → ${b.toFixed(digits)}`;
  demoRows.push([
    name + (IN_CORPUS.has(name) ? ' (in the corpus)' : ''),
    String(draws.length),
    pair(g.mrr, c.mrr),
    pair(g.coverage, c.coverage),
    pair(g.set, c.set, 2),
    pair(g.ece, c.ece),
    pair(g.worstMiss, c.worstMiss),
  ]);
}

// 4. The full data sets, GloVe against the chosen α (seed 0, as `dtdr eval`).
const fullRows: string[][] = [];
for (const [set, split] of FULL_SETS) {
  const dataset = readDatasetDir(join(args.data, set));
  const { train, test } = splitDataset(dataset, { seed: 0, split });
  const figures: number[] = [];
  for (const encoder of [glove, chosen]) {
    const result = await evaluateMethods(dataset.tools, train, test, encoder, {
      methods: ['dtdr-g'],
      seed: 0,
      timingPasses: 0,
    });
    figures.push(result.results['dtdr-g']!.mrr);
  }
  console.log(JSON.stringify({ set, split, glove: figures[0], chosen: figures[1] }));
  fullRows.push([
    `${set}${split === 'novel' ? ', novel sequences' : ''} (${test.length} test plans)`,
    ...figures.map((x) => x.toFixed(3)),
  ]);
}

/** Tables of another tuned folder than dtdr-tool-open-100d are written under names ending in its folder name. */
const variant = variantRun(
  'npm run experiment -- encoder-mix',
  resolve(args.tuned) === resolve(ROOT, 'models/dtdr-tool-open-100d')
    ? undefined
    : { option: '--tuned', value: args.tuned, id: tunedName },
);

const { suffix, command } =
  at === undefined ? variant : { suffix: `${variant.suffix}-at-${at}`, command: `${variant.command} --at ${at}` };

if (args.results) {
  const fmt = (x: number) => x.toFixed(3);
  if (at === undefined)
    writeResultsTable(args.results, `encoder-mix-tools-only${suffix}`, {
      title:
        `GloVe moved toward the tool-tuned rows of ${tunedName} by α: paraphrase accuracy and ` +
        'tools-only MRR on every step of every plan of each world, and the α chosen without each world',
      command,
      columns: [
        '',
        ...alphas.map((a) => (a === 0 ? 'GloVe (α 0)' : a === 1 ? `${tunedName} (α 1)` : `α ${a}`)),
        'α chosen without it',
      ],
      align: ['left', ...alphas.map(() => 'right'), 'right'],
      rows: [
        ['paraphrase NN accuracy', ...alphas.map((a) => fmt(paraphrase.get(a)!)), '—'],
        ...worlds.map(({ name }) => {
          const h = heldOut.find((x) => x.world === name);
          return [
            `tools only — ${name}${IN_CORPUS.has(name) ? ' (in the corpus)' : ''}`,
            ...alphas.map((a) => fmt(mrr(a, name))),
            h ? `${h.alpha}: ${fmt(mrr(h.alpha, name))}` : '—',
          ];
        }),
      ],
    });
  writeResultsTable(args.results, `encoder-mix-demos${suffix}`, {
    title: `With demonstrations, GloVe → α ${compared}: means over the random draws (${args.seeds} seeds) and the scenes draw at N = ${args.sizes}`,
    command,
    columns: ['world', 'draws', 'MRR', 'coverage', 'mean set', 'top-1 ECE', 'worst confident-miss'],
    align: ['left', 'right', 'right', 'right', 'right', 'right', 'right'],
    rows: demoRows,
  });
  writeResultsTable(args.results, `encoder-mix-full${suffix}`, {
    title: `DTDR-G with every training plan (seed 0, as dtdr eval): MRR with GloVe and with α ${compared}`,
    command,
    columns: ['data', 'GloVe', `α ${compared}`],
    align: ['left', 'right', 'right'],
    rows: fullRows,
  });
}

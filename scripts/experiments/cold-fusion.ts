/**
 * find_tools before the gateway has learned anything: how to put dtdr's ranking from the
 * descriptions and a ranking by the request's words (BM25 over names and descriptions) together.
 * Every world of eval:app-life, a model of its tools alone, every tool step of its test plans
 * (request and calls so far); a step counts when the 5 tools hold an acceptable one (find_tools'
 * top-5 recall). The candidates: dtdr alone (the set, then the ranking), BM25 alone (tools with a
 * word in common), reciprocal rank fusion at k = 1, 3, 10, 60, and weighted means of the two
 * scores, either as they are (dtdr's probability and BM25's share of the request's score) or each
 * scaled to [0, 1] over the tools, at word weights 0.25, 0.5, 0.75.
 *
 * Leave-one-world-out: for each world, the candidate with the best mean recall over the other
 * worlds, and its recall on the held-out one. The gateway ships the candidate chosen over all of
 * them (src/gateway/words.ts), measured here through its own code.
 *
 *   npm run experiment -- cold-fusion [--worlds demo,restbench,…] [--encoder DIR] [--results docs/results.json]
 */
import { parseArgs } from 'node:util';
import { END } from '../../src/core/base/types.js';
import { Dtdr } from '../../src/core/dtdr.js';
import { planSteps } from '../../src/core/plans/plan.js';
import { topByScore } from '../../src/core/retrieval/ranking.js';
import { scaledScores, stepTools, WordRanking } from '../../src/gateway/words.js';
import { ALL_WORLDS, loadWorld } from '../../test/worlds/app-life.js';
import { encoderByName } from '../../test/worlds/encoders.js';
import { variantRun, writeResultsTable } from '../bench/results.js';

const { values: args } = parseArgs({
  options: {
    worlds: { type: 'string', default: ALL_WORLDS.join(',') },
    results: { type: 'string' },
    // A model folder instead of the bundled encoder: the table is then written as gateway-cold-fusion-<its id>.
    encoder: { type: 'string' },
  },
});
const SHIPPED = 'scaled mean, words 0.5';
const candidates = [
  'dtdr alone',
  ...[1, 3, 10, 60].map((k) => `RRF, k = ${k}`),
  ...[0.25, 0.5, 0.75].map((w) => `mean, words ${w}`),
  ...[0.25, 0.5, 0.75].map((w) => `scaled mean, words ${w}`),
];
const LIMIT = 5;
const root = new URL('../../../shared/data', import.meta.url).pathname;
const encoder = await encoderByName(args.encoder);

/** The best `LIMIT` of `scores`' labels (END and the −∞ scores never). */
function best(labels: readonly string[], scores: Float64Array): string[] {
  const order = topByScore(scores, LIMIT + 1);
  return [...order]
    .map((i) => labels[i])
    .filter((l, i) => l !== END && scores[order[i]] > -Infinity)
    .slice(0, LIMIT);
}

/** Each score scaled to [0, 1] over the tools (END, last, left at 0): as the gateway scales them. */
const scaled = (values: Float64Array) => scaledScores(values, values.length - 1);

const worlds: { name: string; steps: number; recall: Record<string, number>; bm25: number; shipped: number }[] = [];
for (const name of args.worlds.split(',')) {
  const world = loadWorld(name, root);
  if (!world) continue;
  const model = await Dtdr.train({ tools: world.tools, plans: [], encoder });
  const hits: Record<string, number> = Object.fromEntries(candidates.map((c) => [c, 0]));
  let [steps, bm25Hits, shippedHits] = [0, 0, 0];
  let words: WordRanking | undefined;
  for (const plan of world.test)
    for (const step of planSteps(plan)) {
      if (step.acceptable[0] === END) break;
      const retrieval = await model.retrieve(plan.query, step.history);
      const { ranking } = retrieval;
      const { labels } = ranking;
      if (words?.labels !== labels) words = new WordRanking(labels, model.tools);
      const hit = (tools: string[]) => (step.acceptable.some((a) => tools.includes(a)) ? 1 : 0);
      steps++;
      const meaning = Float64Array.from(ranking.probabilities);
      meaning[labels.length - 1] = -Infinity;
      const wordScores = Float64Array.from(words.scores(plan.query)!);
      // With no word in common BM25 gives every tool the same share: no words ranking.
      const matched = scaled(wordScores).some((s) => s > 0);
      const wordRanks = wordScores.map((s) => (matched && s > 0 ? s : -Infinity));
      wordRanks[labels.length - 1] = -Infinity;
      bm25Hits += hit(best(labels, wordRanks));
      const shipped = stepTools(
        retrieval,
        LIMIT,
        () => true,
        (r) => words!.fuse(r, plan.query),
      ).names;
      shippedHits += hit(shipped);
      const alone = [...retrieval.candidates.map((c) => c.tool), ...[...ranking.order].map((i) => labels[i])];
      hits['dtdr alone'] += hit([...new Set(alone.filter((l) => l !== END))].slice(0, LIMIT));
      const rankOf = (scores: Float64Array) => {
        const rank = new Float64Array(labels.length).fill(Infinity);
        topByScore(scores, labels.length).forEach((label, r) => scores[label] > -Infinity && (rank[label] = r));
        return rank;
      };
      const [dRank, wRank] = [rankOf(meaning), rankOf(wordRanks)];
      for (const k of [1, 3, 10, 60]) {
        const fused = dRank.map((r, i) =>
          i === labels.length - 1 ? -Infinity : 1 / (k + r + 1) + 1 / (k + wRank[i] + 1),
        );
        hits[`RRF, k = ${k}`] += hit(best(labels, fused));
      }
      const [ms, ws] = [
        scaled(meaning.map((x) => (x === -Infinity ? 0 : x))),
        scaled(matched ? wordScores : wordScores.map(() => 0)),
      ];
      for (const w of [0.25, 0.5, 0.75]) {
        const raw = meaning.map((m, i) => (m === -Infinity ? m : (1 - w) * m + w * (matched ? wordScores[i] : 0)));
        hits[`mean, words ${w}`] += hit(best(labels, raw));
        const mixed = ms.map((m, i) => (i === labels.length - 1 ? -Infinity : (1 - w) * m + w * ws[i]));
        hits[`scaled mean, words ${w}`] += hit(best(labels, mixed));
      }
    }
  const recall = Object.fromEntries(candidates.map((c) => [c, hits[c] / steps]));
  worlds.push({ name, steps, recall, bm25: bm25Hits / steps, shipped: shippedHits / steps });
  console.log(JSON.stringify({ world: name, steps, bm25: bm25Hits / steps, shipped: shippedHits / steps, recall }));
}

/** The candidate with the best mean recall over `among`. */
const choose = (among: typeof worlds) =>
  candidates.reduce((a, c) => (mean(among, c) > mean(among, a) + 1e-12 ? c : a), candidates[0]);
const mean = (among: typeof worlds, c: string) => among.reduce((s, w) => s + w.recall[c], 0) / among.length;

const f = (x: number) => x.toFixed(3);
const rows = worlds.map((w) => {
  const chosen = choose(worlds.filter((o) => o !== w));
  return [
    `${w.name} (${w.steps} steps)`,
    f(w.recall['dtdr alone']),
    f(w.bm25),
    f(w.recall['RRF, k = 3']),
    f(w.recall['mean, words 0.5']),
    chosen,
    f(w.recall[chosen]),
    f(w.shipped),
  ];
});
const overall = choose(worlds);
console.log(`chosen over all worlds: ${overall} (shipped: ${SHIPPED}); held out:`);
for (const r of rows) console.log(r.join(' | '));
if (overall !== SHIPPED) console.log(`note: the gateway ships "${SHIPPED}", not the candidate chosen here`);

const run = variantRun(
  'npm run experiment -- cold-fusion',
  args.encoder === undefined ? undefined : { option: '--encoder', value: args.encoder, id: encoder.id },
);
if (args.results)
  writeResultsTable(args.results, `gateway-cold-fusion${run.suffix}`, {
    title:
      "find_tools top-5 recall from the tools' descriptions alone: dtdr, BM25, two fusions, and the fusion " +
      'chosen without the world (leave-one-world-out among 11 candidates)' +
      (args.encoder === undefined ? '' : `, with the encoder ${encoder.id}`),
    command: run.command,
    columns: [
      'world',
      'dtdr alone',
      'BM25 alone',
      'RRF, k = 3',
      'mean of the two, words 0.5',
      'chosen without this world',
      'its recall here',
      'the gateway (scaled mean, words 0.5)',
    ],
    align: ['left', 'right', 'right', 'right', 'right', 'left', 'right', 'right'],
    rows,
  });

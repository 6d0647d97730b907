/**
 * DTDR-G's fit, phase by phase, and its rank cost, on one of the scale worlds:
 *   node --import tsx scripts/bench/profile-gated.ts app:16000 20000     (test/worlds/app-world.ts, default settings)
 *   node --import tsx scripts/bench/profile-gated.ts synthetic:260 100000 (test/worlds/synthetic.ts, heads 1 epoch, as bench-fit)
 * Prints the seconds between the fit's progress phases (settings, cross-fitting rounds, gate,
 * calibration, final fit) and the median rank µs/step over 500 test steps. PROFILE_DIR=dir writes CPU
 * profiles of the fit and of the rank passes; MODEL=file.dtdr loads that model instead of fitting
 * (and writes it after a fit when absent), for rank-only runs.
 */
import { planSteps } from '../../src/core/plans/plan.js';
import type { RankInput } from '../../src/core/retrieval/types.js';
import { selectCandidates } from '../../src/core/selection/select.js';
import { fitRetrieverWith, fitVectors } from '../../src/core/retrieval/train.js';
import { foldWorkers } from '../../src/workers/node.js';
import { splitDataset } from '../../src/core/evaluation/evaluate.js';
import type { Plan, ToolSpec } from '../../src/core/base/types.js';
import { loadEncoder } from '../../src/encoders/node.js';
import { median } from './stats.js';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { loadRetriever, saveRetriever } from '../../src/core/model/artifact.js';
import { decodeBinaryModel, encodeBinaryModel } from '../../src/core/model/binary.js';
import type { Retriever } from '../../src/core/retrieval/types.js';
import { createHash } from 'node:crypto';
import { Session } from 'node:inspector/promises';
import { appWorld } from '../../test/worlds/app-world.js';
import { syntheticDataset } from '../../test/worlds/synthetic.js';
import '../../src/methods.js'; // every method, as the Node entry registers them

// The third argument: `rank` (default: rank µs/step and the rankings' fingerprint), `quality` (MRR and coverage over every test step) or anything else (the fit alone).
const [world = 'app:16000', plansArg = '20000', rankArg = 'rank'] = process.argv.slice(2);
// PROFILE_DIR=dir: a CPU profile of the fit (fit.cpuprofile) and one of the timed rank passes (rank.cpuprofile).
const profileDir = process.env.PROFILE_DIR;
const session = profileDir ? new Session() : undefined;
session?.connect();
await session?.post('Profiler.enable');
const profile = async (name: string, run: () => void | Promise<void>) => {
  await session?.post('Profiler.start');
  await run();
  if (session)
    writeFileSync(`${profileDir}/${name}.cpuprofile`, JSON.stringify((await session.post('Profiler.stop')).profile));
};
let tools: ToolSpec[];
let train: Plan[];
let test: Plan[];
const synthetic = world.startsWith('synthetic:');
if (synthetic) {
  const data = syntheticDataset(Number(world.slice(10)), Number(plansArg), 0);
  ({ train, test } = splitDataset(data, { seed: 0, testRatio: 0.02 }));
  tools = data.tools;
} else {
  const w = appWorld({ tools: Number(world.slice(4)), train: Number(plansArg) });
  [tools, train, test] = [w.tools, w.train, w.test];
}
const encoder = await loadEncoder();
const modelFile = process.env.MODEL;
let retriever!: Retriever;
if (modelFile && existsSync(modelFile))
  retriever = loadRetriever(decodeBinaryModel(readFileSync(modelFile)), { encoder }).retriever;
else {
  const vectors = await fitVectors('dtdr-g', tools, train, encoder, 3);
  const phases: [string, number][] = [];
  let last = '';
  let lastRound = -1;
  const started = performance.now();
  const mark = (name: string) => phases.push([name, performance.now()]);
  // THREADS=n: cross-fitting on n worker threads besides this one (default 0: the phases below are sequential).
  const workers = foldWorkers({ threads: Number(process.env.THREADS ?? 0) });
  await profile(
    'fit',
    async () =>
      void (retriever = await fitRetrieverWith('dtdr-g', tools, train, vectors, {
        workers,
        ...(synthetic ? { head: { epochs: 1 } } : {}),
        // FOLD_HEAD_STEPS=n: experimental foldHeadSteps (Infinity: every step), to compare quality with and without the cap.
        // FOLD_PLANS=n: experimental foldPlans (Infinity: every training plan), likewise; HEAD_STEPS=n: experimental headSteps.
        gated: {
          experimental: {
            ...(process.env.FOLD_HEAD_STEPS ? { foldHeadSteps: Number(process.env.FOLD_HEAD_STEPS) } : {}),
            ...(process.env.FOLD_PLANS ? { foldPlans: Number(process.env.FOLD_PLANS) } : {}),
            ...(process.env.HEAD_STEPS ? { headSteps: Number(process.env.HEAD_STEPS) } : {}),
          },
        },
        onProgress: (p) => {
          // cross-fitting reports fractions of all rounds: a new round every 1/rounds
          const round = p.phase === 'cross-fitting' ? Math.floor(p.fraction * 6 + 1e-9) : -1;
          if (p.phase !== last || round !== lastRound) mark(`${last}${lastRound >= 0 ? ` round ${lastRound}` : ''}`);
          [last, lastRound] = [p.phase, round];
        },
      })),
  );
  await workers.close();
  mark(`${last}`);
  const fitMs = performance.now() - started;
  let previous = started;
  for (const [name, at] of phases) {
    if (at - previous > 50) console.log(`${name.padEnd(28)} ${((at - previous) / 1000).toFixed(2)} s`);
    previous = at;
  }
  console.log(`fit ${(fitMs / 1000).toFixed(2)} s  (${tools.length} tools, ${train.length} demonstrations)`);
  if (modelFile)
    writeFileSync(
      modelFile,
      encodeBinaryModel(
        saveRetriever(
          retriever,
          tools,
          encoder,
          { dataset: world, plans: train.length, historyLength: retriever.historyLength, seed: 0 },
          [],
        ),
      ),
    );
}
if (rankArg === 'quality') {
  // Every test step: MRR of the first acceptable label, and how often the candidate set holds one.
  const steps = test.flatMap((p) => planSteps(p));
  const queries = await encoder.embed(steps.map((s) => s.query));
  let rr = 0;
  let covered = 0;
  let size = 0;
  steps.forEach((s, i) => {
    const ranking = retriever.rank({ query: s.query, history: s.history, queryVector: queries[i] });
    const order = ranking.top ? ranking.top(64) : ranking.order;
    const at = Array.from(order).findIndex((l) => s.acceptable.includes(ranking.labels[l]));
    rr += at >= 0 ? 1 / (at + 1) : 0;
    const set = selectCandidates(ranking).candidates;
    if (set.some((c) => s.acceptable.includes(c.tool))) covered++;
    size += set.length;
  });
  console.log(
    `quality: MRR ${(rr / steps.length).toFixed(4)}  coverage ${(covered / steps.length).toFixed(4)}  mean set ${(size / steps.length).toFixed(2)}  (${steps.length} test steps)`,
  );
}
if (rankArg === 'rank') {
  const steps = test.flatMap((p) => planSteps(p)).slice(0, 500);
  const queries = await encoder.embed(steps.map((s) => s.query));
  const inputs: RankInput[] = steps.map((s, i) => ({ query: s.query, history: s.history, queryVector: queries[i] }));
  for (const input of inputs) selectCandidates(retriever.rank(input));
  const perStep = inputs.map(() => [] as number[]);
  await profile('rank', () => {
    for (let pass = 0; pass < 5; pass++)
      inputs.forEach((input, i) => {
        const t0 = performance.now();
        selectCandidates(retriever.rank(input));
        perStep[i].push((performance.now() - t0) * 1000);
      });
  });
  // The rankings' fingerprint: an exact speedup leaves it unchanged.
  const hash = createHash('sha256');
  for (const input of inputs) {
    const p = retriever.rank(input).probabilities;
    hash.update(Buffer.from(p.buffer, p.byteOffset, p.byteLength));
  }
  console.log(`ranks ${hash.digest('hex').slice(0, 16)}`);
  console.log(`rank ${median(perStep.map(median)).toFixed(1)} µs/step median (${inputs.length} steps, 5 passes)`);
}
await encoder.dispose?.();

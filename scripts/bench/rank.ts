/**
 * One method's cost per step, in its own process (as an app runs one method: timings are not
 * disturbed by nine other methods sharing the JIT's call sites), beside DR timed in the same
 * process for the ratio. `node --import tsx scripts/bench/rank.ts <world> <method> [plans] [passes]`
 * with world `demo`, `ultratool`, `synthetic:<tools>` or `app:<tools>` (test/worlds/app-world.ts: `plans`
 * demonstrations, 2,000 test plans, default settings). Prints one JSON line. Used by `npm run bench`.
 */
import { splitDataset } from '../../src/core/evaluation/evaluate.js';
import { planSteps } from '../../src/core/plans/plan.js';
import type { MethodName, RankInput, Retriever } from '../../src/core/retrieval/types.js';
import { selectCandidates } from '../../src/core/selection/select.js';
import { contextText } from '../../src/core/base/text.js';
import { fitRetrieverWith, fitVectors } from '../../src/core/retrieval/train.js';
import { foldWorkers } from '../../src/workers/node.js';
import type { Dataset, Plan } from '../../src/core/base/types.js';
import { readDatasetDir } from '../../src/data/node.js';
import { demoDataset } from '../../src/demo/toolset.js';
import { loadEncoder } from '../../src/encoders/node.js';
import { median, quantile } from './stats.js';
import { appWorld } from '../../test/worlds/app-world.js';
import { syntheticDataset } from '../../test/worlds/synthetic.js';
import '../../src/methods.js'; // every method, as the Node entry registers them

const [world, method, plans = '5000', passes = '3'] = process.argv.slice(2) as [string, MethodName, string?, string?];
// Peak resident memory of this process (data, encoder, the fits and ranking), sampled.
let peak = 0;
const sample = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 20);

let dataset: Dataset;
let train: Plan[];
let test: Plan[];
if (world.startsWith('app:')) {
  const w = appWorld({ tools: Number(world.slice(4)), train: Number(plans) });
  dataset = { name: w.name, tools: w.tools, plans: [...w.train, ...w.test] };
  [train, test] = [w.train, w.test];
} else if (world.startsWith('synthetic:')) {
  dataset = syntheticDataset(Number(world.slice(10)), Number(plans), 0);
  ({ train, test } = splitDataset(dataset, { seed: 0, testRatio: 0.02 }));
} else {
  dataset =
    world === 'demo'
      ? demoDataset()
      : readDatasetDir(new URL('../../../shared/data/ultratool', import.meta.url).pathname);
  ({ train, test } = splitDataset(dataset, { seed: 0 }));
}
const steps = test
  .flatMap((p) => planSteps(p))
  .slice(0, world.startsWith('synthetic:') || world.startsWith('app:') ? 500 : undefined);
const encoder = await loadEncoder();
const queries = await encoder.embed(steps.map((s) => s.query));

async function fit(m: MethodName): Promise<{ retriever: Retriever; fitMs: number; inputs: RankInput[] }> {
  const vectors = await fitVectors(m, dataset.tools, train, encoder, 3);
  // As `dtdr train` fits: DTDR-G's cross-fitting on the machine's other cores (the same model as on one).
  const workers = foldWorkers();
  const started = performance.now();
  const retriever = await fitRetrieverWith(m, dataset.tools, train, vectors, {
    workers,
    ...(world.startsWith('synthetic:') ? { head: { epochs: 1 } } : {}),
  });
  const fitMs = performance.now() - started;
  await workers.close();
  const contexts = retriever.needs.context
    ? await encoder.embed(steps.map((s) => contextText(s.query, s.history, retriever.historyLength)))
    : undefined;
  return {
    retriever,
    fitMs,
    inputs: steps.map((s, i) => ({
      query: s.query,
      history: s.history,
      queryVector: queries[i],
      contextVector: contexts?.[i],
    })),
  };
}

/**
 * Each step timed alone, over several passes; per step the median, then the median and p99 over steps,
 * and the medians over a request's first steps and over its later ones (which may reuse what the first
 * computed for the same request).
 */
function time({ retriever, inputs }: { retriever: Retriever; inputs: RankInput[] }): {
  medianMicros: number;
  p99Micros: number;
  firstMicros: number;
  laterMicros: number;
} {
  // Warm-up: one untimed pass, so the JIT has compiled the hot paths (an app's steady state).
  for (const input of inputs) selectCandidates(retriever.rank(input));
  const perStep = inputs.map(() => [] as number[]);
  for (let pass = 0; pass < Number(passes); pass++) {
    inputs.forEach((input, i) => {
      const t0 = performance.now();
      selectCandidates(retriever.rank(input));
      perStep[i].push((performance.now() - t0) * 1000);
    });
  }
  const each = perStep.map(median);
  const first = each.filter((_, i) => inputs[i].history.length === 0);
  const later = each.filter((_, i) => inputs[i].history.length > 0);
  return {
    medianMicros: median(each),
    p99Micros: quantile(each, 0.99),
    firstMicros: first.length ? median(first) : NaN,
    laterMicros: later.length ? median(later) : NaN,
  };
}

const subject = await fit(method);
const subjectTime = time(subject);
const dr = method === 'dr' ? subjectTime : time(await fit('dr'));
clearInterval(sample);
peak = Math.max(peak, process.memoryUsage().rss);
console.log(
  JSON.stringify({
    world,
    method,
    tools: dataset.tools.length,
    plans: train.length,
    steps: steps.length,
    fitMs: subject.fitMs,
    ...subjectTime,
    drMicros: dr.medianMicros,
    ratioToDr: subjectTime.medianMicros / dr.medianMicros,
    peakBytes: peak,
  }),
);
await encoder.dispose?.();

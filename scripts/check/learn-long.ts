/**
 * A long life of online learning: a DTDR-G model trained on the demo world's first plans, then
 * `learn()` called once per plan for N more (default 100,000). Prints the median cost of the
 * last 1,000 calls (against the first 1,000), the saved model's size against a model trained once
 * on the same plans, and, on held-out plans, each one's coverage (the share of steps whose
 * candidate set holds a tool that can come next) against the target. The demo world repeats a few
 * dozen tool sequences, so its thresholds come from held-out new sequences: learning scores the
 * steps of a sequence the model has not seen and, for a repeat, adds held-out steps kept for its
 * sequence (sequence-scores.ts; the table says how many scores were added). Exits 1 when a bound fails:
 * last-1,000 median ≤ 5 ms, size ≤ 2x, coverage within 0.01 of the trained-once model.
 *
 *   npm run check -- learn-long [--plans 100000 --start 1000]
 */
import { parseArgs } from 'node:util';
import { Dtdr } from '../../src/core/dtdr.js';
import { planSteps } from '../../src/core/plans/plan.js';
import type { Plan } from '../../src/core/base/types.js';
import type { GatedState } from '../../src/core/retrieval/default/index.js';
import { DEMO_TOOLS, generateDemoPlans } from '../../src/demo/toolset.js';
import { loadEncoder } from '../../src/encoders/node.js';
import { median } from '../bench/stats.js';
import '../../src/methods.js'; // every method, as the Node entry registers them

const { values } = parseArgs({
  options: {
    plans: { type: 'string', default: '100000' },
    start: { type: 'string', default: '1000' },
    heldOut: { type: 'string', default: '1500' },
  },
});
const N = Number(values.plans);
const START = Number(values.start);
const HELD_OUT = Number(values.heldOut);
const encoder = await loadEncoder();
const all = generateDemoPlans(START + N + HELD_OUT, 7);
const initial = all.slice(0, START);
const stream = all.slice(START, START + N);
const heldOut = all.slice(START + N);

async function coverage(model: Dtdr, plans: Plan[]): Promise<number> {
  let hit = 0;
  let steps = 0;
  for (const plan of plans) {
    for (const step of planSteps(plan)) {
      const r = await model.retrieve(plan.query, step.history);
      const names = new Set(r.candidates.map((c) => c.tool));
      if (step.acceptable.some((t) => names.has(t))) hit++;
      steps++;
    }
  }
  return hit / steps;
}

/** Held-out scores the model's calibration has been given in all (its pools' counts, or their lengths before any). */
function scoresGiven(model: Dtdr): number {
  const state = model.toJSON().state as GatedState;
  const counts = state.scoreCounts ?? {};
  return (
    (counts.confident ?? state.calibration?.confident.length ?? 0) +
    (counts.unsure ?? state.calibration?.unsure.length ?? 0)
  );
}

const learned = await Dtdr.train({ tools: DEMO_TOOLS, plans: initial, encoder, seed: 1 });
const scoresBefore = scoresGiven(learned);
const times = new Float64Array(N);
const t0 = performance.now();
for (let i = 0; i < N; i++) {
  const s = performance.now();
  await learned.learn([stream[i]]);
  times[i] = performance.now() - s;
  if ((i + 1) % 10000 === 0)
    console.error(
      `  ${i + 1} learned, ${((performance.now() - t0) / 1000).toFixed(0)} s, last call ${times[i].toFixed(2)} ms`,
    );
}
const first = median(Array.from(times.subarray(0, Math.min(1000, N))));
const last = median(Array.from(times.subarray(Math.max(0, N - 1000))));
const once = await Dtdr.train({ tools: DEMO_TOOLS, plans: [...initial, ...stream], encoder, seed: 1 });
const learnedBytes = learned.toBinary().length;
const onceBytes = once.toBinary().length;
const covLearned = await coverage(learned, heldOut);
const covOnce = await coverage(once, heldOut);
const ok = { time: last <= 5, size: learnedBytes <= 2 * onceBytes, coverage: Math.abs(covLearned - covOnce) <= 0.01 };
console.log(
  `learn-long: ${START.toLocaleString('en')} plans trained, ${N.toLocaleString('en')} single-plan learn() calls, ${HELD_OUT.toLocaleString('en')} held-out plans, node ${process.version}`,
);
console.log('| measure | learned online | trained once | bound | ok |');
console.log('|---|---:|---:|---|---|');
console.log(
  `| learn() median ms, first 1,000 / last 1,000 calls | ${first.toFixed(2)} / ${last.toFixed(2)} | | last ≤ 5 ms | ${ok.time ? 'yes' : 'NO'} |`,
);
console.log(
  `| binary model, KB | ${(learnedBytes / 1024).toFixed(0)} | ${(onceBytes / 1024).toFixed(0)} | ≤ 2x | ${ok.size ? 'yes' : 'NO'} |`,
);
console.log(
  `| held-out coverage (target 0.95) | ${covLearned.toFixed(4)} | ${covOnce.toFixed(4)} | within 0.01 | ${ok.coverage ? 'yes' : 'NO'} |`,
);
console.log(
  `| held-out scores learning added (new sequences scored, repeats from kept held-out steps) | ${(scoresGiven(learned) - scoresBefore).toLocaleString('en')} | | | |`,
);
console.log(`| forgettable demonstrations kept | ${learned.learnedCount.toLocaleString('en')} | | | |`);
process.exit(ok.time && ok.size && ok.coverage ? 0 : 1);

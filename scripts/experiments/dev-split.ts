/**
 * The development split for tuning DTDR-G without touching test plans: a dataset's
 * TRAINING plans split 80/20 (seeded, 12345 by default), fitted on the 80% and scored on the 20%,
 * reported for dev-test plans whose tool sequence no dev-train plan has ("new-seq", the novel
 * split's analogue) and the rest, and within each per calibration group. Choose on these figures;
 * report test figures (`dtdr eval`) only after choosing.
 *
 *   npm run experiment -- dev-split [DATASET_DIR=../shared/data/ultratool] [METHODS=dtdr-g] [SEED=12345]
 */
import { summarize, type StepScore } from '../../src/core/base/metrics.js';
import { seededRandom, shuffleInPlace } from '../../src/core/base/random.js';
import { evaluateMethods, sequenceKey } from '../../src/core/evaluation/evaluate.js';
import type { MethodName } from '../../src/core/retrieval/types.js';
import { readDatasetDir } from '../../src/data/node.js';
import { loadEncoder } from '../../src/encoders/node.js';

const dir = process.argv[2] ?? '../shared/data/ultratool';
const methods = (process.argv[3] ?? 'dtdr-g').split(',') as MethodName[];
const seed = Number(process.argv[4] ?? 12345);
const data = readDatasetDir(dir);
const test = new Set(data.testIds ?? []);
const train = data.plans.filter((p) => !test.has(p.id));
const shuffled = shuffleInPlace([...train], seededRandom(seed));
const cut = Math.round(shuffled.length * 0.8);
const devTrain = shuffled.slice(0, cut);
const devTest = shuffled.slice(cut);
const seen = new Set(devTrain.map(sequenceKey));
const newSeq = new Set(devTest.filter((p) => !seen.has(sequenceKey(p))).map((p) => p.id));
const encoder = await loadEncoder({});
const fmt = (x: number) => x.toFixed(3);
await evaluateMethods(data.tools, devTrain, devTest, encoder, {
  methods,
  seed: 0,
  timingPasses: 0,
  onMethodScored: (method, s) => {
    const rows: Record<string, StepScore[]> = {};
    s.scores.forEach((score, i) => {
      const part = newSeq.has(s.steps[i].planId) ? 'new-seq' : 'rest';
      (rows[part] ??= []).push(score);
      (rows[`  ${part}/${s.rankings[i]?.group ?? '-'}`] ??= []).push(score);
    });
    console.log(
      `${method}: dev-train ${devTrain.length} plans, dev-test ${devTest.length} (${newSeq.size} with a new sequence), seed ${seed}`,
    );
    for (const [key, list] of Object.entries(rows).sort()) {
      const r = summarize(list);
      console.log(
        `${key.padEnd(34)} n=${String(r.steps).padStart(5)} MRR ${fmt(r.mrr)} cov ${fmt(r.coverage)} |F| ${r.setSize.toFixed(2)} c-miss ${fmt(r.confidentMissRate)} ECE ${fmt(r.ece)} widened ${fmt(r.widenedRate)}`,
      );
    }
  },
});

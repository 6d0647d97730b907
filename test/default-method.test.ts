/**
 * The default method (DTDR-G) on real data, against the thresholds docs/results.md reports: the needed
 * tool is in the set at the target rate, probabilities are calibrated, and new combinations of
 * familiar steps are handled. Skipped, with a message, when ../shared/data is absent; the
 * compositional demo set always runs.
 */
import { readFileSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import { parsePlans } from '../src/core/plans/dataset.js';
import { evaluateMethods, sequenceKey, splitDataset } from '../src/core/evaluation/evaluate.js';
import { scoreStep, summarize, type MetricSummary, type StepScore } from '../src/core/base/metrics.js';
import { planSteps } from '../src/core/plans/plan.js';
import { selectCandidates } from '../src/core/selection/select.js';
import { fitRetriever } from '../src/core/retrieval/fit-method.js';
import { installGatedTraining } from '../src/core/retrieval/default/training.js';
import { fitVectors } from '../src/core/retrieval/train.js';
import { readDatasetDir } from '../src/data/node.js';
import { demoDataset } from '../src/demo/toolset.js';
import { loadEncoder } from '../src/encoders/node.js';
import { hasSharedData, SHARED_DATA } from './helpers.js';

// GatedRetriever.fit and fitRetriever are synchronous: DTDR-G's training code installed up front.
installGatedTraining();

describe.skipIf(!hasSharedData)('DTDR-G on UltraTool: official split and its novel sequences (real data)', () => {
  const metrics: Record<'official' | 'novel', MetricSummary> = {} as never;
  beforeAll(async () => {
    const encoder = await loadEncoder();
    const dataset = readDatasetDir(`${SHARED_DATA}/ultratool`);
    const split = splitDataset(dataset);
    const retriever = fitRetriever(
      'dtdr-g',
      dataset.tools,
      split.train,
      await fitVectors('dtdr-g', dataset.tools, split.train, encoder, 3),
    );
    // One fit scores both: the novel split is the official test plans whose sequence no demonstration has.
    const seen = new Set(split.train.map(sequenceKey));
    const all: StepScore[] = [];
    const novel: StepScore[] = [];
    for (const plan of split.test) {
      const [queryVector] = await encoder.embed([plan.query]);
      for (const step of planSteps(plan)) {
        const ranking = retriever.rank({ query: step.query, history: step.history, queryVector });
        const set = selectCandidates(ranking);
        const score = scoreStep(
          ranking.order,
          ranking.labels,
          step.acceptable,
          set.candidates.map((c) => c.tool),
          {
            confidence: ranking.probabilities[ranking.order[0]],
            widened: set.widened,
          },
        );
        all.push(score);
        if (!seen.has(sequenceKey(plan))) novel.push(score);
      }
    }
    metrics.official = summarize(all);
    metrics.novel = summarize(novel);
  }, 300_000);

  it('reaches MRR 0.86, above every paper method (DTDR-H, the best other, has 0.839)', () => {
    expect(metrics.official.steps).toBe(1691);
    expect(metrics.official.mrr).toBeGreaterThanOrEqual(0.86);
  });

  it('holds an acceptable tool in ≥ 95% of steps with sets of ≤ 5 tools on average (target 0.95; measured 0.973 at 3.65 tools, as dtdr eval)', () => {
    expect(metrics.official.coverage).toBeGreaterThanOrEqual(0.95);
    expect(metrics.official.setSize).toBeLessThanOrEqual(5);
  });

  it('is calibrated, and its confident sets rarely miss', () => {
    expect(metrics.official.ece).toBeLessThanOrEqual(0.05);
    expect(metrics.official.confidentMissRate).toBeLessThanOrEqual(0.05);
  });

  it('on new combinations of familiar steps beats DTDR-C (0.504) and DTDR-H (0.583), and its sets widen for them (measured MRR 0.654, coverage 0.875 at 5.17 tools, as dtdr eval --split novel; the requests unlike every demonstration get the tools-only set)', () => {
    expect(metrics.novel.steps).toBe(231);
    expect(metrics.novel.mrr).toBeGreaterThanOrEqual(0.63);
    expect(metrics.novel.coverage).toBeGreaterThanOrEqual(0.85);
    expect(metrics.novel.setSize).toBeLessThanOrEqual(5.2);
  });
});

describe.skipIf(!hasSharedData)('DTDR-G on RestBench-TMDB and Seal-Tools, seed 0 (real data)', () => {
  it('RestBench (70 demonstrations): MRR ≥ 0.70, above DTDR-CB (0.610)', async () => {
    const dataset = readDatasetDir(`${SHARED_DATA}/restbench-tmdb`);
    const split = splitDataset(dataset, { seed: 0 });
    const r = await evaluateMethods(dataset.tools, split.train, split.test, await loadEncoder(), {
      methods: ['dtdr-g'],
      timingPasses: 1,
    });
    expect(r.results['dtdr-g']!.mrr).toBeGreaterThanOrEqual(0.7);
  }, 120_000);

  it('Seal-Tools (4,076 tools, mostly never demonstrated): MRR ≥ 0.80, far above BM25 (0.530)', async () => {
    const dataset = readDatasetDir(`${SHARED_DATA}/seal-tools`);
    const split = splitDataset(dataset, { seed: 0 });
    const r = await evaluateMethods(dataset.tools, split.train, split.test, await loadEncoder(), {
      methods: ['bm25', 'dtdr-g'],
      timingPasses: 1,
    });
    expect(r.results.bm25!.mrr).toBeCloseTo(0.53, 2);
    expect(r.results['dtdr-g']!.mrr).toBeGreaterThanOrEqual(0.8);
  }, 300_000);

  it('Seal-Tools from the tools alone (no demonstration): at least BM25 − 0.02', async () => {
    const dataset = readDatasetDir(`${SHARED_DATA}/seal-tools`);
    const split = splitDataset(dataset, { seed: 0 });
    const r = await evaluateMethods(dataset.tools, [], split.test, await loadEncoder(), {
      methods: ['bm25', 'dtdr-g'],
      timingPasses: 1,
    });
    expect(r.results['dtdr-g']!.mrr).toBeGreaterThanOrEqual(r.results.bm25!.mrr - 0.02);
  }, 120_000);
});

describe('DTDR-G on the compositional demo set (requests that recombine the demo scenarios)', () => {
  it('holds an acceptable tool in ≥ 94% of steps with ≤ 5 tools on average, and its confident sets miss ≤ 7%', async () => {
    // Measured 0.955 at 3.99 tools, confident-miss 0.068 (0.927 before the new-combination rule; confident-miss 0.054
    // with the sequence-words rule, deleted: it paid on no other world).
    const test = parsePlans(readFileSync(new URL('./fixtures/demo-compositional.jsonl', import.meta.url), 'utf8'));
    const demo = demoDataset();
    const r = await evaluateMethods(demo.tools, demo.plans, test, await loadEncoder(), {
      methods: ['dtdr-c', 'dtdr-g'],
      timingPasses: 1,
    });
    const g = r.results['dtdr-g']!;
    expect(g.coverage).toBeGreaterThanOrEqual(0.94);
    expect(g.setSize).toBeLessThanOrEqual(5);
    expect(g.confidentMissRate).toBeLessThanOrEqual(0.07);
    expect(g.mrr).toBeGreaterThan(r.results['dtdr-c']!.mrr);
  }, 120_000);
});

describe('DTDR-G on demonstrations that repeat a few sequences many times (generated ones)', () => {
  // Regression: cross-fitting by sequence alone taught the gate that memorised sequences never
  // continue, and a model on 420 generated demonstrations scored MRR 0.50 on requests that repeat
  // them (DTDR-H: 0.97). The gate now learns from random folds and sequence folds together.
  it.each([600, 1000])(
    'a seeded 70/30 split of %i demo plans: MRR ≥ 0.95 and coverage ≥ 0.95 on repeats',
    async (count) => {
      const demo = demoDataset(count);
      const split = splitDataset(demo, { seed: 0 });
      const r = await evaluateMethods(demo.tools, split.train, split.test, await loadEncoder(), {
        methods: ['dtdr-g'],
        timingPasses: 0,
      });
      const g = r.results['dtdr-g']!;
      expect(g.mrr).toBeGreaterThanOrEqual(0.95);
      expect(g.coverage).toBeGreaterThanOrEqual(0.95);
      expect(g.setSize).toBeLessThanOrEqual(5);
    },
    120_000,
  );
});

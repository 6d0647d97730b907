/**
 * The paper's claims on real data (UltraTool, official split), side by side in one run. Skipped,
 * with a message, when ../shared/data is absent.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { evaluateMethods, splitDataset, type EvaluationResult } from '../src/core/evaluation/evaluate.js';
import { readDatasetDir } from '../src/data/node.js';
import { Dtdr } from '../src/core/dtdr.js';
import { planSteps } from '../src/core/plans/plan.js';
import { loadEncoder } from '../src/encoders/node.js';
import { hasSharedData, SHARED_DATA } from './helpers.js';
import { peersFor } from '../src/cli/peers/index.js';

describe.skipIf(!hasSharedData)('UltraTool, official split (real data)', () => {
  let result: EvaluationResult;
  beforeAll(async () => {
    const dataset = readDatasetDir(`${SHARED_DATA}/ultratool`);
    const split = splitDataset(dataset);
    expect(split.description).toBe('official');
    expect(split.test).toHaveLength(500);
    result = await evaluateMethods(dataset.tools, split.train, split.test, await loadEncoder(), {
      // …and the peers users would pick instead, through their packages (Orama, the AI SDK 7).
      methods: ['random', 'bm25', 'qts', 'dr', 'lr', 'dtdr-c', 'dtdr-l', 'orama-bm25', 'orama-vector', 'aisdk-search'],
      peers: peersFor(['orama-bm25', 'orama-vector', 'aisdk-search']),
      timingPasses: 1,
    });
  }, 300_000);

  it('walks the 1691 test steps of the reference', () => expect(result.steps).toBe(1691));

  it('DR lands within ±0.03 of the independent reference MRR 0.563 (metric semantics check)', () => {
    expect(Math.abs(result.results.dr!.mrr - 0.563)).toBeLessThanOrEqual(0.03);
  });

  it('random is near chance (reference 0.025)', () => expect(result.results.random!.mrr).toBeLessThan(0.05));

  it('DTDR-C beats the static dependency retriever by at least 10%', () => {
    expect(result.results['dtdr-c']!.mrr).toBeGreaterThanOrEqual(1.1 * result.results.dr!.mrr);
  });

  it('DTDR-L beats the static learned retriever by at least 35%', () => {
    expect(result.results['dtdr-l']!.mrr).toBeGreaterThanOrEqual(1.35 * result.results.lr!.mrr);
  });

  it('both DTDR variants beat BM25 and query–tool similarity', () => {
    for (const m of ['dtdr-c', 'dtdr-l'] as const) {
      expect(result.results[m]!.mrr).toBeGreaterThan(result.results.bm25!.mrr);
      expect(result.results[m]!.mrr).toBeGreaterThan(result.results.qts!.mrr);
    }
  });

  it("both DTDR variants beat every peer (Orama BM25 and vector search, the AI SDK's default tool search)", () => {
    for (const m of ['dtdr-c', 'dtdr-l'] as const)
      for (const peer of ['orama-bm25', 'orama-vector', 'aisdk-search'] as const)
        expect(result.results[m]!.mrr).toBeGreaterThan(result.results[peer]!.mrr);
  });

  it("Orama's vector search over the bundled encoder's tool vectors ranks as QTS does (same vectors, cosine)", () => {
    expect(Math.abs(result.results['orama-vector']!.mrr - result.results.qts!.mrr)).toBeLessThanOrEqual(0.005);
  });
});

describe.skipIf(!hasSharedData)('UltraTool prompts in Qwen3 tokens (real data)', () => {
  it('hard-weighted prompts are at most 40% of the no-ICL prompt (Hermes format, dtdr-c)', async () => {
    const { Dtdr } = await import('../src/core/dtdr.js');
    const { studyPrompts } = await import('../src/core/evaluation/prompt-study.js');
    const { loadQwen3TokenCounter } = await import('../src/tokens/qwen3.js');
    const dataset = readDatasetDir(`${SHARED_DATA}/ultratool`);
    const split = splitDataset(dataset);
    const model = await Dtdr.train({
      method: 'dtdr-c',
      tools: dataset.tools,
      plans: split.train,
      encoder: await loadEncoder(),
    });
    const study = await studyPrompts(model, dataset.tools, split.test, await loadQwen3TokenCounter(), {
      strategies: ['none', 'hard-weighted'],
      format: 'hermes',
      alphas: [0.05, 0.1, 0.3],
      demonstrations: split.train,
    });
    expect(study.steps).toBe(1691);
    expect(study.tokens['hard-weighted']!.total).toBeLessThanOrEqual(0.4 * study.tokens.none!.total);
    // a higher threshold never grows the confident set's coverage
    expect(study.thresholds[0].coverage).toBeGreaterThanOrEqual(study.thresholds[2].coverage);
  }, 300_000);
});

describe.skipIf(!hasSharedData)('Seal-Tools: a trained model and the same model saved and loaded (real data)', () => {
  it('give every test step the same set, confidence and calibration group', async () => {
    // Its steps' counts are sums of fractional weights (parallel calls): a file that rounded them moved 150
    // tools across the support classes' bound at 1 and changed 10 of these steps' sets.
    const dataset = readDatasetDir(`${SHARED_DATA}/seal-tools`);
    const { train, test } = splitDataset(dataset);
    const trained = await Dtdr.train({ tools: dataset.tools, plans: train, encoder: await loadEncoder() });
    const loaded = Dtdr.load(trained.toBinary(), await loadEncoder());
    let steps = 0;
    const differ: string[] = [];
    for (const plan of test)
      for (const step of planSteps(plan)) {
        const [a, b] = [
          await trained.retrieve(plan.query, step.history),
          await loaded.retrieve(plan.query, step.history),
        ];
        steps++;
        const seen = (r: typeof a) => `${r.candidates.map((c) => c.tool).join()} ${r.confident} ${r.ranking.group}`;
        if (seen(a) !== seen(b)) differ.push(`${plan.id} step ${step.history.length}: ${seen(a)} | ${seen(b)}`);
      }
    expect(steps).toBe(723);
    expect(differ).toEqual([]);
  }, 300_000);
});

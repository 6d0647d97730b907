/**
 * Tools-only models against BM25 on the three public datasets: trains on the tools alone (no
 * demonstrations) and scores each dataset's test plans, reporting MRR over every step and over the
 * history-aware steps (at least one prior call) and on first steps (no call yet: the request alone
 * picks the tool, so this is where the encoder shows).
 * Printed by `npm run experiment -- tools-only`; test/tools-only.test.ts checks the figures.
 */
import { evaluateMethods, splitDataset } from '../../src/core/evaluation/evaluate.js';
import type { MethodName } from '../../src/core/retrieval/types.js';
import { readDatasetDir } from '../../src/data/node.js';
import type { Encoder } from '../../src/core/base/encoder.js';
import { encoderByName } from './encoders.js';

export const TOOLS_ONLY_DATASETS = ['ultratool', 'restbench-tmdb', 'seal-tools'] as const;

export interface ToolsOnlyFigures {
  dataset: string;
  steps: number;
  historySteps: number;
  mrr: Record<string, { all: number; history: number; first: number }>;
}

export async function toolsOnlyFigures(
  dir: string,
  methods: MethodName[] = ['bm25', 'dtdr-g'],
  encoder?: string | Encoder,
  /** Score every plan of the dataset, not only its test split (no plan is trained on here). */
  allPlans = false,
): Promise<ToolsOnlyFigures> {
  const dataset = readDatasetDir(dir);
  const split = splitDataset(dataset, { seed: 0 });
  const mrr: ToolsOnlyFigures['mrr'] = {};
  let steps = 0;
  let historySteps = 0;
  await evaluateMethods(
    dataset.tools,
    [],
    allPlans ? dataset.plans : split.test,
    typeof encoder === 'object' ? encoder : await encoderByName(encoder),
    {
      methods,
      timingPasses: 0,
      onMethodScored(method, scored) {
        const rr = scored.scores.map((s) => s.reciprocalRank);
        const h = scored.steps.map((s, i) => (s.history.length > 0 ? rr[i] : -1)).filter((x) => x >= 0);
        const first = scored.steps.map((s, i) => (s.history.length === 0 ? rr[i] : -1)).filter((x) => x >= 0);
        steps = rr.length;
        historySteps = h.length;
        const mean = (a: number[]) => a.reduce((x, y) => x + y, 0) / Math.max(1, a.length);
        mrr[method] = { all: mean(rr), history: mean(h), first: mean(first) };
      },
    },
  );
  return { dataset: dataset.name, steps, historySteps, mrr };
}

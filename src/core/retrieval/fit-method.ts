/**
 * The fit of a registered method on precomputed vectors, synchronous: what train.ts runs after
 * embedding, and what a refit worker runs (with the training code imported, not loaded on demand).
 */
import { DtdrError } from '../base/errors.js';
import type { Plan, ToolSpec } from '../base/types.js';
import {
  DEFAULT_METHOD,
  type FitVectors,
  TRAIN_DEFAULTS,
  type TrainOptions,
  assertEntry,
  assertMethod,
  labelsOf,
} from './methods.js';
import type { MethodName, Retriever } from './types.js';

/** Fits a method on precomputed vectors: pure and synchronous (DTDR-G: its training code loaded, load-training.ts). */
export function fitRetriever(
  method: MethodName,
  tools: ToolSpec[],
  plans: Plan[],
  vectors: FitVectors,
  options: TrainOptions = {},
): Retriever {
  const labels = checkFitInputs(method, tools, plans);
  const historyLength = options.historyLength ?? TRAIN_DEFAULTS.historyLength;
  const seed = options.seed ?? TRAIN_DEFAULTS.seed;
  return assertEntry(method).fit({ tools, plans, labels, vectors, options, historyLength, seed });
}

/** The tool labels, once the method, tools and plans are known to fit together (else a DtdrError). */
export function checkFitInputs(method: MethodName, tools: ToolSpec[], plans: Plan[]): string[] {
  assertMethod(method); // library callers without TypeScript can pass any string
  if (plans.length === 0 && !assertEntry(method).toolsOnly) {
    throw new DtdrError('data', `${method} needs demonstrations to train on`, {
      hint: `give at least one plan, or train ${DEFAULT_METHOD} (or bm25) on the tools alone`,
    });
  }
  if (tools.length === 0) throw new DtdrError('data', 'no tools to retrieve', { hint: 'give at least one tool' });
  const labels = labelsOf(tools);
  const known = new Set(labels);
  for (const plan of plans) {
    const unknown = plan.nodes.find((n) => !known.has(n.tool));
    if (unknown)
      throw new DtdrError('data', `plan "${plan.id}" calls "${unknown.tool}", which is not in the tool set`, {
        hint: 'add the tool or fix the plan',
      });
  }
  return labels;
}

/**
 * Training a method from the registry (methods.ts): the texts its fit needs embedded, then the fit
 * (fit-method.ts), on this thread or with DTDR-G's rounds on worker threads, its code loaded first.
 */
import type { Encoder } from '../base/encoder.js';
import { DtdrError } from '../base/errors.js';
import { planSteps } from '../plans/plan.js';
import type { MethodName, Retriever, TrainingProgress } from './types.js';
import { contextText, toolText } from '../base/text.js';
import type { Plan, ToolSpec } from '../base/types.js';
import { checkFitInputs, fitRetriever } from './fit-method.js';
import { loadTraining } from './load-training.js';
import { type FitVectors, TRAIN_DEFAULTS, type TrainOptions, fitNeeds, methodEntry } from './methods.js';

/** Embeds texts in batches through the encoder, reporting progress. */
export async function embedAll(
  encoder: Encoder,
  texts: string[],
  onProgress?: (p: TrainingProgress) => void,
  batch = 512,
): Promise<Float32Array[]> {
  const out: Float32Array[] = [];
  for (let i = 0; i < texts.length; i += batch) {
    out.push(...(await encoder.embed(texts.slice(i, i + batch))));
    onProgress?.({ phase: 'embedding', fraction: Math.min(1, (i + batch) / texts.length) });
  }
  return out;
}

export async function fitVectors(
  method: MethodName,
  tools: ToolSpec[],
  plans: Plan[],
  encoder: Encoder | undefined,
  historyLength: number,
  given: FitVectors = {},
  onProgress?: (p: TrainingProgress) => void,
): Promise<FitVectors> {
  const needs = fitNeeds(method);
  if (
    !encoder &&
    (needs.queries || needs.tools || needs.contexts) &&
    !(given.queries || given.tools || given.contexts)
  ) {
    throw new DtdrError('options', `method ${method} needs a sentence encoder`, {
      hint: 'pass an encoder (loadEncoder())',
    });
  }
  const vectors: FitVectors = { ...given };
  if (needs.queries)
    vectors.queries ??= await embedAll(
      encoder!,
      plans.map((p) => p.query),
      onProgress,
    );
  if (needs.tools)
    vectors.tools ??= await embedAll(
      encoder!,
      tools.map((t) => toolText(t.name, t.description)),
      onProgress,
    );
  if (needs.contexts) {
    vectors.contexts ??= await embedAll(
      encoder!,
      plans.flatMap((p) => planSteps(p).map((s) => contextText(s.query, s.history, historyLength))),
      onProgress,
    );
  }
  return vectors;
}

/**
 * Embeds what the method needs with `encoder`, then fits it (DTDR-G's cross-fitting on `options.workers` when given).
 */
export async function trainRetriever(
  method: MethodName,
  tools: ToolSpec[],
  plans: Plan[],
  encoder: Encoder | undefined,
  options: TrainOptions = {},
): Promise<Retriever> {
  const l = options.historyLength ?? TRAIN_DEFAULTS.historyLength;
  const vectors = await fitVectors(method, tools, plans, encoder, l, {}, options.onProgress);
  return fitRetrieverWith(method, tools, plans, vectors, options);
}

/**
 * Demonstrations from which DTDR-G's cross-fitting goes to `options.workers`: below, starting
 * threads costs more than the rounds (the model is the same either way).
 */
export const PARALLEL_FROM_PLANS = 1000;

/**
 * fitRetriever, with DTDR-G's cross-fitting rounds on `options.workers` (a FoldWorkers, e.g.
 * `foldWorkers()` from `dtdr/node`) when given: the same model bit for bit, sooner on several cores.
 */
export async function fitRetrieverWith(
  method: MethodName,
  tools: ToolSpec[],
  plans: Plan[],
  vectors: FitVectors,
  options: TrainOptions = {},
): Promise<Retriever> {
  await loadTraining(method);
  const workers = options.workers;
  const parallel = methodEntry(method)?.fitParallel;
  if (!parallel || !workers || workers.threads === 0 || plans.length < PARALLEL_FROM_PLANS) {
    return fitRetriever(method, tools, plans, vectors, options);
  }
  const labels = checkFitInputs(method, tools, plans);
  const historyLength = options.historyLength ?? TRAIN_DEFAULTS.historyLength;
  const seed = options.seed ?? TRAIN_DEFAULTS.seed;
  return parallel({ tools, plans, labels, vectors, options, historyLength, seed }, workers);
}

/**
 * A refit itself, which only learning loads (refit-schedule.ts says when): embedded on the calling
 * thread (only what was not kept), fitted on the refitter or here, or in the background with its
 * result applied as a model change.
 */
import type { Encoder } from '../base/encoder.js';
import { DtdrError } from '../base/errors.js';
import { MAX_EMBEDDING_NUMBER } from '../base/validate.js';
import type { Plan, ToolSpec } from '../base/types.js';
import { fitRetriever } from '../retrieval/fit-method.js';
import { loadTraining } from '../retrieval/load-training.js';
import { embedAll, fitVectors } from '../retrieval/train.js';
import { fitNeeds, TRAIN_DEFAULTS, type FitVectors } from '../retrieval/methods.js';
import type { MethodName, Retriever } from '../retrieval/types.js';
import type { RefitJob, Refitter } from './refit.js';
import type { RefitSchedule } from './refit-schedule.js';

/** What a fit needs of the model: its method, encoder, seed and how a fitted state becomes a retriever. */
export interface RefitModel {
  method: MethodName;
  encoder: Encoder | undefined;
  seed: number;
  fromState(tools: ToolSpec[], state: unknown): Retriever;
}

/** The request vectors of `plans` (learned runs), embedding only those not kept, and keeping them. */
export async function refitQueries(
  s: RefitSchedule,
  encoder: Encoder,
  plans: readonly Plan[],
): Promise<Float32Array[]> {
  const missing = plans.filter((p) => !s.queryVectors.has(p));
  if (missing.length > 0) {
    const vectors = await embedAll(
      encoder,
      missing.map((p) => p.query),
    );
    // What enters the model's saved state must load again (a NaN from a custom encoder would not).
    vectors.forEach((v, i) => checkVector(v, encoder, missing[i].query));
    missing.forEach((plan, i) => s.queryVectors.set(plan, vectors[i]));
  }
  return plans.map((p) => s.queryVectors.get(p)!);
}

/**
 * A model fitted on `plans` over `tools`, as Dtdr.train fits it: on the refitter when there is
 * one. When the refitter fails, the fit runs here (`here`: a refit learn waits for) or not at all
 * (a background one); either way `failures` says why.
 */
export async function refit(
  s: RefitSchedule,
  model: RefitModel,
  plans: Plan[],
  tools: ToolSpec[],
  here: boolean,
): Promise<Retriever | undefined> {
  // As Dtdr.train with these plans: l and K chosen from them (a tools-only fit recorded only defaults).
  const { method, encoder, seed } = model;
  const generation = s.generation;
  // The encoder is on this thread: embed here (only what is not kept), fit there or here.
  const kept: FitVectors = s.toolVectors?.tools === tools ? { tools: s.toolVectors.vectors } : {};
  if (encoder && fitNeeds(method).queries) kept.queries = await refitQueries(s, encoder, plans);
  const vectors = await fitVectors(method, tools, plans, encoder, TRAIN_DEFAULTS.historyLength, kept);
  if (vectors.tools) s.toolVectors = { tools, vectors: vectors.tools };
  if (s.refitter) {
    try {
      const state = await onRefitter(s, s.refitter, { method, tools, plans, vectors, seed });
      return model.fromState(tools, state);
    } catch (error) {
      const then = here ? 'it ran on the calling thread' : 'the model went on learning without it';
      // A refit a forget abandoned is no failure: its model would have been dropped anyway.
      if (generation === s.generation)
        s.failures.push(`a refit on ${plans.length} learned runs failed (${then}): ${message(error)}`);
      if (!here) return undefined;
    }
  }
  await loadTraining(method);
  return fitRetriever(method, tools, plans, vectors, { seed });
}

/** The job on the refitter, abandoned (the signal aborted, the promise rejected) past `timeout` or by `abandon`. */
function onRefitter(s: RefitSchedule, refitter: Refitter, job: RefitJob): Promise<unknown> {
  const control = (s.running = new AbortController());
  let timer: ReturnType<typeof setTimeout> | undefined;
  const abandoned = new Promise<never>((_, reject) => {
    const stop = () => reject(control.signal.reason instanceof Error ? control.signal.reason : new Error('abandoned'));
    control.signal.addEventListener('abort', stop, { once: true });
    const seconds = s.timeout / 1000;
    timer = setTimeout(
      () => control.abort(new Error(`it ran past ${seconds} s (refitTimeout) and was abandoned`)),
      s.timeout,
    );
  });
  return Promise.race([refitter.refit(job, control.signal), abandoned]).finally(() => {
    clearTimeout(timer);
    if (s.running === control) s.running = undefined;
  });
}

/**
 * Runs a background refit on `plans`: `apply` gets the fitted model (Dtdr swaps it in as a model
 * change, or drops it). A failure is recorded, and the next try waits for as much growth again.
 */
export function refitInBackground(
  s: RefitSchedule,
  model: RefitModel,
  plans: Plan[],
  tools: ToolSpec[],
  apply: (fitted: Retriever) => Promise<void>,
): void {
  const generation = s.generation;
  const run = async () => {
    // learn returns first: with the runs' vectors kept nothing before the fit waits, and a
    // refitter that fits on this thread (refitInline) would otherwise run inside the learn call.
    await nextTask();
    const fitted = await refit(s, model, plans, tools, false).catch((error: unknown) => {
      s.failures.push(`a refit on ${plans.length} learned runs failed: ${message(error)}`);
      return undefined;
    });
    // Applying it is a model change of its own: its failure (the encoder, say) is recorded, never thrown at no one.
    if (fitted)
      await apply(fitted).catch((error: unknown) => {
        s.failures.push(`a refit on ${plans.length} learned runs could not be applied: ${message(error)}`);
      });
    // The next try after as much growth again, unless a forget or fold has reset the count since.
    else if (s.generation === generation) s.fittedOn = plans.length;
  };
  s.inFlight = run().finally(() => {
    s.inFlight = undefined;
  });
}

/**
 * Refuses an embedding a saved model could not hold: the wrong length, or a coordinate not finite or
 * past MAX_EMBEDDING_NUMBER.
 */
function checkVector(v: Float32Array, encoder: Encoder, text: string): void {
  let bad = v?.length !== encoder.dimension;
  for (let j = 0; !bad && j < v.length; j++) bad = !(Math.abs(v[j]) <= MAX_EMBEDDING_NUMBER);
  if (!bad) return;
  const what = `${encoder.dimension} finite numbers of at most ${MAX_EMBEDDING_NUMBER}`;
  throw new DtdrError('encoder', `the encoder ${encoder.id} returned an unusable vector for ${JSON.stringify(text)}`, {
    hint: `each vector must hold ${what}; nothing was learned`,
  });
}

const message = (error: unknown) => (error instanceof Error ? error.message : String(error));

/**
 * Resolves in a later task of the event loop: by a MessageChannel message where there is one
 * (test runners' fake timers leave it alone, and background tabs do not throttle it), else
 * setTimeout.
 */
export function nextTask(): Promise<void> {
  const Channel = (globalThis as { MessageChannel?: typeof MessageChannel }).MessageChannel;
  if (!Channel) return new Promise((resolve) => setTimeout(resolve, 0));
  return new Promise((resolve) => {
    const { port1, port2 } = new Channel();
    port1.onmessage = () => {
      port1.close();
      resolve();
    };
    port2.postMessage(null);
  });
}

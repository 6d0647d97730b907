/**
 * When a model that started from its tools alone refits on the runs it learned, and where: the
 * schedule (REFIT_UP_TO, then in the background with a refitter), the fit itself (embedded on the
 * calling thread, fitted on the refitter or here) and the bookkeeping of a refit in flight.
 * `Dtdr` owns the model and applies a background refit's result as one of its model changes.
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

/**
 * A default-method model trained on tools alone refits itself on every run it has learned, and
 * `learn` waits for the refit, while they number at most this many (about a second's fit on two
 * cores at 1,000 runs over 260 tools); beyond it, learning folds new runs in without a refit,
 * unless the model has a refitter (below).
 */
export const REFIT_UP_TO = 1000;
/**
 * It refits when its learned runs have grown by a tenth since the last fit (always on the first):
 * counted in integers, as 11 runs for every 10 (100 * 1.1 is 110.00000000000001, which put the
 * refit after 100 at 120).
 */
const grownByATenth = (learned: number, fittedOn: number) => learned * 10 >= fittedOn * 11;
/**
 * With a refitter (`refitWorker()`), it goes on refitting past REFIT_UP_TO, in the background,
 * while its learned runs number at most this many; it keeps them (in memory and in its saved file)
 * to refit on. Past it, the oldest are folded in and refits stop.
 */
export const REFIT_IN_BACKGROUND_UP_TO = 10_000;
/** A background refit starts when the learned runs have grown by this factor since the last fit. */
const REFIT_GROWTH_LATER = 1.5;
/**
 * How long a refit on the refitter may take before the model gives up on it (`refitTimeout`, in
 * ms): a refitter that hangs (a stuck worker) must not hold settle(), the next refits, forget and
 * every ranking behind them forever. The refit is abandoned (its worker ended), recorded in
 * refitErrors, and the model carries on as after a failed refit. The slowest refit measured,
 * 10,000 runs on a worker on two cores, takes a few seconds: a minute is far beyond a working one.
 */
export const REFIT_TIMEOUT = 60_000;
/** When `learn` refits, in one object, as the public API exports them (`dtdr`'s `REFIT_LIMITS`). */
export const REFIT_LIMITS = Object.freeze({
  /** Learned runs up to which `learn` refits a tools-only model and waits for it (REFIT_UP_TO). */
  upTo: REFIT_UP_TO,
  /** Learned runs up to which a model with a refitter goes on refitting, in the background. */
  inBackgroundUpTo: REFIT_IN_BACKGROUND_UP_TO,
  /** How long (ms) a refit on the refitter may run before it is abandoned, unless `refitTimeout` says otherwise. */
  timeoutMs: REFIT_TIMEOUT,
});
/** The longest refitTimeout a timer can hold (setTimeout's limit, about 24.8 days). */
const MAX_TIMEOUT = 2 ** 31 - 1;

/** What a fit needs of the model: its method, encoder, seed and how a fitted state becomes a retriever. */
export interface RefitModel {
  method: MethodName;
  encoder: Encoder | undefined;
  seed: number;
  fromState(tools: ToolSpec[], state: unknown): Retriever;
}

/** A model's refits: when they are due, the fit itself, and the one in flight (`Dtdr` holds one). */
export class RefitSchedule {
  /** How many learned runs the model was last refitted on. */
  fittedOn = 0;
  /** Bumped by changes a background refit cannot see (forget, folding): its model is then dropped. */
  generation = 0;
  /** The background refit in flight, until its model is swapped in or dropped. */
  inFlight?: Promise<void>;
  /** Why refits on the refitter failed (and what the model did instead), oldest first. */
  readonly failures: string[] = [];

  /**
   * Each held run's request vector, from its learn call (or its first refit): a refit embeds only
   * what it has not seen, not its thousands of runs again on the calling thread (with a transformer
   * encoder in a browser, seconds per refit). Keyed by the run itself, so a run forgotten or folded
   * away takes its vector with it.
   */
  private readonly queryVectors = new WeakMap<Plan, Float32Array>();
  /** The tool vectors of the last refit, for the same tool list. */
  private toolVectors?: { tools: ToolSpec[]; vectors: Float32Array[] };

  /** The refit on the refitter in flight: aborted when it runs past `timeout` or a forget makes it pointless. */
  private running?: AbortController;

  constructor(
    readonly refitter: Refitter | undefined,
    readonly timeout = REFIT_TIMEOUT,
  ) {
    if (!(typeof timeout === 'number' && timeout > 0 && timeout <= MAX_TIMEOUT))
      throw new DtdrError(
        'options',
        `refitTimeout must be a number of ms in (0, ${MAX_TIMEOUT}], got ${String(timeout)}`,
        {
          field: 'refitTimeout',
        },
      );
  }

  /** Gives up on the refit in flight on the refitter (its model would be dropped): its worker stops working on it. */
  abandon(why: string): void {
    this.running?.abort(new Error(why));
  }

  /** The request vectors of `plans` (learned runs), embedding only those not kept, and keeping them. */
  async queries(encoder: Encoder, plans: readonly Plan[]): Promise<Float32Array[]> {
    const missing = plans.filter((p) => !this.queryVectors.has(p));
    if (missing.length > 0) {
      const vectors = await embedAll(
        encoder,
        missing.map((p) => p.query),
      );
      // What enters the model's saved state must load again (a NaN from a custom encoder would not).
      vectors.forEach((v, i) => checkVector(v, encoder, missing[i].query));
      missing.forEach((plan, i) => this.queryVectors.set(plan, vectors[i]));
    }
    return plans.map((p) => this.queryVectors.get(p)!);
  }

  /**
   * Whether a learn that brought the runs to `learned` refits: `now` (learn waits) while they
   * number at most REFIT_UP_TO and have grown by a tenth; `background` past it, with a refitter and
   * none in flight, when they have grown by half.
   */
  due(learned: number): 'now' | 'background' | undefined {
    if (learned <= REFIT_UP_TO) return grownByATenth(learned, this.fittedOn) ? 'now' : undefined;
    if (!this.refitter || this.inFlight || learned > REFIT_IN_BACKGROUND_UP_TO) return undefined;
    return learned >= this.fittedOn * REFIT_GROWTH_LATER ? 'background' : undefined;
  }

  /** The most learned runs the model keeps (to forget or refit on) before folding the oldest in. */
  keeps(refitting: boolean, forgettable: number): number {
    return refitting && this.refitter ? REFIT_IN_BACKGROUND_UP_TO : forgettable;
  }

  /**
   * A model fitted on `plans` over `tools`, as Dtdr.train fits it: on the refitter when there is
   * one. When the refitter fails, the fit runs here (`here`: a refit learn waits for) or not at all
   * (a background one); either way `failures` says why.
   */
  async fit(model: RefitModel, plans: Plan[], tools: ToolSpec[], here: boolean): Promise<Retriever | undefined> {
    // As Dtdr.train with these plans: l and K chosen from them (a tools-only fit recorded only defaults).
    const { method, encoder, seed } = model;
    const generation = this.generation;
    // The encoder is on this thread: embed here (only what is not kept), fit there or here.
    const kept: FitVectors = this.toolVectors?.tools === tools ? { tools: this.toolVectors.vectors } : {};
    if (encoder && fitNeeds(method).queries) kept.queries = await this.queries(encoder, plans);
    const vectors = await fitVectors(method, tools, plans, encoder, TRAIN_DEFAULTS.historyLength, kept);
    if (vectors.tools) this.toolVectors = { tools, vectors: vectors.tools };
    if (this.refitter) {
      try {
        const state = await this.onRefitter(this.refitter, { method, tools, plans, vectors, seed });
        return model.fromState(tools, state);
      } catch (error) {
        const then = here ? 'it ran on the calling thread' : 'the model went on learning without it';
        // A refit a forget abandoned is no failure: its model would have been dropped anyway.
        if (generation === this.generation)
          this.failures.push(`a refit on ${plans.length} learned runs failed (${then}): ${message(error)}`);
        if (!here) return undefined;
      }
    }
    await loadTraining(method);
    return fitRetriever(method, tools, plans, vectors, { seed });
  }

  /** The job on the refitter, abandoned (the signal aborted, the promise rejected) past `timeout` or by `abandon`. */
  private onRefitter(refitter: Refitter, job: RefitJob): Promise<unknown> {
    const control = (this.running = new AbortController());
    let timer: ReturnType<typeof setTimeout> | undefined;
    const abandoned = new Promise<never>((_, reject) => {
      const stop = () =>
        reject(control.signal.reason instanceof Error ? control.signal.reason : new Error('abandoned'));
      control.signal.addEventListener('abort', stop, { once: true });
      const s = this.timeout / 1000;
      timer = setTimeout(
        () => control.abort(new Error(`it ran past ${s} s (refitTimeout) and was abandoned`)),
        this.timeout,
      );
    });
    return Promise.race([refitter.refit(job, control.signal), abandoned]).finally(() => {
      clearTimeout(timer);
      if (this.running === control) this.running = undefined;
    });
  }

  /**
   * Runs a background refit on `plans`: `apply` gets the fitted model (Dtdr swaps it in as a model
   * change, or drops it). A failure is recorded, and the next try waits for as much growth again.
   */
  background(model: RefitModel, plans: Plan[], tools: ToolSpec[], apply: (fitted: Retriever) => Promise<void>): void {
    const generation = this.generation;
    const run = async () => {
      // learn returns first: with the runs' vectors kept nothing before the fit waits, and a
      // refitter that fits on this thread (refitInline) would otherwise run inside the learn call.
      await nextTask();
      const fitted = await this.fit(model, plans, tools, false).catch((error: unknown) => {
        this.failures.push(`a refit on ${plans.length} learned runs failed: ${message(error)}`);
        return undefined;
      });
      // Applying it is a model change of its own: its failure (the encoder, say) is recorded, never thrown at no one.
      if (fitted)
        await apply(fitted).catch((error: unknown) => {
          this.failures.push(`a refit on ${plans.length} learned runs could not be applied: ${message(error)}`);
        });
      // The next try after as much growth again, unless a forget or fold has reset the count since.
      else if (this.generation === generation) this.fittedOn = plans.length;
    };
    this.inFlight = run().finally(() => {
      this.inFlight = undefined;
    });
  }
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

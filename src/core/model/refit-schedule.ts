/**
 * When a model that started from its tools alone refits on the runs it learned: the schedule
 * (REFIT_UP_TO, then in the background with a refitter) and the bookkeeping of the refits (the
 * last refit's count, the one in flight, the kept vectors). The fit itself is refit-run.ts, which
 * only learning loads. `Dtdr` owns the model and applies a background refit's result as one of its
 * model changes.
 */
import { DtdrError } from '../base/errors.js';
import type { Plan, ToolSpec } from '../base/types.js';
import type { Refitter } from './refit.js';

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

/** A model's refits: when they are due, and the one in flight (`Dtdr` holds one; the fit itself: refit-run.ts). */
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
  readonly queryVectors = new WeakMap<Plan, Float32Array>();
  /** The tool vectors of the last refit, for the same tool list. */
  toolVectors?: { tools: ToolSpec[]; vectors: Float32Array[] };

  /** The refit on the refitter in flight: aborted when it runs past `timeout` or a forget makes it pointless. */
  running?: AbortController;

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
}

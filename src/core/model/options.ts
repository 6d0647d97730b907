/** The options of `Dtdr.train` and `Dtdr.load`. */
import type { Encoder } from '../base/encoder.js';
import type { Plan, ToolSpec } from '../base/types.js';
import type { Refitter } from './refit.js';
import type { ChainPlanInput } from '../plans/input.js';
import type { TrainOptions } from '../retrieval/methods.js';
import type { MethodName } from '../retrieval/types.js';

/** Options of {@link Dtdr.train}: the method, the tools, the demonstrations, the encoder and the training options. */
export interface DtdrTrainOptions extends TrainOptions {
  /** Default `dtdr-g` (DEFAULT_METHOD): the gated, calibrated combination. */
  method?: MethodName;
  tools: ToolSpec[];
  /**
   * Demonstrations. Optional for dtdr-g, bm25, qts and random, which can start from the tools
   * alone. Each a `Plan` (from planFromRecord / chainPlan) or a chain of calls
   * `{id?, query, tools: ['tool_a', 'tool_b']}`, read as `chainPlan(id ?? 'plan-<index>', query, tools)`.
   */
  plans?: (Plan | ChainPlanInput)[];
  /** Needed by every method but random, bm25 and dr. */
  encoder?: Encoder;
  /** Dataset name recorded in the artifact. */
  dataset?: string;
  /**
   * Where `learn`'s refits run (see REFIT_UP_TO): `refitWorker()` from `dtdr/node` or `dtdr/browser`
   * keeps the fits off the calling thread and lets the model refit past REFIT_UP_TO, in the
   * background. Default: the calling thread, up to REFIT_UP_TO runs. The caller closes it.
   */
  refitter?: Refitter;
  /**
   * Train although some tools have no description (default false: a DtdrError names them, as
   * `dtdr train` does without `--allow-undescribed`). Such tools are known by their name alone.
   */
  allowUndescribed?: boolean;
  /**
   * How long (ms) a refit on the refitter may run before the model gives up on it: it is abandoned
   * (a worker refitter's worker is ended), recorded in `Dtdr.refitErrors`, and the model carries on
   * as after a failed refit. Default REFIT_TIMEOUT (60 s).
   */
  refitTimeout?: number;
}

/** Options of {@link Dtdr.load}. */
export interface DtdrLoadOptions {
  /** As {@link DtdrTrainOptions.refitter}. */
  refitter?: Refitter;
  /** As {@link DtdrTrainOptions.refitTimeout}. */
  refitTimeout?: number;
}

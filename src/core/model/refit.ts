/**
 * Refitting a model on the runs it has learned, off the caller's thread where a platform gives a
 * worker (`refitWorker()` from `dtdr/node` or `dtdr/browser`). The caller embeds (its encoder
 * lives on its thread); the fit itself — the seconds of CPU — is pure and synchronous, so a worker
 * runs `runRefit` on a structured clone of the job and posts back the retriever's state.
 */
import type { Plan, ToolSpec } from '../base/types.js';
import { fitRetriever } from '../retrieval/fit-method.js';
import type { MethodName } from '../retrieval/types.js';

/** Everything a refit reads, as plain data (tools without `execute`, plans, vectors). */
export interface RefitJob {
  method: MethodName;
  tools: ToolSpec[];
  plans: Plan[];
  /** The encoder's vectors of the plans' requests, the tools and the plans' step contexts (as the method needs). */
  vectors: { queries?: Float32Array[]; tools?: Float32Array[]; contexts?: Float32Array[] };
  seed: number;
}

/**
 * Runs refits somewhere: `refit` resolves with the fitted retriever's state (`Retriever.state()`),
 * or rejects, in which case the model keeps what it has and says why in `Dtdr.refitErrors`.
 */
export interface Refitter {
  /**
   * Fits `job` and resolves with the fitted retriever's state (a worker posts it back). When
   * `signal` aborts, the model has given up on the job (it ran past `refitTimeout`, or a `forget`
   * made it pointless) and no longer waits for it: stop working on it (a worker refitter ends its
   * worker; the next job starts a new one).
   */
  refit(job: RefitJob, signal?: AbortSignal): Promise<unknown>;
  /** Ends the worker, if any (a refit in flight then rejects). */
  close(): Promise<void>;
}

/** The fit a refit runs: `Dtdr.train`'s, on the job's plans and vectors (l and K chosen from them). */
export function runRefit(job: RefitJob): unknown {
  return fitRetriever(job.method, job.tools, job.plans, job.vectors, { seed: job.seed }).state();
}

/** The tool fields a fit reads (an adapter's `execute` and other extras cannot cross to a worker). */
export function toolData({ name, description, parameters, returns }: ToolSpec): ToolSpec {
  return {
    name,
    description,
    ...(parameters !== undefined ? { parameters } : {}),
    ...(returns !== undefined ? { returns } : {}),
  };
}

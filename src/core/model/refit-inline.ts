/** The refitter on the calling thread (no worker). */
import { loadTraining } from '../retrieval/load-training.js';
import { runRefit, type Refitter } from './refit.js';

/**
 * Refits on the calling thread, between awaits: what a model uses without a worker (for the
 * refits `learn` waits for), and what tests and evaluations use for reproducible timing.
 */
export function refitInline(): Refitter {
  return {
    refit: async (job) => {
      await loadTraining(job.method);
      return runRefit(job);
    },
    close: async () => undefined,
  };
}

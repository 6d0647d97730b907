/**
 * Where DTDR-G's training code plugs in: the retriever ranks without it and calls it to fit and to
 * learn; training.ts installs it when loaded (on demand in an app, load-training.ts; imported by a
 * worker that fits), so an app that loads a model and retrieves never downloads it.
 */
import { DtdrError } from '../../base/errors.js';
import type { fitGated, fitGatedParallel } from './fit.js';
import type { learnGated, learnMoreGated } from './learning.js';

/** DTDR-G's fit (fit.ts) and online learning (learning.ts), as training.ts installs them (types only: no code). */
export interface GatedTraining {
  fit: typeof fitGated;
  fitParallel: typeof fitGatedParallel;
  learn: typeof learnGated;
  learnMore: typeof learnMoreGated;
}

let training: GatedTraining | undefined;

/** Installs the fit and online learning (training.ts does, once loaded). */
export function installTraining(code: GatedTraining): void {
  training = code;
}

/** Whether the fit and online learning are installed. */
export function trainingInstalled(): boolean {
  return training !== undefined;
}

/** The installed fit and online learning, or a DtdrError saying to load them. */
export function installedTraining(): GatedTraining {
  if (training) return training;
  throw new DtdrError('options', "DTDR-G's training code is not loaded", {
    hint: 'await Dtdr.loadTraining() first (Dtdr.train, learn and forget do; on Node it is loaded already)',
  });
}

/**
 * DTDR-G's training code — the fit with its cross-fitting, calibration and gate, and online
 * learning — installed into the retriever when this module is loaded (load-training.ts loads it on
 * the first train or learn; workers that fit import it). Ranking needs none of it.
 */
import { fitGated, fitGatedParallel } from './fit.js';
import { learnGated, learnMoreGated } from './learning.js';
import { installTraining, trainingInstalled } from './trainable.js';

/** Installs the fit and online learning into GatedRetriever (idempotent). */
export function installGatedTraining(): void {
  if (!trainingInstalled())
    installTraining({ fit: fitGated, fitParallel: fitGatedParallel, learn: learnGated, learnMore: learnMoreGated });
}

/**
 * Loads the default method's training code on demand. Kept out of the modules a worker that fits
 * imports (they import default/training.ts itself): a dynamic import there would make bundlers split
 * a classic worker, which they cannot.
 */
import { trainingInstalled } from './default/trainable.js';

/**
 * Loads DTDR-G's fit and online learning, once (a separate chunk in a bundled app): what `Dtdr.train`,
 * `learn`, `forget` and refits await before fitting, so an app that only loads a model and retrieves
 * never downloads it.
 */
export async function loadTraining(): Promise<void> {
  if (trainingInstalled()) return;
  const { installGatedTraining } = await import('./default/training.js');
  installGatedTraining();
}

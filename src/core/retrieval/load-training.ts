/**
 * Loads the default method's training code on demand. Kept out of the modules a worker that fits
 * imports (they import default/training.ts itself): a dynamic import there would make bundlers split
 * a classic worker, which they cannot.
 */
import { trainingInstalled } from './default/trainable.js';
import { assertEntry } from './methods.js';
import type { MethodName } from './types.js';

/**
 * Loads the training code of `method` where the method keeps it apart from ranking (the registry's
 * `trainingApart`: DTDR-G's fit and online learning), once — a separate chunk in a bundled app. What
 * `Dtdr.train`, `learn`, `forget` and refits await before fitting or learning, so an app that only
 * loads a model and retrieves never downloads it. Without a method: DTDR-G's. An unregistered method
 * throws its DtdrError here, before anything is downloaded.
 */
export async function loadTraining(method?: MethodName): Promise<void> {
  if (method !== undefined && !assertEntry(method).trainingApart) return;
  if (trainingInstalled()) return;
  const { installGatedTraining } = await import('./default/training.js');
  installGatedTraining();
}

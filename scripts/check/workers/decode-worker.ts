/**
 * Loads one model file in a worker thread whose heap is capped (stress-inputs.ts starts it with
 * resourceLimits): posts back what happened and how long it took. A file that needs more memory
 * than the cap kills the worker, never the app.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { Dtdr } from '../../../src/core/dtdr.js';
import { DtdrError } from '../../../src/core/base/errors.js';
import { readModelFile } from '../../../src/storage/file.js';
import { wordAxisEncoder } from '../../../test/helpers.js';
import '../../../src/methods.js'; // every method, as the Node entry registers them

const { path, words } = workerData as { path: string; words: string[] };
const t0 = performance.now();
let outcome: string;
try {
  Dtdr.load(readModelFile(path), wordAxisEncoder(words), path);
  outcome = 'loaded';
} catch (error) {
  outcome = DtdrError.isInstance(error)
    ? `refused: ${error.message.slice(0, 60)}`
    : `THREW ${String(error).slice(0, 80)}`;
}
parentPort!.postMessage({ outcome, ms: performance.now() - t0 });

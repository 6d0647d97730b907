/**
 * Loads one model file and prints what it cost, as JSON: run in a child process by
 * test/hardening-inputs.test.ts, so the peak resident memory it reports is this load's alone.
 *
 *   node --import tsx test/load-memory.ts <model file>
 */
import { Dtdr } from '../src/core/dtdr.js';
import { DtdrError } from '../src/core/base/errors.js';
import { readModelFile } from '../src/storage/file.js';
import { wordAxisEncoder } from './helpers.js';

const encoder = wordAxisEncoder(['search', 'files', 'find', 'contact', 'send', 'email']);
const before = process.memoryUsage().rss;
const started = performance.now();
let outcome: string;
try {
  const model = Dtdr.load(readModelFile(process.argv[2]), encoder, process.argv[2]);
  outcome = `loaded ${model.tools.length} tools`;
} catch (error) {
  outcome = DtdrError.isInstance(error) ? `DtdrError(${error.code}): ${error.message}` : `RAW ${String(error)}`;
}
const ms = performance.now() - started;
// maxRSS is in KiB: the process's peak, reached during the load (everything before it is smaller).
const extraMB = (process.resourceUsage().maxRSS * 1024 - before) / 2 ** 20;
console.log(JSON.stringify({ ms, extraMB, outcome }));

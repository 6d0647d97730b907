/**
 * Parallel training on Node: `foldWorkers()` runs DTDR-G's cross-fitting rounds on worker threads
 * (`TrainOptions.workers`). The model is the same bit for bit as without workers; only the wall
 * time changes. Each fit starts its threads and ends them when its rounds are done.
 */
import { availableParallelism } from 'node:os';
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import { DtdrError } from '../core/base/errors.js';
import type { CrossFitSetup, FoldWorkers, RoundOutput } from '../core/retrieval/default/cross-fit.js';

export interface FoldWorkerOptions {
  /** Worker threads besides the caller's. Default: the machine's available parallelism − 1, at most 7 (0 runs every round on the caller's thread). */
  threads?: number;
}

export function foldWorkers(options: FoldWorkerOptions = {}): FoldWorkers {
  const threads = options.threads ?? Math.min(7, Math.max(0, availableParallelism() - 1));
  if (!(Number.isInteger(threads) && threads >= 0)) throw new DtdrError('options', `threads must be a whole number ≥ 0, got ${threads}`, { field: 'threads' });
  const live = new Set<Worker>();
  return {
    threads,
    run(setup: CrossFitSetup, rounds: number) {
      const next = new Int32Array(new SharedArrayBuffer(4));
      const claim = () => Atomics.add(next, 0, 1);
      if (threads === 0 || rounds === 0) return { claim, results: Promise.resolve([]) };
      const results = Promise.all(Array.from({ length: Math.min(threads, rounds) }, () => runWorker(setup, rounds, next.buffer as SharedArrayBuffer, live))).then((lists) => lists.flat());
      return { claim, results };
    },
    async close() {
      await Promise.all([...live].map((w) => w.terminate()));
      live.clear();
    },
  };
}

/**
 * One worker's rounds. From dist the worker runs fold-worker.js; from the TypeScript source (tests,
 * `node --import tsx`), a worker thread does not inherit the loader, so a two-line bootstrap
 * registers tsx in the worker before importing fold-worker.ts. A worker that fails returns what it
 * finished: the fit runs the missing rounds itself.
 */
function runWorker(setup: CrossFitSetup, rounds: number, counter: SharedArrayBuffer, live: Set<Worker>): Promise<RoundOutput[]> {
  const source = import.meta.url.endsWith('.ts');
  const start = (): Worker => {
    if (!source) return new Worker(new URL('./fold-worker.js', import.meta.url));
    // tsx's ESM API (`register`); require.resolve finds its CommonJS twin beside it.
    const tsx = pathToFileURL(createRequire(import.meta.url).resolve('tsx/esm/api').replace(/\.cjs$/, '.mjs')).href;
    const entry = new URL('./fold-worker.ts', import.meta.url).href;
    return new Worker(`import(${JSON.stringify(tsx)}).then((tsx) => { tsx.register(); return import(${JSON.stringify(entry)}); });`, { eval: true });
  };
  return new Promise((resolve) => {
    const outputs: RoundOutput[] = [];
    let worker: Worker;
    try {
      worker = start();
    } catch {
      resolve(outputs);
      return;
    }
    live.add(worker);
    const finish = () => {
      live.delete(worker);
      void worker.terminate();
      resolve(outputs);
    };
    worker.on('message', (message: { output?: RoundOutput; done?: boolean }) => {
      if (message.output) outputs.push(message.output);
      if (message.done) finish();
    });
    worker.on('error', finish);
    worker.on('exit', finish);
    try {
      worker.postMessage({ setup, rounds, counter });
    } catch {
      // Tools carrying functions (an adapter's `execute`, say) cannot be cloned: send their data
      // (what the fit reads), else give up on this worker.
      try {
        worker.postMessage({ setup: { ...setup, tools: JSON.parse(JSON.stringify(setup.tools)) }, rounds, counter });
      } catch {
        finish();
      }
    }
  });
}

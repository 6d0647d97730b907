/**
 * Worker threads on Node. `refitWorker()` runs `learn`'s refits off the calling thread.
 * `foldWorkers()` runs DTDR-G's cross-fitting rounds on worker threads
 * (`TrainOptions.workers`). The model is the same bit for bit as without workers; only the wall
 * time changes. Each fit starts its threads and ends them when its rounds are done (or when the
 * fit fails: `cancel`). Each thread holds its own copy of the demonstrations and request vectors,
 * and its own fold evidence: memory grows with the threads (at 16,000 tools × 20,000
 * demonstrations, peak RSS about 1.1 GB with one worker against 0.65 GB on one thread).
 */
import { availableParallelism } from 'node:os';
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import { DtdrError } from '../core/base/errors.js';
import { toolData } from '../core/model/refit.js';
import { refitClient, type RefitReply, type WorkerRefitter } from './refit-client.js';
import type { CrossFitSetup, FoldWorkers, RoundOutput } from '../core/retrieval/default/cross-fit.js';

/** Options of {@link foldWorkers}: the number of threads. */
export interface FoldWorkerOptions {
  /**
   * Worker threads besides the caller's. Default: the machine's available parallelism − 1, at
   * most 3 (each holds a copy of the demonstrations); 0 runs every round on the caller's thread.
   */
  threads?: number;
}

/** A FoldWorkers whose `errors` lists why a worker did not help (it costs time, never results). */
export interface NodeFoldWorkers extends FoldWorkers {
  readonly errors: string[];
}

/** Worker threads for the default method's cross-fitting rounds (Node); pass as `Dtdr.train({ workers })`. */
export function foldWorkers(options: FoldWorkerOptions = {}): NodeFoldWorkers {
  const threads = options.threads ?? Math.min(3, Math.max(0, availableParallelism() - 1));
  if (!(Number.isInteger(threads) && threads >= 0))
    throw new DtdrError('options', `threads must be a whole number ≥ 0, got ${threads}`, { field: 'threads' });
  const live = new Set<Worker>();
  const errors: string[] = [];
  return {
    threads,
    errors,
    run(setup: CrossFitSetup, rounds: number) {
      const next = new Int32Array(new SharedArrayBuffer(4));
      const claim = () => Atomics.add(next, 0, 1);
      // No round left to claim, then the threads end (a failed fit stops its workers).
      const cancel = () => {
        Atomics.store(next, 0, rounds);
        for (const w of live) void w.terminate();
      };
      if (threads === 0 || rounds === 0) return { claim, cancel, results: Promise.resolve([]) };
      // What the fit reads of a tool: names, descriptions and schemas (an adapter's `execute` cannot be cloned).
      const data = { ...setup, tools: setup.tools.map(toolData) };
      const results = Promise.all(
        Array.from({ length: Math.min(threads, rounds) }, () => runWorker(data, rounds, next.buffer, live, errors)),
      ).then((lists) => lists.flat());
      return { claim, cancel, results };
    },
    async close() {
      await Promise.all([...live].map((w) => w.terminate()));
      live.clear();
    },
  };
}

/**
 * A worker thread that runs the model's refits (`Dtdr.train({ refitter })`,
 * `Dtdr.load(saved, encoder, source, { refitter })`): fits leave the calling thread (embedding
 * stays on it), unless the worker fails (`Dtdr.refitErrors` then says why). The thread starts on
 * the first refit and stays for the next ones; it keeps the process alive only while a refit is
 * in flight. `close()` ends it for good: later refits fail over to the calling thread.
 */
export function refitWorker(): WorkerRefitter {
  return refitClient(() => {
    const worker = startWorker('refit-worker');
    let ended = false;
    return {
      post: (message) => worker.postMessage(message),
      listen(onReply, onFailure) {
        worker.on('message', (reply: RefitReply) => onReply(reply));
        worker.on('error', (error) => onFailure(error.message));
        worker.on('messageerror', () => onFailure('a reply could not be read'));
        worker.on('exit', (code) => ended || onFailure(`the worker thread exited (code ${code})`));
      },
      hold: (busy) => (busy ? worker.ref() : worker.unref()),
      terminate() {
        ended = true;
        void worker.terminate();
      },
    };
  });
}

/**
 * A worker thread running `name` (fold-worker, refit-worker). From dist it runs the .js file; from
 * the TypeScript source (tests, `node --import tsx`), a worker thread does not inherit the loader,
 * so a two-line bootstrap registers tsx in the worker before importing the .ts file.
 */
function startWorker(name: string): Worker {
  if (!import.meta.url.endsWith('.ts')) return new Worker(new URL(`./${name}.js`, import.meta.url));
  // tsx's ESM API (`register`); require.resolve finds its CommonJS twin beside it.
  const tsx = pathToFileURL(
    createRequire(import.meta.url)
      .resolve('tsx/esm/api')
      .replace(/\.cjs$/, '.mjs'),
  ).href;
  const entry = new URL(`./${name}.ts`, import.meta.url).href;
  return new Worker(
    `import(${JSON.stringify(tsx)}).then((tsx) => { tsx.register(); return import(${JSON.stringify(entry)}); });`,
    { eval: true },
  );
}

/**
 * One worker's rounds (fold-worker.ts). A worker that fails returns what it
 * finished, and says why in `errors`: the fit runs the missing rounds itself.
 */
function runWorker(
  setup: CrossFitSetup,
  rounds: number,
  counter: SharedArrayBuffer,
  live: Set<Worker>,
  errors: string[],
): Promise<RoundOutput[]> {
  const failed = (why: unknown) =>
    errors.push(
      `a cross-fitting worker failed (its rounds ran on the calling thread): ` +
        `${why instanceof Error ? why.message : String(why)}`,
    );
  return new Promise((resolve) => {
    const outputs: RoundOutput[] = [];
    let worker: Worker;
    try {
      worker = startWorker('fold-worker');
    } catch (error) {
      failed(error);
      resolve(outputs);
      return;
    }
    live.add(worker);
    let finished = false;
    const finish = () => {
      if (finished) return;
      finished = true;
      live.delete(worker);
      void worker.terminate();
      resolve(outputs);
    };
    worker.on('message', (message: { output?: RoundOutput; done?: boolean }) => {
      if (message.output) outputs.push(message.output);
      if (message.done) finish();
    });
    worker.on('error', (error) => {
      failed(error);
      finish();
    });
    worker.on('exit', finish);
    try {
      worker.postMessage({ setup, rounds, counter });
    } catch (error) {
      failed(error); // a value the structured clone refuses (a function inside a schema, say)
      finish();
    }
  });
}

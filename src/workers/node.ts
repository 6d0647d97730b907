/**
 * Parallel training on Node: `foldWorkers()` runs DTDR-G's cross-fitting rounds on worker threads
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
import type { ToolSpec } from '../core/base/types.js';
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

function toolData({ name, description, parameters, returns }: ToolSpec): ToolSpec {
  return {
    name,
    description,
    ...(parameters !== undefined ? { parameters } : {}),
    ...(returns !== undefined ? { returns } : {}),
  };
}

/**
 * One worker's rounds. From dist the worker runs fold-worker.js; from the TypeScript source (tests,
 * `node --import tsx`), a worker thread does not inherit the loader, so a two-line bootstrap
 * registers tsx in the worker before importing fold-worker.ts. A worker that fails returns what it
 * finished, and says why in `errors`: the fit runs the missing rounds itself.
 */
function runWorker(
  setup: CrossFitSetup,
  rounds: number,
  counter: SharedArrayBuffer,
  live: Set<Worker>,
  errors: string[],
): Promise<RoundOutput[]> {
  const source = import.meta.url.endsWith('.ts');
  const start = (): Worker => {
    if (!source) return new Worker(new URL('./fold-worker.js', import.meta.url));
    // tsx's ESM API (`register`); require.resolve finds its CommonJS twin beside it.
    const tsx = pathToFileURL(
      createRequire(import.meta.url)
        .resolve('tsx/esm/api')
        .replace(/\.cjs$/, '.mjs'),
    ).href;
    const entry = new URL('./fold-worker.ts', import.meta.url).href;
    return new Worker(
      `import(${JSON.stringify(tsx)}).then((tsx) => { tsx.register(); return import(${JSON.stringify(entry)}); });`,
      { eval: true },
    );
  };
  const failed = (why: unknown) =>
    errors.push(
      `a cross-fitting worker failed (its rounds ran on the calling thread): ` +
        `${why instanceof Error ? why.message : String(why)}`,
    );
  return new Promise((resolve) => {
    const outputs: RoundOutput[] = [];
    let worker: Worker;
    try {
      worker = start();
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

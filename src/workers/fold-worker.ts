/**
 * A worker thread of `foldWorkers()` (node.ts): receives a DTDR-G cross-fitting setup, takes round
 * numbers from the shared counter until none is left, and posts each round's output back.
 */
import { parentPort } from 'node:worker_threads';
import { CrossFitter, type CrossFitSetup } from '../core/retrieval/default/cross-fit.js';

interface Start {
  setup: CrossFitSetup;
  rounds: number;
  counter: SharedArrayBuffer;
}

parentPort?.once('message', ({ setup, rounds, counter }: Start) => {
  const next = new Int32Array(counter);
  const fitter = new CrossFitter(setup);
  for (let round = Atomics.add(next, 0, 1); round < rounds; round = Atomics.add(next, 0, 1)) {
    const output = fitter.round(round);
    const g = output.gate;
    parentPort!.postMessage({ output }, [
      g.context.buffer,
      g.values.buffer,
      g.accept.buffer,
      g.offsets.buffer,
      output.poolCounts.buffer,
      output.descRank.buffer,
      output.plan.buffer,
      output.known.buffer,
    ] as ArrayBuffer[]);
  }
  parentPort!.postMessage({ done: true });
});

/** The worker thread of `refitWorker()` (node.ts): runs each refit job it receives and posts back the state. */
import { parentPort } from 'node:worker_threads';
import { runRefit } from '../core/model/refit.js';
import { installGatedTraining } from '../core/retrieval/default/training.js';
import type { RefitReply, RefitRequest } from './refit-client.js';

// A worker fits every job: its training code is part of it (imported, not loaded on demand).
installGatedTraining();

parentPort?.on('message', ({ id, job }: RefitRequest) => {
  let reply: RefitReply;
  try {
    reply = { id, state: runRefit(job) };
  } catch (error) {
    reply = { id, error: error instanceof Error ? error.message : String(error) };
  }
  parentPort!.postMessage(reply);
});

/**
 * The Web Worker of `refitWorker()` (web.ts; also the `dtdr/refit-worker` export for bundlers that
 * want the worker built by name): runs each refit job it receives and posts back the state.
 */
import { runRefit } from '../core/model/refit.js';
import { installGatedTraining } from '../core/retrieval/default/training.js';
import type { RefitReply, RefitRequest } from './refit-client.js';

// A worker fits every job: its training code is part of it (imported, not loaded on demand).
installGatedTraining();

const scope = self as unknown as {
  onmessage: ((event: MessageEvent<RefitRequest>) => void) | null;
  postMessage(message: RefitReply): void;
};
scope.onmessage = ({ data: { id, job } }) => {
  let reply: RefitReply;
  try {
    reply = { id, state: runRefit(job) };
  } catch (error) {
    reply = { id, error: error instanceof Error ? error.message : String(error) };
  }
  scope.postMessage(reply);
};

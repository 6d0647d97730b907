/**
 * The caller's side of a refit worker, for any platform: one worker, started on the first refit
 * and kept for the next ones, runs the jobs one at a time. A worker that fails (it threw, exited,
 * or its message could not be cloned) rejects the jobs it held and is replaced on the next refit.
 */
import { toolData, type RefitJob, type Refitter } from '../core/model/refit.js';

/** What a platform's worker offers the client (worker_threads' Worker or a Web Worker, wrapped). */
export interface RefitChannel {
  post(message: RefitRequest): void;
  /** Registers the handlers: a reply, or the worker's failure. */
  listen(onReply: (reply: RefitReply) => void, onFailure: (why: string) => void): void;
  /** Whether the worker keeps the process alive (Node: only while a refit is in flight). */
  hold?(busy: boolean): void;
  terminate(): void;
}

export interface RefitRequest {
  id: number;
  job: RefitJob;
}
export type RefitReply = { id: number; state: unknown } | { id: number; error: string };

/** A Refitter whose jobs run on the worker `start` creates; `refits` counts the ones it finished. */
export interface WorkerRefitter extends Refitter {
  readonly refits: number;
}

/**
 * How long (ms) a worker with no job stays before it is ended: its memory (hundreds of MB after a
 * refit on thousands of runs) goes back, and the next refit starts a new one (a fraction of a
 * second, against the seconds a refit takes).
 */
export const REFIT_WORKER_IDLE = 30_000;

export function refitClient(start: () => RefitChannel, idle = REFIT_WORKER_IDLE): WorkerRefitter {
  let channel: RefitChannel | undefined;
  let idleTimer: ReturnType<typeof setTimeout> | undefined;
  const whenIdle = () => {
    clearTimeout(idleTimer);
    if (waiting.size > 0 || !channel) return;
    const idleChannel = channel;
    idleTimer = setTimeout(() => {
      if (channel !== idleChannel || waiting.size > 0) return;
      channel = undefined;
      idleChannel.terminate();
    }, idle);
    // The timer must not keep a Node process alive.
    (idleTimer as { unref?: () => void }).unref?.();
  };
  let nextId = 0;
  let refits = 0;
  let closed = false;
  const waiting = new Map<number, { resolve: (state: unknown) => void; reject: (why: Error) => void }>();
  const fail = (why: string) => {
    const held = [...waiting.values()];
    waiting.clear();
    channel?.terminate();
    channel = undefined;
    for (const w of held) w.reject(new Error(`the refit worker failed: ${why}`));
  };
  const open = (): RefitChannel => {
    if (channel) return channel;
    const c = start();
    c.listen(
      (reply) => {
        const w = waiting.get(reply.id);
        if (!w) return;
        waiting.delete(reply.id);
        c.hold?.(waiting.size > 0);
        if ('error' in reply) w.reject(new Error(reply.error));
        else {
          refits++;
          w.resolve(reply.state);
        }
        whenIdle();
      },
      (why) => channel === c && fail(why),
    );
    channel = c;
    return c;
  };
  return {
    get refits() {
      return refits;
    },
    refit(job: RefitJob, signal?: AbortSignal) {
      return new Promise((resolve, reject) => {
        const id = nextId++;
        if (closed) {
          reject(new Error('the refit worker was closed'));
          return;
        }
        // A job the model gave up on: the worker runs one job at a time, so it is ended (the jobs
        // it held fail) and the next refit starts a new one, rather than queue behind a stuck fit.
        signal?.addEventListener('abort', () => waiting.has(id) && fail('a refit was abandoned'), { once: true });
        try {
          clearTimeout(idleTimer);
          const c = open();
          waiting.set(id, { resolve, reject });
          c.hold?.(true);
          c.post({ id, job: { ...job, tools: job.tools.map(toolData) } });
        } catch (error) {
          waiting.delete(id);
          reject(error instanceof Error ? error : new Error(String(error)));
        }
      });
    },
    async close() {
      closed = true;
      fail('it was closed');
    },
  };
}

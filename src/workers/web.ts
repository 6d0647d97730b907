/**
 * Refits in a Web Worker (browsers, and runtimes with module workers): `refitWorker()` for
 * `Dtdr.train({ refitter })` or `Dtdr.load(saved, encoder, source, { refitter })`.
 */
import { refitClient, type RefitReply, type WorkerRefitter } from './refit-client.js';

/** Options of the browser's {@link refitWorker}. */
export interface RefitWorkerOptions {
  /**
   * Makes the worker. Default: a module worker on this package's `refit-web-worker.js`, which
   * webpack 5 and Vite (with `optimizeDeps.exclude: ['dtdr']`) bundle as they find it. Otherwise
   * let the bundler build the `dtdr/refit-worker` export, e.g. Vite's
   * `import RefitWorker from 'dtdr/refit-worker?worker'` and `{ worker: () => new RefitWorker() }`.
   */
  worker?: () => Worker;
}

/** A Web Worker that runs the model's refits off the page's thread; `close()` ends it. */
export function refitWorker(options: RefitWorkerOptions = {}): WorkerRefitter {
  const make =
    options.worker ?? (() => new Worker(new URL('./refit-web-worker.js', import.meta.url), { type: 'module' }));
  return refitClient(() => {
    const worker = make();
    return {
      post: (message) => worker.postMessage(message),
      listen(onReply, onFailure) {
        worker.onmessage = (event: MessageEvent<RefitReply>) => onReply(event.data);
        worker.onerror = (event) => {
          event.preventDefault();
          onFailure(event.message || 'the worker script failed to load or threw');
        };
        worker.onmessageerror = () => onFailure('a reply could not be read');
      },
      terminate: () => worker.terminate(),
    };
  });
}

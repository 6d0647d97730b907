/**
 * dtdr for browsers, workers and edge runtimes: what `dtdr` resolves to outside Node (and `dtdr/browser` by name). The
 * same API as `dtdr/node`, with IndexedDB instead of files.
 *
 * @module dtdr/browser
 */
export * from './common.js';
export { loadEncoder } from './encoders/web.js';
export { refitWorker, type RefitWorkerOptions } from './workers/web.js';
export {
  saveModelToIndexedDb,
  loadModelFromIndexedDb,
  deleteModelFromIndexedDb,
  listModelsInIndexedDb,
  indexedDbEmbeddingStore,
} from './storage/idb.js';

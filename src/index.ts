/** dtdr for browsers, workers and edge runtimes (Node resolves to ./node.js through package exports). */
export * from './common.js';
export { loadEncoder, resolveModel } from './encoders/web.js';
export { saveModelToIndexedDb, loadModelFromIndexedDb, deleteModelFromIndexedDb, listModelsInIndexedDb, indexedDbEmbeddingStore } from './storage/idb.js';

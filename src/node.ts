/**
 * dtdr for Node: what `dtdr` resolves to under Node's `node` condition (and `dtdr/node` by name). The same API as the
 * browser entry, with files on disk instead of IndexedDB, plus dataset folders, Qwen3 token counts and worker threads.
 *
 * @module dtdr/node
 */
import { installGatedTraining } from './core/retrieval/default/training.js';
import { registerPaperMethods } from './core/retrieval/paper-methods.js';

// On Node every method trains and loads, and DTDR-G's training code is there from the start: bundle
// size does not matter there (browsers: `dtdr/methods`, and the training code on demand).
registerPaperMethods();
installGatedTraining();

export * from './common.js';
export { loadEncoder, BUNDLED_MODEL_DIR } from './encoders/node.js';
export { readDatasetDir } from './data/node.js';
export { fileEmbeddingStore, readModelFile, writeModelFile } from './storage/file.js';
export { loadQwen3TokenCounter } from './tokens/qwen3.js';
export { foldWorkers, refitWorker, type FoldWorkerOptions, type NodeFoldWorkers } from './workers/node.js';

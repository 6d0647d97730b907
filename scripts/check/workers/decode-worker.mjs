// Starts scripts/check/workers/decode-worker.ts in a worker thread (tsx's loader does not reach workers by itself).
import { tsImport } from 'tsx/esm/api';

await tsImport('./decode-worker.ts', import.meta.url);

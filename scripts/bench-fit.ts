/**
 * One fit, in its own process so its peak memory is its own: `node --import tsx
 * scripts/bench-fit.ts <method> <demonstrations> [tools]`. Prints one JSON line: fit time
 * (embedding excluded), peak resident memory, and the binary artifact's size. Used by `npm run bench`.
 */
import { saveRetriever } from '../src/core/model/artifact.js';
import { encodeBinaryModel } from '../src/core/model/binary.js';
import type { MethodName } from '../src/core/retrieval/types.js';
import { fitRetriever, fitVectors } from '../src/core/retrieval/train.js';
import { loadEncoder } from '../src/encoders/node.js';
import { syntheticDataset } from './synthetic.js';

const [method, plans, tools = '260'] = process.argv.slice(2);
let peak = 0;
const sample = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 20);
const encoder = await loadEncoder();
const data = syntheticDataset(Number(tools), Number(plans), 0);
const vectors = await fitVectors(method as MethodName, data.tools, data.plans, encoder, 3);
const started = performance.now();
const retriever = fitRetriever(method as MethodName, data.tools, data.plans, vectors, { head: { epochs: 1 } });
const fitMs = performance.now() - started;
peak = Math.max(peak, process.memoryUsage().rss);
clearInterval(sample);
const bytes = encodeBinaryModel(saveRetriever(retriever, data.tools, encoder, { dataset: data.name, plans: data.plans.length, historyLength: retriever.historyLength, seed: 0 }, [])).length;
console.log(JSON.stringify({ method, plans: Number(plans), tools: Number(tools), fitMs, peakBytes: peak, artifactBytes: bytes }));
await encoder.dispose?.();

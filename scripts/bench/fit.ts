/**
 * One fit, in its own process so its peak memory is its own: `node --import tsx
 * scripts/bench/fit.ts <method> <demonstrations> [tools] [synthetic|app] [encoder folder]`. Prints one JSON
 * line: fit time (embedding excluded), the time embedding took (embedMs), peak resident memory, and the
 * binary artifact's size. Used by `npm run bench`.
 */
import { saveRetriever } from '../../src/core/model/artifact.js';
import { encodeBinaryModel } from '../../src/core/model/binary.js';
import type { MethodName } from '../../src/core/retrieval/types.js';
import { fitRetrieverWith, fitVectors } from '../../src/core/retrieval/train.js';
import { foldWorkers } from '../../src/workers/node.js';
import { loadEncoder } from '../../src/encoders/node.js';
import { appWorld } from '../../test/worlds/app-world.js';
import { syntheticDataset } from '../../test/worlds/synthetic.js';
import '../../src/methods.js'; // every method, as the Node entry registers them

// `app`: the app-scale world (test/worlds/app-world.ts), fitted with the default settings (heads 8 epochs,
// as dtdr eval); `synthetic` (test/worlds/synthetic.ts) fits heads 1 epoch.
const [method, plans, tools = '260', world = 'synthetic', encoderFolder] = process.argv.slice(2);
let peak = 0;
const sample = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 20);
const encoder = await loadEncoder(encoderFolder ? { model: encoderFolder } : {});
const data =
  world === 'app'
    ? (({ name, tools: t, train }) => ({ name, tools: t, plans: train }))(
        appWorld({ tools: Number(tools), train: Number(plans), test: 0 }),
      )
    : syntheticDataset(Number(tools), Number(plans), 0);
const embedStarted = performance.now();
const vectors = await fitVectors(method as MethodName, data.tools, data.plans, encoder, 3);
const embedMs = performance.now() - embedStarted;
// As `dtdr train` fits: DTDR-G's cross-fitting on the machine's other cores (the same model as on one).
const workers = foldWorkers();
const started = performance.now();
const retriever = await fitRetrieverWith(method as MethodName, data.tools, data.plans, vectors, {
  workers,
  ...(world === 'app' ? {} : { head: { epochs: 1 } }),
});
const fitMs = performance.now() - started;
await workers.close();
peak = Math.max(peak, process.memoryUsage().rss);
clearInterval(sample);
const bytes = encodeBinaryModel(
  saveRetriever(
    retriever,
    data.tools,
    encoder,
    { dataset: data.name, plans: data.plans.length, historyLength: retriever.historyLength, seed: 0 },
    [],
  ),
).length;
console.log(
  JSON.stringify({
    method,
    world,
    plans: Number(plans),
    tools: Number(tools),
    fitMs,
    embedMs,
    encoder: encoder.id,
    threads: 1 + workers.threads,
    peakBytes: peak,
    artifactBytes: bytes,
  }),
);
await encoder.dispose?.();

/**
 * Test page (test/browser-refit.test.ts): a tools-only model with the browser's `refitWorker()`
 * learns 40 runs ten at a time; each refit runs in a Web Worker. Its rankings must equal those of
 * the model `Dtdr.train` fits on the same 40 runs on the page's thread. The encoder is a small
 * hashed bag of words written here (the worker path is what is under test, not the encoder).
 */
import { Dtdr, refitWorker, type Encoder } from '../../src/index.js';
import { demoDataset, DEMO_TOOLS } from '../../src/demo/index.js';

const status = document.getElementById('status')!;
const log = document.getElementById('log')!;
const DIM = 64;
const encoder: Encoder = {
  id: 'hashed-words-64',
  dimension: DIM,
  async embed(texts) {
    return texts.map((text) => {
      const v = new Float32Array(DIM);
      for (const word of text.toLowerCase().match(/[a-z]+/g) ?? []) {
        let h = 2166136261;
        for (let i = 0; i < word.length; i++) h = Math.imul(h ^ word.charCodeAt(i), 16777619);
        v[(h >>> 0) % DIM] += 1;
      }
      const norm = Math.hypot(...v) || 1;
      return v.map((x) => x / norm);
    });
  },
};

/** Each probe's order, and its probabilities (a refit's model crosses from the worker as saved state: within 1e-6). */
async function rankings(model: Dtdr, probes: [string, string[]][]) {
  const out = [];
  for (const [query, history] of probes) {
    const r = await model.rank(query, history);
    out.push({ order: Array.from(r.order, (i) => r.labels[i]).join(' '), p: Array.from(r.probabilities) });
  }
  return out;
}

try {
  const runs = demoDataset(40, 3).plans;
  const probes = demoDataset(10, 8).plans.map((p): [string, string[]] => [p.query, [p.nodes[0].tool]]);
  const worker = refitWorker();
  const model = await Dtdr.train({ tools: DEMO_TOOLS, encoder, refitter: worker });
  const started = performance.now();
  for (let i = 0; i < runs.length; i += 10) await model.learn(runs.slice(i, i + 10));
  const ms = performance.now() - started;
  const reference = await Dtdr.train({ tools: DEMO_TOOLS, plans: runs, encoder });
  const [a, b] = [await rankings(model, probes), await rankings(reference, probes)];
  const same = a.filter((r, i) => r.order === b[i].order && r.p.every((v, k) => Math.abs(v - b[i].p[k]) < 1e-6)).length;
  log.textContent = `refits in the worker: ${worker.refits} (${ms.toFixed(0)} ms for 4 learn calls)\nerrors: ${model.refitErrors.join('; ') || 'none'}\n${a
    .slice(0, 3)
    .map((r) => r.order)
    .join('\n')}`;
  await worker.close();
  status.textContent = `done: ${worker.refits} refits in the worker, ${same}/${probes.length} rankings as trained`;
  status.dataset.state = 'done';
} catch (error) {
  status.textContent = `error: ${error instanceof Error ? error.message : String(error)}`;
  status.dataset.state = 'error';
}

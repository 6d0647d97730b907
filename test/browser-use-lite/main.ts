/**
 * Test page (test/browser-use-lite.test.ts): models/dtdr-use-lite, served with the page, loaded by
 * dtdr's browser `loadEncoder({ model: './models/dtdr-use-lite/' })` on ONNX Runtime Web. It tries
 * WebGPU where the browser has an adapter (falling back to WASM, as the encoder does) and WASM
 * otherwise, embeds the sentences of ./sentences.ts, shows each one's nearest neighbour, and ranks
 * the demo tools for a few requests from their descriptions alone. The vectors are left on
 * `window.useLite` for the test to compare with Node's. `?retrieve=no` skips the retrieval (on a
 * software WebGPU adapter every new batch shape compiles shaders: embedding the tools takes long).
 */
import { Dtdr, loadEncoder, type Encoder, type OnnxRuntime } from '../../src/index.js';
import { DEMO_TOOLS } from '../../src/demo/index.js';
import { REQUESTS, SENTENCES } from './sentences.js';
import { cosine } from '../vectors.js';

const $ = (id: string) => document.getElementById(id)!;
const status = $('status');
const MODEL = './models/dtdr-use-lite/';
const retrieve = new URLSearchParams(location.search).get('retrieve') !== 'no';

function row(table: HTMLElement, cells: string[], head = false, numeric: number[] = []) {
  const tr = document.createElement('tr');
  cells.forEach((text, i) => {
    const td = document.createElement(head ? 'th' : 'td');
    td.textContent = text;
    if (numeric.includes(i)) td.className = 'num';
    tr.append(td);
  });
  table.append(tr);
}

/** WebGPU only where this browser offers an adapter: headless Chromium without a GPU has none. */
async function load(): Promise<{ encoder: Encoder; why: string }> {
  const gpu = (navigator as Navigator & { gpu?: { requestAdapter(): Promise<unknown> } }).gpu;
  const adapter = gpu ? await gpu.requestAdapter().catch(() => null) : null;
  if (!adapter) {
    return { encoder: await loadEncoder({ model: MODEL }), why: gpu ? 'no WebGPU adapter' : 'no navigator.gpu' };
  }
  const ort = (await import('onnxruntime-web/webgpu')) as unknown as OnnxRuntime;
  return { encoder: await loadEncoder({ model: MODEL, device: 'webgpu', runtime: ort }), why: 'WebGPU adapter found' };
}

try {
  let started = performance.now();
  const { encoder, why } = await load();
  const loadMs = performance.now() - started;
  const backend = encoder.backend?.name ?? 'wasm';
  $('backend').textContent =
    `${encoder.id}, ${encoder.dimension}-d · ${why}: running on ${backend}` +
    `${encoder.backend?.adapter ? ` (${encoder.backend.adapter})` : ''}` +
    `${encoder.backend?.note ? ` (${encoder.backend.note})` : ''} · loaded in ${loadMs.toFixed(0)} ms`;

  started = performance.now();
  const vectors = await encoder.embed(SENTENCES);
  const embedMs = performance.now() - started;
  const table = $('sentences');
  row(table, ['sentence', 'nearest other sentence', 'cosine'], true);
  SENTENCES.forEach((sentence, i) => {
    // The empty text embeds to the zero vector: it has no neighbour.
    if (vectors[i].every((x) => x === 0)) return row(table, ['(empty)', '(zero vector)', '—'], false, [2]);
    let best = -1;
    for (let j = 0; j < SENTENCES.length; j++)
      if (j !== i && (best < 0 || cosine(vectors[i], vectors[j]) > cosine(vectors[i], vectors[best]))) best = j;
    row(
      table,
      [sentence || '(empty)', SENTENCES[best] || '(empty)', cosine(vectors[i], vectors[best]).toFixed(3)],
      false,
      [2],
    );
  });

  const retrievals = $('retrievals');
  const shown: string[][] = [];
  if (retrieve) row(retrievals, ['request', 'candidates (probability)'], true);
  else $('retrieval-heading').hidden = true;
  const model = retrieve ? await Dtdr.train({ tools: DEMO_TOOLS, encoder }) : undefined;
  for (const request of REQUESTS) {
    if (!model) break;
    const next = await model.retrieve(request, []);
    const candidates = next.candidates.slice(0, 5).map((c) => `${c.tool} ${c.probability.toFixed(2)}`);
    shown.push(next.candidates.map((c) => c.tool));
    const more = next.candidates.length > 5 ? `, … (${next.candidates.length} in the set)` : '';
    row(retrievals, [request, candidates.join(', ') + more]);
  }

  (window as unknown as { useLite: unknown }).useLite = {
    id: encoder.id,
    backend,
    vectors: vectors.map((v) => Array.from(v)),
    candidates: shown,
  };
  status.textContent = `done: ${SENTENCES.length} sentences embedded on ${backend} in ${embedMs.toFixed(0)} ms, ${shown.length} requests retrieved`;
  status.dataset.state = 'done';
} catch (error) {
  status.textContent = `error: ${error instanceof Error ? error.message : String(error)}`;
  status.dataset.state = 'error';
}

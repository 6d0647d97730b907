/**
 * The in-browser demo: the bundled encoder on ONNX Runtime Web (WASM), DTDR-C trained on the
 * demo tool set, the model kept in IndexedDB between visits. Every file it needs (encoder
 * weights, tokenizer, the runtime's .wasm) comes from the build itself: no CDN.
 * `npm run demo:web` serves it; `npm run build:demo` builds it into dist-demo/.
 */
import {
  DEMO_TOOLS, Dtdr, END, buildSelectionPrompt, demoDataset, loadEncoder, loadModelFromIndexedDb, saveModelToIndexedDb,
} from '../../src/index.js';

const $ = <T extends HTMLElement>(id: string) => document.getElementById(id) as T;
const status = (text: string, state = 'busy') => {
  $('status').textContent = text;
  $('status').dataset.state = state;
};
const MODEL_KEY = 'demo-dtdr-c';

async function prepare(): Promise<Dtdr> {
  status('loading the encoder…');
  const encoder = await loadEncoder();
  try {
    const stored = await loadModelFromIndexedDb(MODEL_KEY);
    const model = Dtdr.load(stored, encoder, 'IndexedDB');
    status(`ready · model loaded from IndexedDB · encoder ${encoder.id}`, 'ready');
    return model;
  } catch {
    const dataset = demoDataset();
    status(`training DTDR-C on ${dataset.plans.length} demonstrations…`);
    const started = performance.now();
    const model = await Dtdr.train({ method: 'dtdr-c', tools: dataset.tools, plans: dataset.plans, encoder, dataset: dataset.name });
    await saveModelToIndexedDb(MODEL_KEY, model.toJSON());
    status(`ready · trained in ${((performance.now() - started) / 1000).toFixed(1)} s and saved to IndexedDB · encoder ${encoder.id}`, 'ready');
    return model;
  }
}

async function plan(model: Dtdr, query: string) {
  const steps = $('steps');
  steps.innerHTML = '';
  const history: string[] = [];
  for (let i = 0; i < 6; i++) {
    const r = await model.retrieve(query, history);
    if (i === 0) {
      const prompt = buildSelectionPrompt({ query, history, tools: DEMO_TOOLS, strategy: 'hard-weighted', format: 'hermes', candidates: r.candidates, widened: r.widened, reason: r.reason, demonstrations: model.examples });
      $('prompt').textContent = prompt.text;
    }
    const div = document.createElement('div');
    div.className = 'step';
    div.dataset.step = String(i + 1);
    div.innerHTML = `<strong>Step ${i + 1}</strong> ` + r.candidates.map((c, k) => `<span class="cand${k === 0 ? ' top' : ''}">${c.tool} ${c.probability.toFixed(2)}</span>`).join('')
      + (r.backoff ? ` <span class="muted">back-off: ${r.backoff.scope} ${r.backoff.historyUsed}/${r.backoff.historyWanted}</span>` : '')
      + (r.widened ? ` <div class="warn">widened: ${r.reason}</div>` : '');
    steps.append(div);
    const next = r.candidates[0]?.tool;
    if (!next || next === END) break;
    history.push(next);
  }
  const done = document.createElement('p');
  done.id = 'plan';
  done.textContent = `Plan: ${[...history, END].join(' → ')}`;
  steps.append(done);
}

let model: Dtdr | undefined;
async function start() {
  try {
    model = await prepare();
    $<HTMLButtonElement>('go').disabled = false;
  } catch (error) {
    status(`error: ${error instanceof Error ? error.message : String(error)}`, 'error');
  }
}

$('ask').addEventListener('submit', (event) => {
  event.preventDefault();
  if (model) void plan(model, $<HTMLInputElement>('query').value);
});
void start();

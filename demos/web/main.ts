/**
 * The dtdr playground: your tools and demonstrations (or the demo set, or tools only), training in
 * a Web Worker with progress, models kept in IndexedDB, a request stepped through with the
 * candidates, the confidence and why the set is as wide as it is, the prompt in each format and
 * strategy, methods compared side by side, the encoder on WASM or WebGPU (checked against each
 * other), and an optional local LLM under the hard mask. Every file it needs comes from the build
 * itself: no CDN. `npm run demo:web` serves it; `npx vite build --config demos/web/vite.config.ts` builds it into dist-demo/.
 */
import { del, get, set } from 'idb-keyval';
import {
  Agent,
  Dtdr,
  DtdrError,
  END,
  buildSelectionPrompt,
  deleteModelFromIndexedDb,
  listModelsInIndexedDb,
  loadEncoder,
  loadModelFromIndexedDb,
  parsePlans,
  parseToolList,
  saveModelToIndexedDb,
  type Encoder,
  type LocalModel,
  type MethodName,
  type OnnxRuntime,
  type PromptFormat,
  type Retrieval,
  type Strategy,
  type ToolSpec,
} from '../../src/index.js';
import { DEMO_QUERIES, demoDataset } from '../../src/demo/index.js';
// Saved models of any method load here: the paper's methods are registered (an app that ships only DTDR-G leaves this out).
import '../../src/methods.js';
import { transformersModel } from '../../src/llm/index.js';
import type { TrainMessage, TrainRequest } from './worker.js';

const $ = <T extends HTMLElement = HTMLElement>(id: string) => document.getElementById(id) as T;
const params = new URLSearchParams(location.search);

function el<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  props: Partial<HTMLElementTagNameMap[K]> = {},
  ...children: (Node | string)[]
): HTMLElementTagNameMap[K] {
  const e = Object.assign(document.createElement(tag), props);
  e.append(...children);
  return e;
}

const explain = (error: unknown) =>
  error instanceof DtdrError ? error.message : error instanceof Error ? error.message : String(error);

// ---------------------------------------------------------------- encoder and backend

/**
 * `?encoder=./models/dtdr-use-lite/`: another ONNX encoder folder served by this site (copy
 * models/dtdr-use-lite beside the build) instead of the bundled one. Made absolute here, so that the
 * training worker, whose own URL is elsewhere, loads the same folder; another site's URL is refused.
 */
const encoderModel = params.get('encoder') ? new URL(params.get('encoder')!, location.href) : undefined;

const encoders = new Map<string, Promise<Encoder>>();
function encoderFor(backend: string): Promise<Encoder> {
  let e = encoders.get(backend);
  if (!e) {
    const model = encoderModel?.href;
    e =
      encoderModel && encoderModel.origin !== location.origin
        ? Promise.reject(new Error(`?encoder= must be a folder on this site, not ${encoderModel.origin}`))
        : backend === 'webgpu'
          ? import('onnxruntime-web/webgpu').then((ort) =>
              loadEncoder({ model, device: 'webgpu', runtime: ort as unknown as OnnxRuntime }),
            )
          : loadEncoder({ model });
    encoders.set(backend, e);
    e.catch(() => encoders.delete(backend));
  }
  return e;
}

/** A WebGPU adapter's architecture (e.g. `swiftshader`), or null where this browser has none. */
async function webGpuAdapter(): Promise<string | null> {
  const gpu = (
    navigator as Navigator & {
      gpu?: { requestAdapter(): Promise<{ info?: { architecture?: string; vendor?: string } } | null> };
    }
  ).gpu;
  const adapter = gpu ? await gpu.requestAdapter().catch(() => null) : null;
  return adapter ? adapter.info?.architecture || adapter.info?.vendor || 'adapter' : null;
}

/**
 * The first backend: WebGPU where this browser has an adapter, else WASM (`?backend=wasm` or
 * `?backend=webgpu` picks one). WebGPU that cannot start falls back to WASM, and the page says so.
 */
async function startBackend(): Promise<void> {
  const asked = params.get('backend');
  const adapter = asked === 'wasm' ? null : await webGpuAdapter();
  const backend = asked === 'wasm' || asked === 'webgpu' ? asked : adapter ? 'webgpu' : 'wasm';
  $<HTMLSelectElement>('backend-choice').value = backend;
  const why = asked
    ? `?backend=${asked}`
    : adapter
      ? `WebGPU adapter found (${adapter})`
      : 'no WebGPU adapter in this browser';
  await useBackend(backend, why);
  if (backend === 'webgpu' && !asked && $('status').dataset.backend !== 'webgpu') {
    $<HTMLSelectElement>('backend-choice').value = 'wasm';
  }
}

let encoder: Encoder | undefined;
async function useBackend(backend: string, why = 'chosen'): Promise<void> {
  const status = $('status');
  status.dataset.state = 'loading';
  status.textContent = `loading the encoder (${backend})…`;
  try {
    encoder = await encoderFor(backend);
    const b = encoder.backend;
    const ran = b ? `${b.name}${b.adapter ? ` (${b.adapter})` : ''}` : backend;
    status.textContent = `${encoder.id} · running on ${ran}${b?.name && b.name !== backend ? ` (WebGPU could not start: fell back to ${b.name})` : ''} · ${why}`;
    status.dataset.state = 'ready';
    status.dataset.backend = b?.name ?? backend;
    $('backend-status').textContent =
      `Asked for ${backend}; running on ${ran}.${b?.note ? ` ${b.note}.` : ''}${b?.name === 'webgpu' ? ' (ONNX Runtime keeps ops WebGPU has no kernel for, here the int8 lookups, on the CPU.)' : ''}`;
    models.clear(); // models hold the encoder they were loaded with
    await refreshModels();
  } catch (error) {
    status.textContent = `error: ${explain(error)}`;
    status.dataset.state = 'error';
  }
}

// ---------------------------------------------------------------- data

let tools: ToolSpec[] = [];
function readData(): { tools: ToolSpec[]; plans: ReturnType<typeof parsePlans> } {
  const parsedTools = parseToolList($<HTMLTextAreaElement>('tools').value, 'tools');
  const plans = parsePlans($<HTMLTextAreaElement>('demos').value, 'demonstrations', { allowEmpty: true });
  const known = new Set(parsedTools.map((t) => t.name));
  for (const plan of plans) {
    for (const node of plan.nodes) {
      if (!known.has(node.tool))
        throw new DtdrError('data', `demonstration "${plan.id}" calls "${node.tool}", which is not in the tool list`, {
          hint: 'add the tool or fix the demonstration',
        });
    }
  }
  return { tools: parsedTools, plans };
}

function summarise() {
  const out = $('data-summary');
  out.classList.remove('error');
  try {
    const { tools: t, plans } = readData();
    out.textContent = `${t.length} tools, ${plans.length === 0 ? 'no demonstrations: the model will start from the tool descriptions alone' : `${plans.length} demonstrations`}.`;
  } catch (error) {
    out.textContent = explain(error);
    out.classList.add('error');
  }
}

function loadDemoSet() {
  const demo = demoDataset();
  $<HTMLTextAreaElement>('tools').value = JSON.stringify(
    demo.tools.map((t) => ({
      type: 'function',
      function: { name: t.name, description: t.description, ...(t.parameters ? { parameters: t.parameters } : {}) },
    })),
    null,
    1,
  );
  $<HTMLTextAreaElement>('demos').value = demo.plans
    .map((p) => JSON.stringify({ query: p.query, tools: p.order.map((i) => p.nodes[i].tool) }))
    .join('\n');
  $<HTMLInputElement>('model-name').value = 'demo';
  summarise();
}

async function readFileInto(input: HTMLInputElement, target: string) {
  const file = input.files?.[0];
  if (!file) return;
  $<HTMLTextAreaElement>(target).value = await file.text();
  summarise();
}

// ---------------------------------------------------------------- training in a worker

let worker: Worker | undefined;
function train(event: SubmitEvent) {
  event.preventDefault();
  const status = $('train-status');
  const name = $<HTMLInputElement>('model-name').value.trim();
  let data: ReturnType<typeof readData>;
  try {
    data = readData();
  } catch (error) {
    status.textContent = explain(error);
    status.className = 'error';
    return;
  }
  status.className = '';
  const method = $<HTMLSelectElement>('method').value as MethodName;
  const button = $<HTMLButtonElement>('train-go');
  button.disabled = true;
  const progress = $<HTMLProgressElement>('train-progress');
  progress.dataset.updates = '0';
  status.dataset.state = 'training';
  status.textContent = `training ${method} on ${data.tools.length} tools and ${data.plans.length} demonstrations…`;
  worker ??= new Worker(new URL('./worker.ts', import.meta.url), { type: 'module' });
  worker.onmessage = async (message: MessageEvent<TrainMessage>) => {
    const m = message.data;
    if (m.type === 'progress') {
      progress.value = m.fraction;
      progress.dataset.updates = String(Number(progress.dataset.updates) + 1);
      $('train-phase').textContent = `${m.phase} ${Math.round(m.fraction * 100)}%`;
      return;
    }
    button.disabled = false;
    if (m.type === 'error') {
      status.textContent = `${m.message}${m.hint ? ` — ${m.hint}` : ''}`;
      status.className = 'error';
      status.dataset.state = 'error';
      return;
    }
    progress.value = 1;
    $('train-phase').textContent = 'done';
    await saveModelToIndexedDb(name, m.model);
    await set(`dtdr-playground-meta:${name}`, {
      method,
      tools: data.tools.length,
      demonstrations: data.plans.length,
      seconds: m.seconds,
      savedAt: new Date().toISOString(),
    });
    models.delete(name);
    selected = name;
    status.textContent = `trained ${method} in ${m.seconds.toFixed(1)} s; saved to IndexedDB as "${name}"`;
    status.dataset.state = 'done';
    await refreshModels();
    await showStep();
  };
  const request: TrainRequest = {
    tools: data.tools,
    plans: data.plans,
    method,
    dataset: name,
    encoder: encoderModel?.href,
  };
  worker.postMessage(request);
}

// ---------------------------------------------------------------- models in IndexedDB

const models = new Map<string, Promise<Dtdr>>();
let selected: string | undefined;
const comparing = new Set<string>();

function model(name: string): Promise<Dtdr> {
  let m = models.get(name);
  if (!m) {
    m = loadModelFromIndexedDb(name).then((stored) => Dtdr.load(stored, encoder, `IndexedDB "${name}"`));
    models.set(name, m);
    m.catch(() => models.delete(name));
  }
  return m;
}

let listRun = 0;
async function refreshModels() {
  const run = ++listRun;
  const names = await listModelsInIndexedDb();
  const metas = await Promise.all(
    names.map((name) =>
      get<{ method: string; tools: number; demonstrations: number; seconds: number }>(`dtdr-playground-meta:${name}`),
    ),
  );
  if (run !== listRun) return; // a newer refresh is under way
  if (selected && !names.includes(selected)) selected = undefined;
  selected ??= names[0];
  const items: HTMLLIElement[] = [];
  if (names.length === 0) items.push(el('li', { className: 'muted' }, 'No model yet: train one above.'));
  for (const [k, name] of names.entries()) {
    const meta = metas[k];
    const item = el('li', { className: name === selected ? 'selected' : '' });
    item.dataset.model = name;
    const use = el('button', {
      type: 'button',
      textContent: name === selected ? 'Selected' : 'Use',
      disabled: name === selected,
    });
    use.setAttribute('aria-label', `use model ${name}`);
    use.onclick = async () => {
      selected = name;
      await refreshModels();
      await showStep();
    };
    const compare = el('input', { type: 'checkbox', checked: comparing.has(name) });
    compare.onchange = async () => {
      if (compare.checked) comparing.add(name);
      else comparing.delete(name);
      await showStep();
    };
    const remove = el('button', { type: 'button', textContent: 'Delete' });
    remove.setAttribute('aria-label', `delete model ${name}`);
    remove.onclick = async () => {
      await deleteModelFromIndexedDb(name);
      await del(`dtdr-playground-meta:${name}`);
      models.delete(name);
      comparing.delete(name);
      await refreshModels();
      await showStep();
    };
    item.append(
      el('span', {}, name),
      el(
        'span',
        { className: 'meta' },
        meta
          ? `${meta.method} · ${meta.tools} tools · ${meta.demonstrations} demonstrations · trained in ${meta.seconds.toFixed(1)} s`
          : '',
      ),
      use,
      el('label', {}, compare, ' compare'),
      remove,
    );
    items.push(item);
  }
  $('model-list').replaceChildren(...items);
}

// ---------------------------------------------------------------- stepping through a request

let history: string[] = [];
/** The calls made so far: the history without the END a finished plan closes with. */
const pastCalls = () => history.filter((h) => h !== END);
const estimateTokens = (text: string) => Math.ceil(text.length / 4);

function candidateTable(r: Retrieval, onTake?: (tool: string) => void): HTMLTableElement {
  const table = el('table');
  table.append(
    el(
      'thead',
      {},
      el(
        'tr',
        {},
        el('th', { scope: 'col' }, 'next tool'),
        el('th', { scope: 'col' }, 'probability'),
        ...(onTake ? [el('th', { scope: 'col' }, '')] : []),
      ),
    ),
  );
  const body = el('tbody');
  for (const c of r.candidates) {
    const bar = el('span', { className: 'bar' });
    bar.style.width = `${Math.max(1, Math.round(c.probability * 120))}px`;
    const row = el(
      'tr',
      {},
      el('td', { className: c.tool === END ? 'end' : '' }, c.tool),
      el('td', {}, bar, ` ${c.probability.toFixed(2)}`),
    );
    row.dataset.tool = c.tool;
    if (onTake) {
      const take = el('button', {
        type: 'button',
        className: 'secondary',
        textContent: c.tool === END ? 'End here' : 'Call it',
      });
      take.setAttribute('aria-label', c.tool === END ? 'end the plan here' : `call ${c.tool}`);
      take.onclick = () => onTake(c.tool);
      row.append(el('td', {}, take));
    }
    body.append(row);
  }
  table.append(body);
  return table;
}

function describe(r: Retrieval): string {
  const size = `${r.candidates.length} tool${r.candidates.length === 1 ? '' : 's'}`;
  if (r.widened) return `Unsure — widened to ${size}: ${r.reason ?? 'low confidence'}.`;
  const target = r.target
    ? ` It holds a tool that can come next in ${Math.round(r.target * 100)}% of held-out steps.`
    : '';
  return `Confident — ${size}${r.reason ? ` (${r.reason})` : ''}.${target}`;
}

let stepRun = 0;
async function showStep() {
  const run = ++stepRun;
  const query = $<HTMLInputElement>('query').value.trim();
  const candidates = $('candidates');
  const why = $('why');
  if (!selected || !encoder || !query) {
    candidates.replaceChildren(
      el('p', { className: 'muted' }, selected ? 'Type a request.' : 'Train or select a model first.'),
    );
    why.textContent = '';
    return;
  }
  try {
    const current = await model(selected);
    tools = current.tools;
    const r = await current.retrieve(query, pastCalls());
    if (run !== stepRun) return;
    $('history').replaceChildren(
      'History: ',
      ...(history.length ? history.map((h) => el('span', { className: 'history-chip' }, h)) : ['(start)']),
      ` · model ${selected} (${current.method})`,
    );
    const done = history.at(-1) === END;
    candidates.replaceChildren(
      done ? el('p', { id: 'plan' }, `Plan: ${history.join(' → ')}`) : candidateTable(r, (tool) => void take(tool)),
    );
    why.textContent = done ? '' : describe(r);
    why.className = `why${r.widened ? ' widened' : ''}`;
    why.dataset.widened = String(r.widened);
    renderPrompt(query, r);
    await renderCompare(query, current.method, r);
  } catch (error) {
    candidates.replaceChildren(el('p', { className: 'error' }, explain(error)));
  }
}

function renderPrompt(query: string, r: Retrieval) {
  const format = $<HTMLSelectElement>('format').value as PromptFormat;
  const strategy = $<HTMLSelectElement>('strategy').value as Strategy;
  const build = (s: Strategy) =>
    buildSelectionPrompt({
      query,
      history: pastCalls(),
      tools,
      strategy: s,
      format,
      candidates: r.candidates,
      widened: r.widened,
      reason: r.reason,
      demonstrations: [],
    });
  // The OpenAI format is sent as a Chat Completions request (tools beside the messages): show that.
  const shown = (p: ReturnType<typeof build>) => (p.request ? JSON.stringify(p.request, null, 2) : p.text);
  const prompt = shown(build(strategy));
  const n = estimateTokens(prompt);
  const full = estimateTokens(shown(build('none')));
  $('prompt').textContent = prompt;
  $('prompt-tokens').textContent =
    `≈ ${n.toLocaleString()} tokens (4 characters per token); with all ${tools.length} tools ≈ ${full.toLocaleString()}${full > n ? `, a saving of ${Math.round((1 - n / full) * 100)}%` : ''}`;
}

async function renderCompare(query: string, selectedMethod: string, selectedRetrieval: Retrieval) {
  const box = $('compare');
  const others = [...comparing].filter((n) => n !== selected);
  if (others.length === 0) {
    box.replaceChildren();
    return;
  }
  const results = [
    { name: selected!, method: selectedMethod, r: selectedRetrieval },
    ...(await Promise.all(
      others.map(async (n) => {
        try {
          const m = await model(n);
          return { name: n, method: m.method, r: await m.retrieve(query, pastCalls()) };
        } catch (error) {
          return { name: n, method: '?', error: explain(error) };
        }
      }),
    )),
  ];
  const table = el('table');
  table.append(
    el('thead', {}, el('tr', {}, ...results.map((x) => el('th', { scope: 'col' }, `${x.name} (${x.method})`)))),
  );
  table.append(
    el(
      'tbody',
      {},
      el(
        'tr',
        {},
        ...results.map((x) =>
          el(
            'td',
            {},
            'r' in x && x.r ? candidateTable(x.r) : el('span', { className: 'error' }, x.error ?? ''),
            'r' in x && x.r ? el('p', { className: 'muted' }, describe(x.r)) : '',
          ),
        ),
      ),
    ),
  );
  box.replaceChildren(el('h3', {}, 'Side by side on this step'), table);
}

async function take(tool: string) {
  history.push(tool);
  await showStep();
}

async function planToEnd() {
  if (!selected) return;
  const m = await model(selected);
  const query = $<HTMLInputElement>('query').value.trim();
  while (history.length < 8 && history.at(-1) !== END) {
    const r = await m.retrieve(query, history);
    history.push(r.candidates[0]?.tool ?? END);
  }
  if (history.at(-1) !== END) history.push(END);
  await showStep();
}

// ---------------------------------------------------------------- WebGPU against WASM

async function checkBackends() {
  const out = $('backend-result');
  out.textContent = 'running the encoder on both backends…';
  try {
    const wasm = await encoderFor('wasm');
    const gpu = await encoderFor('webgpu');
    if (gpu.backend?.name !== 'webgpu')
      throw new Error(`WebGPU did not start here: ${gpu.backend?.note ?? 'no adapter'}`);
    const texts = [
      ...(tools.length ? tools : demoDataset(1).tools).map((t) => `${t.name}: ${t.description}`),
      ...DEMO_QUERIES,
    ];
    const [a, b] = [await wasm.embed(texts), await gpu.embed(texts)];
    let maxDiff = 0;
    a.forEach((v, i) => v.forEach((x, k) => (maxDiff = Math.max(maxDiff, Math.abs(x - b[i][k])))));
    let plansText = 'no model selected: plans not compared';
    let same = 0;
    if (selected) {
      const stored = await loadModelFromIndexedDb(selected);
      const [mw, mg] = [Dtdr.load(stored, wasm), Dtdr.load(stored, gpu)];
      const walk = async (m: Dtdr, q: string) => {
        const h: string[] = [];
        while (h.length < 8 && h.at(-1) !== END) h.push((await m.retrieve(q, h)).candidates[0]?.tool ?? END);
        return h.join(' → ');
      };
      for (const q of DEMO_QUERIES) if ((await walk(mw, q)) === (await walk(mg, q))) same++;
      plansText = `plans of "${selected}" identical for ${same}/${DEMO_QUERIES.length} requests`;
      out.dataset.plansSame = String(same);
      out.dataset.plans = String(DEMO_QUERIES.length);
    }
    out.dataset.maxDiff = String(maxDiff);
    out.textContent = `WebGPU (${gpu.backend.adapter ?? 'adapter'}) against WASM: max |Δ| = ${maxDiff.toExponential(2)} over ${texts.length} texts × ${wasm.dimension} dimensions; ${plansText}.`;
  } catch (error) {
    out.textContent = `WebGPU check: ${explain(error)}`;
    out.dataset.error = 'true';
  }
}

// ---------------------------------------------------------------- optional local LLM

let llm: LocalModel | undefined;
async function llmAvailability() {
  const adapter = await webGpuAdapter();
  const remote = $<HTMLInputElement>('llm-remote').checked;
  const id = $<HTMLInputElement>('llm-model').value.trim();
  const needs = `It needs WebGPU${adapter ? ` (found: ${adapter})` : ' (none in this browser: use a recent Chrome or Edge with hardware acceleration on)'} and a model: either its folder served by this site at ${location.pathname.replace(/[^/]*$/, '')}models/${id || '<id>'}/ (config.json, the tokenizer files, onnx/), which loads offline, or your permission to download it from the Hugging Face hub (tick the box; Qwen3 0.6B at q4f16 is about 500 MB, downloaded once).`;
  $('llm-status').textContent =
    `${needs} ${remote ? 'Downloading from the hub is allowed.' : 'Nothing is requested from the hub unless you tick the box.'} Everything else on this page works without it.`;
  $<HTMLButtonElement>('llm-load').disabled = !adapter || !id || (remote && !navigator.onLine);
}

async function askLlm(event: SubmitEvent) {
  event.preventDefault();
  const out = $('llm-answer');
  if (!selected) {
    out.textContent = 'Train or select a model first.';
    return;
  }
  try {
    if (!llm) {
      const remote = $<HTMLInputElement>('llm-remote').checked;
      out.textContent = remote
        ? 'loading the language model (first time: downloading from the Hugging Face hub)…'
        : "loading the language model from this site's models/ folder…";
      const transformers = await import('@huggingface/transformers');
      transformers.env.localModelPath = new URL('models/', location.href).pathname;
      llm = await transformersModel({
        model: $<HTMLInputElement>('llm-model').value.trim(),
        device: 'webgpu',
        dtype: 'q4f16',
        allowRemoteModels: remote,
        transformers,
        maxNewTokens: 64,
      });
    }
    const agent = new Agent({
      retriever: await model(selected),
      model: llm,
      fillArguments: false,
      format: $<HTMLSelectElement>('format').value as PromptFormat,
    });
    const { prompt } = await agent.prepare(
      $<HTMLInputElement>('query').value.trim(),
      pastCalls().map((tool) => ({ tool })),
    );
    const answer = await llm.generate({
      stage: prompt.stage,
      format: prompt.format,
      messages: prompt.messages,
      tools: prompt.tools,
      prompt: prompt.text,
      allowed: prompt.allowed,
    });
    const parsed = agent.accept(prompt, answer);
    out.textContent =
      parsed.kind === 'error'
        ? `The model's answer was refused: ${parsed.message}`
        : `The model picks ${parsed.kind === 'end' ? END : parsed.call.name}.`;
    if (parsed.kind !== 'error') await take(parsed.kind === 'end' ? END : parsed.call.name);
  } catch (error) {
    llm = undefined;
    out.textContent = $<HTMLInputElement>('llm-remote').checked
      ? `${explain(error)} — the download from the Hugging Face hub failed: check the network connection, or serve the model's folder under models/ on this site.`
      : `${explain(error)} — no usable model folder at models/${$<HTMLInputElement>('llm-model').value.trim()}/ on this site: serve one there, or tick "download from the Hugging Face hub".`;
  }
}

// ---------------------------------------------------------------- wiring

$('use-demo').addEventListener('click', loadDemoSet);
$('tools-only').addEventListener('click', () => {
  $<HTMLTextAreaElement>('demos').value = '';
  summarise();
});
$('tools').addEventListener('input', summarise);
$('demos').addEventListener('input', summarise);
$('tools-file').addEventListener('change', (e) => void readFileInto(e.target as HTMLInputElement, 'tools'));
$('demos-file').addEventListener('change', (e) => void readFileInto(e.target as HTMLInputElement, 'demos'));
$<HTMLFormElement>('train-form').addEventListener('submit', train);
$<HTMLFormElement>('ask').addEventListener('submit', (e) => {
  e.preventDefault();
  history = [];
  void showStep();
});
$('step-auto').addEventListener('click', () => void planToEnd());
$('format').addEventListener('change', () => void showStep());
$('strategy').addEventListener('change', () => void showStep());
$('backend-choice').addEventListener(
  'change',
  (e) => void useBackend((e.target as HTMLSelectElement).value).then(showStep),
);
$('backend-check').addEventListener('click', () => void checkBackends());
$<HTMLFormElement>('llm-form').addEventListener('submit', (event) => void askLlm(event));
$('llm-remote').addEventListener('change', () => void llmAvailability());
$('llm-model').addEventListener('input', () => void llmAvailability());
addEventListener('online', () => void llmAvailability());
addEventListener('offline', () => void llmAvailability());

void llmAvailability();
if (params.get('data') !== 'empty') loadDemoSet();
void startBackend().then(showStep);

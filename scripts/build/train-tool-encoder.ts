/**
 * Trains dtdr's tool-retrieval encoder `dtdr-tool-100d`: the bundled GloVe encoder's word rows
 * fine-tuned contrastively on (request, tool) pairs, written as the same ONNX folder
 * (gather → dequantise → mask; same tokenizer), so every dtdr runtime loads it unchanged.
 *
 *   node --import tsx scripts/build/tool-corpus.ts  # .cache/tool-corpus/ from the fetched snapshots
 *   node --import tsx scripts/build/train-tool-encoder.ts [--epochs 12 --seed 23 --out models/dtdr-tool-100d]
 *                                                        [--corpus DIR] [--name NAME]   (default: the --out folder's name)
 *
 * Model. A sentence is normalise(Σ_w e_w) over its tokens (dtdr's mean pooling + L2 norm; the
 * 1/n of the mean cancels), with e_w = a_w · M g_w + δ_w: g_w the GloVe row (SIF-weighted, first
 * PC removed), M a shared 100×100 map (identity at start; it moves every word, seen or not), a_w a
 * learned per-word weight (1 at start) and δ_w a per-word correction (0 at start, L2-penalised).
 * All three are baked into one table e, so the exported graph is today's.
 *
 * Loss. In-batch symmetric InfoNCE with a learned temperature: each request against every tool
 * text in the batch (its positives, other requests' tools, and one hard negative per request —
 * a sibling from its own candidate list or, failing that, a tool of the same source sharing a
 * name word: create_transaction vs del_transaction), and each positive tool against the
 * requests. Every tool of a multi-tool request counts as a positive. With --pair-weight (0.5 by
 * default) half of each batch is partner requests of the same tool, and requests sharing a tool
 * are positives of each other. The logit scale is fixed at 8 (--scale).
 *
 * Seeded (mulberry32, dtdr's own seededRandom; the same stream for any non-zero seed) and single-threaded: a rerun with the same corpus writes the same bytes.
 * Training time: printed at the end and recorded in manifest.json — 689 s for the committed
 * model (default options) on the shared 2-core development machine under a load average of 8–9,
 * 864 s for a second run beside other jobs; well inside an hour.
 */
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { Tokenizer } from '@huggingface/tokenizers';
import { seededRandom } from '../../src/core/base/random.js';
import { buildModel, readTable } from './encoder-onnx.js';

const ROOT = resolve(import.meta.dirname, '../..');
const { values: args } = parseArgs({
  options: {
    corpus: { type: 'string', default: join(ROOT, '.cache', 'tool-corpus') },
    base: { type: 'string', default: join(ROOT, 'models', 'dtdr-glove-100d') },
    out: { type: 'string', default: join(ROOT, 'models', 'dtdr-tool-100d') },
    // The model's name in its manifest (default: the output folder's name).
    name: { type: 'string' },
    epochs: { type: 'string', default: '12' },
    batch: { type: 'string', default: '256' },
    seed: { type: 'string', default: '23' },
    'lr-map': { type: 'string', default: '0.002' },
    'lr-weight': { type: 'string', default: '0.01' },
    'lr-delta': { type: 'string', default: '0.003' },
    'l2-delta': { type: 'string', default: '0.0003' },
    'metatool-per-epoch': { type: 'string', default: '5000' },
    holdout: { type: 'string', default: '0.1' },
    scale: { type: 'string', default: '8' },
    'end-margin': { type: 'string', default: '0.3' },
    'end-weight': { type: 'string', default: '0' },
    'pair-weight': { type: 'string', default: '0.5' },
    wise: { type: 'string', default: '1' },
    fp32: { type: 'boolean', default: false },
  },
});

interface Rec {
  src: string;
  q: string;
  pos: string[];
  group?: string[];
}

const seed = Number(args.seed);
const rand = seededRandom(seed);
const pick = <T>(a: readonly T[]): T => a[Math.floor(rand() * a.length)];
function shuffle<T>(a: T[]): T[] {
  for (let i = a.length - 1; i > 0; i--) {
    const j = Math.floor(rand() * (i + 1));
    [a[i], a[j]] = [a[j], a[i]];
  }
  return a;
}

const started = Date.now();
const baseDir = resolve(args.base);
const {
  table: G,
  vocab: V,
  dim: D,
} = readTable(new Uint8Array(readFileSync(join(baseDir, 'onnx', 'model_quantized.onnx'))));
const tokenizerText = readFileSync(join(baseDir, 'tokenizer.json'), 'utf8');
const tokenizer = new Tokenizer(
  JSON.parse(tokenizerText),
  JSON.parse(readFileSync(join(baseDir, 'tokenizer_config.json'), 'utf8')),
);
const ids = (text: string): Int32Array => new Int32Array(tokenizer.encode(text).ids.filter((i: number) => i > 1));

const corpusDir = resolve(args.corpus);
const records = readFileSync(join(corpusDir, 'corpus.jsonl'), 'utf8')
  .split('\n')
  .filter(Boolean)
  .map((l) => JSON.parse(l) as Rec);
const toolTexts = JSON.parse(readFileSync(join(corpusDir, 'tools.json'), 'utf8')) as Record<string, string>;
const toolKeys = Object.keys(toolTexts);
const toolIndex = new Map(toolKeys.map((k, i) => [k, i]));
const toolIds = toolKeys.map((k) => ids(toolTexts[k]));

// Siblings by name word within a source (for records without their own candidate list).
const nameWords = (key: string) =>
  key
    .slice(key.indexOf(':') + 1)
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter((w) => w.length > 2);
const bySrcWord = new Map<string, number[]>();
toolKeys.forEach((k, i) => {
  const src = k.slice(0, k.indexOf(':'));
  for (const w of nameWords(k)) {
    const key = `${src}\u0000${w}`;
    if (!bySrcWord.has(key)) bySrcWord.set(key, []);
    bySrcWord.get(key)!.push(i);
  }
});
function siblings(r: { pos: number[]; group?: number[] }): number[] {
  if (r.group && r.group.length > r.pos.length) return r.group.filter((g) => !r.pos.includes(g));
  const out = new Set<number>();
  for (const p of r.pos) {
    const k = toolKeys[p];
    const src = k.slice(0, k.indexOf(':'));
    for (const w of nameWords(k))
      for (const s of bySrcWord.get(`${src}\u0000${w}`) ?? []) if (!r.pos.includes(s)) out.add(s);
  }
  return [...out];
}

interface Item {
  src: string;
  q: Int32Array;
  pos: number[];
  sib: number[];
}
const items: Item[] = records
  .map((r) => {
    const pos = r.pos.map((p) => toolIndex.get(p)!);
    const group = r.group?.map((g) => toolIndex.get(g)!);
    return { src: r.src, q: ids(r.q), pos, sib: siblings({ pos, group }) };
  })
  .filter((it) => it.q.length > 0);

// Held-out check, scored against each source's tool pool: every request of a seeded 10% of
// MetaTool's tools (tools never seen in training) and a seeded 10% of the other requests.
shuffle(items);
const share = Number(args.holdout);
const metaTools = shuffle(
  [...new Set(items.filter((it) => it.src.startsWith('metatool')).flatMap((it) => it.pos))].sort((x, y) => x - y),
);
const heldTools = new Set(metaTools.slice(0, Math.round(metaTools.length * share)));
const isHeld = (it: Item) => (it.src.startsWith('metatool') ? it.pos.some((p) => heldTools.has(p)) : rand() < share);
const held: Item[] = [];
const train: Item[] = [];
for (const it of items) (isHeld(it) ? held : train).push(it);

// ---- parameters ----
const M = new Float64Array(D * D);
for (let i = 0; i < D; i++) M[i * D + i] = 1;
const A = new Float64Array(V).fill(1);
const Dl = new Float64Array(V * D);
// Fixed logit scale: 8 is the weight DTDR-G's gates give the embedding cosine, so the logits trained
// here are the embedding term the gate adds ('learned' lets it float from 20, as CLIP does).
const learnScale = args.scale === 'learned';
let logScale = Math.log(learnScale ? 20 : Number(args.scale));

// Adam state
const mM = new Float64Array(D * D),
  vM = new Float64Array(D * D);
const mA = new Float64Array(V),
  vA = new Float64Array(V);
const mD = new Float64Array(V * D),
  vD = new Float64Array(V * D);
let mS = 0,
  vS = 0;
const b1 = 0.9,
  b2 = 0.999,
  eps = 1e-8;

/** h = Σ a_w g_w, s = M h + Σ δ_w, u = s / |s|. */
interface Fwd {
  tok: Int32Array;
  h: Float64Array;
  s: Float64Array;
  u: Float64Array;
  n: number;
}
function forward(tok: Int32Array, m = M): Fwd {
  const h = new Float64Array(D);
  const s = new Float64Array(D);
  for (const w of tok) {
    const a = A[w];
    const o = w * D;
    for (let c = 0; c < D; c++) {
      h[c] += a * G[o + c];
      s[c] += Dl[o + c];
    }
  }
  for (let i = 0; i < D; i++) {
    let acc = 0;
    const o = i * D;
    for (let j = 0; j < D; j++) acc += m[o + j] * h[j];
    s[i] += acc;
  }
  let n = 0;
  for (let c = 0; c < D; c++) n += s[c] * s[c];
  n = Math.sqrt(n) || 1e-9;
  const u = new Float64Array(D);
  for (let c = 0; c < D; c++) u[c] = s[c] / n;
  return { tok, h, s, u, n };
}

const gM = new Float64Array(D * D);
const gA = new Map<number, number>();
const gD = new Map<number, Float64Array>();
/** Backpropagates dL/du into the parameter gradients. */
function backward(f: Fwd, gu: Float64Array) {
  let dot = 0;
  for (let c = 0; c < D; c++) dot += gu[c] * f.u[c];
  const gs = new Float64Array(D);
  for (let c = 0; c < D; c++) gs[c] = (gu[c] - dot * f.u[c]) / f.n;
  const gh = new Float64Array(D);
  for (let i = 0; i < D; i++) {
    const o = i * D;
    const g = gs[i];
    for (let j = 0; j < D; j++) {
      gM[o + j] += g * f.h[j];
      gh[j] += M[o + j] * g;
    }
  }
  for (const w of f.tok) {
    const o = w * D;
    let ga = 0;
    for (let c = 0; c < D; c++) ga += gh[c] * G[o + c];
    gA.set(w, (gA.get(w) ?? 0) + ga);
    let gd = gD.get(w);
    if (!gd) gD.set(w, (gd = new Float64Array(D)));
    for (let c = 0; c < D; c++) gd[c] += gs[c];
  }
}

let step = 0;
function adamStep() {
  step++;
  const lrM = Number(args['lr-map']),
    lrA = Number(args['lr-weight']),
    lrD = Number(args['lr-delta']),
    l2 = Number(args['l2-delta']);
  const c1 = 1 - b1 ** step,
    c2 = 1 - b2 ** step;
  for (let i = 0; i < D * D; i++) {
    const g = gM[i];
    mM[i] = b1 * mM[i] + (1 - b1) * g;
    vM[i] = b2 * vM[i] + (1 - b2) * g * g;
    M[i] -= (lrM * (mM[i] / c1)) / (Math.sqrt(vM[i] / c2) + eps);
    gM[i] = 0;
  }
  for (const [w, g0] of gA) {
    const g = g0 + 1e-4 * (A[w] - 1);
    mA[w] = b1 * mA[w] + (1 - b1) * g;
    vA[w] = b2 * vA[w] + (1 - b2) * g * g;
    A[w] = Math.max(0, A[w] - (lrA * (mA[w] / c1)) / (Math.sqrt(vA[w] / c2) + eps));
  }
  if (lrD > 0)
    for (const [w, gd] of gD) {
      const o = w * D;
      for (let c = 0; c < D; c++) {
        const g = gd[c] + l2 * Dl[o + c];
        mD[o + c] = b1 * mD[o + c] + (1 - b1) * g;
        vD[o + c] = b2 * vD[o + c] + (1 - b2) * g * g;
        Dl[o + c] -= (lrD * (mD[o + c] / c1)) / (Math.sqrt(vD[o + c] / c2) + eps);
      }
    }
  gA.clear();
  gD.clear();
}

/** One batch of symmetric multi-positive InfoNCE; returns the loss. */
function trainBatch(batch: Item[]): number {
  const cols: number[] = [];
  const colOf = new Map<number, number>();
  const addCol = (t: number) => {
    if (!colOf.has(t)) colOf.set(t, cols.push(t) - 1);
    return colOf.get(t)!;
  };
  const anchor = batch.map((it) => addCol(pick(it.pos)));
  for (const it of batch) if (it.sib.length) addCol(pick(it.sib));
  const qf = batch.map((it) => forward(it.q));
  const tf = cols.map((t) => forward(toolIds[t]));
  const scale = Math.exp(logScale);
  const B = batch.length,
    C = cols.length;
  const logits = new Float64Array(B * C);
  for (let i = 0; i < B; i++)
    for (let j = 0; j < C; j++) {
      let d = 0;
      const a = qf[i].u,
        b = tf[j].u;
      for (let c = 0; c < D; c++) d += a[c] * b[c];
      logits[i * C + j] = scale * d;
    }
  const isPos = (i: number, j: number) => batch[i].pos.includes(cols[j]);
  const pairGrad: [number, number, number][] = [];
  const gLogit = new Float64Array(B * C);
  let loss = 0;
  // request → tools
  for (let i = 0; i < B; i++) {
    let mx = -Infinity;
    for (let j = 0; j < C; j++) mx = Math.max(mx, logits[i * C + j]);
    let z = 0,
      zp = 0;
    const e = new Float64Array(C);
    for (let j = 0; j < C; j++) {
      e[j] = Math.exp(logits[i * C + j] - mx);
      z += e[j];
      if (isPos(i, j)) zp += e[j];
    }
    loss += -Math.log(zp / z) / (2 * B);
    for (let j = 0; j < C; j++) gLogit[i * C + j] += (e[j] / z - (isPos(i, j) ? e[j] / zp : 0)) / (2 * B);
  }
  // "Nothing else": with the request's own tools taken away, a fixed 'none' logit (scale × margin)
  // should beat every other tool. DTDR-G adds 8 × cosine per tool and ends a plan when END's
  // score beats the best uncalled tool, so unrelated tools must stay below an absolute cosine, not
  // just below the right ones.
  const endWeight = Number(args['end-weight']);
  if (endWeight > 0) {
    const l0 = scale * Number(args['end-margin']);
    for (let i = 0; i < B; i++) {
      let mx = l0;
      for (let j = 0; j < C; j++) if (!isPos(i, j)) mx = Math.max(mx, logits[i * C + j]);
      let z = Math.exp(l0 - mx);
      const e0 = z;
      const e = new Float64Array(C);
      for (let j = 0; j < C; j++) if (!isPos(i, j)) z += e[j] = Math.exp(logits[i * C + j] - mx);
      loss += (-Math.log(e0 / z) * endWeight) / B;
      for (let j = 0; j < C; j++) if (e[j] > 0) gLogit[i * C + j] += ((e[j] / z) * endWeight) / B;
    }
  }
  // request → request: other requests sharing a tool are positives (two phrasings of one need).
  const pairWeight = Number(args['pair-weight']);
  if (pairWeight > 0) {
    for (let i = 0; i < B; i++) {
      const same = (k: number) => k !== i && batch[k].pos.some((p) => batch[i].pos.includes(p));
      let any = false;
      for (let k = 0; k < B; k++) if (same(k)) any = true;
      if (!any) continue;
      const l = new Float64Array(B);
      let mx = -Infinity;
      for (let k = 0; k < B; k++)
        if (k !== i) {
          let d = 0;
          for (let c = 0; c < D; c++) d += qf[i].u[c] * qf[k].u[c];
          l[k] = scale * d;
          mx = Math.max(mx, l[k]);
        }
      let z = 0,
        zp = 0;
      const e = new Float64Array(B);
      for (let k = 0; k < B; k++)
        if (k !== i) {
          e[k] = Math.exp(l[k] - mx);
          z += e[k];
          if (same(k)) zp += e[k];
        }
      loss += (-Math.log(zp / z) * pairWeight) / B;
      for (let k = 0; k < B; k++)
        if (k !== i) pairGrad.push([i, k, ((e[k] / z - (same(k) ? e[k] / zp : 0)) * pairWeight) / B]);
    }
  }
  // tool → requests, for each request's anchor positive
  const anchors = [...new Set(anchor)];
  for (const j of anchors) {
    let mx = -Infinity;
    for (let i = 0; i < B; i++) mx = Math.max(mx, logits[i * C + j]);
    let z = 0,
      zp = 0;
    const e = new Float64Array(B);
    for (let i = 0; i < B; i++) {
      e[i] = Math.exp(logits[i * C + j] - mx);
      z += e[i];
      if (isPos(i, j)) zp += e[i];
    }
    loss += -Math.log(zp / z) / (2 * anchors.length);
    for (let i = 0; i < B; i++) gLogit[i * C + j] += (e[i] / z - (isPos(i, j) ? e[i] / zp : 0)) / (2 * anchors.length);
  }
  const gq = qf.map(() => new Float64Array(D));
  const gt = tf.map(() => new Float64Array(D));
  for (const [i, k, g] of pairGrad) {
    const a = qf[i].u,
      b = qf[k].u,
      ga = gq[i],
      gb = gq[k];
    for (let c = 0; c < D; c++) {
      ga[c] += g * scale * b[c];
      gb[c] += g * scale * a[c];
    }
  }
  let gScale = 0;
  for (let i = 0; i < B; i++)
    for (let j = 0; j < C; j++) {
      const g = gLogit[i * C + j];
      if (g === 0) continue;
      gScale += g * logits[i * C + j]; // d logit / d logScale = logit
      const a = qf[i].u,
        b = tf[j].u,
        ga = gq[i],
        gb = gt[j];
      for (let c = 0; c < D; c++) {
        ga[c] += g * scale * b[c];
        gb[c] += g * scale * a[c];
      }
    }
  qf.forEach((f, i) => backward(f, gq[i]));
  tf.forEach((f, j) => backward(f, gt[j]));
  adamStep();
  if (!learnScale) return loss;
  mS = b1 * mS + (1 - b1) * gScale;
  vS = b2 * vS + (1 - b2) * gScale * gScale;
  logScale = Math.min(
    Math.log(100),
    logScale - (0.01 * (mS / (1 - b1 ** step))) / (Math.sqrt(vS / (1 - b2 ** step)) + eps),
  );
  return loss;
}

/** Held-out MRR: each request ranked against all tools of its source. */
function heldOutMrr(): Record<string, number> {
  const vecs = new Map<number, Float64Array>();
  const vec = (t: number) => vecs.get(t) ?? (vecs.set(t, forward(toolIds[t]).u), vecs.get(t)!);
  const pool = new Map<string, number[]>();
  toolKeys.forEach((k, i) => {
    const src = k.slice(0, k.indexOf(':'));
    if (!pool.has(src)) pool.set(src, []);
    pool.get(src)!.push(i);
  });
  const sums: Record<string, [number, number]> = {};
  for (const it of held) {
    const src = toolKeys[it.pos[0]].slice(0, toolKeys[it.pos[0]].indexOf(':'));
    const cands = src.startsWith('bfcl') ? [...it.pos, ...it.sib] : pool.get(src)!;
    const q = forward(it.q).u;
    const score = (t: number) => vec(t).reduce((s, x, c) => s + x * q[c], 0);
    const best = Math.max(...it.pos.map(score));
    const rank = 1 + cands.filter((t) => !it.pos.includes(t) && score(t) > best).length;
    const key = src.startsWith('bfcl') ? 'bfcl' : src;
    sums[key] ??= [0, 0];
    sums[key][0] += 1 / rank;
    sums[key][1]++;
  }
  return Object.fromEntries(Object.entries(sums).map(([k, [s, n]]) => [k, Number((s / n).toFixed(4))]));
}

console.log(
  `corpus: ${items.length} requests (${train.length} train, ${held.length} held out), ${toolKeys.length} tools; vocab ${V}, ${D}-d`,
);
console.log(`held-out MRR before: ${JSON.stringify(heldOutMrr())}`);
const epochs = Number(args.epochs),
  batchSize = Number(args.batch),
  metaPerEpoch = Number(args['metatool-per-epoch']);
const metatool = train.filter((it) => it.src === 'metatool');
const byTool = new Map<number, Item[]>();
for (const it of train) for (const p of it.pos) (byTool.get(p) ?? byTool.set(p, []).get(p)!).push(it);
const rest = train.filter((it) => it.src !== 'metatool');
for (let ep = 1; ep <= epochs; ep++) {
  const epoch = shuffle([...rest, ...shuffle([...metatool]).slice(0, metaPerEpoch)]);
  let loss = 0,
    n = 0;
  // With --pair-weight, half of each batch is partners: another request of the same tool.
  const half = Number(args['pair-weight']) > 0 ? batchSize / 2 : batchSize;
  for (let b = 0; b + half <= epoch.length; b += half) {
    const part = epoch.slice(b, b + half);
    if (half < batchSize)
      for (const it of part.slice()) {
        const others = byTool.get(it.pos[0])!;
        part.push(others.length > 1 ? pick(others.filter((o) => o !== it)) : pick(epoch));
      }
    loss += trainBatch(part);
    n++;
  }
  console.log(
    `epoch ${ep}: loss ${(loss / n).toFixed(4)}, scale ${Math.exp(logScale).toFixed(1)}, ${((Date.now() - started) / 1000).toFixed(0)} s${ep % 4 === 0 || ep === epochs ? `, held-out MRR ${JSON.stringify(heldOutMrr())}` : ''}`,
  );
}
const trainSeconds = (Date.now() - started) / 1000;

// ---- bake e_w = a_w · M g_w + δ_w and write the folder ----
// --wise α < 1 writes (1 − α) g_w + α e_w instead: weight-space ensembling of the GloVe start and
// the fine-tuned rows (WiSE-FT, Wortsman et al. 2022), which keeps more of GloVe's sentence
// similarity (demonstration neighbours, paraphrases) at some cost in request → tool ranking.
const wise = Number(args.wise);
const table = new Float32Array(V * D);
for (let w = 2; w < V; w++) {
  for (let i = 0; i < D; i++) {
    let acc = 0;
    for (let j = 0; j < D; j++) acc += M[i * D + j] * G[w * D + j];
    table[w * D + i] = (1 - wise) * G[w * D + i] + wise * (A[w] * acc + Dl[w * D + i]);
  }
}
const out = resolve(args.out);
mkdirSync(join(out, 'onnx'), { recursive: true });
const weightFile = args.fp32 ? 'onnx/model.onnx' : 'onnx/model_quantized.onnx';
const files: Record<string, Uint8Array | string> = {
  'config.json':
    JSON.stringify(
      { model_type: 'bert', hidden_size: D, 'transformers.js_config': { dtype: args.fp32 ? 'fp32' : 'q8' } },
      null,
      2,
    ) + '\n',
  'tokenizer.json': tokenizerText,
  'tokenizer_config.json': readFileSync(join(baseDir, 'tokenizer_config.json'), 'utf8'),
  [weightFile]: buildModel(table, V, D, !args.fp32),
};
const sha256: Record<string, string> = {};
for (const [name, content] of Object.entries(files)) {
  writeFileSync(join(out, name), content);
  sha256[name] = createHash('sha256').update(content).digest('hex');
}
const card = JSON.parse(readFileSync(join(corpusDir, 'card.json'), 'utf8')) as Record<string, unknown>;
const manifest = {
  name: args.name ?? basename(out),
  base: {
    name: 'dtdr-glove-100d',
    sha256: JSON.parse(readFileSync(join(baseDir, 'manifest.json'), 'utf8')).sha256[
      weightFile === 'onnx/model.onnx' ? 'onnx/model_quantized.onnx' : weightFile
    ],
  },
  training: {
    script: 'scripts/build/train-tool-encoder.ts',
    corpus: {
      script: 'scripts/build/tool-corpus.ts',
      requests: items.length,
      tools: toolKeys.length,
      sources: card.sources,
      kept: card.kept,
      removedAsEvaluationText: card.removedAsEvaluationText,
    },
    options: Object.fromEntries(Object.entries(args).filter(([k]) => !['corpus', 'base', 'out', 'name'].includes(k))),
    heldOutMrr: heldOutMrr(),
    seconds: Math.round(trainSeconds),
    machine: '2 shared cores, Node 20, single thread',
  },
  words: V - 2,
  dimension: D,
  dtype: args.fp32 ? 'fp32' : 'q8',
  sha256,
};
writeFileSync(join(out, 'manifest.json'), JSON.stringify(manifest, null, 2) + '\n');
console.log(`wrote ${out} in ${trainSeconds.toFixed(0)} s of training`);

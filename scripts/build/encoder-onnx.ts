/**
 * The ONNX graph and tokenizer of dtdr's static word-embedding encoders, shared by
 * scripts/build/encoder.ts (GloVe) and scripts/build/train-tool-encoder.ts (the tool-retrieval encoder):
 * gather rows → dequantise → mask, so the same loader runs both unchanged.
 */
import onnxProto from 'onnx-proto';

const { onnx } = onnxProto;

function tensor(name: string, dataType: number, dims: number[], raw: Uint8Array) {
  return onnx.TensorProto.create({ name, dataType, dims, rawData: raw });
}

function bytes(view: ArrayBufferView): Uint8Array {
  return new Uint8Array(view.buffer, view.byteOffset, view.byteLength);
}

function valueInfo(name: string, elemType: number, dims: (string | number)[]) {
  return onnx.ValueInfoProto.create({
    name,
    type: {
      tensorType: {
        elemType,
        shape: { dim: dims.map((d) => (typeof d === 'string' ? { dimParam: d } : { dimValue: d })) },
      },
    },
  });
}

function node(opType: string, inputs: string[], outputs: string[], attribute: object[] = []) {
  return onnx.NodeProto.create({ opType, input: inputs, output: outputs, name: outputs[0], attribute });
}

/**
 * last_hidden_state[b,s,:] = table[input_ids[b,s]] * attention_mask[b,s]; the pipeline's mean
 * pooling and L2 normalisation then turn it into a sentence vector. The int8 variant stores one
 * scale per row and dequantises after the gather, so only the looked-up rows are widened.
 */
export function buildModel(table: Float32Array, vocab: number, dim: number, quantize: boolean): Uint8Array {
  const T = onnx.TensorProto.DataType;
  const nodes = [];
  const initializers = [];
  nodes.push(node('Cast', ['attention_mask'], ['mask_f'], [{ name: 'to', type: 2, i: T.FLOAT }]));
  if (quantize) {
    const q = new Int8Array(vocab * dim);
    const scales = new Float32Array(vocab);
    for (let r = 0; r < vocab; r++) {
      let max = 0;
      for (let c = 0; c < dim; c++) max = Math.max(max, Math.abs(table[r * dim + c]));
      const scale = max / 127;
      scales[r] = scale;
      for (let c = 0; c < dim; c++) q[r * dim + c] = scale === 0 ? 0 : Math.round(table[r * dim + c] / scale);
    }
    initializers.push(tensor('embeddings_q', T.INT8, [vocab, dim], bytes(q)));
    initializers.push(tensor('row_scales', T.FLOAT, [vocab], bytes(scales)));
    nodes.push(node('Gather', ['embeddings_q', 'input_ids'], ['rows_q']));
    nodes.push(node('Cast', ['rows_q'], ['rows'], [{ name: 'to', type: 2, i: T.FLOAT }]));
    nodes.push(node('Gather', ['row_scales', 'input_ids'], ['scale']));
    nodes.push(node('Mul', ['scale', 'mask_f'], ['weight']));
  } else {
    initializers.push(tensor('embeddings', T.FLOAT, [vocab, dim], bytes(table)));
    nodes.push(node('Gather', ['embeddings', 'input_ids'], ['rows']));
    nodes.push(node('Identity', ['mask_f'], ['weight']));
  }
  initializers.push(tensor('last_axis', T.INT64, [1], bytes(new BigInt64Array([-1n]))));
  nodes.push(node('Unsqueeze', ['weight', 'last_axis'], ['weight3']));
  nodes.push(node('Mul', ['rows', 'weight3'], ['last_hidden_state']));
  const model = onnx.ModelProto.create({
    irVersion: 8,
    producerName: 'dtdr build-encoder',
    opsetImport: [{ domain: '', version: 13 }],
    graph: {
      name: 'static_word_embeddings',
      node: nodes,
      initializer: initializers,
      input: [
        valueInfo('input_ids', T.INT64, ['batch', 'sequence']),
        valueInfo('attention_mask', T.INT64, ['batch', 'sequence']),
      ],
      output: [valueInfo('last_hidden_state', T.FLOAT, ['batch', 'sequence', dim])],
    },
  });
  return onnx.ModelProto.encode(model).finish();
}

export function tokenizerJson(words: string[]) {
  const vocab: Record<string, number> = { '[PAD]': 0, '[UNK]': 1 };
  words.forEach((w, i) => (vocab[w] = i + 2));
  const special = (id: number, content: string) => ({
    id,
    content,
    single_word: false,
    lstrip: false,
    rstrip: false,
    normalized: false,
    special: true,
  });
  return {
    version: '1.0',
    truncation: null,
    padding: null,
    added_tokens: [special(0, '[PAD]'), special(1, '[UNK]')],
    normalizer: { type: 'Sequence', normalizers: [{ type: 'NFD' }, { type: 'StripAccents' }, { type: 'Lowercase' }] },
    pre_tokenizer: { type: 'BertPreTokenizer' },
    post_processor: null,
    decoder: null,
    model: { type: 'WordLevel', vocab, unk_token: '[UNK]' },
  };
}

/** The float table of an encoder written by buildModel (int8 rows times their scales, or fp32). */
export function readTable(model: Uint8Array): { table: Float32Array; vocab: number; dim: number } {
  const m = onnx.ModelProto.decode(model);
  const init = new Map(m.graph!.initializer!.map((t) => [t.name!, t]));
  const raw = (name: string) => {
    const t = init.get(name)!;
    const r = t.rawData!;
    return { dims: t.dims!.map(Number), buf: r.buffer.slice(r.byteOffset, r.byteOffset + r.byteLength) };
  };
  if (init.has('embeddings')) {
    const { dims, buf } = raw('embeddings');
    return { table: new Float32Array(buf), vocab: dims[0], dim: dims[1] };
  }
  const { dims, buf } = raw('embeddings_q');
  const q = new Int8Array(buf);
  const scales = new Float32Array(raw('row_scales').buf);
  const [vocab, dim] = dims;
  const table = new Float32Array(vocab * dim);
  for (let r = 0; r < vocab; r++) for (let c = 0; c < dim; c++) table[r * dim + c] = q[r * dim + c] * scales[r];
  return { table, vocab, dim };
}

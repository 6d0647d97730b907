/**
 * What `import { Dtdr, loadEncoder } from 'dtdr'` adds to a browser app: esbuild bundles it from the
 * built browser entry (dist/index.js; run `npm run build` first), minified, with ONNX Runtime, the
 * tokenizer and transformers.js external (an app loads those anyway, and they are not dtdr's code).
 * Prints the size, gzipped size and the largest inputs; exits 1 past the budget, so the bundle
 * cannot grow unnoticed. CI runs it.
 *
 *   npm run check -- bundle-size [--top N]
 */
import { build } from 'esbuild';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';

/** Minified bytes allowed. The aim is 150 KB; this budget is what the bundle holds now, so it only shrinks. */
const BUDGET_KB = 210;
/** Gzipped bytes allowed (what a browser downloads): the same ratchet. */
const BUDGET_GZIP_KB = 77;
const ROOT = join(import.meta.dirname, '../..');
const entry = join(ROOT, 'dist/index.js');
if (!existsSync(entry)) {
  console.error('bundle-size: dist/index.js is missing: run `npm run build` first');
  process.exit(1);
}
const topArg = process.argv.indexOf('--top');
const top = topArg > 0 ? Number(process.argv[topArg + 1]) : 12;

const result = await build({
  stdin: {
    contents: `import { Dtdr, loadEncoder } from ${JSON.stringify(entry)};\nglobalThis.dtdr = { Dtdr, loadEncoder };\n`,
    resolveDir: ROOT,
    loader: 'js',
  },
  bundle: true,
  minify: true,
  platform: 'browser',
  format: 'esm',
  write: false,
  metafile: true,
  logLevel: 'error',
  external: ['onnxruntime-web', 'onnxruntime-common', '@huggingface/tokenizers', '@huggingface/transformers'],
});
const code = result.outputFiles[0].contents;
const gzipped = gzipSync(code).length;
const kb = (bytes: number) => `${(bytes / 1000).toFixed(1)} KB`;
console.log(`import { Dtdr, loadEncoder } from 'dtdr' (browser, minified): ${kb(code.length)}, ${kb(gzipped)} gzipped`);
const inputs = Object.entries(Object.values(result.metafile.outputs)[0].inputs)
  .map(([path, { bytesInOutput }]) => [bytesInOutput, path.replace(/^.*?(dist|node_modules)\//, '$1/')] as const)
  .sort((a, b) => b[0] - a[0]);
console.log(`largest of ${inputs.length} inputs:`);
for (const [bytes, path] of inputs.slice(0, top)) console.log(`  ${kb(bytes).padStart(9)}  ${path}`);
if (code.length > BUDGET_KB * 1000 || gzipped > BUDGET_GZIP_KB * 1000) {
  console.error(
    `bundle-size: ${kb(code.length)} (${kb(gzipped)} gzipped) is over the budget of ${BUDGET_KB} KB (${BUDGET_GZIP_KB} KB gzipped)`,
  );
  process.exit(1);
}

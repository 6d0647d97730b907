/**
 * What `import { Dtdr, loadEncoder } from 'dtdr'` adds to a browser app: esbuild bundles it from the
 * built browser entry (dist/index.js; run `npm run build` first), minified, split into chunks as an
 * app's bundler would, with ONNX Runtime, the tokenizer and transformers.js external (an app loads
 * those anyway, and they are not dtdr's code).
 *
 * Prints what loads up front (the entry chunk and what it imports statically: enough to load a
 * model and retrieve) and what loads on demand (DTDR-G's training code on the first train or learn;
 * transformers.js glue for hub ids), with the largest inputs of each. Exits 1 when the up-front part
 * is past its budget, when the whole is past its own, when a paper method or baseline is in the
 * bundle at all (they come with `dtdr/methods`), or when the refit worker's graph holds a dynamic
 * import (a classic worker cannot be split). CI runs it.
 *
 *   npm run check -- bundle-size [--top N] [--results docs/results.json]
 */
import { build } from 'esbuild';
import { existsSync, mkdirSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { writeResultsTable } from '../bench/results.js';

/** Minified bytes loaded up front (the line: ≤ 150 KB). */
const UP_FRONT_KB = 150;
/**
 * Gzipped bytes loaded up front (what a browser downloads before the first retrieval): a ratchet. 59 from 58 for the
 * fill of a widened set the cap stops short (select.ts: one `hedged` for both paths).
 */
const UP_FRONT_GZIP_KB = 59;
/**
 * Minified bytes of every chunk together (up front + on demand): a ratchet, so the whole cannot grow unnoticed.
 * 193 from 192 for the gate's prior (ExperimentalGatedSettings.priorSteps: its setting, checks and pull); 194 for
 * the bound on one learn call's head-column training (head-columns.ts: which columns, which steps); 195 for a slice
 * kept until the next fit (calibrate-step.ts, state.ts: sliceAtFit, its check and its cause); 196 for a loaded
 * file's group thresholds recomputed from its saved scores (state.ts: older files get the confident groups' threshold).
 */
const TOTAL_KB = 196;
/** Code that must not be in an app's bundle unless it imports `dtdr/methods`. */
const PAPER_METHOD_FILES = ['paper-methods.js', 'cluster.js', 'cold-start.js', 'learned.js', 'baselines.js'];
const ROOT = join(import.meta.dirname, '../..');
const entry = join(ROOT, 'dist/index.js');
if (!existsSync(entry)) {
  console.error('bundle-size: dist/index.js is missing: run `npm run build` first');
  process.exit(1);
}
const topArg = process.argv.indexOf('--top');
const top = topArg > 0 ? Number(process.argv[topArg + 1]) : 12;
const external = ['onnxruntime-web', 'onnxruntime-common', '@huggingface/tokenizers', '@huggingface/transformers'];
const failures: string[] = [];

const result = await build({
  stdin: {
    contents: `import { Dtdr, loadEncoder } from ${JSON.stringify(entry)};\nglobalThis.dtdr = { Dtdr, loadEncoder };\n`,
    resolveDir: ROOT,
    loader: 'js',
  },
  bundle: true,
  minify: true,
  splitting: true,
  outdir: join(ROOT, '.cache/bundle-size'),
  platform: 'browser',
  format: 'esm',
  write: false,
  metafile: true,
  logLevel: 'error',
  external,
});
const outputs = result.metafile.outputs;
const bytesOf = new Map(result.outputFiles.map((f) => [f.path.slice(ROOT.length + 1), f.contents]));
const entryChunk = Object.keys(outputs).find((name) => outputs[name].entryPoint !== undefined)!;
// Up front: the entry chunk and every chunk reachable from it by static imports.
const upFront = new Set<string>();
for (const stack = [entryChunk]; stack.length > 0;) {
  const name = stack.pop()!;
  if (upFront.has(name)) continue;
  upFront.add(name);
  for (const i of outputs[name].imports) if (i.kind === 'import-statement' && outputs[i.path]) stack.push(i.path);
}
const onDemand = Object.keys(outputs).filter((name) => !upFront.has(name) && !name.endsWith('.map'));

const kb = (bytes: number) => `${(bytes / 1000).toFixed(1)} KB`;
const sum = (names: Iterable<string>) => [...names].reduce((n, name) => n + outputs[name].bytes, 0);
const gzipOf = (names: Iterable<string>) =>
  [...names].reduce((n, name) => n + gzipSync(bytesOf.get(name) ?? new Uint8Array()).length, 0);
const upBytes = sum(upFront);
const upGzip = gzipOf(upFront);
const total = upBytes + sum(onDemand);
console.log(`import { Dtdr, loadEncoder } from 'dtdr' (browser, minified, split as an app's bundler would):`);
console.log(`  up front (load a model, retrieve): ${kb(upBytes)}, ${kb(upGzip)} gzipped`);
for (const name of onDemand) {
  const inputs = Object.keys(outputs[name].inputs).map((p) => p.replace(/^.*?(dist|node_modules)\//, ''));
  const what = inputs.some((p) => p.endsWith('default/training.js')) ? "DTDR-G's training" : inputs.join(', ');
  console.log(`  on demand: ${kb(outputs[name].bytes)} (${what})`);
}
console.log(`  all chunks: ${kb(total)} (${total} bytes)`);

function largest(names: Iterable<string>): [number, string][] {
  return [...names]
    .flatMap((name) => Object.entries(outputs[name].inputs))
    .map(
      ([path, { bytesInOutput }]) =>
        [bytesInOutput, path.replace(/^.*?(dist|node_modules)\//, '$1/')] as [number, string],
    )
    .sort((a, b) => b[0] - a[0]);
}
const inputsUp = largest(upFront);
console.log(`largest of ${inputsUp.length} inputs up front:`);
for (const [bytes, path] of inputsUp.slice(0, top)) console.log(`  ${kb(bytes).padStart(9)}  ${path}`);

const everyInput = [...inputsUp, ...largest(onDemand)].filter(([bytes]) => bytes > 0).map(([, path]) => path);
const paper = everyInput.filter((path) => PAPER_METHOD_FILES.some((f) => path.endsWith(`/retrieval/${f}`)));
if (paper.length > 0) failures.push(`the paper's methods are in the bundle without dtdr/methods: ${paper.join(', ')}`);
if (upBytes > UP_FRONT_KB * 1000 || upGzip > UP_FRONT_GZIP_KB * 1000)
  failures.push(
    `up front ${kb(upBytes)} (${kb(upGzip)} gzipped) is over ${UP_FRONT_KB} KB (${UP_FRONT_GZIP_KB} KB gzipped)`,
  );
if (total > TOTAL_KB * 1000) failures.push(`all chunks ${kb(total)} are over ${TOTAL_KB} KB`);

// An app that imports `dtdr/methods` by the package's name gets them: its side effect survives the
// package's `sideEffects` list (a bundler drops a bare import of a module the list does not name).
const app = join(ROOT, '.cache/bundle-size/app');
mkdirSync(join(app, 'node_modules'), { recursive: true });
rmSync(join(app, 'node_modules/dtdr'), { force: true });
symlinkSync(ROOT, join(app, 'node_modules/dtdr'), 'dir');
const withMethods = await build({
  stdin: {
    contents: `import 'dtdr/methods';\nimport { Dtdr } from 'dtdr';\nglobalThis.D = Dtdr;\n`,
    resolveDir: app,
    loader: 'js',
  },
  bundle: true,
  platform: 'browser',
  format: 'esm',
  write: false,
  metafile: true,
  logLevel: 'error',
  nodePaths: [join(ROOT, 'node_modules')],
  external,
});
const registered = Object.values(withMethods.metafile.outputs).some((output) =>
  Object.entries(output.inputs).some(
    ([path, { bytesInOutput }]) => path.endsWith('retrieval/paper-methods.js') && bytesInOutput > 0,
  ),
);
console.log(
  `import 'dtdr/methods' (by the package's name): the paper's methods ${registered ? 'are' : 'are NOT'} bundled`,
);
if (!registered)
  failures.push("import 'dtdr/methods' is dropped by the bundler: list it in package.json's sideEffects");

// The refit worker fits every job: its training code is imported, and nothing in it is loaded on demand.
const worker = await build({
  entryPoints: [join(ROOT, 'dist/workers/refit-web-worker.js')],
  bundle: true,
  minify: true,
  platform: 'browser',
  format: 'iife',
  write: false,
  metafile: true,
  logLevel: 'error',
  external,
});
const dynamic = Object.entries(worker.metafile.inputs).flatMap(([path, input]) =>
  input.imports.filter((i) => i.kind === 'dynamic-import').map((i) => `${path} → ${i.path}`),
);
console.log(
  `refit worker (classic, iife): ${kb(worker.outputFiles[0].contents.length)}, ${dynamic.length} dynamic imports`,
);
if (dynamic.length > 0) failures.push(`the refit worker's graph holds dynamic imports: ${dynamic.join('; ')}`);

const resultsArg = process.argv.indexOf('--results');
// The docs' table (docs/browser-and-mobile.md) must say what the bundle weighs now, within 2%.
const documented = (
  JSON.parse(readFileSync(join(ROOT, 'docs/results.json'), 'utf8')) as {
    tables: Record<string, { rows: string[][] } | undefined>;
  }
).tables['bundle-size']?.rows[0]?.[1];
if (resultsArg < 0 && !(documented && Math.abs(parseFloat(documented) * 1000 - upBytes) <= 0.02 * upBytes))
  failures.push(
    `docs/results.json says ${documented ?? 'nothing'} up front, the bundle is ${kb(upBytes)}: ` +
      'run `npm run check -- bundle-size --results docs/results.json` and `npm run check -- docs-results`',
  );
if (resultsArg > 0) {
  const gz = (names: Iterable<string>) => kb(gzipOf(names));
  const part = (name: string) => {
    const inputs = Object.keys(outputs[name].inputs);
    if (inputs.some((p) => p.endsWith('default/training.js')))
      return "on DTDR-G's first `Dtdr.train`, `learn` or `forget`: its fit, calibration and online learning";
    if (inputs.some((p) => p.endsWith('model/learn-forget.js')))
      return 'on the first `learn` or `forget`: those two themselves';
    if (inputs.some((p) => p.endsWith('encoders/hub.js'))) return '`loadEncoder` with a hub id: transformers.js glue';
    return inputs.map((p) => p.replace(/^.*?dist\//, '')).join(', ');
  };
  writeResultsTable(process.argv[resultsArg + 1], 'bundle-size', {
    title: "What `import { Dtdr, loadEncoder } from 'dtdr'` loads in a browser app, and when",
    command: 'npm run check -- bundle-size --results docs/results.json',
    columns: ['when', 'minified', 'gzipped'],
    align: ['left', 'right', 'right'],
    rows: [
      ['up front: load a model and retrieve', kb(upBytes), kb(upGzip)],
      ...onDemand.map((name) => [part(name), kb(outputs[name].bytes), gz([name])]),
      ['all of it', kb(total), gz([...upFront, ...onDemand])],
      [
        'the refit worker (`dtdr/refit-worker`, a classic worker: its training code included)',
        kb(worker.outputFiles[0].contents.length),
        kb(gzipSync(worker.outputFiles[0].contents).length),
      ],
    ],
  });
}

for (const failure of failures) console.error(`bundle-size: ${failure}`);
process.exit(failures.length > 0 ? 1 : 0);

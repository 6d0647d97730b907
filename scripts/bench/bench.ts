/**
 * npm run bench [-- --json bench.json --svg docs/images/bench.svg --tools 260,4000,16000
 *                  --plans 5000 --fit-plans 1000,10000,100000 --methods a,b --passes 3 --no-real
 *                  --app-tools 16000 --app-plans 20000 --app-methods dtdr-g,dtdr-c,dr,bm25 --app-processes 3 --no-app
 *                  --results docs/results.json]   (its tables and figure: scripts/bench/results.ts)
 * npm run bench -- --from bench.json --results docs/results.json   (a saved run into the results file)
 *
 * What dtdr costs, in one run (medians: this machine is shared and timings are noisy):
 * - the encoders: one short text unbatched and uncached (a step's real pattern), and batched
 *   throughput, for the default encoder and each of --encoders (default: the tool-retrieval
 *   encoder models/dtdr-tool-100d); --encoders-only stops after them;
 * - real data (the demo set, and UltraTool when ../shared/data is there): per method, the rank +
 *   candidate set µs/step (median and p99 over the test steps) and its ratio to DR timed in the
 *   same process — one process per method (scripts/bench/rank.ts), as an app runs one method;
 * - scale: seeded synthetic tool worlds (test/worlds/synthetic.ts: Zipf-popular tools, plans of 1–4
 *   calls) at each --tools size with --plans demonstrations: rank µs/step median and p99, × DR, fit;
 * - fit against demonstrations (260 tools): each method fitted at each --fit-plans size in its own
 *   process, for its fit time, peak resident memory and binary artifact size.
 * - the app-scale world (test/worlds/app-world.ts: 16,000 Zipf-popular tools, 2,000 workflow
 *   templates, 20,000 demonstrations, 2,000 test plans), default settings (heads 8 epochs): per method
 *   in its own process (--app-processes of them, the one with the median ratio to DR reported), fit
 *   seconds, peak resident memory and rank µs/step; then the wall time of
 *   the real CLI, `dtdr eval --train … --methods default,dr,bm25,dtdr-c`, on the world's folders.
 * Heads train 1 epoch in the synthetic runs (ranking cost does not depend on it). Writes a JSON file
 * and an SVG plot of cost against scale (docs/results.md's).
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { parseArgs } from 'node:util';
import { usesWasmKernel } from '../../src/core/retrieval/kernels/wasm-kernel.js';
import type { MethodName } from '../../src/core/retrieval/types.js';
import { METHODS } from '../../src/core/retrieval/methods.js';
import { demoDataset } from '../../src/demo/toolset.js';
import { loadEncoder } from '../../src/encoders/node.js';
import { median, quantile } from './stats.js';
import { writeBenchResults, type BenchResult } from './results.js';

const { values } = parseArgs({
  options: {
    json: { type: 'string', default: '.cache/bench.json' },
    svg: { type: 'string', default: 'docs/images/bench.svg' },
    tools: { type: 'string', default: '260,4000,16000' },
    plans: { type: 'string', default: '5000' },
    'fit-plans': { type: 'string', default: '1000,10000,100000' },
    methods: { type: 'string' },
    passes: { type: 'string', default: '3' },
    'no-real': { type: 'boolean' },
    encoders: { type: 'string', default: 'models/dtdr-tool-100d' },
    'encoders-only': { type: 'boolean' },
    'app-tools': { type: 'string', default: '16000' },
    'app-plans': { type: 'string', default: '20000' },
    'app-methods': { type: 'string', default: 'dtdr-g,dtdr-c,dr,bm25' },
    'no-app': { type: 'boolean' },
    // Processes per method at app scale: one process's median swings by a third with the machine's state.
    'app-processes': { type: 'string', default: '3' },
    // docs/results.json: the bench's tables and figure are replaced (scripts/bench/results.ts).
    results: { type: 'string' },
    // A saved run (--json's file) rendered into --results, without running anything.
    from: { type: 'string' },
  },
});
if (values.from) {
  if (!values.results) throw new Error('--from needs --results FILE');
  writeBenchResults(JSON.parse(readFileSync(values.from, 'utf8')) as BenchResult, values.results);
  console.log(`wrote the bench tables of ${values.from} into ${values.results}`);
  process.exit(0);
}
const methods = (values.methods?.split(',') ?? METHODS) as MethodName[];

interface RankRow {
  world: string;
  tools: number;
  plans: number;
  steps: number;
  method: MethodName;
  fitMs: number;
  medianMicros: number;
  p99Micros: number;
  drMicros: number;
  ratioToDr: number;
}
interface FitRow {
  method: MethodName;
  plans: number;
  tools: number;
  fitMs: number;
  peakBytes: number;
  artifactBytes: number;
}
interface EncoderRow {
  singleTextMicros: number;
  singleTextP99Micros: number;
  singleTextMeanMicros: number;
  textsPerSecond: number;
}
interface AppRow {
  method: MethodName;
  tools: number;
  plans: number;
  fitMs: number;
  peakBytes: number;
  medianMicros: number;
  p99Micros: number;
  ratioToDr: number;
  processes: number;
  firstMicros: number;
  laterMicros: number;
}
interface AppEval {
  methods: string;
  wallSeconds: number;
  steps: number;
  results: Record<string, { mrr: number; coverage: number; setSize: number; fitMs: number; rankMicrosPerStep: number }>;
}
const result: {
  app?: AppRow[];
  appEval?: AppEval;
  machine: string;
  kernel: string;
  encoder?: EncoderRow;
  encoders: Record<string, EncoderRow>;
  rank: RankRow[];
  fit: FitRow[];
} = {
  machine: `${process.platform} ${process.arch}, Node ${process.version}`,
  kernel: usesWasmKernel() ? 'WebAssembly SIMD' : 'JavaScript',
  encoders: {},
  rank: [],
  fit: [],
};

const encoder = await loadEncoder({ cacheSize: 0 });

// ---------------------------------------------------------------- encoder
async function timeEncoder(encoder: Awaited<ReturnType<typeof loadEncoder>>): Promise<EncoderRow> {
  const texts = demoDataset(600).plans.map((p) => p.query);
  // Each call timed alone, as rank steps are: the median is a call's typical cost; the mean
  // carries the tail (garbage collection, this shared machine's pauses), reported beside it.
  const single: number[] = [];
  for (const t of texts.slice(300)) await encoder.embed([t]); // warm-up: the first few hundred calls run before the JIT has compiled the tokenizer
  for (let pass = 0; pass < 5; pass++) {
    for (const t of texts.slice(0, 300)) {
      const t0 = performance.now();
      await encoder.embed([t]);
      single.push((performance.now() - t0) * 1000);
    }
  }
  const started = performance.now();
  await encoder.embed(texts);
  const e: EncoderRow = {
    singleTextMicros: median(single),
    singleTextP99Micros: quantile(single, 0.99),
    singleTextMeanMicros: single.reduce((a, b) => a + b, 0) / single.length,
    textsPerSecond: texts.length / ((performance.now() - started) / 1000),
  };
  console.log(
    `encoder ${encoder.id}: one short text (unbatched, uncached) median ${e.singleTextMicros.toFixed(0)} µs, p99 ${e.singleTextP99Micros.toFixed(0)}, mean ${e.singleTextMeanMicros.toFixed(0)}; ${e.textsPerSecond.toFixed(0)} texts/s batched`,
  );
  return e;
}
result.encoder = await timeEncoder(encoder);
result.encoders[encoder.id] = result.encoder;
for (const model of values.encoders ? values.encoders.split(',').filter((m) => m && existsSync(m)) : []) {
  const other = await loadEncoder({ model, cacheSize: 0 });
  result.encoders[other.id] = await timeEncoder(other);
  await other.dispose?.();
}
console.log(`matrix kernel: ${result.kernel}`);
if (values['encoders-only']) {
  mkdirSync(dirname(values.json), { recursive: true });
  writeFileSync(values.json, JSON.stringify(result, null, 2));
  process.exit(0);
}

// ---------------------------------------------------------------- rank per step
/** Runs a bench helper script in its own process and parses the JSON line it prints. */
function child<T>(script: string, args: string[]): T {
  const out = execFileSync(process.execPath, ['--import', 'tsx', new URL(script, import.meta.url).pathname, ...args], {
    encoding: 'utf8',
    maxBuffer: 1 << 20,
  });
  return JSON.parse(out.trim().split('\n').at(-1)!) as T;
}

function rankWorld(world: string, label: string) {
  console.log(`\n${label}\nmethod     fit s    µs/step median    p99     × DR (same process)`);
  for (const method of methods) {
    try {
      const row = child<RankRow & { world: string }>('./rank.ts', [world, method, values.plans, values.passes]);
      row.world = label;
      result.rank.push(row);
      console.log(
        `${method.padEnd(9)} ${(row.fitMs / 1000).toFixed(2).padStart(6)}   ${row.medianMicros.toFixed(1).padStart(10)}   ${row.p99Micros.toFixed(0).padStart(8)}   ${row.ratioToDr.toFixed(2)}`,
      );
    } catch (error) {
      console.log(
        `${method.padEnd(9)} failed: ${error instanceof Error ? error.message.split('\n')[0] : String(error)}`,
      );
    }
  }
}

if (!values['no-real']) {
  rankWorld('demo', 'demo set (27 tools, 2,100 demonstrations)');
  if (existsSync(new URL('../../../shared/data/ultratool/data.jsonl', import.meta.url)))
    rankWorld('ultratool', 'UltraTool (260 tools, 3,027 demonstrations, official split)');
  else console.log('\n(../shared/data/ultratool is absent: the real-data rows are skipped)');
}
// `--tools 0` or `--fit-plans 0` skips that part (a quick run of the rest).
for (const tools of values.tools
  .split(',')
  .map(Number)
  .filter((t) => t > 0))
  rankWorld(
    `synthetic:${tools}`,
    `synthetic ${tools} (${tools.toLocaleString('en')} tools, ${Number(values.plans).toLocaleString('en')} plans, 2% held out, heads 1 epoch)`,
  );

// ---------------------------------------------------------------- fit against demonstrations
console.log(
  '\nfit at 260 tools (each in its own process)\nmethod     demonstrations   fit s   peak RSS MiB   artifact KiB',
);
for (const plans of values['fit-plans']
  .split(',')
  .map(Number)
  .filter((p) => p > 0)) {
  for (const method of methods) {
    try {
      const row = child<FitRow>('./fit.ts', [method, String(plans)]);
      result.fit.push(row);
      console.log(
        `${method.padEnd(9)}  ${String(plans).padStart(14)}   ${(row.fitMs / 1000).toFixed(2).padStart(6)}   ${(row.peakBytes / 2 ** 20).toFixed(0).padStart(12)}   ${(row.artifactBytes / 1024).toFixed(0).padStart(12)}`,
      );
    } catch (error) {
      console.log(
        `${method.padEnd(9)}  ${String(plans).padStart(14)}   failed: ${error instanceof Error ? error.message.split('\n')[0] : String(error)}`,
      );
    }
  }
}

// ---------------------------------------------------------------- the app-scale world
if (!values['no-app']) {
  const [appTools, appPlans] = [values['app-tools'], values['app-plans']];
  console.log(
    `\napp-scale world (test/worlds/app-world.ts: ${Number(appTools).toLocaleString('en')} tools, ${Number(appPlans).toLocaleString('en')} demonstrations, 2,000 test plans; default settings, heads 8 epochs; each method in its own process)`,
  );
  console.log('method     fit s   peak RSS MiB   µs/step median    p99     × DR   first step   later steps');
  result.app = [];
  for (const method of values['app-methods'].split(',') as MethodName[]) {
    try {
      // The process whose ratio to DR is the median of --app-processes runs (its own figures, not a mix).
      const runs = Array.from({ length: Math.max(1, Number(values['app-processes'])) }, () =>
        child<AppRow>('./rank.ts', [`app:${appTools}`, method, appPlans, values.passes]),
      ).sort((a, b) => a.ratioToDr - b.ratioToDr);
      const row = runs[(runs.length - 1) >> 1];
      result.app.push({
        method,
        tools: row.tools,
        plans: row.plans,
        fitMs: row.fitMs,
        peakBytes: row.peakBytes,
        medianMicros: row.medianMicros,
        p99Micros: row.p99Micros,
        ratioToDr: row.ratioToDr,
        processes: runs.length,
        firstMicros: row.firstMicros,
        laterMicros: row.laterMicros,
      });
      console.log(
        `${method.padEnd(9)} ${(row.fitMs / 1000).toFixed(2).padStart(6)}   ${(row.peakBytes / 2 ** 20).toFixed(0).padStart(12)}   ${row.medianMicros.toFixed(1).padStart(14)}   ${row.p99Micros.toFixed(0).padStart(6)}   ${row.ratioToDr.toFixed(2)}   ${row.firstMicros.toFixed(1).padStart(10)}   ${row.laterMicros.toFixed(1).padStart(11)}`,
      );
    } catch (error) {
      console.log(
        `${method.padEnd(9)} failed: ${error instanceof Error ? error.message.split('\n')[0] : String(error)}`,
      );
    }
  }
  // The eval line: the real CLI (dist/, built by npm install) on the world written as dataset folders.
  const folder = '.cache/app-world';
  execFileSync(
    process.execPath,
    [
      '--import',
      'tsx',
      new URL('../../test/worlds/app-world.ts', import.meta.url).pathname,
      folder,
      appTools,
      '2000',
      appPlans,
      '2000',
    ],
    { encoding: 'utf8' },
  );
  const evalMethods = 'default,dr,bm25,dtdr-c';
  if (existsSync(new URL('../../dist/cli/main.js', import.meta.url))) {
    const started = performance.now();
    const out = execFileSync(
      process.execPath,
      [
        new URL('../../bin/dtdr.js', import.meta.url).pathname,
        'eval',
        '--data',
        `${folder}/test`,
        '--train',
        `${folder}/train`,
        '--methods',
        evalMethods,
        '--json',
      ],
      { encoding: 'utf8', maxBuffer: 1 << 24 },
    );
    const wallSeconds = (performance.now() - started) / 1000;
    const parsed = JSON.parse(out.trim().split('\n').at(-1)!) as { steps: number; results: AppEval['results'] };
    result.appEval = { methods: evalMethods, wallSeconds, steps: parsed.steps, results: parsed.results };
    console.log(
      `dtdr eval --train ${folder}/train --data ${folder}/test --methods ${evalMethods}: ${wallSeconds.toFixed(1)} s wall, ${parsed.steps} test steps`,
    );
    for (const [m, r] of Object.entries(parsed.results))
      console.log(
        `  ${m.padEnd(9)} MRR ${r.mrr.toFixed(3)}  coverage ${r.coverage.toFixed(3)}  fit ${(r.fitMs / 1000).toFixed(2)} s  ${r.rankMicrosPerStep.toFixed(1)} µs/step`,
      );
  } else console.log('(dist/ is not built: the dtdr eval wall time is skipped; run npm run build)');
}

mkdirSync(dirname(values.json), { recursive: true });
writeFileSync(values.json, JSON.stringify(result, null, 2));
mkdirSync(dirname(values.svg), { recursive: true });
writeFileSync(values.svg, plot(result));
console.log(`\nwrote ${values.json} and ${values.svg}`);
if (values.results) {
  writeBenchResults(result, values.results);
  console.log(`wrote the bench tables into ${values.results}`);
}
await encoder.dispose?.();

/** Two log–log panels, drawn by hand (a few lines of SVG; no DOM in Node): rank µs against tools, fit s against demonstrations. */
function plot(r: typeof result): string {
  const colours: Record<string, string> = {
    random: '#bab0ab',
    bm25: '#9c755f',
    qts: '#ff9da7',
    dr: '#76b7b2',
    lr: '#59a14f',
    'dtdr-c': '#edc948',
    'dtdr-l': '#b07aa1',
    'dtdr-h': '#f28e2b',
    'dtdr-cb': '#e15759',
    'dtdr-g': '#4e79a7',
  };
  const W = 460,
    H = 320,
    m = { l: 60, r: 90, t: 36, b: 44 };
  const panel = (
    x0: number,
    title: string,
    xLabel: string,
    yLabel: string,
    series: Map<string, [number, number][]>,
    guide?: number,
  ) => {
    const xs = [...series.values()].flat().map((p) => p[0]);
    const ys = [...series.values()]
      .flat()
      .map((p) => p[1])
      .filter((y) => y > 0);
    if (xs.length === 0) return '';
    const [xMin, xMax] = [Math.min(...xs), Math.max(...xs)];
    const [yMin, yMax] = [Math.min(...ys, guide ?? Infinity) / 1.5, Math.max(...ys, guide ?? 0) * 1.5];
    const lx = (x: number) =>
      x0 +
      m.l +
      ((Math.log10(x) - Math.log10(xMin)) / Math.max(1e-9, Math.log10(xMax) - Math.log10(xMin))) * (W - m.l - m.r);
    const ly = (y: number) =>
      m.t + (1 - (Math.log10(y) - Math.log10(yMin)) / (Math.log10(yMax) - Math.log10(yMin))) * (H - m.t - m.b);
    const parts = [`<text x="${x0 + m.l}" y="20" font-weight="600">${title}</text>`];
    for (let e = Math.floor(Math.log10(yMin)); e <= Math.ceil(Math.log10(yMax)); e++) {
      for (const f of [1, 2, 5]) {
        const y = f * 10 ** e;
        if (y < yMin || y > yMax) continue;
        parts.push(
          `<line x1="${x0 + m.l}" x2="${x0 + W - m.r}" y1="${ly(y)}" y2="${ly(y)}" stroke="#e5e7eb"/><text x="${x0 + m.l - 6}" y="${ly(y) + 4}" text-anchor="end">${y >= 1000 ? `${y / 1000}k` : y}</text>`,
        );
      }
    }
    for (const x of [...new Set(xs)])
      parts.push(
        `<line x1="${lx(x)}" x2="${lx(x)}" y1="${m.t}" y2="${H - m.b}" stroke="#f1f2f4"/><text x="${lx(x)}" y="${H - m.b + 16}" text-anchor="middle">${x.toLocaleString('en')}</text>`,
      );
    if (guide)
      parts.push(
        `<line x1="${x0 + m.l}" x2="${x0 + W - m.r}" y1="${ly(guide)}" y2="${ly(guide)}" stroke="#d62728" stroke-dasharray="5 4"/><text x="${x0 + m.l + 4}" y="${ly(guide) - 5}" fill="#d62728">1 ms</text>`,
      );
    parts.push(
      `<text x="${x0 + (W - m.r + m.l) / 2}" y="${H - 8}" text-anchor="middle">${xLabel}</text><text transform="translate(${x0 + 14} ${(H - m.b + m.t) / 2}) rotate(-90)" text-anchor="middle">${yLabel}</text>`,
    );
    const labels: { method: string; colour: string; x: number; y: number }[] = [];
    for (const [method, pts] of series) {
      const sorted = pts.filter((p) => p[1] > 0).sort((a, b) => a[0] - b[0]);
      if (sorted.length === 0) continue;
      const colour = colours[method] ?? '#333';
      parts.push(
        `<polyline fill="none" stroke="${colour}" stroke-width="${method === 'dtdr-g' ? 3 : 1.6}" points="${sorted.map(([x, y]) => `${lx(x).toFixed(1)},${ly(y).toFixed(1)}`).join(' ')}"/>`,
      );
      for (const [x, y] of sorted)
        parts.push(`<circle cx="${lx(x).toFixed(1)}" cy="${ly(y).toFixed(1)}" r="2.5" fill="${colour}"/>`);
      const [lxv, lyv] = sorted.at(-1)!;
      labels.push({ method, colour, x: lx(lxv) + 5, y: ly(lyv) + 4 });
    }
    // Line-end labels pushed apart vertically so that none overlaps the next.
    labels.sort((a, b) => a.y - b.y);
    for (let i = 1; i < labels.length; i++) labels[i].y = Math.max(labels[i].y, labels[i - 1].y + 11);
    for (const l of labels) parts.push(`<text x="${l.x}" y="${l.y.toFixed(1)}" fill="${l.colour}">${l.method}</text>`);
    return parts.join('');
  };
  const rank = new Map<string, [number, number][]>();
  for (const row of r.rank.filter((x) => x.world.startsWith('synthetic')))
    (rank.get(row.method) ?? rank.set(row.method, []).get(row.method)!).push([row.tools, row.medianMicros]);
  const fit = new Map<string, [number, number][]>();
  for (const row of r.fit)
    (fit.get(row.method) ?? fit.set(row.method, []).get(row.method)!).push([row.plans, row.fitMs / 1000]);
  return (
    `<svg xmlns="http://www.w3.org/2000/svg" width="${2 * W}" height="${H}" viewBox="0 0 ${2 * W} ${H}" font-family="system-ui, sans-serif" font-size="11" fill="#1d2330">` +
    `<rect width="100%" height="100%" fill="#fff"/>` +
    panel(0, 'Rank + candidate set, µs per step (median)', 'tools', 'µs per step', rank, 1000) +
    panel(W, 'Fit, seconds (260 tools)', 'demonstrations', 'seconds', fit) +
    `</svg>\n`
  );
}

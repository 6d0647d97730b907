/**
 * The bench's tables and figure in docs/results.json (`npm run bench -- --results docs/results.json`, or
 * `--from bench.json` to render a saved run): rank and fit per method and world, fit against demonstrations,
 * the app-scale lines, and the encoder's one-text time. scripts/check/docs-results.ts renders them into the docs.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';

interface RankRow {
  world: string;
  method: string;
  tools: number;
  fitMs: number;
  medianMicros: number;
  p99Micros: number;
  ratioToDr: number;
}
interface FitRow {
  method: string;
  plans: number;
  fitMs: number;
  peakBytes: number;
  artifactBytes: number;
}
interface AppRow {
  method: string;
  fitMs: number;
  peakBytes: number;
  medianMicros: number;
  p99Micros: number;
  ratioToDr: number;
  /** How many processes ran it (the reported one has their median ratio to DR); 1 when absent. */
  processes?: number;
  /** The medians over a request's first steps and over its later steps (absent in runs before they were kept). */
  firstMicros?: number;
  laterMicros?: number;
}
export interface BenchResult {
  encoder?: { singleTextMicros: number };
  rank: RankRow[];
  fit: FitRow[];
  app?: AppRow[];
  appEval?: {
    methods: string;
    wallSeconds: number;
    results: Record<string, { mrr: number; coverage: number; setSize: number; fitMs: number }>;
  };
}

const grouped = (v: number) => Math.round(v).toLocaleString('en-US');
/** Microseconds as the tables print them: one decimal below 10, whole numbers (grouped) above. */
const micros = (v: number) => (v < 9.95 ? v.toFixed(1) : grouped(v));
const mib = (bytes: number) => grouped(bytes / 2 ** 20);
const seconds = (ms: number, digits = 2) => (ms / 1000).toFixed(digits);

/** The rank table's world columns: [heading, does a rank row's world belong to it]. */
const WORLDS: [string, (r: RankRow) => boolean][] = [
  ['demo set (27 tools)', (r) => r.world.startsWith('demo set')],
  ['UltraTool (260)', (r) => r.world.startsWith('UltraTool')],
  ['synthetic 260', (r) => r.world.startsWith('synthetic') && r.tools === 260],
  ['synthetic 4,000', (r) => r.world.startsWith('synthetic') && r.tools === 4000],
  ['synthetic 16,000', (r) => r.world.startsWith('synthetic') && r.tools === 16000],
];

/** Writes the bench's tables and figure from `result` into the results file `path`. */
export function writeBenchResults(result: BenchResult, path: string): void {
  const file = JSON.parse(readFileSync(path, 'utf8')) as {
    tables: Record<string, unknown>;
    figures: Record<string, unknown>;
  };
  const date = new Date().toISOString().slice(0, 10);
  const command = 'npm run bench';
  const methods = [...new Set(result.rank.map((r) => r.method))];
  const worlds = WORLDS.filter(([, is]) => result.rank.some(is));
  const align = (n: number) => ['left', ...Array.from({ length: n }, () => 'right')];
  /** A table with a row per method and a column per world, each cell shown from that rank row. */
  const perWorld = (title: string, show: (r: RankRow) => string) => ({
    title,
    command,
    date,
    columns: ['method', ...worlds.map(([heading]) => heading)],
    align: align(worlds.length),
    rows: methods.map((m) => [
      m,
      ...worlds.map(([, is]) => {
        const row = result.rank.find((r) => r.method === m && is(r));
        return row ? show(row) : '–';
      }),
    ]),
  });
  file.tables['bench-rank'] = perWorld(
    'Rank + candidate set, µs per step: median / p99 (× DR in the same process)',
    (r) => `${micros(r.medianMicros)} / ${micros(r.p99Micros)} (${r.ratioToDr.toFixed(2)})`,
  );
  file.tables['bench-fit'] = perWorld('Fit seconds (embedding excluded)', (r) => seconds(r.fitMs));
  const sizes = [...new Set(result.fit.map((f) => f.plans))].sort((a, b) => a - b);
  const fitMethods = [...new Set(result.fit.map((f) => f.method))];
  file.tables['bench-fit-scale'] = {
    title: 'Fit against demonstrations (synthetic, 260 tools): seconds · peak resident MiB · binary model KiB',
    command,
    date,
    columns: ['method', ...sizes.map(grouped)],
    align: align(sizes.length),
    rows: fitMethods.map((m) => [
      m,
      ...sizes.map((n) => {
        const f = result.fit.find((r) => r.method === m && r.plans === n);
        return f ? `${seconds(f.fitMs)} s · ${mib(f.peakBytes)} · ${grouped(f.artifactBytes / 1024)}` : '–';
      }),
    ]),
  };
  const app = (m: string) => result.app?.find((r) => r.method === m);
  const g = app('dtdr-g');
  const others = ['dtdr-c', 'dr', 'bm25'].filter((m) => app(m));
  const evalG = result.appEval?.results['dtdr-g'];
  const fit100k = result.fit.find((f) => f.method === 'dtdr-g' && f.plans === 100_000);
  const cores = availableParallelism();
  const rows: string[][] = [];
  if (g) {
    rows.push([
      'DTDR-G fit, 16,000 tools × 20,000 demonstrations, default settings',
      `${seconds(g.fitMs, 1)} s, peak RSS ${mib(g.peakBytes)} MiB (${cores} cores)`,
    ]);
    rows.push([
      'DTDR-G rank + set, median µs (p99; × DR in the same process, as the bench prints it' +
        ((g.processes ?? 1) > 1 ? `; the process with the median ratio of ${g.processes})` : ')'),
      `${micros(g.medianMicros)} (${micros(g.p99Micros)}; ${g.ratioToDr.toFixed(2)}×)`,
    ]);
    // A request's first step reads the tool vectors and the head's weights (16,000 rows each); its later steps
    // reuse those products.
    if (g.firstMicros !== undefined && g.laterMicros !== undefined)
      rows.push([
        "DTDR-G rank + set at a request's first step, and at its later steps, median µs (same process)",
        `${micros(g.firstMicros)}, ${micros(g.laterMicros)}`,
      ]);
  }
  if (others.length > 0)
    rows.push([
      `${others.map((m) => m.toUpperCase()).join(', ')} rank + set, median µs`,
      others.map((m) => micros(app(m)!.medianMicros)).join(', '),
    ]);
  if (result.appEval && evalG)
    rows.push([
      `\`dtdr eval --train … --data … --methods ${result.appEval.methods}\``,
      `${result.appEval.wallSeconds.toFixed(1)} s wall; DTDR-G MRR ${evalG.mrr.toFixed(3)}, coverage ${evalG.coverage.toFixed(3)} at ${evalG.setSize.toFixed(2)} tools (fit ${seconds(evalG.fitMs, 1)} s)`,
    ]);
  if (fit100k)
    rows.push([
      'DTDR-G fit, 100,000 demonstrations over 260 tools (heads 1 epoch)',
      `${seconds(fit100k.fitMs, 1)} s, peak RSS ${mib(fit100k.peakBytes)} MiB`,
    ]);
  file.tables['bench-app'] = {
    title: 'App scale: 16,000 tools × 20,000 demonstrations, and 100,000 demonstrations over 260 tools',
    command,
    date,
    columns: ['what', 'figure'],
    align: ['left', 'left'],
    rows,
  };
  if (g?.firstMicros !== undefined && g.laterMicros !== undefined) {
    const at = (v: number, steps: string) => ({
      value: `${micros(v)} µs`,
      command,
      date,
      what: `DTDR-G rank + set at ${steps}, 16,000 tools (the app-scale world), median`,
    });
    file.figures['app-rank-first-step'] = at(g.firstMicros, "a request's first step");
    file.figures['app-rank-later-step'] = at(g.laterMicros, "a request's later steps");
  }
  if (result.encoder)
    file.figures['encoder-embed-us'] = {
      value: `${Math.round(result.encoder.singleTextMicros)} µs`,
      command,
      date,
      what: 'median time to embed one short text, unbatched and uncached',
    };
  writeFileSync(path, `${JSON.stringify(file, null, 1)}\n`);
}

/** A results table of docs/results.json (rendered by a `results:table:` block). */
export interface ResultsTable {
  title: string;
  command: string;
  columns: string[];
  align: string[];
  /** Cells: a figure, or a reference to one elsewhere in results.json that the row restates. */
  rows: (string | { ref: string })[][];
}

/** A figure of docs/results.json (rendered by a `figure:` block). */
export interface ResultsFigure {
  value: string;
  what: string;
}

/**
 * The table-name suffix and command of an experiment run with another model folder than the default
 * (`--encoder DIR`, `--tuned DIR`): `-<its id>` and the option on the command, so that run never
 * replaces the default's tables.
 */
export function variantRun(
  command: string,
  variant?: { option: string; value: string; id: string },
): { suffix: string; command: string } {
  return variant
    ? { suffix: `-${variant.id}`, command: `${command} ${variant.option} ${variant.value}` }
    : { suffix: '', command };
}

/** `--sizes`' (or `option`'s) comma-separated list as numbers, refused unless every one is a positive integer. */
export function positiveSizes(list: string, refuse: (message: string) => never, option = '--sizes'): number[] {
  const sizes = list.split(',').map(Number);
  if (sizes.some((n) => !(Number.isInteger(n) && n > 0))) refuse(`${option} must be positive integers (got ${list})`);
  return sizes;
}

/** A script's refusal: `script: message` on stderr and exit 1, before any work starts. */
export function refuser(script: string): (message: string) => never {
  return (message) => {
    console.error(`${script}: ${message}`);
    process.exit(1);
  };
}

/**
 * Refuses `--results` unless every option in `defaults` is at its default: a recorded table is the
 * full run, never a partial one written over it.
 */
export function recordFullRunOnly<D extends Record<string, string>>(
  values: { results?: string } & Partial<Record<keyof D, unknown>>,
  defaults: D,
  refuse: (message: string) => never,
): void {
  const keys = Object.keys(defaults) as (keyof D & string)[];
  if (values.results && keys.some((k) => values[k] !== defaults[k])) {
    const options = keys.map((k) => `--${k}`);
    const list = options.length > 1 ? `${options.slice(0, -1).join(', ')} and ${options.at(-1)}` : options[0];
    refuse(`--results records the full run only: drop ${list}, or --results`);
  }
}

/** Replaces table `name` (and the given figures, all dated today) in the results file at `path`. */
export function writeResultsTable(
  path: string,
  name: string,
  table: ResultsTable,
  figures: Record<string, ResultsFigure> = {},
): void {
  const results = JSON.parse(readFileSync(path, 'utf8')) as {
    tables: Record<string, unknown>;
    figures: Record<string, unknown>;
  };
  const date = new Date().toISOString().slice(0, 10);
  results.tables[name] = { ...table, date };
  for (const [key, f] of Object.entries(figures)) results.figures[key] = { ...f, command: table.command, date };
  writeFileSync(path, `${JSON.stringify(results, null, 1)}\n`);
}

/** An experiment's points: read from a saved run (`--from`), else measured; saved to `--json` when given. */
export async function savedOrMeasured<P>(
  from: string | undefined,
  json: string | undefined,
  measure: () => Promise<P[]>,
) {
  const points = from ? (JSON.parse(readFileSync(from, 'utf8')) as P[]) : await measure();
  if (json) writeFileSync(json, JSON.stringify(points));
  return points;
}

/** A table on stdout, cells separated by ` | `, the header first. */
export function printTable(columns: readonly string[], rows: readonly (readonly string[])[]): void {
  for (const r of [columns, ...rows]) console.log(r.join(' | '));
}

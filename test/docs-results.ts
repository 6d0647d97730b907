/**
 * Every measured figure in README.md and docs/ is rendered from one file, docs/results.json, into a
 * generated block; nothing is typed by hand.
 *
 *   <!-- results:eval-summary -->…<!-- /results -->      the README's one results table
 *   <!-- results:eval:ultratool -->…<!-- /results -->    one `dtdr eval` run, every method
 *   <!-- results:table:ablation -->…<!-- /results -->    any other table of the file
 *   <!-- figure:eval.ultratool.results.dtdr-g.coverage -->0.971<!-- /figure -->   one figure in prose
 *
 * `npm run check -- docs-results` (scripts/check/docs-results.ts) rewrites every block; with `--check` (part of
 * `npm run docs:check`, in CI) fails when a block differs from what the file renders (a stale block,
 * or one edited by hand so that two places would state one figure differently), when a block names
 * nothing in the file, or when a measured figure (a decimal, a percentage, a quantity with a unit
 * such as 12 s or 5 MB, or "N of M") stands in prose outside a generated block or code.
 * `npm run check -- docs-results --from a.json b.json …` replaces the `eval` runs with `dtdr eval --json`
 * outputs (one file per run) and rewrites the blocks.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = fileURLToPath(new URL('..', import.meta.url));
export const RESULTS_FILE = join(ROOT, 'docs', 'results.json');

type Metrics = Partial<
  Record<
    'mrr' | 'f1' | 'top1' | 'recall5' | 'coverage' | 'setSize' | 'ece' | 'confidentMissRate' | 'firstStepMrr',
    number
  >
>;

export interface EvalRun {
  title: string;
  dataset: string;
  split: string;
  trainPlans: number;
  testPlans: number;
  steps: number;
  tools?: number;
  command: string;
  date: string;
  source?: string;
  results: Record<string, Metrics>;
}

type Cell = string | { ref: string };

export interface Table {
  title: string;
  command: string;
  date: string;
  note?: string;
  columns: string[];
  align: ('left' | 'right')[];
  rows: Cell[][];
}

export interface Results {
  about: string;
  eval: Record<string, EvalRun>;
  tables: Record<string, Table>;
  figures: Record<string, { value: string; command: string; date: string; what: string }>;
}

export const readResults = (file = RESULTS_FILE): Results => JSON.parse(readFileSync(file, 'utf8')) as Results;

/** The method names as the tables print them. */
const METHOD_LABELS: Record<string, string> = {
  random: 'random',
  bm25: 'BM25',
  qts: 'QTS',
  dr: 'DR (static, last tool)',
  lr: 'LR (static, learned)',
  'dtdr-c': 'DTDR-C',
  'dtdr-l': 'DTDR-L',
  'dtdr-h': 'DTDR-H',
  'dtdr-cb': 'DTDR-CB',
  'dtdr-g': 'DTDR-G (default)',
  'orama-bm25': 'peer: Orama BM25',
  'orama-vector': 'peer: Orama vector',
  'orama-hybrid': 'peer: Orama hybrid',
  'aisdk-search': 'peer: AI SDK tool search',
};
const isPeer = (m: string) => m.startsWith('orama-') || m === 'aisdk-search';
const label = (m: string) => METHOD_LABELS[m] ?? m;

/** A figure as every table prints it: rates to 3 decimals, set sizes to 2. */
export function formatMetric(key: string, value: number | undefined): string {
  if (value === undefined) return '';
  return key === 'setSize' ? value.toFixed(2) : value.toFixed(3);
}

/** The value at a dotted path of the results file (`eval.ultratool.results.dtdr-g.mrr`). */
export function lookup(results: Results, path: string): string {
  const parts = path.split('.');
  let at: unknown = results;
  // Keys may hold dots of their own only in eval run names; the method names and metrics do not.
  for (let i = 0; i < parts.length; i++) {
    if (at === null || typeof at !== 'object') throw new Error(`results.json has nothing at ${path}`);
    const obj = at as Record<string, unknown>;
    let key = parts[i];
    while (!(key in obj) && i + 1 < parts.length) key += `.${parts[++i]}`;
    if (!(key in obj)) throw new Error(`results.json has nothing at ${path}`);
    at = obj[key];
  }
  if (typeof at === 'number') return formatMetric(parts[parts.length - 1], at);
  if (typeof at === 'string') return at;
  if (at && typeof at === 'object' && 'value' in at) return String(at.value);
  throw new Error(`results.json's ${path} is not a figure`);
}

const row = (cells: string[]) => `| ${cells.map((c) => c.replace(/\|/g, '\\|')).join(' | ')} |`;
const rule = (align: ('left' | 'right')[]) => `|${align.map((a) => (a === 'right' ? '---:' : '---')).join('|')}|`;
const caption = (command: string, date: string, extra?: string) =>
  `\`${command}\` · ${date}${extra ? ` · ${extra}` : ''}`;

/** One `dtdr eval` run, every method it scored. */
export function evalTable(run: EvalRun): string {
  const methods = Object.keys(run.results);
  const cols: [string, keyof Metrics][] = [
    ['MRR', 'mrr'],
    ['1st-step MRR', 'firstStepMrr'],
    ['F1', 'f1'],
    ['top-1', 'top1'],
    ['recall@5', 'recall5'],
    ['coverage', 'coverage'],
    ['mean |F_t|', 'setSize'],
    ['ECE', 'ece'],
    ['confident-miss', 'confidentMissRate'],
  ];
  const used = cols.filter(([, k]) => methods.some((m) => run.results[m][k] !== undefined));
  const lines = [
    `**${run.title}**: ${run.trainPlans.toLocaleString('en-US')} demonstrations, ${run.testPlans.toLocaleString('en-US')} test plans, ${run.steps.toLocaleString('en-US')} steps${run.tools ? `, ${run.tools.toLocaleString('en-US')} tools` : ''}.`,
    '',
    row(['method', ...used.map(([l]) => l)]),
    rule(['left', ...used.map(() => 'right' as const)]),
    ...methods.map((m) => row([label(m), ...used.map(([, k]) => formatMetric(k, run.results[m][k]))])),
    '',
    caption(run.command, run.date, run.source),
  ];
  return lines.join('\n');
}

/** The README's one table: per run, DTDR-G against the best other method and the best peer. */
export function evalSummary(results: Results): string {
  const lines = [
    row(['data', 'steps', 'DTDR-G MRR', 'best other method (MRR)', 'best peer (MRR)', 'coverage', 'mean |F_t|']),
    rule(['left', 'right', 'right', 'left', 'left', 'right', 'right']),
  ];
  for (const run of Object.values(results.eval)) {
    const g = run.results['dtdr-g'] ?? {};
    const best = (pick: (m: string) => boolean) => {
      const ms = Object.keys(run.results).filter((m) => m !== 'dtdr-g' && pick(m) && run.results[m].mrr !== undefined);
      if (ms.length === 0) return '';
      const m = ms.reduce((a, b) => (run.results[b].mrr! > run.results[a].mrr! ? b : a));
      return `${label(m)
        .replace(/^peer: /, '')
        .replace(/ \(.*\)$/, '')} ${formatMetric('mrr', run.results[m].mrr)}`;
    };
    lines.push(
      row([
        run.title.split(',')[0] + (run.split === 'novel' ? ', novel sequences' : ''),
        run.steps.toLocaleString('en-US'),
        formatMetric('mrr', g.mrr),
        best((m) => !isPeer(m)),
        best(isPeer),
        formatMetric('coverage', g.coverage),
        formatMetric('setSize', g.setSize),
      ]),
    );
  }
  const dates = [...new Set(Object.values(results.eval).map((r) => r.date))].join(', ');
  lines.push(
    '',
    `\`dtdr eval --data ../shared/data/<dataset> --json\` (\`--split novel\` for the novel row) · ${dates}`,
  );
  return lines.join('\n');
}

/** Any other table of the file, with the command that made it and the date. */
export function genericTable(results: Results, id: string): string {
  const t = results.tables[id];
  if (!t) throw new Error(`results.json has no table "${id}"`);
  const cell = (c: Cell) => (typeof c === 'string' ? c : lookup(results, c.ref));
  return [
    row(t.columns),
    rule(t.align),
    ...t.rows.map((r) => row(r.map(cell))),
    '',
    caption(t.command, t.date, t.note),
  ].join('\n');
}

/** What a `results:NAME` block holds. */
export function renderBlock(results: Results, name: string): string {
  if (name === 'eval-summary') return evalSummary(results);
  if (name.startsWith('eval:')) {
    const run = results.eval[name.slice(5)];
    if (!run) throw new Error(`results.json has no eval run "${name.slice(5)}"`);
    return evalTable(run);
  }
  if (name.startsWith('table:')) return genericTable(results, name.slice(6));
  throw new Error(`unknown results block "${name}"`);
}

const BLOCK = /<!-- results:([\w:.-]+) -->\n([\s\S]*?)\n?<!-- \/results -->/g;
const FIGURE = /<!-- figure:([\w.-]+) -->([^<]*)<!-- \/figure -->/g;

/** A Markdown file with every generated block re-rendered (errors name the block). */
export function rewrite(text: string, results: Results): string {
  return text
    .replace(BLOCK, (_, name: string) => `<!-- results:${name} -->\n${renderBlock(results, name)}\n<!-- /results -->`)
    .replace(FIGURE, (_, path: string) => `<!-- figure:${path} -->${lookup(results, path)}<!-- /figure -->`);
}

/**
 * Measured figures standing in prose: decimals (0.877, 3.5), percentages, quantities with a unit
 * (12 s, 5 MB, 250 µs, 3×) and counts out of a total (131 of 135). Version numbers (1.2.3, Node
 * 20), option values in code and everything in generated blocks, code fences, code spans, HTML
 * comments, links and image paths are not figures.
 */
const HAND_FIGURE =
  /(?<![\w.\-/])(\d[\d,.]*\s?%|\d[\d,.]*\s?(?:µs|ms|s|MB|MiB|KB|KiB|GB|GiB)\b|\d[\d,.]*\s?×|\d[\d,]* of \d[\d,]*|\d[\d,]*\.\d+(?![\d.]*\.\d))(?![\w.]*\d)/g;

export function handTypedFigures(text: string): { line: number; figure: string; context: string }[] {
  const blanked = text
    .replace(/```[\s\S]*?```/g, (m) => m.replace(/[^\n]/g, ' '))
    .replace(BLOCK, (m) => m.replace(/[^\n]/g, ' '))
    .replace(/<!-- output:[\w-]+ -->[\s\S]*?<!-- \/output -->/g, (m) => m.replace(/[^\n]/g, ' '))
    .replace(FIGURE, (m) => m.replace(/[^\n]/g, ' '))
    .replace(/<!--[\s\S]*?-->/g, (m) => m.replace(/[^\n]/g, ' '))
    .replace(/`[^`\n]*`/g, (m) => ' '.repeat(m.length))
    .replace(/\]\([^)\n]*\)/g, (m) => ' '.repeat(m.length));
  const found: { line: number; figure: string; context: string }[] = [];
  const lines = blanked.split('\n');
  const original = text.split('\n');
  lines.forEach((l, i) => {
    for (const m of l.matchAll(HAND_FIGURE))
      found.push({ line: i + 1, figure: m[1], context: original[i].trim().slice(0, 120) });
  });
  return found;
}

/** README.md and every Markdown file under docs/ (the generated API reference excluded). */
export function docFiles(root = ROOT): string[] {
  const out = [join(root, 'README.md'), join(root, 'CHANGELOG.md')];
  const walk = (dir: string) => {
    for (const name of readdirSync(dir)) {
      const path = join(dir, name);
      if (statSync(path).isDirectory()) {
        if (name !== 'api' && name !== 'site') walk(path);
      } else if (name.endsWith('.md')) out.push(path);
    }
  };
  walk(join(root, 'docs'));
  return out;
}

/** Files the figure rule applies to: README.md and docs/ (CHANGELOG.md states history, in words). */
const checksFigures = (file: string) => !file.endsWith('CHANGELOG.md');

export interface CheckProblem {
  file: string;
  message: string;
}

/** Every problem `--check` reports: stale or unknown blocks, and figures typed by hand. */
export function checkDocs(results: Results, files = docFiles(), root = ROOT): CheckProblem[] {
  const problems: CheckProblem[] = [];
  for (const file of files) {
    const text = readFileSync(file, 'utf8');
    const rel = relative(root, file);
    for (const m of text.matchAll(BLOCK)) {
      try {
        if (m[2] !== renderBlock(results, m[1]))
          problems.push({
            file: rel,
            message: `results:${m[1]} is stale or was edited by hand (npm run check -- docs-results rewrites it)`,
          });
      } catch (e) {
        problems.push({ file: rel, message: (e as Error).message });
      }
    }
    for (const m of text.matchAll(FIGURE)) {
      try {
        const want = lookup(results, m[1]);
        if (m[2] !== want)
          problems.push({ file: rel, message: `figure ${m[1]} reads "${m[2]}" where results.json has "${want}"` });
      } catch (e) {
        problems.push({ file: rel, message: (e as Error).message });
      }
    }
    if (checksFigures(file)) {
      for (const f of handTypedFigures(text))
        problems.push({
          file: `${rel}:${f.line}`,
          message: `"${f.figure}" is a figure typed by hand: put it in docs/results.json and render it with a <!-- figure:… --> or results block (${f.context})`,
        });
    }
  }
  return problems;
}

/** A `dtdr eval --json` output as an eval run of the results file. */
export function evalRunFromJson(
  json: {
    dataset: string;
    split: string;
    trainPlans: number;
    testPlans: number;
    steps: number;
    results: Record<string, Metrics & Record<string, unknown>>;
  },
  previous: EvalRun | undefined,
  file: string,
  date: string,
): [string, EvalRun] {
  const novel = /novel/.test(json.split);
  const key = `${json.dataset}${novel ? '-novel' : ''}`;
  const keep: (keyof Metrics)[] = [
    'mrr',
    'firstStepMrr',
    'f1',
    'top1',
    'recall5',
    'coverage',
    'setSize',
    'ece',
    'confidentMissRate',
  ];
  const results = Object.fromEntries(
    Object.entries(json.results).map(([m, r]) => [
      m,
      Object.fromEntries(keep.filter((k) => r[k] !== undefined).map((k) => [k, r[k] as number])),
    ]),
  );
  return [
    key,
    {
      title: previous?.title ?? `${json.dataset}, ${json.split}`,
      dataset: json.dataset,
      split: novel ? 'novel' : json.split,
      trainPlans: json.trainPlans,
      testPlans: json.testPlans,
      steps: json.steps,
      ...(previous?.tools ? { tools: previous.tools } : {}),
      command: `dtdr eval --data ../shared/data/${json.dataset}${novel ? ' --split novel' : ''} --methods ${Object.keys(json.results).join(',')} --json`,
      date,
      source: `one run (${file})`,
      results,
    },
  ];
}

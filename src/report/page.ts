/**
 * The report page's script: reads the JSON embedded in the HTML and draws every chart with
 * Observable Plot. `npm run build` bundles it with Plot (and the d3 modules Plot uses) into one
 * IIFE, dist/report/page.bundle.js, which the report inlines: the file opens offline. The tables
 * are in page-tables.ts, the methods' colours, dashes and symbols in page-style.ts.
 */
import * as Plot from '@observablehq/plot';
import type { DatasetReport, ReportData } from './collect.js';
import { el, pct } from './page-dom.js';
import { methodStyles } from './page-style.js';
import { groupsTable, metricsTable, missesTable } from './page-tables.js';

const data = JSON.parse(document.getElementById('report-data')!.textContent) as ReportData;
const main = document.querySelector('main')!;
const { peers, methodColor, swept, sweptColor, styleOf, methodSymbol } = methodStyles(data);

/** A titled figure holding one chart; charts are counted by the browser test. */
function figure(title: string, caption: string, chart: Element): HTMLElement {
  const f = el('figure', { className: 'chart' }, el('h3', {}, title), chart, el('figcaption', {}, caption));
  f.dataset.chart = title;
  return f;
}

/**
 * Lines with a dash pattern and a marker per method, and a label per method at the right edge of
 * the frame, pushed apart (at least `gap` px) so that no two labels overprint; `yPx` maps a y value
 * to pixels, `fromPx` back. Each method's line is its own mark (a dash pattern is not a channel).
 */
function methodLines<T extends { method: string }>(
  points: T[],
  x: keyof T & string,
  y: keyof T & string,
  yPx: (v: number) => number,
  fromPx: (px: number) => number,
  gap = 12,
) {
  const methods = [...new Set(points.map((p) => p.method))];
  const ends = methods
    .map((method) => {
      const last = points.filter((p) => p.method === method).at(-1)!;
      return { method, px: yPx(last[y] as number) };
    })
    .sort((a, b) => a.px - b.px);
  // One pass down then one up keeps every label within the frame's span and at least `gap` apart.
  for (let i = 1; i < ends.length; i++) ends[i].px = Math.max(ends[i].px, ends[i - 1].px + gap);
  const bottom = yPx(0);
  if (ends.length && ends[ends.length - 1].px > bottom) ends[ends.length - 1].px = bottom;
  for (let i = ends.length - 2; i >= 0; i--) ends[i].px = Math.min(ends[i].px, ends[i + 1].px - gap);
  const labels = ends.map((e) => ({ method: e.method, y: fromPx(e.px) }));
  return [
    ...methods.map((method) =>
      Plot.line(
        points.filter((p) => p.method === method),
        {
          x,
          y,
          stroke: 'method',
          strokeDasharray: styleOf(method).dash,
          strokeWidth: 1.6,
          className: 'method-line',
          ariaDescription: method,
        },
      ),
    ),
    Plot.dot(points, { x, y, stroke: 'method', symbol: 'method', r: 3.5, fill: 'white', strokeWidth: 1.4 }),
    Plot.text(labels, {
      y: 'y',
      text: 'method',
      fill: 'method',
      frameAnchor: 'right',
      textAnchor: 'start',
      dx: 6,
      className: 'end-label',
    }),
  ];
}

/** A linear y scale over [0, 1] drawn in a plot of `height` with these margins: value ↔ pixels. */
function unitScale(height: number, marginTop: number, marginBottom: number) {
  const span = height - marginTop - marginBottom;
  return { yPx: (v: number) => marginTop + (1 - v) * span, fromPx: (px: number) => 1 - (px - marginTop) / span };
}

function datasetSection(d: DatasetReport): HTMLElement {
  const section = el('section', { id: `dataset-${d.name}` });
  section.append(
    el('h2', {}, `${d.name}`),
    el(
      'p',
      { className: 'meta' },
      `${d.split} split · ${d.trainPlans} demonstrations, ${d.testPlans} test plans, ${d.steps} ` +
        `steps · ${d.tools} tools`,
    ),
  );
  const grid = el('div', { className: 'grid' });
  section.append(grid);
  grid.append(
    ...metricFigures(d),
    ...sweepFigures(d),
    ...reliabilityFigures(d),
    ...promptFigures(d),
    ...ablationFigures(d),
  );
  section.append(el('h3', {}, 'Metrics'), metricsTable(d, data.defaultMethod));
  const shownPeers = d.methods.filter((m) => peers.includes(m.method)).map((m) => m.method);
  if (shownPeers.length)
    section.append(
      el(
        'p',
        { className: 'meta' },
        `Peers (grey in the bars, no sweep or reliability curve): ${shownPeers.join(', ')} — what ` +
          `users would pick instead, run through their own npm packages on the same steps (the AI ` +
          `SDK 7's default toolSearch; Orama's BM25, vector and hybrid search). Query-only, like ` +
          `BM25.`,
      ),
    );
  for (const m of d.methods)
    if (m.groups?.length) section.append(el('h3', {}, `Per calibration group: ${m.method}`), groupsTable(m.groups));
  if (d.misses.length > 0) section.append(el('h3', {}, `Worst misses of ${data.defaultMethod}`), missesTable(d));
  return section;
}

/** The MRR, coverage and set-size bars, one bar per method. */
function metricFigures(d: DatasetReport): HTMLElement[] {
  const star = (m: string) => (m === data.defaultMethod ? `${m} ★` : m);
  const rows = d.methods.map((m) => ({ ...m, label: star(m.method) }));
  // The axis label sits in a top margin of its own, and the domain leaves room above the tallest
  // bar for its value label, so the two never meet.
  const bars = (y: 'mrr' | 'coverage' | 'setSize', label: string, domain?: [number, number]) =>
    Plot.plot({
      marginLeft: 50,
      marginBottom: 45,
      marginTop: 34,
      width: 440,
      height: 280,
      x: { label: null, domain: rows.map((r) => r.label), tickRotate: -30 },
      y: {
        label,
        labelAnchor: 'top',
        grid: true,
        domain: domain ? [domain[0], domain[1] * 1.1] : [0, Math.max(1e-9, ...rows.map((r) => r[y])) * 1.15],
        ticks: 5,
      },
      color: methodColor(false),
      marks: [
        Plot.barY(rows, { x: 'label', y, fill: 'method', tip: true }),
        Plot.text(rows, {
          x: 'label',
          y,
          text: (r: (typeof rows)[number]) => (y === 'setSize' ? r[y].toFixed(1) : r[y].toFixed(2)),
          dy: -6,
          fontSize: 9,
          className: 'bar-value',
        }),
        Plot.ruleY([0]),
      ],
    });
  return [
    figure(
      'MRR per method',
      'Mean reciprocal rank of the first acceptable next tool, over every test step with the ' +
        'true history. ★ the default method.',
      bars('mrr', 'MRR', [0, 1]),
    ),
    figure(
      'Coverage of F_t per method',
      'Share of steps whose candidate set F_t holds an acceptable tool (the tool the model needs is in the prompt).',
      bars('coverage', 'coverage', [0, 1]),
    ),
    figure('Mean |F_t| per method', 'Mean number of tools in the prompt per step.', bars('setSize', 'tools per step')),
  ];
}

/** Coverage against set size, each method's knob swept. */
function sweepFigures(d: DatasetReport): HTMLElement[] {
  return [
    figure(
      'Coverage against set size',
      'Each line sweeps one knob: α for thresholded sets (the paper), ' +
        "the coverage target for the default method's conformal sets. Up and left is better.",
      Plot.plot({
        width: 440,
        height: 340,
        marginLeft: 50,
        marginRight: 70,
        marginTop: 20,
        marginBottom: 35,
        x: { label: 'mean |F_t|', type: 'log', grid: true },
        y: { label: 'coverage', domain: [0, 1], grid: true },
        color: sweptColor,
        symbol: { domain: swept, range: swept.map((m) => styleOf(m).symbol) },
        marks: [
          // Points in sweep order (α falling, target rising): each line is one knob turned.
          ...(() => {
            const { yPx, fromPx } = unitScale(340, 20, 35);
            return methodLines(d.curves, 'setSize', 'coverage', yPx, fromPx);
          })(),
          Plot.tip(
            d.curves,
            Plot.pointer({
              x: 'setSize',
              y: 'coverage',
              title: (p: DatasetReport['curves'][number]) =>
                `${p.method}: ${p.knob} ${p.value} → coverage ${pct(p.coverage)}, |F_t| ${p.setSize.toFixed(2)}`,
            }),
          ),
        ],
      }),
    ),
  ];
}

/** The reliability diagram of the default and the strongest paper methods. */
function reliabilityFigures(d: DatasetReport): HTMLElement[] {
  // The default and the strongest paper methods; every method's ECE is in the table below.
  const shown = [data.defaultMethod, 'dtdr-h', 'dtdr-c', 'dr'];
  const calibrated = d.reliability.filter((b) => shown.includes(b.method));
  return [
    figure(
      'Reliability diagram',
      `Top-1 accuracy against the top-1 probability claimed, in 10 bins (dot area: steps), for ` +
        `${shown.join(', ')}. On the diagonal, probabilities mean what they say; every method's ` +
        `ECE is in the table.`,
      Plot.plot({
        width: 440,
        height: 300,
        marginLeft: 50,
        marginRight: 70,
        marginTop: 20,
        marginBottom: 35,
        x: { label: 'claimed probability (top-1)', domain: [0, 1], grid: true },
        y: { label: 'accuracy', domain: [0, 1], grid: true },
        r: { range: [1.5, 9] },
        color: { ...methodColor(false), legend: false },
        symbol: methodSymbol,
        marks: [
          Plot.line(
            [
              [0, 0],
              [1, 1],
            ],
            { stroke: '#bbb', strokeDasharray: '4,3' },
          ),
          ...(() => {
            const { yPx, fromPx } = unitScale(300, 20, 35);
            return methodLines(calibrated, 'confidence', 'accuracy', yPx, fromPx);
          })(),
          Plot.dot(calibrated, {
            x: 'confidence',
            y: 'accuracy',
            r: 'steps',
            fill: 'method',
            fillOpacity: 0.35,
            tip: true,
          }),
        ],
      }),
    ),
  ];
}

/** Prompt tokens per strategy, where the report counted them. */
function promptFigures(d: DatasetReport): HTMLElement[] {
  if (!d.prompts) return [];
  const long = d.prompts.rows.flatMap((r) => [
    { strategy: r.strategy, part: 'constant (cacheable)', tokens: r.constant },
    { strategy: r.strategy, part: 'variable', tokens: r.variable },
  ]);
  return [
    figure(
      'Prompt tokens per strategy',
      `Mean prompt tokens per step (${d.prompts.counter} tokenizer), split as the paper's ` +
        `Figure 4: the cacheable prefix and what changes each step; retriever ` +
        `${d.prompts.method}.`,
      Plot.plot({
        width: 440,
        height: 300,
        marginLeft: 100,
        x: { label: 'tokens per step', grid: true },
        y: { label: null, domain: d.prompts.rows.map((r) => r.strategy) },
        color: { legend: true, domain: ['constant (cacheable)', 'variable'], range: ['#9fb7d9', '#e3803a'] },
        marks: [Plot.barX(long, { y: 'strategy', x: 'tokens', fill: 'part', tip: true }), Plot.ruleX([0])],
      }),
    ),
  ];
}

/** The ablations' MRR curves (history length, clusters, demonstrations), where the report ran them. */
function ablationFigures(d: DatasetReport): HTMLElement[] {
  const ablation = (
    axis: 'history' | 'clusters' | 'demonstrations',
    title: string,
    xLabel: string,
    caption: string,
    log = false,
  ) => {
    const points = d.ablations.filter((p) => p.axis === axis);
    if (points.length === 0) return [];
    const { yPx, fromPx } = unitScale(280, 20, 35);
    return [
      figure(
        title,
        caption,
        Plot.plot({
          width: 440,
          height: 280,
          marginLeft: 50,
          marginTop: 20,
          marginBottom: 35,
          x: { label: xLabel, ...(log ? { type: 'log' as const } : {}), grid: true },
          y: { label: 'MRR', domain: [0, 1], grid: true },
          marginRight: 70,
          color: methodColor(false),
          symbol: methodSymbol,
          marks: [
            ...methodLines(points, 'value', 'mrr', yPx, fromPx),
            Plot.tip(
              points,
              Plot.pointer({
                x: 'value',
                y: 'mrr',
                title: (p: (typeof points)[number]) => `${p.method}: ${p.value} → MRR ${p.mrr.toFixed(3)}`,
              }),
            ),
          ],
        }),
      ),
    ];
  };
  return [
    ...ablation(
      'history',
      'Ablation: history length l',
      'history length l',
      "Refitted with the last l = 0–5 calls as context: DTDR-H's history features, " +
        "DTDR-C's dependency graphs (l ≥ 1) (paper Figure 5).",
    ),
    ...ablation(
      'clusters',
      'Ablation: number of clusters K',
      'clusters K',
      'DTDR-C refitted with K clusters (paper Figure 5).',
      true,
    ),
    ...ablation(
      'demonstrations',
      'Ablation: number of demonstrations',
      'demonstrations',
      'Refitted on 100 → all demonstrations (nested prefixes of one seeded shuffle).',
      true,
    ),
  ];
}

main.append(
  el(
    'p',
    { className: 'meta' },
    `Generated ${data.createdAt} · encoder ${data.encoder ?? 'none'} · default method ` +
      `${data.defaultMethod} · report format v${data.version}`,
  ),
  ...data.datasets.map(datasetSection),
);
// For tests and scripts: how many charts drew an SVG.
document.body.dataset.rendered = String(
  Array.from(document.querySelectorAll('figure.chart')).filter((f) => f.querySelector('svg[class*="plot"]')).length,
);

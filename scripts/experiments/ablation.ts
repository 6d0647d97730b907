/**
 * npm run experiment -- ablation [--data ultratool,restbench-tmdb,seal-tools] [--json out.json] [--results F]
 *
 * DTDR-G with each of its signals removed in turn, on every shared dataset (UltraTool official
 * split, the others seeded 70/30 with seed 0), and on UltraTool's test plans whose tool sequence
 * no demonstration has (`--split novel`). Prints a markdown table of MRR and coverage; `--results` records the MRR
 * table of docs/results.md (every dataset only).
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { sequenceKey, splitDataset } from '../../src/core/evaluation/evaluate.js';
import { scoreStep, summarize, type MetricSummary, type StepScore } from '../../src/core/base/metrics.js';
import { planSteps } from '../../src/core/plans/plan.js';
import { SIGNALS, type SignalName } from '../../src/core/retrieval/default/index.js';
import { selectCandidates } from '../../src/core/selection/select.js';
import { fitRetriever } from '../../src/core/retrieval/fit-method.js';
import { loadTraining } from '../../src/core/retrieval/load-training.js';
import { fitVectors } from '../../src/core/retrieval/train.js';
import { readDatasetDir } from '../../src/data/node.js';
import { loadEncoder } from '../../src/encoders/node.js';
import { recordFullRunOnly, refuser, writeResultsTable } from '../bench/results.js';
import { lookup, type Results } from '../../test/docs-results.js';
import '../../src/methods.js'; // every method, as the Node entry registers them

const { values } = parseArgs({
  options: {
    data: { type: 'string', default: 'ultratool,restbench-tmdb,seal-tools' },
    json: { type: 'string' },
    results: { type: 'string' },
  },
});
const refuse = refuser('ablation');
recordFullRunOnly(values, { data: 'ultratool,restbench-tmdb,seal-tools' }, refuse);
const root = new URL('../../../shared/data/', import.meta.url).pathname;
const encoder = await loadEncoder();
await loadTraining(); // fitRetriever is synchronous: DTDR-G's training code first
// 'end' and 'called' are bookkeeping features rather than evidence; ablate the evidence signals.
const ablations: (SignalName | null)[] = [null, ...SIGNALS.filter((s) => s !== 'end' && s !== 'called')];
const rows: Record<string, Record<string, MetricSummary>> = {};

for (const name of values.data.split(',')) {
  if (!existsSync(`${root}${name}/data.jsonl`)) {
    console.error(`${root}${name} is absent: skipped`);
    continue;
  }
  const dataset = readDatasetDir(`${root}${name}`);
  const split = splitDataset(dataset, { seed: 0 });
  const vectors = await fitVectors('dtdr-g', dataset.tools, split.train, encoder, 3);
  const seen = new Set(split.train.map(sequenceKey));
  const queries = new Map<string, Float32Array>();
  for (const p of split.test) if (!queries.has(p.query)) queries.set(p.query, (await encoder.embed([p.query]))[0]);
  for (const without of ablations) {
    const started = performance.now();
    const retriever = fitRetriever('dtdr-g', dataset.tools, split.train, vectors, {
      gated: { experimental: { without: without ? [without] : [] } },
    });
    const all: StepScore[] = [];
    const novel: StepScore[] = [];
    for (const plan of split.test) {
      for (const step of planSteps(plan)) {
        const ranking = retriever.rank({
          query: step.query,
          history: step.history,
          queryVector: queries.get(plan.query),
        });
        const set = selectCandidates(ranking);
        const score = scoreStep(
          ranking.order,
          ranking.labels,
          step.acceptable,
          set.candidates.map((c) => c.tool),
          { confidence: ranking.probabilities[ranking.order[0]], widened: set.widened },
        );
        all.push(score);
        if (!seen.has(sequenceKey(plan))) novel.push(score);
      }
    }
    const label = without ? `− ${without}` : 'DTDR-G (all signals)';
    (rows[label] ??= {})[name] = summarize(all);
    if (name === 'ultratool') rows[label][`${name} novel`] = summarize(novel);
    console.error(
      `${name} ${label}: MRR ${summarize(all).mrr.toFixed(3)} (${((performance.now() - started) / 1000).toFixed(1)} s)`,
    );
  }
}

const columns = [...new Set(Object.values(rows).flatMap((r) => Object.keys(r)))];
console.log(`| variant | ${columns.map((c) => `${c} MRR | ${c} coverage`).join(' | ')} |`);
console.log(`|---|${columns.map(() => '---:|---:').join('|')}|`);
for (const [label, r] of Object.entries(rows)) {
  console.log(
    `| ${label} | ${columns.map((c) => (r[c] ? `${r[c].mrr.toFixed(3)} | ${r[c].coverage.toFixed(3)}` : '– | –')).join(' | ')} |`,
  );
}
if (values.json) writeFileSync(values.json, JSON.stringify(rows, null, 2));
if (values.results) {
  const named = { ultratool: 'UltraTool', 'ultratool novel': 'UltraTool novel', 'restbench-tmdb': 'RestBench' };
  // The full model's row restates `dtdr eval`'s figures: a reference to them, which must say what this run measured.
  const results = JSON.parse(readFileSync(values.results, 'utf8')) as Results;
  const evalPath = (c: string) => `eval.${c.replace(' ', '-')}.results.dtdr-g.mrr`;
  const full = rows['DTDR-G (all signals)'];
  for (const c of columns)
    if (lookup(results, evalPath(c)) !== full[c].mrr.toFixed(3))
      refuse(
        `${c}: dtdr eval says ${lookup(results, evalPath(c))}, this run ${full[c].mrr.toFixed(3)}: rerun dtdr eval first`,
      );
  writeResultsTable(values.results, 'ablation', {
    title: 'DTDR-G with each signal removed in turn (MRR)',
    command: 'npm run experiment -- ablation',
    columns: ['removed', ...columns.map((c) => ({ ...named, 'seal-tools': 'Seal-Tools' })[c] ?? c)],
    align: ['left', ...columns.map(() => 'right' as const)],
    rows: Object.entries(rows).map(([label, r]) =>
      label.startsWith('− ')
        ? [label.slice(2), ...columns.map((c) => (r[c] ? r[c].mrr.toFixed(3) : '–'))]
        : ['none (DTDR-G)', ...columns.map((c) => ({ ref: evalPath(c) }))],
    ),
  });
}
await encoder.dispose?.();

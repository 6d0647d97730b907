/**
 * The compositional demo set: 48 requests that recombine the demo scenarios
 * (`test/fixtures/demo-compositional.jsonl`), against DTDR-G trained on the 3,000 generated demo
 * plans, none of which has these requests. Prints coverage, mean set size, confident-miss and each
 * step whose set missed the needed tool (confident or unsure, and why).
 *
 *   npm run experiment -- compositional [--methods dtdr-g,dtdr-c] [--results docs/results.json]
 *
 * `--results` records the default's figures beside the best other method's MRR (the run must include
 * dtdr-g and another method; docs/results.md).
 */
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { parsePlans } from '../../src/core/plans/dataset.js';
import { evaluateMethods } from '../../src/core/evaluation/evaluate.js';
import type { MethodName } from '../../src/core/retrieval/types.js';
import { selectCandidates } from '../../src/core/selection/select.js';
import { demoDataset } from '../../src/demo/toolset.js';
import { loadEncoder } from '../../src/encoders/node.js';
import { writeResultsTable } from '../bench/results.js';

const { values } = parseArgs({
  options: { methods: { type: 'string', default: 'dtdr-g' }, results: { type: 'string' } },
});
const test = parsePlans(readFileSync(new URL('../../test/fixtures/demo-compositional.jsonl', import.meta.url), 'utf8'));
const demo = demoDataset();
const methods = values.methods.split(',') as MethodName[];
const misses: string[] = [];
const r = await evaluateMethods(demo.tools, demo.plans, test, await loadEncoder(), {
  methods,
  timingPasses: 0,
  onMethodScored: (method, s) =>
    s.scores.forEach((sc, i) => {
      if (sc.covered) return;
      const step = s.steps[i];
      const ranking = s.rankings[i];
      const set = selectCandidates(ranking).candidates.map((c) => `${c.tool} ${c.probability.toFixed(2)}`);
      misses.push(
        `${method} ${sc.widened ? 'unsure   ' : 'CONFIDENT'} "${step.query}" after [${step.history.join(' → ')}] needs ${step.acceptable.join(' | ')}; set: ${set.join(', ')}${ranking.cause ? ` (${ranking.cause})` : ''}`,
      );
    }),
});
console.log(
  `compositional demo set: ${r.testPlans} requests, ${r.steps} steps, trained on ${demo.plans.length} demo plans`,
);
for (const [method, m] of Object.entries(r.results))
  console.log(
    `${method.padEnd(8)} MRR ${m.mrr.toFixed(3)}  coverage ${m.coverage.toFixed(3)}  |F_t| ${m.setSize.toFixed(2)}  confident-miss ${m.confidentMissRate.toFixed(3)}  widened ${m.widenedRate.toFixed(3)}`,
  );
console.log(`\nsteps whose set missed the needed tool (${misses.length}):`);
for (const line of misses) console.log(`  ${line}`);

if (values.results) {
  const g = r.results['dtdr-g'];
  const others = Object.entries(r.results).filter(([m]) => m !== 'dtdr-g');
  if (!g || others.length === 0) {
    console.error('compositional: --results needs dtdr-g and another method in --methods');
    process.exit(2);
  }
  const [best, b] = others.sort((x, y) => y[1].mrr - x[1].mrr)[0];
  writeResultsTable(values.results, 'compositional', {
    title:
      'Compositional demo set: 48 requests that combine familiar steps in sequences no demonstration has ' +
      '(test/fixtures/demo-compositional.jsonl)',
    command: `npm run experiment -- compositional --methods ${methods.join(',')}`,
    columns: ['method', 'MRR', 'coverage', 'mean |F_t|', 'confident-miss'],
    align: ['left', 'right', 'right', 'right', 'right'],
    rows: [
      [
        'DTDR-G (default)',
        g.mrr.toFixed(3),
        g.coverage.toFixed(3),
        g.setSize.toFixed(2),
        g.confidentMissRate.toFixed(3),
      ],
      [`${best.toUpperCase()} (best other)`, b.mrr.toFixed(3), '', '', ''],
    ],
  });
}

/**
 * The compositional demo set: 48 requests that recombine the demo scenarios
 * (`test/fixtures/demo-compositional.jsonl`), against DTDR-G trained on the 3,000 generated demo
 * plans, none of which has these requests. Prints coverage, mean set size, confident-miss and each
 * step whose set missed the needed tool (confident or unsure, and why).
 *
 *   npm run experiment -- compositional [--methods dtdr-g,dtdr-c]
 */
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { parsePlans } from '../../src/core/plans/dataset.js';
import { evaluateMethods } from '../../src/core/evaluation/evaluate.js';
import type { MethodName } from '../../src/core/retrieval/types.js';
import { selectCandidates } from '../../src/core/selection/select.js';
import { demoDataset } from '../../src/demo/toolset.js';
import { loadEncoder } from '../../src/encoders/node.js';

const { values } = parseArgs({ options: { methods: { type: 'string', default: 'dtdr-g' } } });
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

/**
 * Tools-only models against BM25 on the three public datasets (test/worlds/tools-only.ts): MRR over
 * every step, the history-aware steps and the first steps.
 * Usage: npm run experiment -- tools-only [--json] [--encoder <folder | id>]
 */
import { parseArgs } from 'node:util';
import { TOOLS_ONLY_DATASETS, toolsOnlyFigures } from '../../test/worlds/tools-only.js';

const { values: args } = parseArgs({
  options: { json: { type: 'boolean', default: false }, encoder: { type: 'string' } },
});
const root = new URL('../../../shared/data/', import.meta.url).pathname;
for (const name of TOOLS_ONLY_DATASETS) {
  const f = await toolsOnlyFigures(`${root}${name}`, undefined, args.encoder);
  if (args.json) console.log(JSON.stringify(f));
  else {
    console.log(`${f.dataset}: ${f.steps} test steps, ${f.historySteps} with history`);
    for (const [m, r] of Object.entries(f.mrr))
      console.log(
        `  ${m.padEnd(7)} MRR all ${r.all.toFixed(4)}  history-aware ${r.history.toFixed(4)}  first step ${r.first.toFixed(4)}`,
      );
  }
}

/**
 * npm run experiment -- report [--out report.html --data ultratool,restbench-tmdb,seal-tools --no-ablations]
 *
 * The HTML evaluation report over every shared dataset present (UltraTool's official split and its
 * novel sequences, the others seeded 70/30 with seed 0): every method, coverage against set size,
 * calibration, prompt tokens per strategy, ablations (on UltraTool) and the worst misses; the
 * peers (the AI SDK's default tool search, Orama's BM25 / vector / hybrid) in the table and bars.
 * One self-contained file that opens offline. Takes a few minutes (Seal-Tools has 4,076 tools).
 */
import { existsSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { splitDataset } from '../../src/core/evaluation/evaluate.js';
import { METHODS, PEERS } from '../../src/core/retrieval/methods.js';
import { peersFor } from '../../src/cli/peers/index.js';
import { readDatasetDir } from '../../src/data/node.js';
import { loadEncoder } from '../../src/encoders/node.js';
import { collectDatasetReport, reportData, type DatasetReport } from '../../src/report/collect.js';
import { checkReportPath, writeReport } from '../../src/report/node.js';
import { loadQwen3TokenCounter } from '../../src/tokens/qwen3.js';

const { values } = parseArgs({
  options: {
    out: { type: 'string', default: 'report.html' },
    data: { type: 'string', default: 'ultratool,restbench-tmdb,seal-tools' },
    'no-ablations': { type: 'boolean' },
  },
});
checkReportPath(values.out);
const root = new URL('../../../shared/data/', import.meta.url).pathname;
const encoder = await loadEncoder();
const counter = await loadQwen3TokenCounter().catch(() => undefined);
const sections: DatasetReport[] = [];
for (const name of values.data.split(',')) {
  if (!existsSync(`${root}${name}/data.jsonl`)) {
    console.error(`${root}${name} is absent: skipped`);
    continue;
  }
  const dataset = readDatasetDir(`${root}${name}`);
  const splits = name === 'ultratool' ? (['default', 'novel'] as const) : (['default'] as const);
  for (const kind of splits) {
    const started = performance.now();
    const split = splitDataset(dataset, { seed: 0, split: kind });
    sections.push(
      await collectDatasetReport(
        kind === 'novel' ? { ...dataset, name: `${name} (novel sequences)` } : dataset,
        split,
        encoder,
        {
          // Every method, then the peers (other packages' tool search) on the same steps.
          methods: [...METHODS, ...PEERS],
          peers: peersFor(PEERS),
          seed: 0,
          counter,
          // Ablations refit a dozen times: on the first dataset's default split only.
          ablations: !values['no-ablations'] && sections.length === 0,
        },
      ),
    );
    console.error(`${name} ${kind}: ${((performance.now() - started) / 1000).toFixed(0)} s`);
  }
}
writeReport(values.out, reportData(sections, encoder));
console.error(`report written to ${values.out}`);
await encoder.dispose?.();

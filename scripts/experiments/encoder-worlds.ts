/**
 * Encoders side by side on every public world: DTDR-G's MRR tools only (the test split, and every
 * plan) and with demonstrations (the default split, and UltraTool's novel-sequence split), seed 0.
 *
 *   npm run experiment -- encoder-worlds [--encoders glove,models/dtdr-use-lite,glove+models/dtdr-use-lite]
 *                                        [--worlds ultratool,restbench-tmdb,seal-tools] [--no-demos]
 *
 * An encoder is `glove` (the bundled model), a model folder, or `A+B`, the two side by side
 * (test/worlds/encoders.ts). One JSON line per encoder and world, with the time spent embedding.
 */
import { loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import { evaluateMethods, splitDataset } from '../../src/core/evaluation/evaluate.js';
import { readDatasetDir } from '../../src/data/node.js';
import { encoderByName } from '../../test/worlds/encoders.js';
import { toolsOnlyFigures } from '../../test/worlds/tools-only.js';

const { values: args } = parseArgs({
  options: {
    encoders: { type: 'string', default: 'glove,models/dtdr-use-lite,glove+models/dtdr-use-lite' },
    worlds: { type: 'string', default: 'ultratool,restbench-tmdb,seal-tools' },
    'no-demos': { type: 'boolean', default: false },
  },
});
const root = new URL('../../../shared/data/', import.meta.url).pathname;
const round = (x: number | undefined) => (x === undefined ? undefined : +x.toFixed(4));

for (const name of args.encoders.split(',')) {
  const encoder = await encoderByName(name);
  for (const world of args.worlds.split(',')) {
    const started = performance.now();
    const dir = `${root}${world}`;
    const toolsOnly = await toolsOnlyFigures(dir, ['dtdr-g'], encoder);
    const toolsOnlyAll = await toolsOnlyFigures(dir, ['dtdr-g'], encoder, true);
    const row: Record<string, unknown> = {
      encoder: encoder.id,
      world,
      toolsOnlyTest: {
        steps: toolsOnly.steps,
        mrr: round(toolsOnly.mrr['dtdr-g'].all),
        first: round(toolsOnly.mrr['dtdr-g'].first),
      },
      toolsOnlyAllPlans: { steps: toolsOnlyAll.steps, mrr: round(toolsOnlyAll.mrr['dtdr-g'].all) },
    };
    if (!args['no-demos']) {
      const dataset = readDatasetDir(dir);
      for (const split of world === 'ultratool' ? (['default', 'novel'] as const) : (['default'] as const)) {
        const { train, test } = splitDataset(dataset, { seed: 0, split });
        const result = await evaluateMethods(dataset.tools, train, test, encoder, {
          methods: ['dtdr-g'],
          seed: 0,
          timingPasses: 0,
        });
        const r = result.results['dtdr-g']!;
        row[split === 'default' ? 'withDemos' : 'withDemosNovel'] = {
          train: train.length,
          test: test.length,
          mrr: round(r.mrr),
          fitSeconds: +(r.fitMs / 1000).toFixed(1),
          embedSeconds: +(r.embedMs / 1000).toFixed(1),
        };
      }
    }
    row.seconds = +((performance.now() - started) / 1000).toFixed(0);
    row.loadAverage = +loadavg()[0].toFixed(1);
    console.log(JSON.stringify(row));
  }
  await encoder.dispose?.();
}

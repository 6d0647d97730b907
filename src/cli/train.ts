import { Dtdr } from '../core/dtdr.js';
import { DtdrError } from '../core/errors.js';
import { fitNeeds } from '../core/train.js';
import { readDatasetDir } from '../data/node.js';
import { demoDataset } from '../demo/toolset.js';
import { writeModelFile } from '../storage/file.js';
import { intOption, parseCommandArgs } from './args.js';
import { ProgressBar } from './progress.js';
import { encoderOptions, loadCliEncoder, parseMethod } from './shared.js';

export const trainHelp = `dtdr train (--data DIR | --demo) --out FILE [options]

Trains a retriever on every plan of a TaskBench-layout folder (data.jsonl, tool_desc.json) or on
the built-in demo tool set, and writes one model file.

  --method M            dtdr-c (default) | dtdr-l | dtdr-h | lr | dr | qts | bm25 | random
  --history-length N    tools of history the model conditions on (default 3)
  --clusters N          DTDR-C clusters (default: demonstrations / 10)
  --epochs N            linear-head epochs (default 8)
  --seed N              default 0
  --exclude-test        leave out the plans listed in split_ids.json
  --encoder X           model id or folder (default: the bundled offline encoder)`;

export async function trainCommand(argv: string[]): Promise<void> {
  const { values } = parseCommandArgs('train', argv, {
    data: { type: 'string' },
    demo: { type: 'boolean' },
    out: { type: 'string' },
    method: { type: 'string' },
    'history-length': { type: 'string' },
    clusters: { type: 'string' },
    epochs: { type: 'string' },
    seed: { type: 'string' },
    'exclude-test': { type: 'boolean' },
    ...encoderOptions,
  });
  if (!values.out) throw new DtdrError('usage', 'train: --out FILE is required');
  if (!values.data === !values.demo) throw new DtdrError('usage', 'train: give exactly one of --data DIR or --demo');
  const method = parseMethod((values.method as string | undefined) ?? 'dtdr-c');
  const dataset = values.demo ? demoDataset() : readDatasetDir(values.data as string);
  let plans = dataset.plans;
  if (values['exclude-test'] && dataset.testIds) {
    const test = new Set(dataset.testIds);
    plans = plans.filter((p) => !test.has(p.id));
  }
  const needs = fitNeeds(method);
  const encoder = needs.queries || needs.tools || needs.contexts ? await loadCliEncoder(values) : undefined;
  const bar = new ProgressBar();
  const started = Date.now();
  const model = await Dtdr.train({
    method,
    tools: dataset.tools,
    plans,
    encoder,
    dataset: dataset.name,
    historyLength: intOption(values['history-length'] as string | undefined, 'history-length', 3, 1),
    clusters: values.clusters === undefined ? undefined : intOption(values.clusters as string, 'clusters', 1, 1),
    seed: intOption(values.seed as string | undefined, 'seed', 0),
    head: { epochs: intOption(values.epochs as string | undefined, 'epochs', 8, 1) },
    onProgress: (p) => bar.update(p.phase, p.fraction, p.loss !== undefined ? `loss ${p.loss.toFixed(3)}` : ''),
  });
  bar.done();
  writeModelFile(values.out as string, model.toJSON());
  console.error(`trained ${method} on ${plans.length} plans of ${dataset.name} (${dataset.tools.length} tools) in ${((Date.now() - started) / 1000).toFixed(1)} s → ${values.out}`);
}

import { Dtdr } from '../core/dtdr.js';
import { DtdrError } from '../core/base/errors.js';
import { DEFAULT_METHOD, fitNeeds } from '../core/retrieval/methods.js';
import { readDatasetDir } from '../data/node.js';
import { demoDataset } from '../demo/toolset.js';
import { checkModelPath, writeModelFile } from '../storage/file.js';
import { intOption, numberOption, parseCommandArgs } from './args.js';
import { ProgressBar } from './progress.js';
import {
  checkDescribed,
  cliFoldWorkers,
  encoderOptions,
  loadCliEncoder,
  parseMethod,
  trainingFlags,
} from './shared.js';

export const trainHelp = `dtdr train (--data DIR | --demo) --out FILE [options]

Trains a retriever on every plan of a TaskBench-layout folder (data.jsonl, tool_desc.json) or on
the built-in demo tool set, and writes one model file. A folder with tool_desc.json and no (or an
empty) data.jsonl trains on the tools alone (dtdr-g, bm25, qts).

  --method M            dtdr-g (default: gated, calibrated) | dtdr-c | dtdr-l | dtdr-h | dtdr-cb
                        | lr | dr | qts | bm25 | random
  --target T            dtdr-g: share of steps whose candidate set must hold a right tool (default 0.95)
  --history-length N    tools of history the model conditions on (dtdr-g: chosen from the data; others 3)
  --clusters N          clusters (dtdr-g: chosen from the data; DTDR-C: demonstrations / 10)
  --epochs N            linear-head epochs (default 8)
  --seed N              default 0
  --threads N           dtdr-g, from 1,000 demonstrations: worker threads for cross-fitting besides this
                        one (default: CPU cores − 1, at most 3; 0 = this thread only). The model is
                        the same for any N; each thread holds a copy of the demonstrations
  --exclude-test        leave out the plans listed in split_ids.json
  --allow-undescribed   train although tools lack descriptions (no tool_desc.json, or an empty "desc"):
                        the tools are then known by name only, and methods that read descriptions lose that signal
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
    threads: { type: 'string' },
    'exclude-test': { type: 'boolean' },
    target: { type: 'string' },
    'allow-undescribed': { type: 'boolean' },
    ...encoderOptions,
  });
  if (!values.out) throw new DtdrError('usage', 'train: --out FILE is required');
  if (!values.data === !values.demo) throw new DtdrError('usage', 'train: give exactly one of --data DIR or --demo');
  const method = parseMethod((values.method as string | undefined) ?? DEFAULT_METHOD);
  const target = numberOption(values.target as string | undefined, 'target', 0.95, 0.5, 0.999);
  checkModelPath(values.out as string);
  const allowUndescribed = values['allow-undescribed'] === true;
  const dataset = values.demo ? demoDataset() : readDatasetDir(values.data as string);
  if (values.data) checkDescribed(values.data as string, dataset, allowUndescribed);
  let plans = dataset.plans;
  if (values['exclude-test'] && dataset.testIds) {
    const test = new Set(dataset.testIds);
    plans = plans.filter((p) => !test.has(p.id));
  }
  const needs = fitNeeds(method);
  const encoder = needs.queries || needs.tools || needs.contexts ? await loadCliEncoder(values) : undefined;
  const bar = new ProgressBar();
  const started = Date.now();
  const workers = cliFoldWorkers(values);
  const model = await Dtdr.train({
    workers,
    method,
    allowUndescribed,
    tools: dataset.tools,
    plans,
    encoder,
    dataset: dataset.name,
    ...trainingFlags(values, target),
    seed: intOption(values.seed as string | undefined, 'seed', 0),
    onProgress: (p) => bar.update(p.phase, p.fraction, p.loss !== undefined ? `loss ${p.loss.toFixed(3)}` : ''),
  }).finally(() => workers.close());
  bar.done();
  workers.report();
  writeModelFile(values.out as string, model.toJSON());
  const what = plans.length === 0 ? 'the tools alone (no demonstrations)' : `${plans.length} plans`;
  console.error(
    `trained ${method} on ${what} of ${dataset.name} (${dataset.tools.length} tools) in ` +
      `${((Date.now() - started) / 1000).toFixed(1)} s → ${values.out}`,
  );
  const d = model.diagnostics;
  if (d)
    console.error(
      `held-out calibration: top-1 ECE ${d.ece.temperature.toFixed(3)} over ${d.heldOutSteps} ` +
        `steps (${d.folds} folds by ${d.foldBy}; conformal thresholds from ` +
        `${d.thresholdsFrom ?? d.foldBy} folds); ${plural(d.historyLength, 'call')} of history, ` +
        `${plural(d.clusters, 'request cluster')}`,
    );
}

const plural = (n: number, noun: string): string => `${n} ${noun}${n === 1 ? '' : 's'}`;

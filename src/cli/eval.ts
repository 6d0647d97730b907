import { DtdrError } from '../core/errors.js';
import { evaluateMethods, splitDataset } from '../core/evaluate.js';
import { fitNeeds, METHODS } from '../core/train.js';
import type { Dataset } from '../core/types.js';
import { readDatasetDir } from '../data/node.js';
import { intOption, numberOption, parseCommandArgs } from './args.js';
import { ProgressBar } from './progress.js';
import { encoderOptions, fmt, loadCliEncoder, parseMethods } from './shared.js';

export const evalHelp = `dtdr eval --data DIR [options]

Trains each method on the demonstrations and scores next-tool retrieval on the test plans, step by
step with the ground-truth history (MRR, F1@|F*|, top-1, recall@5, coverage and size of F_t).

  --methods a,b,…       default: ${METHODS.join(',')}
  --train DIR           train on DIR and test on all of --data
  --test-ratio R        seeded plan-level split when there is no split_ids.json (default 0.3)
  --seed N              split, k-means and shuffling seed (default 0)
  --history-length N    default 3
  --clusters N          DTDR-C clusters (default: demonstrations / 10)
  --epochs N            linear-head epochs (default 8)
  --alpha A             threshold for F_t (default 0.1)
  --encoder X           model id or folder (default: the bundled offline encoder)
  --json                one JSON object instead of the table`;

export async function evalCommand(argv: string[]): Promise<void> {
  const { values } = parseCommandArgs('eval', argv, {
    data: { type: 'string' },
    methods: { type: 'string' },
    train: { type: 'string' },
    'test-ratio': { type: 'string' },
    seed: { type: 'string' },
    'history-length': { type: 'string' },
    clusters: { type: 'string' },
    epochs: { type: 'string' },
    alpha: { type: 'string' },
    json: { type: 'boolean' },
    ...encoderOptions,
  });
  if (!values.data) throw new DtdrError('usage', 'eval: --data DIR is required');
  const methods = parseMethods(values.methods as string | undefined, METHODS);
  const seed = intOption(values.seed as string | undefined, 'seed', 0);
  const testRatio = numberOption(values['test-ratio'] as string | undefined, 'test-ratio', 0.3, 0.01, 0.99);
  const data = readDatasetDir(values.data as string);
  let trainSet: Dataset;
  let split;
  if (values.train) {
    trainSet = readDatasetDir(values.train as string);
    split = { train: trainSet.plans, test: data.plans, description: `train=${trainSet.name}` };
  } else {
    trainSet = data;
    split = splitDataset(data, { testRatio, seed });
  }
  const needsEncoder = methods.some((m) => {
    const n = fitNeeds(m);
    return n.queries || n.tools || n.contexts;
  });
  const encoder = needsEncoder ? await loadCliEncoder(values) : undefined;
  const bar = new ProgressBar();
  const result = await evaluateMethods(trainSet.tools, split.train, split.test, encoder, {
    methods,
    seed,
    historyLength: intOption(values['history-length'] as string | undefined, 'history-length', 3, 1),
    clusters: values.clusters === undefined ? undefined : intOption(values.clusters as string, 'clusters', 1, 1),
    head: { epochs: intOption(values.epochs as string | undefined, 'epochs', 8, 1) },
    select: { alpha: numberOption(values.alpha as string | undefined, 'alpha', 0.1, 0, 1) },
    onMethodProgress: (method, p) => bar.update(`${method} ${p.phase}`, p.fraction, p.loss !== undefined ? `loss ${p.loss.toFixed(3)}` : ''),
  });
  bar.done();
  const round = (x: number, d = 4) => Math.round(x * 10 ** d) / 10 ** d;
  if (values.json) {
    const results = Object.fromEntries(
      Object.entries(result.results).map(([m, r]) => [m, {
        mrr: round(r!.mrr), f1: round(r!.f1), top1: round(r!.top1), recall5: round(r!.recall5), coverage: round(r!.coverage), setSize: round(r!.setSize, 3),
        fitMs: Math.round(r!.fitMs), embedMs: Math.round(r!.embedMs), rankMicrosPerStep: round(r!.rankMicrosPerStep, 1),
      }]),
    );
    console.log(JSON.stringify({ dataset: data.name, split: split.description, trainPlans: result.trainPlans, testPlans: result.testPlans, steps: result.steps, encoder: encoder?.id ?? null, results }));
    return;
  }
  console.log(`${data.name} · split ${split.description} · ${result.trainPlans} demonstrations, ${result.testPlans} test plans, ${result.steps} steps · encoder ${encoder?.id ?? '-'}`);
  console.log('method     MRR    F1     top-1  rec@5  cover  |F_t|   fit s   µs/step');
  for (const [m, r] of Object.entries(result.results)) {
    console.log(`${m.padEnd(9)}  ${fmt(r!.mrr)}  ${fmt(r!.f1)}  ${fmt(r!.top1)}  ${fmt(r!.recall5)}  ${fmt(r!.coverage)}  ${r!.setSize.toFixed(2).padStart(5)}  ${(r!.fitMs / 1000).toFixed(2).padStart(6)}  ${r!.rankMicrosPerStep.toFixed(1).padStart(8)}`);
  }
}

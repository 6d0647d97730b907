import type { Encoder } from '../base/encoder.js';
import { DtdrError } from '../base/errors.js';
import { scoreStep, summarize, type MetricSummary, type StepScore } from '../base/metrics.js';
import { planSteps, planTools, sequenceKey } from '../plans/plan.js';

export { sequenceKey };
import { seededRandom, shuffleInPlace } from '../base/random.js';
import type { MethodName, RankInput, Ranking, Retriever, TrainingProgress } from '../retrieval/types.js';
import { selectCandidates, type SelectOptions } from '../selection/select.js';
import { contextText } from '../base/text.js';
import { embedAll, fitRetriever, fitVectors, TRAIN_DEFAULTS, type FitVectors, type TrainOptions } from '../retrieval/train.js';
import type { Dataset, Plan, PlanStep, ToolSpec } from '../base/types.js';

export interface Split {
  train: Plan[];
  test: Plan[];
  /** How the split was made, for reports: `official` or `seeded(seed=0, test=0.3)`. */
  description: string;
}

export type SplitKind = 'default' | 'novel';

/**
 * The official split when the dataset has one; otherwise a seeded plan-level split. `novel` keeps
 * only the test plans whose tool sequence no training plan has: new combinations of familiar
 * steps, the requests that memorised sequences cannot answer.
 */
export function splitDataset(dataset: Dataset, options: { testRatio?: number; seed?: number; split?: SplitKind } = {}): Split {
  const split = baseSplit(dataset, options);
  if (options.split !== 'novel') return split;
  const seen = new Set(split.train.map(sequenceKey));
  const test = split.test.filter((p) => !seen.has(sequenceKey(p)));
  if (test.length === 0) throw new DtdrError('data', 'no test plan has a tool sequence that the training plans lack', { hint: 'use the default split' });
  return { train: split.train, test, description: `${split.description}, novel sequences` };
}

function baseSplit(dataset: Dataset, options: { testRatio?: number; seed?: number }): Split {
  if (dataset.testIds && dataset.testIds.length > 0) {
    const test = new Set(dataset.testIds);
    return { train: dataset.plans.filter((p) => !test.has(p.id)), test: dataset.plans.filter((p) => test.has(p.id)), description: 'official' };
  }
  const ratio = options.testRatio ?? 0.3;
  const seed = options.seed ?? 0;
  if (!(ratio > 0 && ratio < 1)) throw new DtdrError('options', `test ratio must be in (0, 1), got ${ratio}`, { field: 'testRatio' });
  const plans = shuffleInPlace([...dataset.plans], seededRandom(seed + 7919));
  const nTest = Math.max(1, Math.round(plans.length * ratio));
  if (nTest >= plans.length) throw new DtdrError('data', `only ${plans.length} plans: too few to split`, { hint: 'give more demonstrations or a separate --train set' });
  return { test: plans.slice(0, nTest), train: plans.slice(nTest), description: `seeded(seed=${seed}, test=${ratio})` };
}

export interface MethodResult extends MetricSummary {
  /** Fitting time, embeddings excluded. */
  fitMs: number;
  /** Time spent embedding this method's training texts (shared texts are embedded once per run). */
  embedMs: number;
  /** Median time of one rank() call, embeddings excluded. */
  rankMicrosPerStep: number;
  /** The same figures per calibration group, for retrievers that report one per step (dtdr-g's Ranking.group). */
  groups?: Record<string, MetricSummary>;
}

export interface EvaluateOptions extends TrainOptions {
  methods: readonly MethodName[];
  select?: SelectOptions;
  /** Timed passes over the test steps; the median is reported. Default 3. */
  timingPasses?: number;
  onMethodProgress?: (method: MethodName, progress: TrainingProgress) => void;
  /**
   * Called once per method after it is scored, with the fitted retriever and the test steps'
   * rank inputs, for reports that need more than the summary (sweeps, calibration bins, misses).
   */
  onMethodScored?: (method: MethodName, scored: ScoredMethod) => void;
}

export interface ScoredMethod {
  retriever: Retriever;
  steps: PlanStep[];
  inputs: RankInput[];
  /** Each step's ranking, as scored. */
  rankings: Ranking[];
  scores: StepScore[];
}

export interface EvaluationResult {
  trainPlans: number;
  testPlans: number;
  steps: number;
  results: Partial<Record<MethodName, MethodResult>>;
}

/**
 * Trains each method on `train` and scores it on every step of every `test` plan with the
 * ground-truth history. Texts shared between methods (queries, contexts) are embedded once.
 */
export async function evaluateMethods(tools: ToolSpec[], train: Plan[], test: Plan[], encoder: Encoder | undefined, options: EvaluateOptions): Promise<EvaluationResult> {
  const l = options.historyLength ?? TRAIN_DEFAULTS.historyLength;
  const steps = test.flatMap((p) => planSteps(p));
  const shared: FitVectors = {};
  let testQueries: Map<string, Float32Array> | undefined;
  let testContexts: Float32Array[] | undefined;
  const results: EvaluationResult['results'] = {};

  for (const method of options.methods) {
    const progress = (p: TrainingProgress) => options.onMethodProgress?.(method, p);
    const t0 = performance.now();
    Object.assign(shared, await fitVectors(method, tools, train, encoder, l, shared, progress));
    const embedMs = performance.now() - t0;
    const t1 = performance.now();
    const retriever = fitRetriever(method, tools, train, shared, { ...options, onProgress: progress });
    const fitMs = performance.now() - t1;

    if (encoder && retriever.needs.query && !testQueries) {
      const queries = [...new Set(test.map((p) => p.query))];
      const vectors = await embedAll(encoder, queries);
      testQueries = new Map(queries.map((q, i) => [q, vectors[i]]));
    }
    if (encoder && retriever.needs.context && !testContexts) testContexts = await embedAll(encoder, steps.map((s) => contextText(s.query, s.history, l)));
    const inputs: RankInput[] = steps.map((s, i) => ({
      query: s.query,
      history: s.history,
      queryVector: testQueries?.get(s.query),
      contextVector: testContexts?.[i],
    }));

    // Kept for the onMethodScored hook (reports), so it need not rank every step again.
    const rankings: Ranking[] = [];
    const groupOf: (string | undefined)[] = [];
    const scores = inputs.map((input, i) => {
      const ranking = retriever.rank(input);
      if (options.onMethodScored) rankings.push(ranking);
      groupOf.push(ranking.group);
      const set = selectCandidates(ranking, options.select);
      return scoreStep(scoringOrder(ranking, steps[i].acceptable), ranking.labels, steps[i].acceptable, set.candidates.map((c) => c.tool), {
        confidence: ranking.probabilities[ranking.order[0]],
        widened: set.widened,
      });
    });
    const passes: number[] = [];
    for (let pass = 0; pass < (options.timingPasses ?? 3); pass++) {
      const start = performance.now();
      // What an app pays per step: the ranking and its candidate set (the full order is not needed).
      for (const input of inputs) selectCandidates(retriever.rank(input), options.select);
      passes.push(((performance.now() - start) * 1000) / Math.max(1, inputs.length));
    }
    passes.sort((a, b) => a - b);
    options.onMethodScored?.(method, { retriever, steps, inputs, rankings, scores });
    const byGroup = new Map<string, StepScore[]>();
    scores.forEach((sc, i) => {
      const g = groupOf[i];
      if (g === undefined) return;
      const list = byGroup.get(g);
      if (list) list.push(sc);
      else byGroup.set(g, [sc]);
    });
    const groups = byGroup.size > 0 ? Object.fromEntries([...byGroup].sort(([a], [b]) => a.localeCompare(b)).map(([g, list]) => [g, summarize(list)])) : undefined;
    results[method] = { ...summarize(scores), ...(groups ? { groups } : {}), fitMs, embedMs, rankMicrosPerStep: passes.length ? passes[Math.floor(passes.length / 2)] : 0 };
    progress({ phase: 'done', fraction: 1 });
  }
  return { trainPlans: train.length, testPlans: test.length, steps: steps.length, results };
}

/** Labels of the ranking's head that scoring reads before the full order is needed. */
const SCORED_PREFIX = 64;

/**
 * What scoreStep needs of the order: the ranks up to the first acceptable label and the top
 * |acceptable|. A prefix from `top` (the same order, without sorting every label: at 16,000 tools a
 * full sort per step was most of an evaluation's time) when it holds both; else the full order.
 */
function scoringOrder(ranking: Ranking, acceptable: readonly string[]): ArrayLike<number> {
  if (!ranking.top || acceptable.length > SCORED_PREFIX) return ranking.order;
  const prefix = ranking.top(Math.min(SCORED_PREFIX, ranking.labels.length));
  for (let r = 0; r < prefix.length; r++) if (acceptable.includes(ranking.labels[prefix[r]])) return prefix;
  return ranking.order;
}

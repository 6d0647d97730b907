import type { Encoder } from '../base/encoder.js';
import { DtdrError } from '../base/errors.js';
import { scoreStep, summarize, type MetricSummary, type StepScore } from '../base/metrics.js';
import { planSteps, sequenceKey } from '../plans/plan.js';

export { sequenceKey };
import { seededRandom, shuffleInPlace } from '../base/random.js';
import type {
  EvalMethodName,
  MethodName,
  Peer,
  PeerName,
  PeerRetriever,
  RankInput,
  Ranking,
  Retriever,
  TrainingProgress,
} from '../retrieval/types.js';
import { selectCandidates, type SelectOptions } from '../selection/select.js';
import { contextText } from '../base/text.js';
import { embedAll, fitRetrieverWith, fitVectors } from '../retrieval/train.js';
import { isPeer, TRAIN_DEFAULTS, type FitVectors, type TrainOptions } from '../retrieval/methods.js';
import { registerPaperMethods } from '../retrieval/paper-methods.js';
import type { Dataset, Plan, PlanStep, ToolSpec } from '../base/types.js';

/** Training and test plans, and how they were split. */
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
export function splitDataset(
  dataset: Dataset,
  options: { testRatio?: number; seed?: number; split?: SplitKind } = {},
): Split {
  const split = baseSplit(dataset, options);
  if (options.split !== 'novel') return split;
  const seen = new Set(split.train.map(sequenceKey));
  const test = split.test.filter((p) => !seen.has(sequenceKey(p)));
  if (test.length === 0)
    throw new DtdrError('data', 'no test plan has a tool sequence that the training plans lack', {
      hint: 'use the default split',
    });
  return { train: split.train, test, description: `${split.description}, novel sequences` };
}

function baseSplit(dataset: Dataset, options: { testRatio?: number; seed?: number }): Split {
  if (dataset.testIds && dataset.testIds.length > 0) {
    const test = new Set(dataset.testIds);
    return {
      train: dataset.plans.filter((p) => !test.has(p.id)),
      test: dataset.plans.filter((p) => test.has(p.id)),
      description: 'official',
    };
  }
  const ratio = options.testRatio ?? 0.3;
  const seed = options.seed ?? 0;
  if (!(ratio > 0 && ratio < 1))
    throw new DtdrError('options', `test ratio must be in (0, 1), got ${ratio}`, { field: 'testRatio' });
  const plans = shuffleInPlace([...dataset.plans], seededRandom(seed + 7919));
  const nTest = Math.max(1, Math.round(plans.length * ratio));
  if (nTest >= plans.length)
    throw new DtdrError('data', `only ${plans.length} plan${plans.length === 1 ? '' : 's'}: too few to split`, {
      hint: 'give more demonstrations or a separate --train set',
    });
  return { test: plans.slice(0, nTest), train: plans.slice(nTest), description: `seeded(seed=${seed}, test=${ratio})` };
}

/** One method's figures: the metrics, per calibration group where it has them, and its fit and rank times. */
export interface MethodResult extends MetricSummary {
  /** Fitting time, embeddings excluded. */
  fitMs: number;
  /** Time spent embedding this method's training texts (shared texts are embedded once per run). */
  embedMs: number;
  /** Median time of one rank() call, embeddings excluded. */
  rankMicrosPerStep: number;
  /** MRR over each test plan's first step (no history yet: the request alone decides). */
  firstStepMrr: number;
  /** The same figures per calibration group, for retrievers that report one per step (dtdr-g's Ranking.group). */
  groups?: Record<string, MetricSummary>;
}

/** Options of {@link evaluateMethods}: the methods, the peers, selection settings and progress callbacks. */
export interface EvaluateOptions extends TrainOptions {
  methods: readonly EvalMethodName[];
  /** The peers named in `methods`, built at the edge from their packages (src/cli/peers/). */
  peers?: Partial<Record<PeerName, Peer>>;
  select?: SelectOptions;
  /**
   * Timed passes over the test steps; the median is reported. Default 7. The passes run after every method is fitted,
   * the methods taking turns in each pass, so that a ratio between two methods compares the same moments of the run.
   */
  timingPasses?: number;
  /** Called as each method trains. */
  onMethodProgress?: (method: EvalMethodName, progress: TrainingProgress) => void;
  /**
   * Called once per method after it is scored, with the fitted retriever and the test steps'
   * rank inputs, for reports that need more than the summary (sweeps, calibration bins, misses).
   */
  onMethodScored?: (method: EvalMethodName, scored: ScoredMethod) => void;
}

export interface ScoredMethod {
  retriever: Retriever | PeerRetriever;
  steps: PlanStep[];
  inputs: RankInput[];
  /** Each step's ranking, as scored. */
  rankings: Ranking[];
  scores: StepScore[];
}

/** What {@link evaluateMethods} returns: the split's sizes and each method's figures. */
export interface EvaluationResult {
  trainPlans: number;
  testPlans: number;
  steps: number;
  results: Partial<Record<EvalMethodName, MethodResult>>;
}

/**
 * Trains each method on `train` and scores it on every step of every `test` plan with the
 * ground-truth history. Texts shared between methods (queries, contexts) are embedded once.
 */
export async function evaluateMethods(
  tools: ToolSpec[],
  train: Plan[],
  test: Plan[],
  encoder: Encoder | undefined,
  options: EvaluateOptions,
): Promise<EvaluationResult> {
  registerPaperMethods(); // the bench compares them all, in any app
  const l = options.historyLength ?? TRAIN_DEFAULTS.historyLength;
  const steps = test.flatMap((p) => planSteps(p));
  const shared: FitVectors = {};
  const embedded: TestVectors = {};
  const results: EvaluationResult['results'] = {};
  const timers: { method: EvalMethodName; pass: () => Promise<number> }[] = [];

  for (const method of options.methods) {
    const progress = (p: TrainingProgress) => options.onMethodProgress?.(method, p);
    const peer = isPeer(method) ? options.peers?.[method] : undefined;
    if (isPeer(method) && !peer)
      throw new DtdrError('options', `${method} runs through another package: pass it in options.peers`, {
        field: 'peers',
        hint: 'dtdr eval loads the peers (src/cli/peers/)',
      });
    const t0 = performance.now();
    // A peer needs the tool vectors QTS embeds, or nothing.
    Object.assign(
      shared,
      await fitVectors(
        peer ? (peer.needs.tools ? 'qts' : 'bm25') : (method as MethodName),
        tools,
        train,
        encoder,
        l,
        shared,
        progress,
      ),
    );
    const embedMs = performance.now() - t0;
    const t1 = performance.now();
    const retriever = peer
      ? await peer.fit(tools, shared.tools)
      : await fitRetrieverWith(method as MethodName, tools, train, shared, { ...options, onProgress: progress });
    const fitMs = performance.now() - t1;

    const inputs = await rankInputs(retriever, encoder, test, steps, l, embedded);

    // Kept for the onMethodScored hook (reports), so it need not rank every step again.
    const rankings: Ranking[] = [];
    const groupOf: (string | undefined)[] = [];
    const peerRankings = peer ? await rankAll(retriever as PeerRetriever, inputs) : undefined;
    const scores = inputs.map((input, i) => {
      const ranking = peerRankings?.[i] ?? (retriever as Retriever).rank(input);
      if (options.onMethodScored) rankings.push(ranking);
      groupOf.push(ranking.group);
      return scoreRanking(ranking, steps[i], options.select);
    });
    // Timed after every method is fitted (see timingPasses).
    timers.push({
      method,
      pass: peer
        ? () => peerMicrosPerStep(retriever as PeerRetriever, inputs, options.select)
        : async () => {
            const start = performance.now();
            // What an app pays per step: the ranking and its candidate set (the full order is not needed).
            for (const input of inputs) selectCandidates((retriever as Retriever).rank(input), options.select);
            return ((performance.now() - start) * 1000) / Math.max(1, inputs.length);
          },
    });
    options.onMethodScored?.(method, { retriever, steps, inputs, rankings, scores });
    const groups = summarizeByGroup(scores, groupOf);
    const first = scores.filter((_, i) => steps[i].history.length === 0);
    const firstStepMrr = first.reduce((a, sc) => a + sc.reciprocalRank, 0) / Math.max(1, first.length);
    results[method] = {
      ...summarize(scores),
      ...(groups ? { groups } : {}),
      fitMs,
      embedMs,
      rankMicrosPerStep: 0,
      firstStepMrr,
    };
    progress({ phase: 'done', fraction: 1 });
  }
  await timeRankings(timers, results, options.timingPasses ?? 7);
  return { trainPlans: train.length, testPlans: test.length, steps: steps.length, results };
}

/** The test steps' vectors, embedded once for every method that needs them. */
interface TestVectors {
  queries?: Map<string, Float32Array>;
  contexts?: Float32Array[];
}

/** Each test step as a retriever ranks it, with the vectors it needs (embedded into `embedded` on first need). */
async function rankInputs(
  retriever: { needs: { query: boolean; context: boolean } },
  encoder: Encoder | undefined,
  test: Plan[],
  steps: PlanStep[],
  l: number,
  embedded: TestVectors,
): Promise<RankInput[]> {
  if (encoder && retriever.needs.query && !embedded.queries) {
    const queries = [...new Set(test.map((p) => p.query))];
    const vectors = await embedAll(encoder, queries);
    embedded.queries = new Map(queries.map((q, i) => [q, vectors[i]]));
  }
  if (encoder && retriever.needs.context && !embedded.contexts)
    embedded.contexts = await embedAll(
      encoder,
      steps.map((s) => contextText(s.query, s.history, l)),
    );
  return steps.map((s, i) => ({
    query: s.query,
    history: s.history,
    queryVector: embedded.queries?.get(s.query),
    contextVector: embedded.contexts?.[i],
  }));
}

/** One step's score: its ranking's order and the candidate set an app would get. */
function scoreRanking(ranking: Ranking, step: PlanStep, select: SelectOptions | undefined): StepScore {
  const set = selectCandidates(ranking, select);
  const order = scoringOrder(ranking, step.acceptable);
  // The claimed confidence is the best label's: the order's head, not a sort of every label.
  return scoreStep(
    order,
    ranking.labels,
    step.acceptable,
    set.candidates.map((c) => c.tool),
    { confidence: ranking.probabilities[order[0]], widened: set.widened },
  );
}

/** Each calibration group's metrics over its steps (undefined when no step has a group). */
function summarizeByGroup(
  scores: StepScore[],
  groupOf: (string | undefined)[],
): Record<string, MetricSummary> | undefined {
  const byGroup = new Map<string, StepScore[]>();
  scores.forEach((sc, i) => {
    const g = groupOf[i];
    if (g === undefined) return;
    const list = byGroup.get(g);
    if (list) list.push(sc);
    else byGroup.set(g, [sc]);
  });
  return byGroup.size > 0
    ? Object.fromEntries([...byGroup].sort(([a], [b]) => a.localeCompare(b)).map(([g, list]) => [g, summarize(list)]))
    : undefined;
}

/** Each method's rank cost: the median of `passes` timing passes, the methods interleaved within each pass. */
async function timeRankings(
  timers: { method: EvalMethodName; pass: () => Promise<number> }[],
  results: EvaluationResult['results'],
  passCount: number,
): Promise<void> {
  const passes = new Map<EvalMethodName, number[]>(timers.map((t) => [t.method, []]));
  for (let pass = 0; pass < passCount; pass++)
    for (const timer of timers) passes.get(timer.method)!.push(await timer.pass());
  for (const [method, list] of passes) {
    list.sort((a, b) => a - b);
    if (list.length) results[method]!.rankMicrosPerStep = list[Math.floor(list.length / 2)];
  }
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

async function rankAll(retriever: PeerRetriever, inputs: RankInput[]): Promise<Ranking[]> {
  const out: Ranking[] = [];
  for (const input of inputs) out.push(await retriever.rank(input));
  return out;
}

/** A peer's timed pass: its search awaited step by step, or the package's own search time where it reports one. */
async function peerMicrosPerStep(
  retriever: PeerRetriever,
  inputs: RankInput[],
  select: SelectOptions | undefined,
): Promise<number> {
  let own = 0;
  const start = performance.now();
  for (const input of inputs) {
    selectCandidates(await retriever.rank(input), select);
    own += retriever.lastSearchMicros?.() ?? 0;
  }
  const wall = ((performance.now() - start) * 1000) / Math.max(1, inputs.length);
  return retriever.lastSearchMicros ? own / Math.max(1, inputs.length) : wall;
}

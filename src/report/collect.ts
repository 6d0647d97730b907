/**
 * What the HTML evaluation report shows, computed from real runs: one evaluation per dataset
 * (every method scored step by step with the ground-truth history), and from the same fitted
 * retrievers the coverage-against-size sweep, calibration bins, prompt tokens per strategy and
 * the worst misses; then ablations (history length, clusters, demonstrations) by refitting.
 * Pure: no DOM, no node:* — the CLI and `npm run experiment -- report` write the file.
 */
import type { Encoder } from '../core/base/encoder.js';
import { evaluateMethods, type EvaluateOptions, type ScoredMethod, type Split } from '../core/evaluation/evaluate.js';
import type { MetricSummary } from '../core/base/metrics.js';
import { measurePromptTokens } from '../core/evaluation/prompt-study.js';
import { seededRandom, shuffleInPlace } from '../core/base/random.js';
import type { Strategy } from '../core/prompts/build.js';
import { GatedRetriever } from '../core/retrieval/default/index.js';
import type { EvalMethodName, MethodName, PeerName } from '../core/retrieval/types.js';
import { selectCandidates } from '../core/selection/select.js';
import type { TokenCounter } from '../core/prompts/tokens.js';
import { DEFAULT_METHOD, isPeer } from '../core/retrieval/methods.js';
import type { Dataset, Plan } from '../core/base/types.js';

export const REPORT_VERSION = 1;

/** One method's scores on a dataset (the evaluation's summary, minus the step count the dataset has). */
export interface MethodRow extends Omit<MetricSummary, 'steps'> {
  method: EvalMethodName;
  fitSeconds: number;
  rankMicrosPerStep: number;
  /** MRR on each test plan's first step (absent in reports written before it was measured). */
  firstStepMrr?: number;
  /**
   * Per calibration group (dtdr-g): steps, coverage, mean |F_t|, confident-miss rate, ECE, widened share (absent for
   * methods without groups).
   */
  groups?: GroupRow[];
}

/** One calibration group's figures, as `dtdr eval --json` reports them. */
export interface GroupRow {
  group: string;
  steps: number;
  coverage: number;
  setSize: number;
  confidentMissRate: number;
  ece: number;
  widenedRate: number;
}

export interface CurvePoint {
  method: EvalMethodName;
  /** α for thresholded sets, the coverage target for conformal ones. */
  knob: 'alpha' | 'target';
  value: number;
  coverage: number;
  setSize: number;
}

export interface ReliabilityBin {
  method: EvalMethodName;
  /** Bin [lo, hi) of the top-1 probability. */
  lo: number;
  hi: number;
  steps: number;
  confidence: number;
  accuracy: number;
}

export interface PromptRow {
  strategy: Strategy;
  constant: number;
  variable: number;
  total: number;
}

export interface Miss {
  method: EvalMethodName;
  query: string;
  history: string[];
  expected: string[];
  /** Rank of the first acceptable tool (0: not ranked at all). */
  rank: number;
  retrieved: { tool: string; probability: number }[];
  widened: boolean;
}

export interface AblationPoint {
  /** The setting varied: history length l, clusters K, or number of demonstrations. */
  axis: 'history' | 'clusters' | 'demonstrations';
  method: MethodName;
  value: number;
  mrr: number;
  coverage: number;
}

export interface DatasetReport {
  name: string;
  split: string;
  trainPlans: number;
  testPlans: number;
  steps: number;
  tools: number;
  methods: MethodRow[];
  curves: CurvePoint[];
  reliability: ReliabilityBin[];
  prompts?: { method: EvalMethodName; counter: string; rows: PromptRow[] };
  misses: Miss[];
  ablations: AblationPoint[];
}

export interface ReportData {
  version: typeof REPORT_VERSION;
  createdAt: string;
  encoder: string | null;
  defaultMethod: MethodName;
  /** The datasets' peers (other packages' tool search, side by side): drawn apart, in grey. */
  peers?: PeerName[];
  datasets: DatasetReport[];
}

export interface CollectOptions extends Omit<
  EvaluateOptions,
  'onMethodScored' | 'onMethodProgress' | 'timingPasses' | 'onProgress'
> {
  /** Counts prompt tokens per strategy (the paper's Figure 4); omitted: no prompt chart. */
  counter?: TokenCounter;
  /** Refit for the ablations. Default true. */
  ablations?: boolean;
  /** Worst misses kept per dataset. Default 20. */
  misses?: number;
  onReportProgress?: (what: string, fraction: number) => void;
}

const ALPHAS = [0.5, 0.3, 0.2, 0.1, 0.05, 0.02, 0.01];
const TARGETS = [0.7, 0.8, 0.85, 0.9, 0.95, 0.98];
const STRATEGIES: Strategy[] = ['none', 'raw-demos', 'soft', 'soft-weighted', 'hard', 'hard-weighted'];
const BINS = 10;

/** Evaluates every method on one split and gathers what the report draws. */
export async function collectDatasetReport(
  dataset: Dataset,
  split: Split,
  encoder: Encoder | undefined,
  options: CollectOptions,
): Promise<DatasetReport> {
  const curves: CurvePoint[] = [];
  const reliability: ReliabilityBin[] = [];
  const misses: Miss[] = [];
  let prompts: DatasetReport['prompts'];
  const progress = options.onReportProgress ?? (() => {});
  const { counter, ablations: _ablations, misses: _misses, onReportProgress: _onProgress, ...evaluate } = options;
  const result = await evaluateMethods(dataset.tools, split.train, split.test, encoder, {
    ...evaluate,
    onMethodProgress: (m, p) => progress(`${dataset.name} · ${m} ${p.phase}`, p.fraction),
    onMethodScored: (method, scored) => {
      // Peers are in the table and the bars; their probabilities are the package's scores shared out
      // (or, for the AI SDK, its first five hits alike), not calibrated: no sweep or reliability curve.
      if (!isPeer(method)) {
        curves.push(...sweep(method, scored));
        reliability.push(...calibrationBins(method, scored));
      }
      misses.push(...worstMisses(method, scored, options.misses ?? 20));
      if (counter && method === (options.methods.includes(DEFAULT_METHOD) ? DEFAULT_METHOD : options.methods[0])) {
        progress(`${dataset.name} · prompt tokens`, 0);
        const tokens = measurePromptTokens(scored.steps, scored.rankings, dataset.tools, counter, {
          strategies: STRATEGIES,
          demonstrations: split.train.slice(0, 64),
          select: options.select,
        });
        prompts = { method, counter: counter.id, rows: STRATEGIES.map((s) => ({ strategy: s, ...tokens[s]! })) };
      }
    },
  });
  const methods: MethodRow[] = Object.entries(result.results).map(([method, r]) => ({
    method: method as EvalMethodName,
    mrr: r.mrr,
    f1: r.f1,
    top1: r.top1,
    recall5: r.recall5,
    coverage: r.coverage,
    setSize: r.setSize,
    ece: r.ece,
    confidentMissRate: r.confidentMissRate,
    widenedRate: r.widenedRate,
    fitSeconds: r.fitMs / 1000,
    rankMicrosPerStep: r.rankMicrosPerStep,
    firstStepMrr: r.firstStepMrr,
    ...(r.groups
      ? {
          groups: Object.entries(r.groups).map(([group, g]) => ({
            group,
            steps: g.steps,
            coverage: g.coverage,
            setSize: g.setSize,
            confidentMissRate: g.confidentMissRate,
            ece: g.ece,
            widenedRate: g.widenedRate,
          })),
        }
      : {}),
  }));
  const ablations = options.ablations === false ? [] : await ablate(dataset, split, encoder, options);
  return {
    name: dataset.name,
    split: split.description,
    trainPlans: result.trainPlans,
    testPlans: result.testPlans,
    steps: result.steps,
    tools: dataset.tools.length,
    methods,
    curves,
    reliability,
    prompts,
    misses: misses.sort((a, b) => depth(b) - depth(a)).slice(0, options.misses ?? 20),
    ablations,
  };
}

/** How badly a step missed: not ranked at all is worst, then the deeper the first acceptable tool. */
const depth = (m: Miss) => (m.rank === 0 ? Infinity : m.rank);

/** Coverage against mean set size: α for thresholded sets, the target for conformal ones. */
function sweep(method: EvalMethodName, scored: ScoredMethod): CurvePoint[] {
  const points: CurvePoint[] = [];
  const measure = (sets: { tool: string }[][]) => {
    let covered = 0,
      size = 0;
    sets.forEach((set, i) => {
      const ok = new Set(scored.steps[i].acceptable);
      if (set.some((c) => ok.has(c.tool))) covered++;
      size += set.length;
    });
    return { coverage: covered / sets.length, setSize: size / sets.length };
  };
  const retriever = scored.retriever;
  if (retriever instanceof GatedRetriever) {
    for (const target of TARGETS) {
      const atTarget = retriever.atTarget(target);
      points.push({
        method,
        knob: 'target',
        value: target,
        ...measure(scored.inputs.map((input) => selectCandidates(atTarget.rank(input)).candidates)),
      });
    }
    return points;
  }
  for (const alpha of ALPHAS)
    points.push({
      method,
      knob: 'alpha',
      value: alpha,
      ...measure(scored.rankings.map((r) => selectCandidates(r, { alpha }).candidates)),
    });
  return points;
}

/** Reliability diagram bins of the top-1 probability against top-1 accuracy. */
function calibrationBins(method: EvalMethodName, scored: ScoredMethod): ReliabilityBin[] {
  const bins = Array.from({ length: BINS }, (_, b) => ({
    method,
    lo: b / BINS,
    hi: (b + 1) / BINS,
    steps: 0,
    confidence: 0,
    accuracy: 0,
  }));
  for (const s of scored.scores) {
    const b = bins[Math.min(BINS - 1, Math.max(0, Math.floor(s.confidence * BINS)))];
    b.steps++;
    b.confidence += s.confidence;
    b.accuracy += s.top1;
  }
  return bins
    .filter((b) => b.steps > 0)
    .map((b) => ({ ...b, confidence: b.confidence / b.steps, accuracy: b.accuracy / b.steps }));
}

/** The steps whose needed tool is ranked worst (not ranked, then deepest), with what was retrieved. */
function worstMisses(method: EvalMethodName, scored: ScoredMethod, keep: number): Miss[] {
  if (method !== DEFAULT_METHOD) return [];
  const missed = scored.scores
    .map((s, i) => ({ s, i }))
    .filter(({ s }) => !s.covered)
    .sort((a, b) => a.s.reciprocalRank - b.s.reciprocalRank || a.i - b.i)
    .slice(0, keep);
  return missed.map(({ s, i }) => {
    const set = selectCandidates(scored.rankings[i]);
    const step = scored.steps[i];
    return {
      method,
      query: step.query,
      history: [...step.history],
      expected: [...step.acceptable],
      rank: s.reciprocalRank > 0 ? Math.round(1 / s.reciprocalRank) : 0,
      retrieved: set.candidates.map((c) => ({ tool: c.tool, probability: c.probability })),
      widened: set.widened,
    };
  });
}

/**
 * The paper's Figure 5, on this data: history length 0–5 (DTDR-H; DTDR-C from 1), the number of clusters for DTDR-C,
 * and the number of demonstrations (100 → all) for DTDR-C and the default method.
 */
async function ablate(
  dataset: Dataset,
  split: Split,
  encoder: Encoder | undefined,
  options: CollectOptions,
): Promise<AblationPoint[]> {
  const points: AblationPoint[] = [];
  const run = async (train: Plan[], method: MethodName, extra: { historyLength?: number; clusters?: number }) => {
    const { counter: _c, ablations: _a, misses: _m, onReportProgress: _p, methods: _methods, ...evaluate } = options;
    const r = await evaluateMethods(dataset.tools, train, split.test, encoder, {
      ...evaluate,
      methods: [method],
      timingPasses: 0,
      ...extra,
    });
    return r.results[method]!;
  };
  const progress = options.onReportProgress ?? (() => {});
  const n = split.train.length;
  const clusterCounts = [
    ...new Set([1, 5, 20, 50, 100, 200, 400].filter((k) => k <= n).concat(Math.max(1, Math.round(n / 10)))),
  ].sort((a, b) => a - b);
  const demoCounts = [...new Set([100, 300, 1000, 3000].filter((c) => c < n).concat(n))];
  const total = 11 + clusterCounts.length + demoCounts.length * 2;
  let done = 0;
  const tick = (what: string) => progress(`${dataset.name} · ablation ${what}`, ++done / total);
  // DTDR-C's graphs need at least one call of context; the history head (DTDR-H) also runs l = 0.
  for (const [method, from] of [
    ['dtdr-h', 0],
    ['dtdr-c', 1],
  ] as [MethodName, number][]) {
    for (let l = from; l <= 5; l++) {
      const r = await run(split.train, method, { historyLength: l });
      points.push({ axis: 'history', method, value: l, mrr: r.mrr, coverage: r.coverage });
      tick(`${method} l=${l}`);
    }
  }
  for (const k of clusterCounts) {
    const r = await run(split.train, 'dtdr-c', { clusters: k });
    points.push({ axis: 'clusters', method: 'dtdr-c', value: k, mrr: r.mrr, coverage: r.coverage });
    tick(`K=${k}`);
  }
  // Prefixes of one seeded shuffle, so each larger set contains the smaller ones.
  const shuffled = shuffleInPlace([...split.train], seededRandom((options.seed ?? 0) + 104729));
  for (const method of ['dtdr-c', DEFAULT_METHOD] as MethodName[]) {
    for (const count of demoCounts) {
      const r = await run(shuffled.slice(0, count), method, {});
      points.push({ axis: 'demonstrations', method, value: count, mrr: r.mrr, coverage: r.coverage });
      tick(`${method} n=${count}`);
    }
  }
  return points;
}

export function reportData(
  datasets: DatasetReport[],
  encoder: Encoder | undefined,
  createdAt = new Date(),
): ReportData {
  const peers = [...new Set(datasets.flatMap((d) => d.methods.map((m) => m.method)).filter(isPeer))];
  return {
    version: REPORT_VERSION,
    createdAt: createdAt.toISOString(),
    encoder: encoder?.id ?? null,
    defaultMethod: DEFAULT_METHOD,
    ...(peers.length ? { peers } : {}),
    datasets,
  };
}

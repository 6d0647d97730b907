/**
 * DTDR-G's settings from the data, before the cross-fitting rounds: how the folds are drawn (by
 * plan, by tool sequence, or both; leave-one-plan-out for a few plans) and which held-out steps
 * set the thresholds; then l (the history length) and K (the request clusters), by the graph
 * signals' held-out MRR on fold 0.
 */
import { planSteps, sequenceKey } from '../../plans/plan.js';
import type { Plan } from '../../base/types.js';
import { historyIndices } from '../dependency.js';
import { assignNearest, sphericalKMeans, type KMeansResult } from '../kmeans.js';
import { packRows } from '../kernels/rows.js';
import { maxScoredPlans, scoredSubset } from './calibration.js';
import type { Evidence } from './evidence.js';
import { fitEvidence, planMemo, type FitPartsOptions } from './evidence-fit.js';
import { CG } from './layout.js';
import { resolveGatedOptions, type GatedOptions } from './options.js';
import { computeSignals } from './signals.js';
import type { GatedDiagnostics } from './state.js';
import type { ToolSide } from './tool-side.js';
import { foldAssignment, tooFewToSplit, type FoldScheme } from './cross-fit.js';
import { noTerms, Workspace } from './workspace.js';

/**
 * How the cross-fitting folds are drawn (by plan, by tool sequence, or both), how many, and which
 * held-out steps set the conformal thresholds: from the options, else from the data.
 */
export function foldSchemes(
  plans: Plan[],
  side: ToolSide,
  resolved: ReturnType<typeof resolveGatedOptions>,
  options: GatedOptions,
  seed: number,
) {
  const { foldBy: foldByOption, thresholdsFrom: thresholdsOption, foldPlans } = resolved;
  const n = plans.length;
  // Where the other half of the plans already exceeds foldPlans, two folds train each round on
  // as many plans as three would (options.ts): a third of the rounds saved at 100,000 demonstrations.
  const defaultFolds = Math.max(2, Math.min(options.folds ?? (n >= 2 * foldPlans ? 2 : 3), n));
  const sequenceOf = plans.map(sequenceKey);
  const sequenceCounts = new Map<string, number>();
  for (const key of sequenceOf) sequenceCounts.set(key, (sequenceCounts.get(key) ?? 0) + 1);
  const sequences = sequenceCounts.size;
  const repeats = sequenceOf.filter((key) => sequenceCounts.get(key)! > 1).length;
  // Demonstrations that repeat each sequence ~10 times or more (generated from templates, say)
  // tell random folds nothing about new combinations, and folds by sequence (every held-out plan
  // a new combination) tell nothing about repeats, which such data mostly gets: the gate then
  // learns from both kinds of held-out steps. With fewer than 10 sequences a held-out fold would
  // lose whole skills, not combinations: random folds only.
  const repeated = sequences >= 10 && sequences / n < 0.1;
  const foldBy: GatedDiagnostics['foldBy'] = foldByOption ?? (repeated ? 'plan+sequence' : 'plan');
  const shared = sequences >= 10 && repeats >= n / 2;
  const thresholdsFrom = thresholdsOption ?? (foldBy === 'sequence' || shared ? 'sequence' : 'plan');
  const gateSchemes: FoldScheme[] = foldBy === 'plan+sequence' ? ['sequence', 'plan'] : [foldBy];
  // With too few plans to split (tooFewToSplit), the gate also learns from leave-one-plan-out
  // rounds: evidence from n − 1 plans gives held-out steps the contexts (cluster match, support)
  // and signals the model ranks with, where evidence from 2n/3 plans taught the gate to under-trust
  // the graphs and the head (app-life, 3 seeds: RestBench at 10 random runs MRR 0.541 → 0.598, at
  // 30 0.622 → 0.675; UltraTool at 30 0.576 → 0.625). The usual folds' rounds stay: in the gate
  // and temperature too (a gate from leave-one-out steps alone lost MRR where the runs are skewed
  // and the requests are not), and alone behind the conformal thresholds, which stay as they were
  // (leave-one-out scores there made sets too small: UltraTool, 30 skewed runs, coverage 0.819 → 0.75).
  // Each round costs about its labels' worth: one round per plan while they fit SMALL_FIT_ROUND_LABELS,
  // fewer, larger folds where the tools are more (and none where three is all it allows).
  const perPlan = Math.min(n, Math.floor(SMALL_FIT_ROUND_LABELS / side.labels.length));
  const leaveOneOut = options.folds === undefined && foldBy === 'plan' && tooFewToSplit(n) && perPlan > defaultFolds;
  const folds = leaveOneOut ? perPlan : defaultFolds;
  // A thresholds scheme the gate does not use is scored on the calibration half only. Leaving one
  // plan out: scheme 0 (n folds), then by plan with the usual folds, then by sequence where the
  // thresholds come from it.
  const schemes: FoldScheme[] = leaveOneOut
    ? ['plan', 'plan', ...(thresholdsFrom === 'sequence' ? (['sequence'] as const) : [])]
    : gateSchemes.includes(thresholdsFrom)
      ? gateSchemes
      : [...gateSchemes, thresholdsFrom];
  // K and l are chosen on the first scheme's fold 0 under the usual folds (by sequence where used:
  // robust to new combinations); one held-out plan would pick them by chance.
  const foldOf = foldAssignment(plans, schemes[0], defaultFolds, seed);
  return { defaultFolds, foldBy, thresholdsFrom, gateSchemes, leaveOneOut, folds, schemes, foldOf };
}

/** l and K, chosen on fold 0's held-out steps by the graph signals' MRR (unless the options fix them); K's clusters. */
export function chooseSettings(
  plans: Plan[],
  queries: Float32Array[],
  side: ToolSide,
  dim: number,
  options: GatedOptions,
  fold: {
    foldOf: ArrayLike<number>;
    defaultFolds: number;
    foldPlans: number;
    neighbours: number;
    withoutIdx: Set<number>;
    seed: number;
    memo: ReturnType<typeof planMemo>;
  },
) {
  const { foldOf, defaultFolds, foldPlans, neighbours, withoutIdx, seed, memo } = fold;
  const n = plans.length;
  // Settings from the data: l and K by held-out MRR of the graph signals on fold 0.
  const selection = { historyLength: {} as Record<string, number>, clusters: {} as Record<string, number> };
  let l = options.historyLength ?? 0;
  let K = options.clusters ?? 0;
  // l and K are picked by the graph signals' held-out MRR: evidence from foldPlans training plans
  // (a seeded sample beyond it) ranks them as one from every plan would, at a fraction of the cost.
  const inFold0 = (held: boolean) => plans.flatMap((_, i) => ((foldOf[i] === 0) === held ? [i] : []));
  const train0 = scoredSubset(inFold0(false), foldPlans, seed + SEED_SETTINGS_TRAIN);
  const scoredPlans = maxScoredPlans(side.labels.length) / defaultFolds;
  const held0 = scoredSubset(inFold0(true), scoredPlans, seed + SEED_SETTINGS_HELD_OUT);
  const quickScore = (ev: Evidence, signal: number) =>
    heldOutMrr(side, dim, ev, signal, { plans, queries, held: held0, neighbours, withoutIdx });
  const sub = (idx: number[]) => ({ plans: idx.map((i) => plans[i]), queries: idx.map((i) => queries[i]) });
  // k-means sees only queries, no labels: cluster every demonstration once per candidate K and
  // let each fold count its graphs within those clusters.
  const all = packRows(queries, dim);
  const t0 = sub(train0);
  const graphsOnly: FitPartsOptions = { historyLength: 4, seed, head: false, memo };
  // K candidates scale with the data (a fixed ratio gives 20 demonstrations K = 2); the cap keeps
  // the per-step cluster lookup cheap. One graph fit per K with l = 4 serves every l ≤ 4.
  const candidates = K
    ? [K]
    : [...new Set([n / 20, n / 10, n / 5, n / 2].map((c) => Math.max(1, Math.min(Math.round(c), 300))))];
  let clustering: KMeansResult | undefined;
  let bestEvidence: Evidence | undefined;
  let best = -1;
  for (const c of candidates) {
    const km = clusterRequests(all, n, dim, c, seed, 8);
    const assignment = train0.map((i) => km.assignment[i]);
    const ev = fitEvidence(side, t0.plans, t0.queries, { centroids: km.centroids, k: km.k, assignment }, graphsOnly);
    if (candidates.length === 1) {
      [clustering, bestEvidence] = [km, ev];
      break;
    }
    const score = quickScore({ ...ev, historyLength: options.historyLength ?? 3 }, CG);
    selection.clusters[c] = +score.toFixed(4);
    if (score > best + 1e-4) [best, clustering, bestEvidence] = [score, km, ev];
  }
  K = clustering!.k;
  if (!l) {
    best = -1;
    for (let c = 1; c <= 4; c++) {
      const score = quickScore({ ...bestEvidence!, historyLength: c }, CG);
      selection.historyLength[c] = +score.toFixed(4);
      if (score > best + 1e-4) [best, l] = [score, c];
    }
  }
  return { selection, l, K, clustering: clustering!, all };
}

/** The held-out steps' MRR of one signal, from evidence fitted without them (choosing l and K). */
function heldOutMrr(
  side: ToolSide,
  dim: number,
  ev: Evidence,
  signal: number,
  steps: { plans: Plan[]; queries: Float32Array[]; held: number[]; neighbours: number; withoutIdx: Set<number> },
): number {
  const { plans, queries, held, neighbours, withoutIdx } = steps;
  const w = new Workspace(side.labels.length, dim, ev.k);
  let rr = 0;
  let count = 0;
  for (const i of held) {
    for (const step of planSteps(plans[i])) {
      const input = { terms: noTerms(), queryVector: queries[i], history: historyIndices(step.history, side.index) };
      computeSignals(side, ev, input, w, neighbours, withoutIdx, true);
      const row = w.x.subarray(signal * side.labels.length, (signal + 1) * side.labels.length);
      const ok = new Set(step.acceptable.map((t) => side.index.get(t)!));
      let best = -Infinity;
      for (const a of ok) best = Math.max(best, row[a]);
      let rank = 1;
      for (let f = 0; f < row.length; f++) if (row[f] > best) rank++;
      rr += 1 / rank;
      count++;
    }
  }
  return count ? rr / count : 0;
}

/**
 * The n requests (`all`, row-major) in k clusters. Beyond MAX_KMEANS_POINTS requests the centroids
 * come from a seeded sample of that many, and every request is then assigned to its nearest:
 * about 67 requests per cluster at K = 300.
 */
function clusterRequests(
  all: Float32Array,
  n: number,
  dim: number,
  k: number,
  seed: number,
  iterations?: number,
): KMeansResult {
  if (n <= MAX_KMEANS_POINTS) return sphericalKMeans(all, n, dim, k, { seed, maxIterations: iterations });
  const indices = Array.from({ length: n }, (_, i) => i);
  const sample = scoredSubset(indices, MAX_KMEANS_POINTS, seed + SEED_KMEANS_SAMPLE);
  const rows = new Float32Array(sample.length * dim);
  sample.forEach((i, j) => rows.set(all.subarray(i * dim, (i + 1) * dim), j * dim));
  const km = sphericalKMeans(rows, sample.length, dim, k, { seed, maxIterations: iterations });
  return { centroids: km.centroids, k: km.k, assignment: assignNearest(all, n, dim, km.centroids, km.k) };
}

/**
 * Below 40 plans, the gate's extra rounds by plan times the labels, at most: one round per plan up
 * to 46 plans at 260 tools (about a second's fit on two cores), 11 folds at 1,000 tools, and none
 * at 4,000 (Seal-Tools: its fit at 39 plans took 16 s with one round per plan, 1.8 s without).
 */
const SMALL_FIT_ROUND_LABELS = 12_000;
/**
 * Requests k-means fits its centroids on, at most (a seeded sample beyond it; every request is
 * then assigned to its nearest centroid). k-means over every request was most of the settings at
 * 100,000 demonstrations, on one thread; 20,000 leaves every data set of at most 20,000
 * demonstrations as it was (the 16,000-tool app world has exactly 20,000).
 */
const MAX_KMEANS_POINTS = 20_000;

/** Offsets from the fit's seed, one per seeded draw, so that no two draws share a sequence (fit.ts has its own). */
const SEED_SETTINGS_TRAIN = 719;
const SEED_SETTINGS_HELD_OUT = 401;
const SEED_KMEANS_SAMPLE = 727;

/**
 * DTDR-G's online learning: new demonstrations join the model in time proportional to them
 * (conformal scores pooled, cluster counts and centroids moved; the head stays as fitted), without a refit.
 */
import { planSteps, planTools } from '../../plans/plan.js';
import type { Plan } from '../../base/types.js';
import { requireVector } from '../ranking.js';
import { countPlans } from '../dependency.js';
import { dotAt } from '../kernels/rows.js';
import type { LearnInput, RankInput, Ranking } from '../types.js';
import { STEP_RULES } from './step-rules.js';
import { rarity } from './evidence.js';
import { fitEvidence } from './evidence-fit.js';
import { headNewTools, learnHeadColumns, learnMoreColumns } from './head-columns.js';
import {
  GROUP_KEYS,
  groupKey,
  groupThresholdsOf,
  groupThreshold,
  parseGroup,
  poolOf,
  type CalibrationGroup,
  type HeldOutPlan,
  type Pool,
} from './groups.js';
import { KNOWN_HISTORY } from './layout.js';
import { addSampledScore } from './score-sample.js';
import { groupCode, learnedScores } from './sequence-scores.js';
import type { GatedParts } from './state.js';
import { fitNovelty, learnNovelty } from './novelty.js';
import { learnCoverage } from './coverage.js';

/**
 * Online learning, in time proportional to the new plans: first their steps are scored by the
 * model as it is (they are held out for it) and pooled with the stored conformal scores (a bounded
 * uniform sample of all of them; where the thresholds were fitted on new sequences, a plan whose
 * sequence the model knows adds held-out steps kept for that sequence instead: sequence-scores.ts),
 * which re-sets the thresholds; then each plan joins its nearest
 * cluster (graph counts, tool bag, a running-mean centroid) and the pooled graph. The gate, the
 * temperature and the head stay as fitted. A model trained on tools alone gains its first evidence.
 * Returns true when the model gained its first evidence (its workspace must grow).
 */
export function learnGated(p: GatedParts, input: LearnInput, rank: (input: RankInput) => Ranking): boolean {
  const plans = input.plans;
  if (plans.length === 0) return false;
  const queries = plans.map((_, i) => requireVector(input.queryVectors?.[i], 'dtdr-g', 'queryVectors'));
  const side = p.side;
  const d = side.dim;
  const ev = p.evidence;
  // Columns the last call left pending train on that call's examples first (Dtdr has trained them already).
  if (ev?.pendingColumns) while (learnMoreColumns(ev));
  if (ev) {
    learnCalibration(p, plans, queries, rank);
    if (p.calibration.sliceAtFit) p.calibration.sliceAtFit.learned += plans.length;
  } else {
    // Tools alone so far: one cluster around these plans, the default history length.
    const centroid = new Float32Array(d);
    for (const q of queries) for (let j = 0; j < d; j++) centroid[j] += q[j];
    normaliseInPlace(centroid);
    const clustering = { centroids: centroid, k: 1, assignment: new Uint8Array(plans.length) };
    p.evidence = fitEvidence(side, plans, queries, clustering, { historyLength: KNOWN_HISTORY, seed: 0 });
    p.novelty = fitNovelty(queries, d);
    return true;
  }
  // The tools the head hardly knew, counted before these runs join the counts (head-columns.ts).
  const fresh = headNewTools(plans, side, rarity(ev, side.labels.length).counts);
  ev.rarity = undefined;
  if (p.novelty) learnNovelty(p.novelty, queries);
  if (p.coverage) learnCoverage(p.coverage, plans, side.index);
  for (const rule of STEP_RULES) {
    const state = p.rules[rule.name];
    if (state !== undefined) rule.learn?.(state, plans, side.index, p.coverage);
  }
  for (const [i, plan] of plans.entries()) {
    const q = queries[i];
    let k = 0;
    let bestDot = -Infinity;
    for (let c = 0; c < ev.k; c++) {
      const dot = dotAt(ev.centroids, c * d, q, 0, d);
      if (dot > bestDot) [k, bestDot] = [c, dot];
    }
    const n = ++ev.sizes[k];
    const centroid = ev.centroids.subarray(k * d, (k + 1) * d);
    for (let j = 0; j < d; j++) centroid[j] += (q[j] - centroid[j]) / n;
    normaliseInPlace(centroid);
    ev.packedCentroids = undefined;
    countPlans(ev.graphs[k], [plan], side.index);
    countPlans(ev.global, [plan], side.index);
    const bag = ev.bags[k];
    const uses = new Set(planTools(plan).map((t) => side.index.get(t)!));
    for (const [label, share] of bag)
      if (label !== side.end) bag.set(label, (share * (n - 1) + (uses.has(label) ? 1 : 0)) / n);
    for (const label of uses) if (!bag.has(label)) bag.set(label, 1 / n);
    bag.set(side.end, 1);
  }
  learnHeadColumns(ev, side, plans, queries, fresh);
  // The head stays as fitted for the tools it knew: trained on at each call (a few runs mixed
  // with its replay sample), it drifted from what the fit learned — on UltraTool, 100 runs learned
  // 10 at a time by a model fitted on 900 took MRR from 0.830 to 0.790, and to 0.829 without the
  // head's update (the graphs, bags and clusters learn the new runs). Only the columns of tools it
  // had (almost) no demonstrations of learn (head-columns.ts). A model that started from its tools
  // alone refits instead (dtdr.ts).
  return false;
}

/** Scales a vector to unit length in place (a zero vector stays zero). */
function normaliseInPlace(v: Float32Array): void {
  let norm = 0;
  for (let j = 0; j < v.length; j++) norm += v[j] * v[j];
  norm = Math.sqrt(norm);
  if (norm > 0) for (let j = 0; j < v.length; j++) v[j] /= norm;
}

/**
 * New runs' steps, ranked before they are learned, join the conformal score lists their groups
 * pool into; the lists they touched get new thresholds.
 */
function learnCalibration(
  p: GatedParts,
  plans: Plan[],
  queries: Float32Array[],
  rank: (input: RankInput) => Ranking,
): void {
  const side = p.side;
  // Each score list is a bounded uniform sample of every score it was given (score-sample.ts);
  // only the lists this call touched get a new threshold.
  const seen = (p.calibration.seen ??= {});
  const touched = new Map<string, number[]>();
  const pool = (list: number[], name: string, score: number) => {
    seen[name] = addSampledScore(list, seen[name] ?? list.length, score, name);
    touched.set(name, list);
  };
  const lists = (group: CalibrationGroup | undefined, confident: boolean, score: number) => {
    // Pooled as the fit pooled its held-out steps: by the step's group, or where the model ranks
    // by pools alone, by whether the step was confident.
    const poolName = group ? poolOf(group) : confident ? 'confident' : 'unsure';
    pool(p.calibration.pools[poolName], poolName, score);
    if (p.calibration.groups && group)
      pool((p.calibration.groups[groupKey(group)] ??= []), `group:${groupKey(group)}`, score);
  };
  // Where the thresholds come from new sequences, a repeat adds held-out steps kept for its
  // sequence instead of being scored (sequence-scores.ts).
  const store = p.calibration.sequences;
  const learned = store ? learnedScores(store, plans) : undefined;
  for (const [i, plan] of plans.entries()) {
    const add = learned ? learned.add[i] : 'score';
    if (add === undefined) continue;
    if (add !== 'score') {
      add.scores.forEach((score, k) => lists(parseGroup(GROUP_KEYS[add.groups[k]]), false, score));
      continue;
    }
    const steps: HeldOutPlan = { scores: [], groups: [] };
    for (const step of planSteps(plan)) {
      const r = rank({ query: plan.query, history: step.history, queryVector: queries[i] });
      let best = 0;
      for (const t of step.acceptable) best = Math.max(best, r.probabilities[side.index.get(t)!]);
      // The step's group, which the step rules do not move.
      const group = r.group ? parseGroup(r.group) : undefined;
      const score = Math.fround(best);
      lists(group, r.confident, score);
      if (group) {
        steps.scores.push(score);
        steps.groups.push(groupCode(group));
      }
    }
    learned?.remember(i, steps);
  }
  // New threshold objects: the old ones may be shared with a saved state.
  const old = p.calibration.thresholds;
  const thresholds = { pools: { ...old.pools }, groups: { ...old.groups } };
  for (const [name, list] of touched) {
    const group = name.startsWith('group:') ? name.slice(6) : undefined;
    if (group) Object.assign(thresholds.groups, groupThresholdsOf({ [group]: list }, p.target));
    else thresholds.pools[name as Pool] = groupThreshold(list, p.target);
  }
  p.calibration.thresholds = thresholds;
}

/** What the last learn call left (new tools' head columns past the first four), one part; whether more is. */
export function learnMoreGated(p: GatedParts): boolean {
  return p.evidence ? learnMoreColumns(p.evidence) : false;
}

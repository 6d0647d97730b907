/**
 * DTDR-G's fit after its setup (fit-setup.ts: settings from the data): cross-fitting, the gate,
 * calibration and conformal thresholds, and the final evidence. Rank-time code lives in signals.ts,
 * combine.ts and retriever.ts.
 */
import type { Plan, ToolSpec } from '../../base/types.js';
import { terms } from '../../base/text.js';
import type { TrainingProgress } from '../types.js';
import { fitCoverage, requestWordsOf, type CoverageModel } from './coverage.js';
import { STEP_RULES, type RuleStates } from './step-rules.js';
import { calibrationScores, isotonicEce } from './calibration.js';
import { isSlice } from './calibrate-step.js';
import { priorGate } from './combine.js';
import { rarity, type Evidence } from './evidence.js';
import { fitEvidence } from './evidence-fit.js';
import { coverageBySize, fitCalibration, stepGroup } from './groups.js';
import { expectedCalibrationError, fitTemperature, GateDataBuilder, trainGate } from './gate.js';
import { G, S } from './layout.js';
import type { GatedOptions } from './options.js';
import type { GatedDiagnostics, GatedParts } from './state.js';
import { CrossFitter, gateHalves, roundPlace, tooFewToSplit, type FoldWorkers, type RoundOutput } from './cross-fit.js';
import { fitNovelty } from './novelty.js';
import { unseenShare } from './shrinkage.js';
import { fitSequenceScores } from './sequence-scores.js';
import { prepareFit, type Prepared } from './fit-setup.js';

/**
 * Fits DTDR-G from demonstrations (or from tools alone): picks l and K on a held-out fold, scores
 * every demonstration's steps with cross-fitted evidence that never saw it (cross-fit.ts), trains
 * the gate on one half of those steps, calibrates the temperature and the conformal thresholds on
 * the other, then fits the evidence on all the demonstrations.
 */
export function fitGated(
  tools: ToolSpec[],
  plans: Plan[],
  queries: Float32Array[],
  toolVectors: Float32Array[],
  options: GatedOptions = {},
  onProgress?: (p: TrainingProgress) => void,
): GatedParts {
  const fit = prepareFit(tools, plans, queries, toolVectors, options, onProgress);
  if ('parts' in fit) return fit.parts;
  const fitter = new CrossFitter(fit.setup, fit.side, fit.memo);
  const rounds: RoundOutput[] = [];
  for (let round = 0; round < fitter.rounds; round++) {
    rounds.push(fitter.round(round, (fraction) => fit.report('cross-fitting', (round + fraction) / fitter.rounds)));
    fit.report('cross-fitting', (round + 1) / fitter.rounds);
  }
  const ev = finalEvidence(fit, (fraction) => fit.report('fitting', fraction));
  return finishFit(fit, rounds, ev, requestRules(fit));
}

/**
 * fitGated with the cross-fitting rounds spread over `workers` and this thread: this thread fits
 * the final evidence (the largest single job) first, then takes rounds until none is left. The
 * rounds merge in order, so the model is the same bit for bit as fitGated's. A round a worker
 * failed to return is run here.
 */
export async function fitGatedParallel(
  tools: ToolSpec[],
  plans: Plan[],
  queries: Float32Array[],
  toolVectors: Float32Array[],
  workers: FoldWorkers,
  options: GatedOptions = {},
  onProgress?: (p: TrainingProgress) => void,
): Promise<GatedParts> {
  const fit = prepareFit(tools, plans, queries, toolVectors, options, onProgress);
  if ('parts' in fit) return fit.parts;
  const fitter = new CrossFitter(fit.setup, fit.side, fit.memo);
  const total = fitter.rounds;
  let done = 0;
  const progress = () => fit.report('cross-fitting', ++done / (total + 1));
  const job = workers.run(fit.setup, total);
  const theirs = job.results.catch(() => [] as RoundOutput[]);
  const byRound = new Map<number, RoundOutput>();
  let ev: Evidence;
  let rules: ReturnType<typeof requestRules>;
  try {
    ev = finalEvidence(fit, (fraction) => fit.report('cross-fitting', (done + fraction) / (total + 1)));
    // Request coverage and combinations need no round: here they overlap the workers' rounds.
    rules = requestRules(fit);
    progress();
    for (let round = job.claim(); round < total; round = job.claim()) {
      byRound.set(round, fitter.round(round));
      progress();
    }
  } catch (error) {
    job.cancel?.(); // the workers' rounds are of no use now
    throw error;
  }
  for (const output of await theirs)
    if (output.round >= 0 && output.round < total && !byRound.has(output.round)) byRound.set(output.round, output);
  const rounds = Array.from({ length: total }, (_, round) => byRound.get(round) ?? fitter.round(round));
  return finishFit(fit, rounds, ev, rules);
}

/** The evidence from every demonstration (what the model ranks with). */
function finalEvidence(fit: Prepared, onProgress: (fraction: number) => void): Evidence {
  return fitEvidence(
    fit.side,
    fit.plans,
    fit.queries,
    fit.clustering,
    { historyLength: fit.l, seed: fit.seed, head: fit.headOption, headSteps: fit.headSteps, memo: fit.memo },
    (p) => onProgress(p.fraction),
  );
}

/** The word–tool alignment (coverage.ts) and each step rule's state (step-rules.ts), from every demonstration. */
function requestRules(fit: Prepared): { coverage: CoverageModel; rules: RuleStates } {
  const coverage = fitCoverage(fit.tools, fit.plans, fit.side.index);
  // The word rules read every request's words: found once.
  const words = fit.plans.map((plan) => requestWordsOf(coverage, terms(plan.query)));
  const input = { plans: fit.plans, toolIndex: fit.side.index, labels: fit.side.labels.length, coverage, words };
  const rules: RuleStates = {};
  for (const rule of STEP_RULES) {
    if (fit.withoutRules.includes(rule.name)) continue;
    const state: unknown = rule.fit(input);
    if (state !== undefined) rules[rule.name] = state;
  }
  return { coverage, rules };
}

/** The rounds' held-out steps in round order: their gate rows, and per step its plan, scheme and what its fold knew. */
function collectHeldOut(fit: Prepared, rounds: RoundOutput[]) {
  const builder = new GateDataBuilder(S, G);
  const steps = {
    builder,
    plan: [] as number[],
    known: [] as boolean[],
    scheme: [] as number[],
    /** Per held-out step: demonstrated steps (in its fold) of each pooled label, in pool order. */
    poolCounts: [] as Float32Array[],
    /** Per held-out step: the needed tool's best rank by description (embedding or lexical), as if undemonstrated. */
    descRank: [] as number[],
  };
  for (const output of rounds) {
    builder.append(output.gate);
    const offsets = output.gate.offsets;
    const { scheme } = roundPlace(fit.setup, output.round);
    for (let j = 0; j < output.plan.length; j++) {
      steps.plan.push(output.plan[j]);
      steps.known.push(output.known[j] === 1);
      steps.scheme.push(scheme);
      steps.poolCounts.push(output.poolCounts.subarray(offsets[j], offsets[j + 1]));
      steps.descRank.push(output.descRank[j]);
    }
  }
  return steps;
}

/** Which held-out steps train the gate, set the temperature, and set the conformal thresholds. */
function splitHeldOut(fit: Prepared, steps: ReturnType<typeof collectHeldOut>) {
  const { plans, seed, leaveOneOut, thresholdsFrom, schemes, gateSchemes } = fit;
  const small = tooFewToSplit(plans.length);
  const half = gateHalves(plans.length, seed);
  const { plan: stepPlan, scheme: stepScheme } = steps;
  // With both schemes, new-combination steps count 3 times in the gate's fit: weighed as one
  // among many repeats, the gate learns to trust memorised sequences everywhere (measured on the
  // compositional demo set: coverage 0.75 at weight 1, 0.905 at 3, with repeats still at MRR 0.99).
  const both = gateSchemes.length > 1;
  // Leaving one plan out, both schemes by plan train the gate and the temperature (small: all steps).
  const fitSchemes = leaveOneOut ? 2 : gateSchemes.length;
  const gateSteps = stepPlan.flatMap((p, i) =>
    (small || half[p] === 0) && stepScheme[i] < fitSchemes ? (both && stepScheme[i] === 0 ? [i, i, i] : [i]) : [],
  );
  // The temperature comes from the first scheme's steps (with both, the new-combination ones).
  const calSteps = stepPlan.flatMap((p, i) =>
    (small || half[p] === 1) && (stepScheme[i] === 0 || (leaveOneOut && stepScheme[i] === 1)) ? [i] : [],
  );
  // The conformal thresholds from the thresholds scheme's steps: with `sequence`, a set must
  // hold the needed tool for a request no demonstration repeats, not only for repeats.
  // Leaving one plan out, the usual folds' steps only (the scheme by plan or, after it, by sequence).
  const thresholdScheme = leaveOneOut ? schemes.lastIndexOf(thresholdsFrom) : schemes.indexOf(thresholdsFrom);
  const thresholdSteps = stepPlan.flatMap((p, i) =>
    (small || half[p] === 1) && stepScheme[i] === thresholdScheme ? [i] : [],
  );
  return { small, half, gateSteps, calSteps, thresholdScheme, thresholdSteps };
}

/** Gate, temperature, conformal thresholds and groups from the rounds' held-out steps (in round order). */
function finishFit(fit: Prepared, rounds: RoundOutput[], ev: Evidence, fitted: ReturnType<typeof requestRules>) {
  const { coverage, rules } = fitted;
  const { side, seed, target, confidentAbove, neighbours, without, unseenPrior, report, pull } = fit;
  const steps = collectHeldOut(fit, rounds);
  const split = splitHeldOut(fit, steps);
  const { builder, descRank: stepDescRank } = steps;
  const { gateSteps, calSteps, thresholdSteps } = split;
  const calData = builder.build(calSteps);
  const epochs = gateSteps.length < 2000 ? 60 : 25;
  const { theta } = trainGate(builder.build(gateSteps), priorGate(), { seed, epochs, pull: pull(gateSteps.length) });
  report('gate', 1);
  const temperature = fitTemperature(theta, calData);
  // Scored as ranked: shrunk toward the descriptions by each candidate's demonstrations in its fold.
  const L = side.labels.length;
  // The prior on undemonstrated tools counts as far as the descriptions find the needed tool on held-out steps
  // (their reciprocal rank, squared): where they rank it poorly, what they say of a tool no run called is worth less.
  const prior = +(unseenPrior * describedShare(stepDescRank) ** 2).toFixed(6);
  const demonstrated = rarity(ev, L);
  const unseen = unseenShare(demonstrated.counts, L, side.end, prior);
  const cal = calibrationScores(theta, temperature, calData, (i) => steps.poolCounts[calSteps[i]], unseen);
  const calibration = conformalCalibration(fit, steps, split, { theta, temperature, calData, cal, unseen });
  const called = side.end - demonstrated.unseen.length;
  if (isSlice(called, side.end))
    calibration.sliceAtFit = { called, tools: side.end, runs: fit.plans.length, learned: 0 };
  const ruleSteps = { descriptionRanks: thresholdSteps.map((step) => stepDescRank[step]), target };
  for (const rule of STEP_RULES) if (rules[rule.name] !== undefined) rule.calibrate?.(rules[rule.name], ruleSteps);
  const raw = calibrationScores(theta, 1, calData);
  const diagnostics: GatedDiagnostics = {
    folds: fit.folds,
    foldBy: fit.foldBy,
    thresholdsFrom: fit.thresholdsFrom,
    heldOutSteps: steps.plan.length,
    ece: {
      raw: expectedCalibrationError(raw.top, raw.topCorrect),
      temperature: expectedCalibrationError(cal.top, cal.topCorrect),
      isotonic: isotonicEce(raw.top, raw.topCorrect),
    },
    temperature,
    thresholds: { ...calibration.thresholds.pools },
    historyLength: fit.l,
    clusters: fit.K,
    selection: fit.selection,
  };
  report('calibration', 1);
  const model = {
    side,
    evidence: ev,
    theta,
    temperature,
    target,
    confidentAbove,
    neighbours,
    withoutSignals: without,
    ...(prior > 0 ? { unseenPrior: prior } : {}),
    ...(fit.withoutRules.length ? { withoutRules: fit.withoutRules } : {}),
  };
  const novelty = fitNovelty(fit.queries, side.dim, seed);
  return { ...model, diagnostics, calibration, addedTools: [], coverage, rules, novelty };
}

/** The groups' conformal thresholds (groups.ts) from the threshold steps, scored as their folds ranked them. */
function conformalCalibration(
  fit: Prepared,
  steps: ReturnType<typeof collectHeldOut>,
  split: ReturnType<typeof splitHeldOut>,
  gate: {
    theta: Float64Array;
    temperature: number;
    calData: ReturnType<GateDataBuilder['build']>;
    cal: ReturnType<typeof calibrationScores>;
    unseen: ReturnType<typeof unseenShare>;
  },
) {
  const { plans, side, seed, target, confidentAbove, leaveOneOut, thresholdsFrom } = fit;
  const { builder, plan: stepPlan, scheme: stepScheme, known: stepKnown, poolCounts: stepPoolCounts } = steps;
  const { small, half, gateSteps, calSteps, thresholdScheme, thresholdSteps } = split;
  const { theta, temperature, calData, cal, unseen } = gate;
  const thresholdData = thresholdScheme === 0 ? calData : builder.build(thresholdSteps);
  const countsOf = (list: readonly number[]) => (i: number) => stepPoolCounts[list[i]];
  // With too few plans to split, the gate and temperature are fitted on the very steps the
  // thresholds come from, and score them too well: sets of a model of 30 runs held the needed tool
  // in 73–81% of UltraTool's steps for a 95% target. There each half's steps are scored by a gate
  // and temperature fitted on the other half (cross-fitted); the model keeps the gate fitted on all.
  // Leaving one plan out, those gates and temperatures come from the usual folds' steps by plan
  // alone, as without it: the thresholds are the same as they were.
  const folded = leaveOneOut ? stepPlan.flatMap((_, i) => (stepScheme[i] === 1 ? [i] : [])) : undefined;
  const crossFitted = small
    ? crossScores(
        thresholdSteps,
        folded ?? gateSteps,
        folded ?? calSteps,
        (i) => half[stepPlan[i]],
        builder,
        seed,
        countsOf,
        unseen,
        fit.pull,
      )
    : undefined;
  const scored =
    crossFitted ??
    (thresholdScheme === 0
      ? cal
      : calibrationScores(theta, temperature, thresholdData, countsOf(thresholdSteps), unseen));
  // Each held-out step's calibration group (groups.ts) from what its fold knew at rank time.
  const heldOut = scored.best.map((score, i) => {
    const step = thresholdSteps[i];
    return {
      plan: stepPlan[step],
      group: stepGroup(stepKnown[step], stepPoolCounts[step][scored.topAt[i]], scored.top[i] >= confidentAbove),
      score,
    };
  });
  const calibration = fitCalibration(heldOut, target, seed + SEED_GROUP_SAMPLE);
  calibration.bySize = coverageBySize(scored.ranks, side.labels.length);
  // Learning then adds what folds by sequence would (sequence-scores.ts).
  if (thresholdsFrom === 'sequence') calibration.sequences = fitSequenceScores(plans, heldOut);
  return calibration;
}

/** The mean reciprocal description rank of the needed tool over held-out tool steps (rank 0: END steps, left out). */
function describedShare(ranks: readonly number[]): number {
  let sum = 0;
  let n = 0;
  for (const r of ranks) if (r > 0) [sum, n] = [sum + 1 / r, n + 1];
  return n > 0 ? sum / n : 0;
}

/**
 * Held-out scores of `steps` (indices into the builder's steps), each half's (`halfOf`) from a gate
 * trained on the other half's `gateSteps` and a temperature fitted on its `calSteps`; undefined where
 * a half has no steps to fit on.
 */
function crossScores(
  steps: readonly number[],
  gateSteps: readonly number[],
  calSteps: readonly number[],
  halfOf: (step: number) => number,
  builder: GateDataBuilder,
  seed: number,
  countsOf: (steps: readonly number[]) => (i: number) => ArrayLike<number>,
  unseen: number,
  pull: (steps: number) => Float64Array,
): ReturnType<typeof calibrationScores> | undefined {
  const parts: ReturnType<typeof calibrationScores>[] = [];
  /** Per step: its half's scores and its place in them. */
  const where = new Map<number, [number, number]>();
  for (const h of [0, 1]) {
    const own = steps.filter((i) => halfOf(i) === h);
    if (own.length === 0) continue;
    const fitOn = gateSteps.filter((i) => halfOf(i) !== h);
    const tempOn = calSteps.filter((i) => halfOf(i) !== h);
    if (fitOn.length === 0 || tempOn.length === 0) return undefined;
    const { theta } = trainGate(builder.build(fitOn), priorGate(), {
      seed: seed + h,
      epochs: 60,
      pull: pull(fitOn.length),
    });
    const temperature = fitTemperature(theta, builder.build(tempOn));
    own.forEach((step, k) => where.set(step, [parts.length, k]));
    parts.push(calibrationScores(theta, temperature, builder.build(own), countsOf(own), unseen));
  }
  const at = steps.map((step) => where.get(step)!);
  const pick = (key: keyof (typeof parts)[number]) => at.map(([part, k]) => parts[part][key][k]);
  return {
    best: pick('best'),
    top: pick('top'),
    topCorrect: pick('topCorrect'),
    topAt: pick('topAt'),
    ranks: pick('ranks'),
  };
}

/** An offset from the fit's seed, its own draw (settings.ts has the others'): no two draws share a sequence. */
const SEED_GROUP_SAMPLE = 503;

/**
 * DTDR-G's options, with their documented defaults, and the check that runs before any work.
 */
import { DtdrError } from '../../base/errors.js';
import type { LinearHeadOptions } from '../linear-head.js';
import { SIGNALS, type SignalName } from './layout.js';

/** Options of the default method, DTDR-G: the coverage target of its candidate sets, its confidence rule, and its cross-fitting and head settings. */
export interface GatedOptions {
  /** l, the calls of history the graphs and head condition on. Default: picked on held-out demonstrations among 1–4. */
  historyLength?: number;
  /** K clusters. Default: picked on held-out demonstrations. */
  clusters?: number;
  /**
   * Cross-fitting folds for the gate and calibration. Default 3, or 2 from 2 × foldPlans
   * demonstrations on: there half the plans already exceed what a round trains on (foldPlans), so a
   * third fold only adds a round's work (each scheme still scores the same held-out plans).
   */
  folds?: number;
  /** The fraction of steps whose candidate set must hold an acceptable tool. Default 0.95. */
  target?: number;
  /** A step counts as confident when its top tool's calibrated probability is at least this. Default 0.5. */
  confidentAbove?: number;
  /** Nearest clusters a request is softly assigned to. Default 5. */
  neighbours?: number;
  /**
   * Order of mention in the request: the lexical signal weighs the request's k-th distinct
   * matched term by exp(−k / lexicalOrder), since requests name their first need first ("cancel
   * my ticket and rebook me"). 0 turns it off (every term weighs the same). Default 8.
   */
  lexicalOrder?: number;
  /**
   * How cross-fitting folds are drawn: `plan` (at random), `sequence` (plans with one tool
   * sequence share a fold, so every held-out plan is a new combination) or both, pooled.
   * Default: `plan+sequence` when there are at least 10 sequences and each is repeated about 10
   * times or more on average, else `plan`.
   */
  foldBy?: 'plan' | 'sequence' | 'plan+sequence';
  /**
   * Which held-out steps set the conformal thresholds: `sequence` (steps of plans whose tool
   * sequence the fold never saw: the sets are sized to hold the needed tool on new combinations
   * of familiar steps, and over-cover repeats) or `plan` (random folds: requests like the
   * demonstrations). Default: `sequence` when there are at least 10 sequences and at least half
   * the plans share theirs with another plan (elsewhere random folds already hold out new
   * combinations), else `plan`. Ranking and calibrated probabilities do not depend on it.
   */
  thresholdsFrom?: 'plan' | 'sequence';
  /** Signals to leave out (ablations). */
  without?: SignalName[];
  seed?: number;
  head?: LinearHeadOptions;
  /**
   * Steps a cross-fitting fold's head trains on, at most (a seeded sample of the fold's steps
   * beyond it). Fold heads only feed the gate and calibration: at 100,000 demonstrations training
   * them on every step was half of the fit. Default 30,000: the real data sets are unchanged
   * (UltraTool has 12,091 steps in all); the 16,000-tool app world's folds (~53,000 steps) and
   * larger ones train on a sample. At 98,000 demonstrations over 260 tools (final head on 200,000
   * steps) the held-out 2% scored MRR 0.9726, coverage 0.9927 with 30,000 (and k-means on 20,000
   * requests) against 0.9723, 0.9908 with 60,000. The app world's 2,000 test plans: MRR 0.9351,
   * coverage 0.9704 at 1.84 tools, against 0.9339, 0.9710 at 1.97 with every fold step
   * (`scripts/bench/profile-gated.ts app:16000 20000 quality`; serial fit 62 s against 81 s). Infinity: every step.
   */
  foldHeadSteps?: number;
  /**
   * Steps the final head (the one the model ranks with) trains on, at most: a seeded sample of
   * the steps beyond it; the graphs still count every step. Default 150,000: every data set the
   * tests and benchmarks cover has fewer but the 100,000-demonstration world (~340,000 steps),
   * where one epoch over every step was most of the final fit. Measured there on the held-out 2%
   * (`scripts/bench/profile-gated.ts synthetic:260 100000 quality`, two folds): MRR 0.9746, coverage
   * 0.9891 at 1.20 tools with every step and folds' heads on 100,000; 0.9717, 0.9874 at 1.21 with
   * 200,000; 0.9728, 0.9918 at 1.31 with 150,000, fold heads on 30,000 and k-means on 20,000
   * requests (the defaults). Infinity: every step.
   */
  headSteps?: number;
  /**
   * Demonstrations a cross-fitting round fits its evidence on, at most (a seeded sample of the
   * round's training plans beyond it), and likewise the fit that picks l and K; the final evidence
   * fits on every demonstration. Fold evidence only scores the held-out steps the gate and
   * calibration learn from (a few thousand plans a scheme): at 100,000 demonstrations fitting it
   * on ~65,000 plans a round was most of the fit. Default 30,000: a data set of at most 30,000
   * demonstrations is unchanged (the 16,000-tool app world trains its rounds on ~13,300,
   * UltraTool on ~2,000); Infinity: every training plan. At 98,000 demonstrations over 260 tools
   * the held-out 2% scored MRR 0.9742, coverage 0.9865 at 1.14 tools with it and k-means on
   * 30,000 requests, against 0.9747, 0.9889 at 1.16 before both (`scripts/bench/profile-gated.ts
   * synthetic:260 100000 quality`; `FOLD_PLANS=Infinity` for this cap alone: 0.9757, 0.9859, 1.12).
   */
  foldPlans?: number;
}

/** GatedOptions.foldHeadSteps' default. */
export const FOLD_HEAD_STEPS = 30_000;

/** GatedOptions.headSteps' default. */
export const HEAD_STEPS = 150_000;

/** GatedOptions.foldPlans' default. */
export const FOLD_PLANS = 30_000;

/** The options' values after defaults, checked: a bad value is a DtdrError naming it, before any work starts. */
export function resolveGatedOptions(options: GatedOptions) {
  const target = options.target ?? 0.95;
  if (!(target > 0 && target < 1)) throw new DtdrError('options', `target must be in (0, 1), got ${target}`, { field: 'target' });
  const confidentAbove = options.confidentAbove ?? 0.5;
  const neighbours = options.neighbours ?? 5;
  const lexicalOrder = options.lexicalOrder ?? 8;
  if (!(lexicalOrder >= 0 && Number.isFinite(lexicalOrder))) throw new DtdrError('options', `lexicalOrder must be a finite number ≥ 0, got ${lexicalOrder}`, { field: 'lexicalOrder' });
  if (options.thresholdsFrom !== undefined && options.thresholdsFrom !== 'plan' && options.thresholdsFrom !== 'sequence') {
    throw new DtdrError('options', `thresholdsFrom must be "plan" or "sequence", got ${String(options.thresholdsFrom)}`, { field: 'thresholdsFrom' });
  }
  const without = options.without ?? [];
  for (const s of without) if (!SIGNALS.includes(s)) throw new DtdrError('options', `unknown signal "${s}"`, { field: 'without', hint: `one of: ${SIGNALS.join(', ')}` });
  const foldHeadSteps = options.foldHeadSteps ?? FOLD_HEAD_STEPS;
  if (!(foldHeadSteps >= 1)) throw new DtdrError('options', `foldHeadSteps must be at least 1, got ${foldHeadSteps}`, { field: 'foldHeadSteps' });
  const headSteps = options.headSteps ?? HEAD_STEPS;
  if (!(headSteps >= 1)) throw new DtdrError('options', `headSteps must be at least 1, got ${headSteps}`, { field: 'headSteps' });
  const foldPlans = options.foldPlans ?? FOLD_PLANS;
  if (!(foldPlans >= 1)) throw new DtdrError('options', `foldPlans must be at least 1, got ${foldPlans}`, { field: 'foldPlans' });
  return { target, confidentAbove, neighbours, lexicalOrder, without, foldHeadSteps, headSteps, foldPlans };
}

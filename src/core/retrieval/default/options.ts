/**
 * DTDR-G's options: eight public ones, documented and checked, and the experimental settings
 * (tuning knobs and ablations, outside the stable API). Why each default is what it is, with the
 * measurements: docs/decisions/.
 */
import { DtdrError } from '../../base/errors.js';
import { MAX_PLAN_STEPS } from '../../base/limits.js';
import type { LinearHeadOptions } from '../linear-head.js';
import { priorPull } from './combine.js';
import { SIGNALS, type SignalName } from './layout.js';
import { STEP_RULE_NAMES } from './step-rules.js';

/**
 * DTDR-G's public options: `historyLength`, `clusters`, `seed` and `head` through `TrainOptions`,
 * the rest in `TrainOptions.gated`.
 */
export interface GatedOptions {
  /** The share of steps whose candidate set must hold an acceptable tool, in (0, 1). Default 0.95. */
  target?: number;
  /** A step may be confident when its top tool's calibrated probability is at least this, in [0, 1]. Default 0.5. */
  confidentAbove?: number;
  /** Cross-fitting folds for the gate and calibration, an integer ≥ 2. Default 3 (2 from 60,000 demonstrations). */
  folds?: number;
  /** Nearest clusters a request is softly assigned to, an integer ≥ 1. Default 5. */
  neighbours?: number;
  /** l, the calls of history the graphs and head condition on, an integer ≥ 1. Default: picked among 1–4. */
  historyLength?: number;
  /** K clusters, an integer ≥ 1. Default: picked on held-out demonstrations. */
  clusters?: number;
  /** Seed for every random draw of the fit, an integer. Default 0. */
  seed?: number;
  /** The linear head's training settings. */
  head?: LinearHeadOptions;
  /**
   * Experimental settings: tuning knobs and ablations for studies and benchmarks. Not part of the
   * stable API (they may change or go in any release); the defaults are what the README measures.
   */
  experimental?: ExperimentalGatedSettings;
}

/** DTDR-G's experimental settings (see GatedOptions.experimental); docs/decisions/ records why the defaults. */
export interface ExperimentalGatedSettings {
  /** The lexical signal weighs the request's k-th matched term by exp(−k / lexicalOrder); 0: all alike. Default 8. */
  lexicalOrder?: number;
  /** How cross-fitting folds are drawn: at random (`plan`), by tool sequence, or both. Default: from the data. */
  foldBy?: 'plan' | 'sequence' | 'plan+sequence';
  /** Which held-out steps set the conformal thresholds: random or sequence folds. Default: from the data. */
  thresholdsFrom?: 'plan' | 'sequence';
  /** Signals to leave out (ablations). */
  without?: SignalName[];
  /** Step rules to leave out, by name (ablations: `npm run experiment -- rule-ablation`); saved with the model. */
  withoutRules?: string[];
  /** Steps a cross-fitting fold's head trains on, at most (a seeded sample beyond). Default 30,000; Infinity: all. */
  foldHeadSteps?: number;
  /** Steps the final head trains on, at most (a seeded sample beyond). Default 150,000; Infinity: all. */
  headSteps?: number;
  /** Demonstrations a cross-fitting round (and the choice of l and K) fits on, at most. Default 30,000. */
  foldPlans?: number;
  /**
   * The prior on a step needing a tool no demonstration calls, in demonstrated steps: that chance is at least
   * unseenPrior / (steps + unseenPrior) however the demonstrations repeat their tools (shrinkage.ts unseenShare).
   * Default UNSEEN_PRIOR; 0: Good–Turing alone.
   */
  unseenPrior?: number;
  /**
   * The prior on the gate's weights, in held-out steps: the fit pulls the weights of `pulledSignals` back to the
   * untrained gate's as strongly as this many steps pull them away, so a few dozen runs move them a little and
   * thousands freely. Default PRIOR_STEPS; 0: no pull.
   */
  priorSteps?: number;
  /** The signals whose gate weights that prior holds. Default PULLED_SIGNALS. */
  pulledSignals?: SignalName[];
  /**
   * Held-out steps are scored (gate, temperature, thresholds) over every label where the tools number at most this
   * many, and over a pool of each step's likely labels (the needed ones, END and each signal's top 12) above it: a
   * softmax over the pool alone leaves out the rest's share. Default 0: the pool.
   */
  wholeSoftmaxUpTo?: number;
}

/** ExperimentalGatedSettings.foldHeadSteps' default. */
export const FOLD_HEAD_STEPS = 30_000;

/** ExperimentalGatedSettings.headSteps' default. */
export const HEAD_STEPS = 150_000;

/**
 * ExperimentalGatedSettings.unseenPrior's default, chosen leaving each world out (npm run experiment --
 * unseen-prior; docs/first-day.md): demonstrations of a few features, their first tools all alike, made Good–Turing
 * give a never-demonstrated tool almost nothing, and a request for one went to a demonstrated tool.
 */
export const UNSEEN_PRIOR = 1000;

/**
 * ExperimentalGatedSettings.priorSteps' and pulledSignals' defaults, chosen leaving each world out (npm run
 * experiment -- prior-pull; docs/first-day.md): what the runs teach and the called and schema signals are held;
 * the description signals and END stay free, as how a world's requests word its tools and when its plans are
 * done are what a few runs teach best (npm run experiment -- step-kinds).
 */
export const PRIOR_STEPS = 20;
export const PULLED_SIGNALS: SignalName[] = [
  'cluster-graph',
  'pooled-graph',
  'cluster-tools',
  'head',
  'called',
  'schema',
];

/** ExperimentalGatedSettings.foldPlans' default. */
export const FOLD_PLANS = 30_000;

function refuse(field: string, message: string, hint?: string): never {
  throw new DtdrError('options', `${field} ${message}`, { field, ...(hint ? { hint } : {}) });
}

const isInteger = (v: unknown, min: number, max = Number.MAX_SAFE_INTEGER) =>
  Number.isInteger(v) && (v as number) >= min && (v as number) <= max;

/** `v`, refused where it is not at least `min` (NaN included). */
function atLeast(field: string, v: number, min: number): number {
  if (!(v >= min)) refuse(field, `must be at least ${min}, got ${v}`);
  return v;
}

/** The options' values after defaults, checked: a bad value is a DtdrError naming it, before any work starts. */
export function resolveGatedOptions(options: GatedOptions) {
  const target = options.target ?? 0.95;
  if (!(target > 0 && target < 1)) refuse('target', `must be in (0, 1), got ${target}`);
  const confidentAbove = options.confidentAbove ?? 0.5;
  if (!(confidentAbove >= 0 && confidentAbove <= 1))
    refuse('confidentAbove', `must be in [0, 1], got ${confidentAbove}`);
  const folds = options.folds;
  if (folds !== undefined && !isInteger(folds, 2)) refuse('folds', `must be an integer ≥ 2, got ${folds}`);
  const neighbours = options.neighbours ?? 5;
  if (!isInteger(neighbours, 1)) refuse('neighbours', `must be an integer ≥ 1, got ${neighbours}`);
  const l = options.historyLength;
  if (l !== undefined && l !== 0 && !isInteger(l, 1, MAX_PLAN_STEPS))
    refuse('historyLength', `must be an integer in [1, ${MAX_PLAN_STEPS}], got ${l}`);
  const K = options.clusters;
  if (K !== undefined && K !== 0 && !isInteger(K, 1)) refuse('clusters', `must be an integer ≥ 1, got ${K}`);
  const seed = options.seed;
  if (seed !== undefined && !Number.isInteger(seed)) refuse('seed', `must be an integer, got ${seed}`);
  const x = options.experimental ?? {};
  const lexicalOrder = x.lexicalOrder ?? 8;
  if (!(lexicalOrder >= 0 && Number.isFinite(lexicalOrder)))
    refuse('lexicalOrder', `must be a finite number ≥ 0, got ${lexicalOrder}`);
  if (x.foldBy !== undefined && !['plan', 'sequence', 'plan+sequence'].includes(x.foldBy))
    refuse('foldBy', `must be "plan", "sequence" or "plan+sequence", got ${String(x.foldBy)}`);
  if (x.thresholdsFrom !== undefined && x.thresholdsFrom !== 'plan' && x.thresholdsFrom !== 'sequence')
    refuse('thresholdsFrom', `must be "plan" or "sequence", got ${String(x.thresholdsFrom)}`);
  const without = x.without ?? [];
  const known = `one of: ${SIGNALS.join(', ')}`;
  for (const s of without) if (!SIGNALS.includes(s)) refuse('without', `names an unknown signal "${s}"`, known);
  const foldHeadSteps = atLeast('foldHeadSteps', x.foldHeadSteps ?? FOLD_HEAD_STEPS, 1);
  const headSteps = atLeast('headSteps', x.headSteps ?? HEAD_STEPS, 1);
  const foldPlans = atLeast('foldPlans', x.foldPlans ?? FOLD_PLANS, 1);
  const withoutRules = x.withoutRules ?? [];
  for (const r of withoutRules)
    if (!STEP_RULE_NAMES.includes(r))
      refuse('withoutRules', `names an unknown rule "${r}"`, STEP_RULE_NAMES.join(', '));
  const unseenPrior = x.unseenPrior ?? UNSEEN_PRIOR;
  if (!(unseenPrior >= 0 && unseenPrior <= 1e9)) refuse('unseenPrior', `must be in [0, 1e9], got ${unseenPrior}`);
  const priorSteps = x.priorSteps ?? PRIOR_STEPS;
  if (!(priorSteps >= 0 && priorSteps <= 1e9)) refuse('priorSteps', `must be in [0, 1e9], got ${priorSteps}`);
  const pulledSignals = x.pulledSignals ?? PULLED_SIGNALS;
  for (const s of pulledSignals)
    if (!SIGNALS.includes(s)) refuse('pulledSignals', `names an unknown signal "${s}"`, known);
  const pulled = pulledSignals.map((s) => SIGNALS.indexOf(s));
  const pull = (steps: number) => priorPull(steps, priorSteps, pulled);
  const wholeSoftmaxUpTo = atLeast('wholeSoftmaxUpTo', x.wholeSoftmaxUpTo ?? 0, 0);
  const { foldBy, thresholdsFrom } = x;
  const caps = { foldHeadSteps, headSteps, foldPlans };
  const rest = { foldBy, thresholdsFrom, unseenPrior, withoutRules, pull, wholeSoftmaxUpTo };
  return { target, confidentAbove, neighbours, lexicalOrder, without, ...caps, ...rest };
}

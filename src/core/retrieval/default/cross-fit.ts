/**
 * DTDR-G's cross-fitting rounds: every demonstration's steps scored by evidence fitted without it.
 * A round (one scheme's one fold) depends only on the data and the settings, never on another
 * round, so rounds may run anywhere — in order here, or in parallel workers (FoldWorkers, given by
 * a platform entry such as `dtdr/node`) — and are merged in round order: the fit is the same
 * bit for bit either way.
 */
import { planSteps, sequenceKey } from '../../plans/plan.js';
import { seededRandom, shuffleInPlace } from '../../base/random.js';
import { terms } from '../../base/text.js';
import type { Plan, ToolSpec } from '../../base/types.js';
import { historyIndices } from '../dependency.js';
import type { LinearHeadOptions } from '../linear-head.js';
import { SAMPLED_SOFTMAX_ABOVE } from '../linear-head-sampled.js';
import { maxScoredPlans, scoredSubset } from './calibration.js';
import { rarity, type Evidence } from './evidence.js';
import { fitEvidence, planMemo, type Clustering, type FitPartsOptions, type PlanMemo } from './evidence-fit.js';
import { GateDataBuilder, type GateParts } from './gate.js';
import { BAG, CG, EMBU, G, GG, HEAD, LEX, LEXU, S } from './layout.js';
import { computeSignals } from './signals.js';
import { ToolSide } from './tool-side.js';
import { Workspace } from './workspace.js';

export type FoldScheme = 'plan' | 'sequence';

/**
 * Everything a cross-fitting round needs, in a form a worker can receive (structured clone):
 * plain objects and typed arrays, the request vectors packed n × dim.
 */
export interface CrossFitSetup {
  tools: ToolSpec[];
  /** Tool vectors packed tools × dim. */
  toolVectors: Float32Array;
  dim: number;
  lexicalOrder: number;
  plans: Plan[];
  /** Request vectors packed plans × dim. */
  queries: Float32Array;
  /** The chosen clustering of every demonstration. */
  centroids: Float32Array;
  k: number;
  assignment: Uint32Array;
  historyLength: number;
  seed: number;
  neighbours: number;
  /** Signal indices switched off (ablations). */
  without: number[];
  head: LinearHeadOptions | false | undefined;
  foldHeadSteps: number;
  /** Training plans a round fits its evidence on, at most (GatedOptions.foldPlans; Infinity clones). */
  foldPlans: number;
  folds: number;
  /** Folds of the schemes that only feed the thresholds (after the first `gateSchemes`); default `folds`. */
  thresholdFolds?: number;
  /** The schemes in round order; the first `gateSchemes` feed the gate, a later one only the thresholds. */
  schemes: FoldScheme[];
  gateSchemes: number;
  /** Held-out steps are scored over every label where there are at most this many (ExperimentalGatedSettings). */
  wholeSoftmaxUpTo?: number;
}

/** What one round adds: its held-out steps' gate rows and, per step, what calibration groups need. */
export interface RoundOutput {
  round: number;
  gate: GateParts;
  /** Per step: demonstrated steps (in its fold) of each pooled label, in pool order, rows as in `gate`. */
  poolCounts: Float32Array;
  /** Per step: the needed tool's best rank by description (0: END only). */
  descRank: Int32Array;
  plan: Int32Array;
  known: Uint8Array;
}

/**
 * Runs cross-fitting rounds in parallel. `run` starts rounds on other threads and returns at once;
 * `claim` hands out round numbers (each exactly once, across every thread, the caller's included);
 * `results` resolves to the other threads' rounds; `cancel` stops them (a failed fit). A platform entry makes one per
 * fit
 * (`foldWorkers()` in `dtdr/node`); closing it ends its threads.
 */
export interface FoldWorkers {
  /** Threads besides the caller's. */
  readonly threads: number;
  /**
   * Starts `rounds` cross-fitting rounds of `setup`: `claim` hands the caller the next unclaimed round (or -1),
   * `results` settles with every round's output in order, `cancel` stops the workers.
   */
  run(
    setup: CrossFitSetup,
    rounds: number,
  ): {
    /** The next unclaimed round for the caller to run itself, or -1 when none is left. */
    claim(): number;
    results: Promise<RoundOutput[]>;
    /** Stops the workers' remaining rounds. */
    cancel?(): void;
  };
  /** Ends the worker threads. */
  close(): void | Promise<void>;
}

/**
 * Which fold each plan is held out in, under a scheme: by plan, or by tool sequence (plans sharing one share a fold).
 */
export function foldAssignment(plans: readonly Plan[], scheme: FoldScheme, folds: number, seed: number): Uint32Array {
  const n = plans.length;
  const foldOf = new Uint32Array(n);
  if (scheme === 'sequence') {
    // Plans that share a tool sequence share a fold: every held-out plan is a new combination.
    const sequenceOf = plans.map(sequenceKey);
    const keys = [...new Set(sequenceOf)];
    const foldOfKey = new Map<string, number>();
    shuffleInPlace(keys, seededRandom(seed + 211)).forEach((key, rank) => foldOfKey.set(key, rank % folds));
    sequenceOf.forEach((key, i) => (foldOf[i] = foldOfKey.get(key)!));
    return foldOf;
  }
  return deal(foldOf, folds, seed + 211);
}

/** Deals indices 0 … out.length − 1, in a seeded random order, to `folds` folds in turn: out[i] is i's fold. */
function deal<A extends Uint8Array | Uint32Array>(out: A, folds: number, seed: number): A {
  const order = shuffleInPlace(
    Array.from(out, (_, i) => i),
    seededRandom(seed),
  );
  order.forEach((i, rank) => (out[i] = rank % folds));
  return out;
}

/** Folds of scheme `scheme` (an index into `schemes`). */
export function schemeFolds(
  setup: Pick<CrossFitSetup, 'folds' | 'thresholdFolds' | 'gateSchemes'>,
  scheme: number,
): number {
  return scheme < setup.gateSchemes ? setup.folds : (setup.thresholdFolds ?? setup.folds);
}

/** Round `round`'s scheme and fold: every gate scheme's folds in order, then each later scheme's. */
export function roundPlace(
  setup: Pick<CrossFitSetup, 'folds' | 'thresholdFolds' | 'gateSchemes' | 'schemes'>,
  round: number,
): { scheme: number; fold: number } {
  let fold = round;
  for (let scheme = 0; scheme < setup.schemes.length; scheme++) {
    const folds = schemeFolds(setup, scheme);
    if (fold < folds) return { scheme, fold };
    fold -= folds;
  }
  return { scheme: setup.schemes.length, fold };
}

/** Which half of the held-out plans each plan is in: 0 trains the gate, 1 calibrates. */
export function gateHalves(n: number, seed: number): Uint8Array {
  return deal(new Uint8Array(n), 2, seed + 307);
}

/** Too few plans to split into halves: both halves use everything (the guarantee weakens; said in the reason). */
export const tooFewToSplit = (n: number) => n < 40;

/** A setup's per-fit state, built once per thread: the tool side, folds, halves, memo. */
export class CrossFitter {
  readonly side: ToolSide;
  private readonly foldOf: Uint32Array[];
  private readonly half: Uint8Array;
  private readonly memo: PlanMemo;
  private readonly without: Set<number>;

  /** `side` and `memo`: the caller's, where it has them (the same values; built once per thread). */
  constructor(
    readonly setup: CrossFitSetup,
    side?: ToolSide,
    memo?: PlanMemo,
  ) {
    this.side = side ?? new ToolSide(setup.tools, setup.toolVectors, setup.dim, setup.lexicalOrder);
    this.foldOf = setup.schemes.map((scheme, r) =>
      foldAssignment(setup.plans, scheme, schemeFolds(setup, r), setup.seed),
    );
    this.half = gateHalves(setup.plans.length, setup.seed);
    this.memo = memo ?? planMemo(this.side);
    this.without = new Set(setup.without);
  }

  get rounds(): number {
    return this.setup.schemes.reduce((rounds, _, r) => rounds + schemeFolds(this.setup, r), 0);
  }

  /**
   * The plans round `round` fits its evidence on, in index order: every plan outside its held-out
   * fold, or a seeded sample of `foldPlans` of them when there are more (the same on every thread).
   */
  trainingPlans(round: number): number[] {
    const { plans, seed, foldPlans } = this.setup;
    const { scheme, fold: f } = roundPlace(this.setup, round);
    const foldOf = this.foldOf[scheme];
    const trainIdx: number[] = [];
    for (let i = 0; i < plans.length; i++) if (foldOf[i] !== f) trainIdx.push(i);
    return scoredSubset(trainIdx, foldPlans, seed + 701 + round);
  }

  /** Round `round` (its scheme and fold: roundPlace): fit on the other folds, score held-out steps. */
  round(round: number, onProgress?: (fraction: number) => void): RoundOutput {
    const setup = this.setup;
    const { plans, dim, seed } = setup;
    const side = this.side;
    const { scheme: r, fold: f } = roundPlace(setup, round);
    const folds = schemeFolds(setup, r);
    const foldOf = this.foldOf[r];
    const n = plans.length;
    const small = tooFewToSplit(n);
    const query = (i: number) => setup.queries.subarray(i * dim, (i + 1) * dim);
    // The other folds' plans train the round, at most foldPlans of them (GatedOptions.foldPlans:
    // fold evidence only scores the held-out steps below). At most MAX_SCORED_PLANS held-out plans
    // per scheme are scored (gate and calibration need thousands of steps, not 100,000
    // demonstrations' worth).
    const trainIdx = this.trainingPlans(round);
    const forThresholdsOnly = r >= setup.gateSchemes;
    const held: number[] = [];
    for (let i = 0; i < n; i++)
      if (foldOf[i] === f && (small || !forThresholdsOnly || this.half[i] === 1)) held.push(i);
    const heldIdx = scoredSubset(held, maxScoredPlans(side.labels.length) / folds, seed + 409 + f);
    const ev = this.foldEvidence(trainIdx, f, query, onProgress);
    const w = new Workspace(side.labels.length, dim, ev.k);
    const builder = new GateDataBuilder(S, G);
    const [poolCounts, descRank, plan, known]: number[][] = [[], [], [], []];
    const L = side.labels.length;
    const counts = rarity(ev, L).counts;
    for (const i of heldIdx) {
      const qTerms = side.lexical.prepare(terms(plans[i].query));
      const q = query(i);
      for (const step of planSteps(plans[i])) {
        const input = { terms: qTerms, queryVector: q, history: historyIndices(step.history, side.index) };
        computeSignals(side, ev, input, w, setup.neighbours, this.without);
        const acceptable = new Set(step.acceptable.map((t) => side.index.get(t)!));
        const pool = new Set<number>(acceptable);
        pool.add(side.end);
        for (const s of [LEX, LEXU, EMBU, CG, GG, BAG, HEAD])
          if (!this.without.has(s)) topIndices(w.x, s * L, L, 12, pool);
        // Every label, where the whole softmax is affordable (ExperimentalGatedSettings.wholeSoftmaxUpTo).
        if (L <= (setup.wholeSoftmaxUpTo ?? 0)) for (let f2 = 0; f2 < L; f2++) pool.add(f2);
        const pooled = [...pool];
        const isAcceptable = (f2: number) => acceptable.has(f2);
        builder.add(w.context, pooled, (s, f2) => w.x[s * L + f2], isAcceptable);
        for (const f2 of pooled) poolCounts.push(counts[f2]);
        descRank.push(descriptionRank(w.x, L, side.end, acceptable));
        plan.push(i);
        known.push(w.known ? 1 : 0);
      }
    }
    return {
      round,
      gate: builder.parts(),
      poolCounts: Float32Array.from(poolCounts),
      descRank: Int32Array.from(descRank),
      plan: Int32Array.from(plan),
      known: Uint8Array.from(known),
    };
  }

  /** The evidence a round's fold fits on its training plans: a quicker head (it feeds only the gate, calibration). */
  private foldEvidence(
    trainIdx: number[],
    f: number,
    query: (i: number) => Float32Array,
    onProgress?: (fraction: number) => void,
  ): Evidence {
    const setup = this.setup;
    const { plans, seed, centroids, k, historyLength, foldHeadSteps: headSteps } = setup;
    const side = this.side;
    const clustering: Clustering = { centroids, k, assignment: trainIdx.map((i) => setup.assignment[i]) };
    // Fold heads only feed the gate and calibration: 3 epochs measure as well as 8 there, at a third of the time.
    // Over many labels (a sampled softmax) one epoch: fold heads were most of the fit at 16,000 tools.
    const head = setup.head;
    const foldHead =
      head === false
        ? false
        : { ...head, epochs: Math.min(side.labels.length > SAMPLED_SOFTMAX_ABOVE ? 1 : 3, head?.epochs ?? 8) };
    const options: FitPartsOptions = { historyLength, seed: seed + f, head: foldHead, headSteps, memo: this.memo };
    const foldPlans = trainIdx.map((i) => plans[i]);
    return fitEvidence(side, foldPlans, trainIdx.map(query), clustering, options, (p) => onProgress?.(p.fraction));
  }
}

/**
 * The best rank of an acceptable tool (END aside) by the description signals alone, embedding
 * (history-aware) or lexical, whichever ranks it higher; 0 when END is the only acceptable label.
 * Description signals need no demonstration, so this is the rank a tool would have if it had none.
 */
function descriptionRank(x: Float32Array, L: number, T: number, acceptable: Set<number>): number {
  let best = 0;
  for (const f of acceptable) {
    if (f >= T) continue;
    for (const s of [EMBU, LEXU]) {
      const v = x[s * L + f];
      if (s === LEXU && v <= 0) continue;
      let rank = 1;
      for (let g = 0; g < T; g++) if (x[s * L + g] > v) rank++;
      if (best === 0 || rank < best) best = rank;
    }
  }
  return best;
}

/**
 * Indices of the `count` largest values of x[from .. from+n), added to `into` in the order a
 * replace-the-worst scan keeps them: the first `count` indices, each later one that beats the
 * worst kept (the first of the smallest) taking its place.
 */
function topIndices(x: Float32Array, from: number, n: number, count: number, into: Set<number>): void {
  const kept = Math.min(count, n);
  const best: number[] = [];
  for (let f = 0; f < kept; f++) best.push(f);
  if (n > count) {
    const worstOf = () => {
      let worst = 0;
      for (let k = 1; k < best.length; k++) if (x[from + best[k]] < x[from + best[worst]]) worst = k;
      return worst;
    };
    let worst = worstOf();
    let worstValue = x[from + best[worst]];
    for (let f = count; f < n; f++) {
      if (x[from + f] > worstValue) {
        best[worst] = f;
        worst = worstOf();
        worstValue = x[from + best[worst]];
      }
    }
  }
  for (const f of best) into.add(f);
}

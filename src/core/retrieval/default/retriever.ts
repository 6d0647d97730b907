/* eslint-disable max-lines -- 548 lines: to split by concern */
/**
 * DTDR-G's retriever: ranks one step (signals → gate → temperature-scaled softmax), says why a step
 * is unsure, and delegates fitting (fit.ts), online learning (learning.ts) and files (state.ts).
 */
import { DtdrError } from '../../base/errors.js';
import { terms } from '../../base/text.js';
import type { Plan, ToolSpec } from '../../base/types.js';
import { historyIndices } from '../dependency.js';
import { withLazyOrder } from '../ranking.js';
import type { EmbeddingNeeds, LearnInput, RankInput, Ranking, Retriever, TrainingProgress } from '../types.js';
import { combine } from './combine.js';
import type { Evidence } from './evidence.js';
import { fitGated, fitGatedParallel } from './fit.js';
import type { FoldWorkers } from './cross-fit.js';
import { C_MATCH, C_SUPPORT, KNOWN_HISTORY, SIGNALS, type SignalName } from './layout.js';
import { learnGated } from './learning.js';
import type { GatedOptions } from './options.js';
import { computeSignals } from './signals.js';
import { rarity } from './evidence.js';
import {
  confidentGroup,
  groupKey,
  stepGroup,
  stepThreshold,
  thresholdsOf,
  type CalibrationGroup,
  type Thresholds,
} from './groups.js';
import { CenteredMatch } from './centered.js';
import { requestWordsOf, strongWords, withAddedTools, type CoverageModel } from './coverage.js';
import type { StepRule, StepView } from './rule.js';
import { STEP_RULES } from './step-rules.js';
import { addedToolsRule } from './rules/added-tools.js';
import { gatedParts, gatedState, type GatedDiagnostics, type GatedParts, type GatedState } from './state.js';
import type { ToolSide } from './tool-side.js';
import { DESCRIBED, noTerms, SCORES, Workspace } from './workspace.js';
import { NOVEL_P, noveltyPValue, unlikeEvery } from './novelty.js';
import { DESCRIPTIONS_GATE, nothingToShrink, shrinkInPlace, unseenKeep, unseenShare } from './shrinkage.js';

/**
 * DTDR-G (ours, the default): one retriever that combines, per step, the signals that are each
 * strong somewhere, with a gate learned on held-out folds of the demonstrations:
 *
 * - the request against tool names and descriptions, lexical (BM25) and by embedding, each also
 *   history-aware: what the calls so far already served counts less;
 * - dependency statistics: per-cluster graphs under a soft assignment to the nearest clusters,
 *   the pooled graph, and which tools the nearby demonstrations use at all;
 * - a linear head over [query embedding, last l calls, set of calls so far] (DTDR-H generalised);
 * - tool-to-tool evidence from schemas: an output of a called tool that feeds a required input.
 *
 * The gate (see gate.ts) weighs the signals by how much the step's context supports them, so
 * memorised sequences lead where the demonstrations know the history and descriptions lead where
 * they do not. Probabilities are temperature-calibrated and the candidate set is split-conformal:
 * it holds an acceptable tool in at least `target` of held-out steps, separately for confident
 * and unsure steps. With no demonstrations it ranks by descriptions alone.
 */
/**
 * The share of the tools (END aside) the demonstrations must call for a step to be confident: below it they are a
 * slice of the app (decision 0007 chose it for the rules this replaces, on UltraTool's skewed runs).
 */
export const DEMONSTRATED_TOOLS = 0.5;

/** Why a request unlike the demonstrations' is ranked as with tools alone. */
export const NOVEL_CAUSE =
  'the request is unlike every demonstration: ranked by tool descriptions alone, as with no demonstrations';

/** A step as `score` leaves it (and `weigh` reweighs it). */
interface ScoredStep {
  probabilities: Float64Array;
  /** The label on top, and its probability. */
  best: number;
  top: number;
  /** Whether some demonstration has the last calls in a row (workspace.ts). */
  known: boolean;
  /** Label indices of the calls so far, and the request's vector. */
  history: number[];
  query: Float32Array;
}

/** The calibration group that answers for a step (`calibrate`). */
interface StepCalibration {
  /** The group's key (absent for models fitted before the fine groups). */
  group?: string;
  confident: boolean;
  threshold: number;
  /** Labels always in the set (END, with tools alone). */
  include: number[];
  /** The step rules the group runs. */
  rules: readonly StepRule<unknown>[];
  /** What else the set needs (CandidateSet's describedOnly, coverageBySize). */
  set: { describedOnly?: Uint32Array; coverageBySize?: readonly number[] };
  /** Why an unsure step is unsure, given the rules' reasons. */
  cause(rules: string[]): string;
}

/** What the step rules decided: the set's named labels, their reasons, and whether the step stays confident. */
interface RuleOutcome {
  include: number[];
  because: string[];
  confident: boolean;
}

export class GatedRetriever implements Retriever {
  readonly method = 'dtdr-g' as const;
  readonly needs: EmbeddingNeeds = { query: true, context: false };
  private workspace: Workspace;
  private readonly without: Set<number>;
  /** Request coverage with rows for the tools added after training (from their descriptions). */
  private coverage: CoverageModel | undefined;

  private constructor(private readonly parts: GatedParts) {
    this.workspace = new Workspace(parts.side.labels.length, parts.side.dim, parts.evidence?.k ?? 0);
    this.without = new Set(parts.withoutSignals.map((s) => SIGNALS.indexOf(s)));
    this.coverage = parts.coverage && withAddedTools(parts.coverage, parts.side.tools, parts.addedTools);
  }

  static fit(
    tools: ToolSpec[],
    plans: Plan[],
    queries: Float32Array[],
    toolVectors: Float32Array[],
    options: GatedOptions = {},
    onProgress?: (p: TrainingProgress) => void,
  ): GatedRetriever {
    return new GatedRetriever(fitGated(tools, plans, queries, toolVectors, options, onProgress));
  }

  /** fit, with the cross-fitting rounds on `workers` too (cross-fit.ts): the same model, sooner on several cores. */
  static async fitParallel(
    tools: ToolSpec[],
    plans: Plan[],
    queries: Float32Array[],
    toolVectors: Float32Array[],
    workers: FoldWorkers,
    options: GatedOptions = {},
    onProgress?: (p: TrainingProgress) => void,
  ): Promise<GatedRetriever> {
    return new GatedRetriever(await fitGatedParallel(tools, plans, queries, toolVectors, workers, options, onProgress));
  }

  static fromState(tools: ToolSpec[], dim: number, s: GatedState): GatedRetriever {
    return new GatedRetriever(gatedParts(tools, dim, s));
  }

  state(): GatedState {
    return gatedState(this.parts);
  }

  private get side(): ToolSide {
    return this.parts.side;
  }

  private get evidence(): Evidence | undefined {
    return this.parts.evidence;
  }

  get theta(): Float64Array {
    return this.parts.theta;
  }

  get temperature(): number {
    return this.parts.temperature;
  }

  get target(): number {
    return this.parts.target;
  }

  get confidentAbove(): number {
    return this.parts.confidentAbove;
  }

  /**
   * The conformal thresholds in use per pool and group; set them (e.g. from `thresholdsFor`) to change the coverage
   * target.
   */
  get thresholds(): Thresholds {
    return this.parts.calibration.thresholds;
  }

  set thresholds(value: Thresholds) {
    this.parts.calibration.thresholds = value;
  }

  get neighbours(): number {
    return this.parts.neighbours;
  }

  get withoutSignals(): SignalName[] {
    return this.parts.withoutSignals;
  }

  get diagnostics(): GatedDiagnostics | undefined {
    return this.parts.diagnostics;
  }

  get labels(): readonly string[] {
    return this.side.labels;
  }

  get historyLength(): number {
    return this.evidence?.historyLength ?? 0;
  }

  /** True when the model learned from demonstrations (false: tools alone). */
  get demonstrated(): boolean {
    return this.evidence !== undefined;
  }

  /** Online learning (see learning.ts): new demonstrations in, no refit. */
  learn(input: LearnInput): void {
    if (learnGated(this.parts, input, (step) => this.rank(step)))
      this.workspace = new Workspace(this.side.labels.length, this.side.dim, 1);
    // Learning counts the new requests' words (coverage.ts): the added tools' rows and each request's words again.
    const { coverage, side, addedTools } = this.parts;
    this.coverage = coverage && withAddedTools(coverage, side.tools, addedTools);
    this.lastQuery = { text: '', terms: noTerms(), tokens: [] };
    if (this.view) this.view.coverage = this.coverage;
  }

  /**
   * What every step of a plan shares, worked out once per request: its BM25 postings, its terms,
   * and (on first need) the alignment's word ids and the few of them request coverage can name.
   */
  private lastQuery: {
    text: string;
    terms: ReturnType<typeof noTerms>;
    tokens: string[];
    words?: Uint32Array;
    strong?: Uint32Array;
    pValue?: number;
  } = { text: '', terms: noTerms(), tokens: [] };

  /**
   * Per rarity counts: whether some tool has no demonstrations, and the Good–Turing unseen share.
   */
  private shrinkFor: { counts: Float64Array; needed: boolean; unseen: number } | undefined;
  /** The descriptions' probabilities of the step being ranked (scratch), and whether they are this step's. */
  private descriptionBuffer = new Float64Array(0);
  private described = false;

  /** The descriptions' probabilities of the step being ranked, computed once per step. */
  private descriptions(): Float64Array {
    const L = this.side.labels.length;
    if (this.described) return this.descriptionBuffer;
    if (this.descriptionBuffer.length < L) this.descriptionBuffer = new Float64Array(L);
    // The learned ranking's passes with the descriptions' gate (its probabilities were copied out of `output`).
    const w = this.workspace;
    const sum = w.kernel.run(DESCRIBED, L, combine(DESCRIPTIONS_GATE, w, L, DESCRIBED), 1);
    w.kernel.divide(L, sum);
    this.descriptionBuffer.set(w.kernel.output.subarray(0, L));
    this.described = true;
    return this.descriptionBuffer;
  }

  /**
   * One step, in named stages: `score` (signals → gate → softmax), `weigh` (how far the demonstrations speak for
   * this request), `calibrate` (the calibration group that answers for the step: tools-only, the two pools of older
   * files, or the fine groups), `checkRules` (the step rules that group runs) and the candidate set with its reason.
   */
  rank(input: RankInput): Ranking {
    const q = input.queryVector;
    if (!q)
      throw new DtdrError('options', 'dtdr-g needs input.queryVector', {
        hint: 'rank through Dtdr/rankStep, which embeds for you',
      });
    const history = historyIndices(input.history, this.side.index);
    const step = this.score(input, q, history);
    const novel = this.weigh(step, q, input.unavailable);
    const calibration = this.calibrate(step, novel, input.history);
    const found = this.checkRules(step, calibration, input);
    const confident = found.confident;
    const set = {
      threshold: calibration.threshold,
      target: this.target,
      confident,
      ...(found.include.length ? { include: found.include } : {}),
      ...calibration.set,
    };
    const cause = confident ? undefined : calibration.cause(found.because);
    const { group } = calibration;
    return withLazyOrder(
      {
        labels: this.side.labels,
        probabilities: step.probabilities,
        confident,
        ...(group ? { group } : {}),
        set,
        ...(cause !== undefined ? { cause } : {}),
      },
      { unitRange: true },
    );
  }

  /** Signals → gate → temperature-scaled softmax: the learned ranking of the step. */
  private score(input: RankInput, q: Float32Array, history: number[]): ScoredStep {
    const w = this.workspace;
    const L = this.side.labels.length;
    // Every step of a plan ranks the same request: tokenise it once.
    if (this.lastQuery.text !== input.query) {
      const tokens = terms(input.query);
      this.lastQuery = { text: input.query, terms: this.side.lexical.prepare(tokens), tokens };
    }
    const request = { terms: this.lastQuery.terms, queryVector: q, history };
    computeSignals(this.side, this.evidence, request, w, this.neighbours, this.without);
    const sum = w.kernel.run(SCORES, L, combine(this.theta, w, L), 1 / this.temperature);
    // The division also finds the best label (the first of the largest probabilities); its share is exp(0) / sum.
    const best = w.kernel.divide(L, sum);
    this.described = false;
    return { probabilities: w.keepCopy(w.kernel.output, L), best, top: 1 / sum, known: w.known, history, query: q };
  }

  /**
   * How far the demonstrations speak for this request (shrinkage.ts). A request unlike every demonstration gets the
   * descriptions' probabilities (true returned: the tools-only answer); otherwise a tool no demonstration used
   * keeps its share of the descriptions' probability.
   */
  private weigh(step: ScoredStep, q: Float32Array, unavailable: ReadonlySet<number> | undefined): boolean {
    const ev = this.evidence;
    const novelty = this.parts.novelty;
    if (!ev || !novelty) return false;
    const L = this.side.labels.length;
    const end = this.side.end;
    const p = step.probabilities;
    const pValue = (this.lastQuery.pValue ??= noveltyPValue(novelty, q, NOVEL_P));
    const novel = unlikeEvery(novelty, pValue);
    const { counts } = rarity(ev, L);
    if (this.shrinkFor?.counts !== counts)
      this.shrinkFor = {
        counts,
        needed: !nothingToShrink(counts, L, end),
        unseen: unseenShare(counts, L, end, this.parts.unseenPrior ?? 0),
      };
    if (novel) {
      // Removed tools at 0, as a model trained on the tools alone would rank them.
      const pT = this.descriptions();
      let sum = 0;
      for (let f = 0; f < L; f++) sum += p[f] = unavailable?.has(f) ? 0 : pT[f];
      if (sum > 0) for (let f = 0; f < L; f++) p[f] /= sum;
    } else if (this.shrinkFor.needed) {
      const keep = unseenKeep(this.shrinkFor.unseen, pValue, NOVEL_P);
      shrinkInPlace(p, this.descriptions(), counts, L, end, keep, unavailable);
    } else return false;
    // A scan from −1 keeps the first of the largest probabilities (and index 0 where they are NaN).
    let top = -1;
    step.best = 0;
    for (let f = 0; f < L; f++) if (p[f] > top) [top, step.best] = [p[f], f];
    step.top = top;
    return novel;
  }

  /**
   * The calibration group that answers for the step: its threshold, whether it is confident, the rules it runs, the
   * labels always in its set and how it explains an unsure step.
   */
  private calibrate(step: ScoredStep, novel: boolean, history: readonly string[]): StepCalibration {
    const ev = this.evidence;
    const cal = this.parts.calibration;
    if (!ev || novel)
      // Tools alone, or a request unlike every demonstration: the tools-only group. Descriptions say nothing of when
      // a plan is done (with tools alone END ranks in the bottom tenth of UltraTool's END steps): END is always
      // offered. A tool added after training still joins where the request asks for it (without the added-tools
      // rule here, 25 of 40 new tools' requests at 16,000 tools had it in their set, against 30).
      return {
        group: 'tools-only',
        confident: false,
        threshold: ev ? 0 : cal.thresholds.pools.unsure,
        include: [this.side.end],
        rules: novel ? [addedToolsRule] : [],
        set: {},
        cause: (why) => (novel ? [NOVEL_CAUSE, ...why].join('; ') : this.unsureCause(step.top, history)),
      };
    if (!cal.groups) {
      // A model fitted before the fine groups: the two pools.
      const confident = step.top >= this.confidentAbove && step.known;
      const threshold = cal.thresholds.pools[confident ? 'confident' : 'unsure'];
      const cause = () => this.unsureCause(step.top, history);
      return { confident, threshold, include: [], rules: [], set: {}, cause };
    }
    // `unseen`: tools no demonstration calls (never, or added since), ranked by their description alone.
    const { counts, unseen } = rarity(ev, this.side.labels.length);
    if (Number.isNaN(step.probabilities[0])) step.best = 0;
    const group = stepGroup(step.known, counts[step.best], step.top >= this.confidentAbove);
    // Held-out steps of demonstrations that call under half the tools (a few features' runs) do not speak for the
    // app's other requests: such a model is never confident (UltraTool, its 586 runs of its three most common first
    // tools, 18% of its tools: 12% of the confident steps missed).
    const end = this.side.end;
    const shown = end - unseen.length; // `unseen` lists tools only (END is never called)
    const slice = shown < DEMONSTRATED_TOOLS * end;
    const apart = `the demonstrations call ${shown} of the ${end} tools: too few for their held-out steps to count`;
    return {
      group: groupKey(group),
      confident: confidentGroup(cal, group) && !slice,
      threshold: stepThreshold(cal.thresholds, group),
      include: [],
      rules: STEP_RULES,
      set: {
        ...(unseen.length ? { describedOnly: unseen } : {}),
        ...(cal.bySize ? { coverageBySize: cal.bySize } : {}),
      },
      cause: (why) => this.groupCause(group, step.top, history, counts[step.best], slice ? [...why, apart] : why),
    };
  }

  /**
   * The step rules the group runs (step-rules.ts), in order: each may make the step unsure and name tools for the
   * set. The tools of the rules listed `last` (the added tools the request matches by description) come after the
   * others': where the set has too little room for all, the first stay.
   */
  private checkRules(step: ScoredStep, c: StepCalibration, input: RankInput): RuleOutcome {
    if (c.rules.length === 0) return { include: c.include, because: [], confident: c.confident };
    const view = this.viewOf(step, c, input);
    // The lists are made when a rule finds something (most steps: none does); the view's `include` is copied
    // before its first addition.
    let first: number[] | undefined;
    let after: number[] | undefined;
    let because: string[] | undefined;
    let later: string[] | undefined;
    let named: number[] | undefined;
    for (const rule of c.rules) {
      const state = this.parts.rules[rule.name];
      if (state === undefined) continue;
      const found = rule.check(state, view);
      if (!found) continue;
      if (found.unsure !== false) view.confident = false;
      for (const f of found.tools) {
        if (view.include.includes(f)) continue;
        if (!named) view.include = named = [...c.include];
        named.push(f);
        if (rule.last) (after ??= []).push(f);
        else (first ??= []).push(f);
      }
      if (rule.last) (later ??= []).push(...found.because);
      else (because ??= []).push(...found.because);
    }
    const include = first || after ? [...c.include, ...(first ?? []), ...(after ?? [])] : c.include;
    return { include, because: [...(because ?? []), ...(later ?? [])], confident: view.confident };
  }

  private view: StepView | undefined;

  /** The step as the rules see it: one view per retriever (its functions made once), its fields set for this step. */
  private viewOf(step: ScoredStep, c: StepCalibration, input: RankInput): StepView {
    const view = (this.view ??= this.stepView());
    view.side = this.side;
    view.workspace = this.workspace;
    view.query = input.query;
    view.queryVector = step.query;
    view.best = step.best;
    view.history = step.history;
    view.probabilities = step.probabilities;
    view.threshold = c.threshold;
    view.confident = c.confident;
    view.include = c.include;
    view.unavailable = input.unavailable;
    view.counts = rarity(this.evidence!, this.side.labels.length).counts;
    view.addedTools = this.parts.addedTools;
    view.coverage = this.coverage;
    return view;
  }

  /**
   * The step view the rules read, with its data fields to be set by rank at each step. Its functions
   * read them (and this retriever) when called, so they are made here once.
   */
  private stepView(): StepView {
    const none = new Float32Array(0);
    const view: StepView = {
      side: this.side,
      workspace: this.workspace,
      query: '',
      queryVector: none,
      best: 0,
      history: [],
      probabilities: none,
      threshold: 0,
      confident: false,
      include: [],
      unavailable: undefined,
      counts: none,
      addedTools: this.parts.addedTools,
      coverage: this.coverage,
      requestWords: () => this.requestWords(),
      strongWords: () => this.strongWords(),
      centered: () => (this.centered ??= new CenteredMatch(this.side.toolVectors, this.side.end, this.side.dim)),
      usable: (a) => view.probabilities[a] > 0 && !view.unavailable?.has(a),
      descriptions: () => this.descriptions(),
    };
    return view;
  }

  /** The request's word ids in the alignment model (the request rank() saw last). */
  private requestWords(): Uint32Array {
    const cov = this.coverage;
    return (this.lastQuery.words ??= cov ? requestWordsOf(cov, this.lastQuery.tokens) : new Uint32Array(0));
  }

  /** The request words request coverage can ever name (the request rank() saw last). */
  private strongWords(): Uint32Array {
    const cov = this.coverage;
    return (this.lastQuery.strong ??= cov ? strongWords(cov, this.requestWords()) : new Uint32Array(0));
  }

  private centered: CenteredMatch | undefined;

  /** Why a step is unsure under group calibration: the rules' reasons first. */
  private groupCause(group: CalibrationGroup, top: number, history: readonly string[], count: number, rules: string[]) {
    const why: string[] = [...rules];
    if (count < 1) why.push('the top tool has no demonstrations');
    else if (group.support === 'few') why.push(`the top tool has few demonstrations (${Math.round(count)})`);
    const base = this.unsureCause(top, history);
    if (base) why.push(base);
    const scores = this.parts.calibration.groups?.[groupKey(group)]?.length ?? 0;
    if (why.length === 0) why.push(`too few held-out steps like this one (${scores}) to be sure`);
    return why.join('; ');
  }

  /**
   * The conformal thresholds another coverage target would give, from the same held-out scores
   * (for coverage-against-size curves; set `thresholds` to use them). Zero where a group has too
   * few scores, as at fit time.
   */
  thresholdsFor(target: number): Thresholds {
    if (!(target > 0 && target < 1))
      throw new DtdrError('options', `target must be in (0, 1), got ${target}`, { field: 'target' });
    return thresholdsOf(this.parts.calibration, target);
  }

  /** Why a step is unsure, from what its signals could and could not find. */
  private unsureCause(top: number, history: readonly string[]): string {
    if (!this.evidence) return 'no demonstrations: ranked by tool descriptions alone';
    const c = this.workspace.context;
    const why: string[] = [];
    if (top < this.confidentAbove)
      why.push(`the top tool has calibrated probability ${top.toFixed(2)} < ${this.confidentAbove}`);
    if (!this.workspace.known) {
      const recent = history.slice(-KNOWN_HISTORY);
      why.push(
        recent.length > 0
          ? `no demonstration has the calls ${recent.join(' → ')} in a row`
          : 'no demonstration starts a plan like this',
      );
    } else if (c[C_MATCH] < 0.5) why.push('the demonstrations nearest this request never had this history');
    if (c[C_SUPPORT] < Math.log1p(2) / Math.log(101)) why.push('few demonstrations are like this request');
    return why.join('; ');
  }
}

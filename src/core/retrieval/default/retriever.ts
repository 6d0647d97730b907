/**
 * DTDR-G's retriever: ranks one step (signals → gate → temperature-scaled softmax, weighed by how far
 * the demonstrations speak for the request), and delegates the step's calibration and why it is unsure
 * (calibrate-step.ts), the step rules (step-rules.ts), fitting (fit.ts), online learning (learning.ts)
 * and files (state.ts). Fitting and online learning are installed (training.ts), not imported: an app
 * that loads a model and retrieves never loads their code.
 */
import { DtdrError } from '../../base/errors.js';
import { terms } from '../../base/text.js';
import type { Plan, ToolSpec } from '../../base/types.js';
import { historyIndices } from '../dependency.js';
import { withLazyOrder } from '../ranking.js';
import type { EmbeddingNeeds, LearnInput, RankInput, Ranking, Retriever, TrainingProgress } from '../types.js';
import { combine } from './combine.js';
import { installedTraining } from './trainable.js';
import type { Evidence } from './evidence.js';
import type { FoldWorkers } from './cross-fit.js';
import { EMBU, LEXU, SIGNALS, type SignalName } from './layout.js';
import type { GatedOptions } from './options.js';
import { computeSignals } from './signals.js';
import { rarity } from './evidence.js';
import { thresholdsOf, type Thresholds } from './groups.js';
import { runStepRules, type RuleOutcome } from './step-rules.js';
import { calibrateStep, type ScoredStep, type StepCalibration, type StepModel } from './calibrate-step.js';
import { CenteredMatch } from './centered.js';
import { requestWordsOf, strongWords, withAddedTools, type CoverageModel } from './coverage.js';
import type { StepView } from './rule.js';
import { gatedParts, gatedState, type GatedDiagnostics, type GatedParts, type GatedState } from './state.js';
import type { ToolSide } from './tool-side.js';
import { DESCRIBED, noTerms, SCORES, Workspace } from './workspace.js';
import { NOVEL_P, noveltyPValue, unlikeEvery } from './novelty.js';
import { deficits, DESCRIPTIONS_GATE, shrinkInPlace, unseenKeep, unseenShare } from './shrinkage.js';
import { describedFavourites } from './favourites.js';

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
export class GatedRetriever implements Retriever {
  readonly method = 'dtdr-g' as const;
  readonly needs: EmbeddingNeeds = { query: true, context: false };
  private workspace: Workspace;
  private readonly without: Set<number>;
  /** Request coverage with rows for the tools added after training (from their descriptions). */
  private coverage: CoverageModel | undefined;

  /** What the calibrate stage reads (calibrate-step.ts). */
  private readonly stepModel: StepModel;

  private constructor(private readonly parts: GatedParts) {
    this.stepModel = { parts, workspace: () => this.workspace };
    this.workspace = new Workspace(parts.side.labels.length, parts.side.dim, parts.evidence?.k ?? 0);
    this.without = new Set(parts.withoutSignals.map((s) => SIGNALS.indexOf(s)));
    this.coverage = parts.coverage && withAddedTools(parts.coverage, parts.side.tools, parts.addedTools);
  }

  /** Fits on demonstrations (or none: tools alone). Needs the training code installed (loadTraining). */
  static fit(
    tools: ToolSpec[],
    plans: Plan[],
    queries: Float32Array[],
    toolVectors: Float32Array[],
    options: GatedOptions = {},
    onProgress?: (p: TrainingProgress) => void,
  ): GatedRetriever {
    return new GatedRetriever(installedTraining().fit(tools, plans, queries, toolVectors, options, onProgress));
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
    const code = installedTraining();
    return new GatedRetriever(await code.fitParallel(tools, plans, queries, toolVectors, workers, options, onProgress));
  }

  static fromState(tools: ToolSpec[], dim: number, s: GatedState): GatedRetriever {
    return new GatedRetriever(gatedParts(tools, dim, s));
  }

  state(): GatedState {
    while (this.evidence?.pendingColumns && this.learnMore());
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

  /** The conformal thresholds in use per pool and group (`atTarget` ranks with another target's). */
  get thresholds(): Thresholds {
    return this.parts.calibration.thresholds;
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

  /** Online learning (learning.ts; training code installed): no refit. True where it left work for learnMore. */
  learn(input: LearnInput): boolean {
    if (installedTraining().learn(this.parts, input, (step) => this.rank(step)))
      this.workspace = new Workspace(this.side.labels.length, this.side.dim, 1);
    // Learning counts the new requests' words (coverage.ts): the added tools' rows and each request's words again.
    this.coverage = this.parts.coverage && withAddedTools(this.parts.coverage, this.side.tools, this.parts.addedTools);
    this.lastQuery = { text: '', terms: noTerms(), tokens: [] };
    if (this.view) this.view.coverage = this.coverage;
    return this.evidence?.pendingColumns !== undefined;
  }

  /** The next part of what learn left (new tools' head columns; unsaved, so state() trains them); whether more is. */
  learnMore(): boolean {
    return installedTraining().learnMore(this.parts);
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

  /** Per rarity counts: whether some tool has no demonstrations, and the Good–Turing unseen share. */
  private shrinkFor: { counts: Float64Array; needed: boolean; unseen: number; deficit: Float64Array } | undefined;
  /** The descriptions' probabilities of the step being ranked (scratch), and whether they are this step's. */
  private descriptionBuffer = new Float64Array(0);
  private described = false;

  /** The descriptions' probabilities of the step being ranked, computed once per step. */
  private readonly descriptions = (): Float64Array => {
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
  };

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
    const step = this.score(input, q, historyIndices(input.history, this.side.index));
    const novel = this.weigh(step, q, input.unavailable);
    const calibration = calibrateStep(this.stepModel, step, novel, input.history);
    const { confident, include, because } = this.checkRules(step, calibration, input);
    const { threshold, group } = calibration;
    const described =
      this.evidence && !novel && !confident && describedFavourites(step.probabilities, calibration, this.descriptions);
    const set = {
      threshold,
      target: this.target,
      confident,
      ...(include.length ? { include } : {}),
      ...(described ? { described } : {}),
      ...calibration.set,
    };
    const cause = confident ? undefined : calibration.cause(because);
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
    if (this.shrinkFor?.counts !== counts) {
      const deficit = deficits(counts, L);
      // Mixing changes nothing where every tool has a demonstrated step.
      const needed = deficit.some((d, f) => f !== end && d > 0);
      this.shrinkFor = { counts, needed, unseen: unseenShare(counts, L, end, this.parts.unseenPrior ?? 0), deficit };
    }
    if (novel) {
      // Removed tools at 0, as a model trained on the tools alone would rank them.
      const pT = this.descriptions();
      let sum = 0;
      for (let f = 0; f < L; f++) sum += p[f] = unavailable?.has(f) ? 0 : pT[f];
      if (sum > 0) for (let f = 0; f < L; f++) p[f] /= sum;
    } else if (this.shrinkFor.needed) {
      const keep = unseenKeep(this.shrinkFor.unseen, pValue, NOVEL_P);
      shrinkInPlace(p, this.descriptions(), this.shrinkFor.deficit, L, end, keep, unavailable);
    } else return false;
    // A scan from −1 keeps the first of the largest probabilities (and index 0 where they are NaN).
    let top = -1;
    step.best = 0;
    for (let f = 0; f < L; f++) if (p[f] > top) [top, step.best] = [p[f], f];
    step.top = top;
    return novel;
  }

  /**
   * The step rules the group runs (step-rules.ts), in order: each may make the step unsure and name tools for the
   * set. The tools of the rules listed `last` (the added tools the request matches by description) come after the
   * others': where the set has too little room for all, the first stay.
   */
  private checkRules(step: ScoredStep, c: StepCalibration, input: RankInput): RuleOutcome {
    if (c.rules.length === 0) return { include: c.include, because: [], confident: c.confident };
    return runStepRules(c.rules, this.parts.rules, this.viewOf(step, c, input), c.include);
  }

  private view: StepView | undefined;

  /** The step as the rules see it: one view per retriever (its functions made once), its fields set for this step. */
  private viewOf(step: ScoredStep, c: StepCalibration, input: RankInput): StepView {
    const view = (this.view ??= this.stepView());
    view.side = this.side;
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
      descriptionMatch: (by) => this.workspace.row(by === 'embedding' ? EMBU : LEXU),
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

  /**
   * The conformal thresholds another coverage target would give, from the same held-out scores
   * (for coverage-against-size curves). Zero where a group has too few scores, as at fit time.
   */
  thresholdsFor(target: number): Thresholds {
    if (!(target > 0 && target < 1))
      throw new DtdrError('options', `target must be in (0, 1), got ${target}`, { field: 'target' });
    return thresholdsOf(this.parts.calibration, target);
  }

  /**
   * This model ranking with another coverage target's thresholds (`thresholdsFor`), this one
   * unchanged: for coverage-against-size curves. It shares this model's learned state, so it is
   * for ranking only; learning goes to this model.
   */
  atTarget(target: number): GatedRetriever {
    const calibration = { ...this.parts.calibration, thresholds: this.thresholdsFor(target) };
    return new GatedRetriever({ ...this.parts, calibration, target });
  }
}

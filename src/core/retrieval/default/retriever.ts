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
import type { StepView } from './rule.js';
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
/** Why a request unlike the demonstrations' is ranked as with tools alone. */
export const NOVEL_CAUSE =
  'the request is unlike every demonstration: ranked by tool descriptions alone, as with no demonstrations';

export class GatedRetriever implements Retriever {
  readonly method = 'dtdr-g' as const;
  readonly needs: EmbeddingNeeds = { query: true, context: false };
  private workspace: Workspace;
  private readonly without: Set<number>;
  /** Request coverage with rows for the tools added after training (from their descriptions). */
  private readonly coverage: CoverageModel | undefined;

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
   * Per rarity counts: whether some tool has no demonstrations, the Good–Turing unseen share, and the share of the
   * tools with demonstrations.
   */
  private shrinkFor: { counts: Float64Array; needed: boolean; unseen: number; shown: number } | undefined;
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

  rank(input: RankInput): Ranking {
    const q = input.queryVector;
    if (!q)
      throw new DtdrError('options', 'dtdr-g needs input.queryVector', {
        hint: 'rank through Dtdr/rankStep, which embeds for you',
      });
    const w = this.workspace;
    const L = this.side.labels.length;
    const history = historyIndices(input.history, this.side.index);
    // Every step of a plan ranks the same request: tokenise it once.
    if (this.lastQuery.text !== input.query) {
      const tokens = terms(input.query);
      this.lastQuery = { text: input.query, terms: this.side.lexical.prepare(tokens), tokens };
    }
    computeSignals(
      this.side,
      this.evidence,
      { terms: this.lastQuery.terms, queryVector: q, history },
      w,
      this.neighbours,
      this.without,
    );
    const max = combine(this.theta, w, L);
    const sum = w.kernel.run(SCORES, L, max, 1 / this.temperature);
    // The division also finds the best label (the first of the largest probabilities).
    let arg = w.kernel.divide(L, sum);
    const probabilities = w.keepCopy(w.kernel.output, L);
    // The best label's share is exp(0) / sum.
    let top = 1 / sum;
    const knownHistory = w.known;
    const ev = this.evidence;
    const cal = this.parts.calibration;
    this.described = false;
    const novelty = this.parts.novelty;
    const pValue = ev && novelty ? (this.lastQuery.pValue ??= noveltyPValue(novelty, q, NOVEL_P)) : 1;
    if (ev && novelty && unlikeEvery(novelty, pValue)) return this.toolsOnly(probabilities, input, history, ev);
    let undemonstrated = false;
    if (ev && novelty) {
      // Evidence decides the weight (shrinkage.ts): a tool no demonstration used keeps its share of
      // the descriptions' probability, all of it for a request unlike the demonstrations'.
      const { counts, unseen } = rarity(ev, L);
      const end = this.side.end;
      if (this.shrinkFor?.counts !== counts)
        this.shrinkFor = {
          counts,
          needed: !nothingToShrink(counts, L, end),
          unseen: unseenShare(counts, L, end, this.parts.unseenPrior ?? 0),
          shown: end > 0 ? 1 - unseen.length / end : 0,
        };
      undemonstrated = this.shrinkFor.needed;
      if (undemonstrated) {
        shrinkInPlace(
          probabilities,
          this.descriptions(),
          counts,
          L,
          end,
          unseenKeep(this.shrinkFor.unseen, pValue, NOVEL_P),
          input.unavailable,
        );
        top = -1;
        for (let f = 0; f < L; f++) if (probabilities[f] > top) [top, arg] = [probabilities[f], f];
      }
    }
    if (!ev || !cal.groups) {
      // Tools alone, or a model fitted before the fine groups: calibrated by the two pools alone.
      const confident = ev !== undefined && top >= this.confidentAbove && knownHistory;
      // Descriptions say nothing of when a plan is done (with tools alone END ranks in the bottom
      // tenth of UltraTool's END steps): a model with no demonstrations always offers END.
      const end = ev ? {} : { include: [this.side.end] };
      const set = {
        threshold: cal.thresholds.pools[confident ? 'confident' : 'unsure'],
        target: this.target,
        confident,
        ...end,
      };
      return withLazyOrder(
        {
          labels: this.side.labels,
          probabilities,
          confident,
          set,
          ...(ev ? {} : { group: 'tools-only' }),
          ...(confident ? {} : { cause: this.unsureCause(top, input.history) }),
        },
        { unitRange: true },
      );
    }
    // A scan from bestValue = probabilities[0] keeps index 0 when it is NaN, which −∞ does not.
    const best = Number.isNaN(probabilities[0]) ? 0 : arg;
    // `unseen`: tools no demonstration calls (never, or added since), ranked by their description alone.
    const { counts, unseen: described } = rarity(ev, L);
    const group = stepGroup(knownHistory, counts[best], top >= this.confidentAbove);
    let confident = confidentGroup(cal, group);
    const threshold = stepThreshold(cal.thresholds, group);
    const include: number[] = [];
    // One view per retriever, its fields set for this step: its functions are made once, not at every step.
    const view = (this.view ??= this.stepView());
    view.side = this.side;
    view.workspace = w;
    view.query = input.query;
    view.queryVector = q;
    view.best = best;
    view.history = history;
    view.probabilities = probabilities;
    view.threshold = threshold;
    view.confident = confident;
    view.include = include;
    view.unavailable = input.unavailable;
    view.counts = counts;
    view.addedTools = this.parts.addedTools;
    view.coverage = this.coverage;
    view.novelty = pValue;
    view.undemonstrated = undemonstrated;
    view.demonstratedShare = ev && novelty ? this.shrinkFor!.shown : 0;
    // The step rules (step-rules.ts), in order: each may make the step unsure and add tools. The
    // lists are made when a rule finds something (most steps: none does).
    let first: number[] | undefined;
    let after: number[] | undefined;
    let because: string[] | undefined;
    let laterBecause: string[] | undefined;
    for (const rule of STEP_RULES) {
      const state = this.parts.rules[rule.name];
      if (state === undefined) continue;
      const found = rule.check(state, view);
      if (!found) continue;
      if (found.unsure !== false) view.confident = false;
      for (const f of found.tools) {
        if (include.includes(f)) continue;
        include.push(f);
        if (rule.last) (after ??= []).push(f);
        else (first ??= []).push(f);
      }
      if (rule.last) (laterBecause ??= []).push(...found.because);
      else (because ??= []).push(...found.because);
    }
    confident = view.confident;
    // The tools the rules named first, then those of the rules listed `last` (the added tools the
    // request matches by description): where the set has too little room for all, the first stay.
    const named = after ? [...(first ?? []), ...after] : first;
    const set = {
      threshold,
      target: this.target,
      confident,
      ...(named?.length ? { include: named } : {}),
      ...(described.length ? { describedOnly: described } : {}),
      ...(cal.bySize ? { coverageBySize: cal.bySize } : {}),
    };
    const cause = confident
      ? undefined
      : this.groupCause(group, top, input.history, counts[best], [...(because ?? []), ...(laterBecause ?? [])]);
    return withLazyOrder(
      { labels: this.side.labels, probabilities, confident, group: groupKey(group), set, ...(cause ? { cause } : {}) },
      { unitRange: true },
    );
  }

  /**
   * The tools-only answer to a request unlike the demonstrations': the ranking, set and reason a model trained on
   * the tools alone gives (descriptions alone; END always offered), with removed tools at 0.
   */
  private toolsOnly(probabilities: Float64Array, input: RankInput, history: number[], ev: Evidence): Ranking {
    const L = this.side.labels.length;
    const unavailable = input.unavailable;
    const pT = this.descriptions();
    let sum = 0;
    for (let f = 0; f < L; f++) {
      probabilities[f] = unavailable?.has(f) ? 0 : pT[f];
      sum += probabilities[f];
    }
    if (sum > 0) for (let f = 0; f < L; f++) probabilities[f] /= sum;
    // A tool added after training is ranked by its description as here, but among tools the demonstrations called:
    // the added-tools rule still names it where the request asks for it (a new tool's requests are the unfamiliar
    // ones: without it, 25 of 40 at 16,000 tools had it in their set, against 30).
    const include = [this.side.end];
    let cause = NOVEL_CAUSE;
    const state = this.parts.rules['added-tools'];
    if (state !== undefined && this.parts.addedTools.length > 0) {
      const view = (this.view ??= this.stepView());
      Object.assign(view, {
        side: this.side,
        workspace: this.workspace,
        query: input.query,
        queryVector: input.queryVector!,
        best: 0,
        history,
        probabilities,
        threshold: 0,
        confident: false,
        include,
        unavailable,
        counts: rarity(ev, L).counts,
        addedTools: this.parts.addedTools,
        coverage: this.coverage,
        novelty: 0,
        undemonstrated: true,
        demonstratedShare: 0,
      });
      const found = addedToolsRule.check(state as Parameters<typeof addedToolsRule.check>[0], view);
      if (found) {
        include.push(...found.tools.filter((f) => f !== this.side.end));
        if (found.because.length) cause += `; ${found.because.join('; ')}`;
      }
    }
    return withLazyOrder(
      {
        labels: this.side.labels,
        probabilities,
        confident: false,
        group: 'tools-only',
        set: { threshold: 0, target: this.target, confident: false, include },
        cause,
      },
      { unitRange: true },
    );
  }

  private view: StepView | undefined;

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
      novelty: 1,
      undemonstrated: false,
      demonstratedShare: 0,
      demonstrations: () => (this.evidence?.sizes ?? []).reduce((a, b) => a + b, 0),
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

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
import { computeSignals, bestValues, rankAmong } from './signals.js';
import { rarity } from './evidence.js';
import { confidentGroup, groupKey, stepGroup, stepThreshold, thresholdsOf, type CalibrationGroup, type Thresholds } from './groups.js';
import { EMBU, LEXU } from './layout.js';
import { CenteredMatch } from './centered.js';
import { requestWordsOf, strongWords, unexplained, withAddedTools, type CoverageModel } from './coverage.js';
import { newCombination } from './combinations.js';
import { askedBeyond } from './sequence-words.js';
import { gatedParts, gatedState, type GatedDiagnostics, type GatedParts, type GatedState } from './state.js';
import type { ToolSide } from './tool-side.js';
import { noTerms, SCORES, Workspace } from './workspace.js';

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
  private readonly added: Set<number>;
  /** Request coverage with rows for the tools added after training (from their descriptions). */
  private readonly coverage: CoverageModel | undefined;

  private constructor(private readonly parts: GatedParts) {
    this.workspace = new Workspace(parts.side.labels.length, parts.side.dim, parts.evidence?.k ?? 0);
    this.without = new Set(parts.withoutSignals.map((s) => SIGNALS.indexOf(s)));
    this.added = new Set(parts.addedTools);
    this.coverage = parts.coverage && withAddedTools(parts.coverage, parts.side.tools, parts.addedTools);
  }

  static fit(tools: ToolSpec[], plans: Plan[], queries: Float32Array[], toolVectors: Float32Array[], options: GatedOptions = {}, onProgress?: (p: TrainingProgress) => void): GatedRetriever {
    return new GatedRetriever(fitGated(tools, plans, queries, toolVectors, options, onProgress));
  }

  /** fit, with the cross-fitting rounds on `workers` too (cross-fit.ts): the same model, sooner on several cores. */
  static async fitParallel(tools: ToolSpec[], plans: Plan[], queries: Float32Array[], toolVectors: Float32Array[], workers: FoldWorkers, options: GatedOptions = {}, onProgress?: (p: TrainingProgress) => void): Promise<GatedRetriever> {
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

  /** The conformal thresholds in use per pool and group; set them (e.g. from `thresholdsFor`) to change the coverage target. */
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
    if (learnGated(this.parts, input, (step) => this.rank(step))) this.workspace = new Workspace(this.side.labels.length, this.side.dim, 1);
  }

  /**
   * What every step of a plan shares, worked out once per request: its BM25 postings, its terms,
   * and (on first need) the alignment's word ids and the few of them request coverage can name.
   */
  private lastQuery: { text: string; terms: ReturnType<typeof noTerms>; tokens: string[]; words?: Uint32Array; strong?: Uint32Array } = { text: '', terms: noTerms(), tokens: [] };

  rank(input: RankInput): Ranking {
    const q = input.queryVector;
    if (!q) throw new DtdrError('options', 'dtdr-g needs input.queryVector', { hint: 'rank through Dtdr/rankStep, which embeds for you' });
    const w = this.workspace;
    const L = this.side.labels.length;
    const history = historyIndices(input.history, this.side.index);
    // Every step of a plan ranks the same request: tokenise it once.
    if (this.lastQuery.text !== input.query) {
      const tokens = terms(input.query);
      this.lastQuery = { text: input.query, terms: this.side.lexical.prepare(tokens), tokens };
    }
    computeSignals(this.side, this.evidence, { terms: this.lastQuery.terms, queryVector: q, history, added: this.added }, w, this.neighbours, this.without);
    const max = combine(this.theta, w, L);
    const sum = w.kernel.run(SCORES, L, max, 1 / this.temperature);
    // The division also finds the best label (the first of the largest probabilities).
    const arg = w.kernel.divide(L, sum);
    const probabilities = w.keepCopy(w.kernel.output, L);
    // The best label's share is exp(0) / sum.
    const top = 1 / sum;
    const knownHistory = w.known;
    const ev = this.evidence;
    const cal = this.parts.calibration;
    if (!ev || !cal.groups) {
      // Tools alone, or a model fitted before the fine groups: calibrated by the two pools alone.
      const confident = ev !== undefined && top >= this.confidentAbove && knownHistory;
      const set = { threshold: cal.thresholds.pools[confident ? 'confident' : 'unsure'], target: this.target, confident };
      return withLazyOrder({ labels: this.side.labels, probabilities, confident, set, ...(ev ? {} : { group: 'tools-only' }), ...(confident ? {} : { cause: this.unsureCause(top, input.history) }) }, { unitRange: true });
    }
    // A scan from bestValue = probabilities[0] keeps index 0 when it is NaN, which −∞ does not.
    const best = Number.isNaN(probabilities[0]) ? 0 : arg;
    const { counts } = rarity(ev, L);
    const group = stepGroup(knownHistory, counts[best], top >= this.confidentAbove);
    let confident = confidentGroup(cal, group);
    const threshold = stepThreshold(cal.thresholds, group);
    const newToolRank = this.parts.newToolRank;
    const fresh = this.parts.addedTools.length > 0 && newToolRank > 0 ? this.parts.addedTools.filter((f) => counts[f] < 0.5 && !input.unavailable?.has(f)) : [];
    const include = fresh.length > 0 ? this.askedNewTools(fresh, newToolRank, q) : [];
    const matched = include.length;
    // An included tool only widens the set: confidence stays the group's. A tool added after
    // training that is left out has no held-out evidence either way: the step is not confident.
    const leftOut = fresh.filter((f) => !include.includes(f));
    if (leftOut.length > 0) confident = false;
    // Request coverage: a confident "the plan is done" while a request word no call so far and no
    // set member explains, and some tool explains strongly, is not confident; that tool joins the set.
    const uncovered = confident && best === this.side.end && this.coverage ? this.uncovered(this.coverage, probabilities, threshold, history, include, input.unavailable) : [];
    if (uncovered.length > 0) confident = false;
    for (const u of uncovered) include.push(u.tool);
    const covered = uncovered.map((u) => `no call so far and no tool in the set explains "${u.word}" in the request, which "${this.side.labels[u.tool]}" does`);
    // A new combination (combinations.ts): the request asks, in words, for a tool that no
    // demonstration calls together with the calls so far. The memorised continuation is suspect.
    // Where END is on top, only if its held-out false alarms there were few (combinations.ts).
    const leaving = best !== this.side.end || this.parts.combinations?.atEnd ? this.leavingDemonstrations(history, probabilities, input.unavailable) : undefined;
    if (leaving) {
      confident = false;
      for (const f of leaving.offer) if (!include.includes(f)) include.push(f);
      const names = (f: number) => `"${this.side.labels[f]}"`;
      const first = leaving.offer.length > 1 ? `; the demonstrations call ${names(leaving.offer[0])} right before it` : '';
      covered.push(`the request asks for "${leaving.word}" (${names(leaving.tool)}), which no demonstration combines with ${history.map(names).join(' → ')}${first}`);
    }
    // Words the demonstrations never used (sequence-words.ts): many demonstrations make exactly
    // these calls (END on top) or begin with them and the top tool, and none of their requests says
    // a word this one says that another tool explains.
    const next = best === this.side.end ? undefined : best;
    // A removed tool on top (its probability is masked later, by the caller's view) says nothing of the plan.
    const beyond = confident && !(next !== undefined && input.unavailable?.has(next)) ? this.askedBeyondCalls(history, next, probabilities, input.unavailable) : undefined;
    if (beyond) {
      confident = false;
      for (const f of beyond.tools) if (!include.includes(f)) include.push(f);
      const names = (list: readonly number[]) => list.map((f) => `"${this.side.labels[f]}"`).join(' → ');
      const which = next === undefined ? `call ${names(history)} and nothing more` : `begin with ${names([...history, next])}`;
      covered.push(`the request says "${beyond.word}" (${beyond.tools.map((f) => `"${this.side.labels[f]}"`).join(', ')}), which none of the ${beyond.plans} demonstrations that ${which} says`);
    }
    // The tools a rule named first, then the added tools the request matches by description: where
    // the set has too little room for all (selectCandidates), the ones the cause names stay.
    if (include.length > matched) include.unshift(...include.splice(matched));
    const set = { threshold, target: this.target, confident, ...(include.length ? { include } : {}) };
    const cause = confident ? undefined : this.groupCause(group, top, input.history, include.filter((f) => fresh.includes(f)), counts[best], leftOut, covered);
    return withLazyOrder({ labels: this.side.labels, probabilities, confident, group: groupKey(group), set, ...(cause ? { cause } : {}) }, { unitRange: true });
  }

  /** Tools that explain words of the request rank() is ranking that the calls so far and the set leave unexplained (coverage.ts). */
  private uncovered(cov: CoverageModel, p: ArrayLike<number>, threshold: number, history: readonly number[], include: readonly number[], unavailable: ReadonlySet<number> | undefined): { tool: number; word: string }[] {
    const strong = (this.lastQuery.strong ??= strongWords(cov, this.requestWords(cov)));
    if (strong.length === 0) return [];
    const floor = threshold > 0 ? threshold : 0.1;
    return unexplained(cov, strong, (a) => p[a] >= floor || history.includes(a) || include.includes(a), (a) => p[a] > 0 && !unavailable?.has(a));
  }

  /** The request's word ids in the alignment model (the request rank() saw last). */
  private requestWords(cov: CoverageModel): Uint32Array {
    return (this.lastQuery.words ??= requestWordsOf(cov, this.lastQuery.tokens));
  }

  /** The new-combination rule (combinations.ts), where the fit switched it on. */
  private leavingDemonstrations(history: readonly number[], p: ArrayLike<number>, unavailable: ReadonlySet<number> | undefined) {
    const combos = this.parts.combinations;
    if (!combos?.enabled || !this.coverage || history.length === 0) return undefined;
    const words = this.requestWords(this.coverage);
    return newCombination(combos, this.coverage, words, history, (a) => p[a] > 0 && !unavailable?.has(a));
  }

  /** The sequence-words rule (sequence-words.ts), where the fit switched it on. */
  private askedBeyondCalls(history: readonly number[], next: number | undefined, p: ArrayLike<number>, unavailable: ReadonlySet<number> | undefined) {
    const said = this.parts.sequenceWords;
    if (!said || !(next === undefined ? said.enabled : said.atSteps) || !this.coverage) return undefined;
    const words = this.requestWords(this.coverage);
    return askedBeyond(said, this.coverage, words, history, next, (a) => p[a] > 0 && !unavailable?.has(a));
  }

  /** Tools added after training, not yet demonstrated, within `rank` of the best description match (embedding or lexical) for this step. */
  private askedNewTools(unseen: readonly number[], rank: number, q: Float32Array): number[] {
    const x = this.workspace.x;
    const L = this.side.labels.length;
    const T = this.side.end;
    const embBest = bestValues(x, EMBU * L, T, rank);
    const lexBest = bestValues(x, LEXU * L, T, rank);
    // The same rank by the centred description match (centered.ts): hubs do not crowd it.
    const centered = (this.centered ??= new CenteredMatch(this.side.toolVectors, T, this.side.dim)).score(q);
    const cenBest = bestValues(centered, 0, T, rank);
    const kth = (best: number[]) => (best.length < rank ? -Infinity : best[rank - 1]);
    const [emb, lex, cen] = [kth(embBest), kth(lexBest), kth(cenBest)];
    const bestRank = new Map<number, number>();
    for (const f of unseen) {
      let r = Infinity;
      if (x[EMBU * L + f] >= emb) r = rankAmong(embBest, x[EMBU * L + f]);
      if (x[LEXU * L + f] > 0 && x[LEXU * L + f] >= lex) r = Math.min(r, rankAmong(lexBest, x[LEXU * L + f]));
      // The centred match first: among thousands of tools the plain embedding and BM25 matches
      // put hubs and one-word coincidences on top, so the tools they alone bring come after it.
      if (r < Infinity) r += rank;
      if (centered[f] >= cen) r = rankAmong(cenBest, centered[f]);
      if (r < Infinity) bestRank.set(f, r);
    }
    const out = [...bestRank.keys()];
    // Best matches first: by the centred match's rank, then the tools only the embedding or the
    // lexical match brings, by their better rank there (ties by the centred match): where many
    // added tools qualify, the set keeps the ones the request asks for most.
    return out.length > 1 ? out.sort((a, b) => bestRank.get(a)! - bestRank.get(b)! || centered[b] - centered[a] || a - b) : out;
  }

  private centered: CenteredMatch | undefined;

  /** Why a step is unsure under group calibration. */
  private groupCause(group: CalibrationGroup, top: number, history: readonly string[], include: number[], topCount: number, leftOut: number[], covered: string[] = []): string {
    const why: string[] = [...covered];
    if (leftOut.length > 0) why.push(`${leftOut.slice(0, 3).map((f) => `"${this.side.labels[f]}"`).join(', ')} ${leftOut.length === 1 ? 'was' : 'were'} added after training and ${leftOut.length === 1 ? 'has' : 'have'} no demonstrations yet: the set may miss ${leftOut.length === 1 ? 'it' : 'them'}`);
    if (include.length > 0) {
      const names = include.slice(0, 3).map((f) => `"${this.side.labels[f]}"`).join(', ');
      why.push(`${names}${include.length > 3 ? ` and ${include.length - 3} more` : ''} ${include.length === 1 ? 'has' : 'have'} no demonstrations yet and ${include.length === 1 ? 'matches' : 'match'} the request by description`);
    }
    if (topCount < 1) why.push('the top tool has no demonstrations');
    else if (group.support === 'few') why.push(`the top tool has few demonstrations (${Math.round(topCount)})`);
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
    if (!(target > 0 && target < 1)) throw new DtdrError('options', `target must be in (0, 1), got ${target}`, { field: 'target' });
    return thresholdsOf(this.parts.calibration, target);
  }

  /** Why a step is unsure, from what its signals could and could not find. */
  private unsureCause(top: number, history: readonly string[]): string {
    if (!this.evidence) return 'no demonstrations: ranked by tool descriptions alone';
    const c = this.workspace.context;
    const why: string[] = [];
    if (top < this.confidentAbove) why.push(`the top tool has calibrated probability ${top.toFixed(2)} < ${this.confidentAbove}`);
    if (!this.workspace.known) {
      const recent = history.slice(-KNOWN_HISTORY);
      why.push(recent.length > 0 ? `no demonstration has the calls ${recent.join(' → ')} in a row` : 'no demonstration starts a plan like this');
    } else if (c[C_MATCH] < 0.5) why.push('the demonstrations nearest this request never had this history');
    if (c[C_SUPPORT] < Math.log1p(2) / Math.log(101)) why.push('few demonstrations are like this request');
    return why.join('; ');
  }
}

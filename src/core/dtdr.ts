/* eslint-disable max-lines -- 527 lines: to split by concern */
import { loadRetriever, saveRetriever, type ModelArtifact } from './model/artifact.js';
import type { Encoder } from './base/encoder.js';
import { DtdrError } from './base/errors.js';
import type { GatedDiagnostics } from './retrieval/default/index.js';
import type { LearnInput, MethodName, RankInput, Ranking, Retriever } from './retrieval/types.js';
import { checkSelectOptions, selectCandidates, type SelectOptions } from './selection/select.js';
import type { Retrieval } from './selection/retrieval.js';
import { contextText } from './base/text.js';
import { embedAll } from './retrieval/train.js';
import { DEFAULT_METHOD, fitNeeds, methodEntry } from './retrieval/methods.js';
import { trainRetriever } from './retrieval/train.js';
import { TRAIN_DEFAULTS } from './retrieval/methods.js';
import { chainPlan, planSteps, planTools } from './plans/plan.js';
import { checkHistory, checkPlanSizes, checkQuery, checkTools, checkToolsDescribed } from './base/checks.js';
import { forgetMatch, MAX_FORGETTABLE, readLearningWindow, saveLearningWindow } from './model/learning-window.js';
import { ChangedToolSet, copyChanges } from './model/toolset.js';
import { NO_CHANGES, readToolChanges, type ToolChanges } from './model/toolset.js';
import { checkPlans, readPlans, type ChainPlanInput } from './plans/input.js';
import { decodeBinaryModel, encodeBinaryModel } from './model/binary.js';
import { checkNesting, MAX_MODEL_NESTING } from './base/limits.js';
import type { Plan, ToolSpec } from './base/types.js';
import { nextTask, REFIT_UP_TO, Refits, type RefitModel } from './model/refits.js';
import type { DtdrLoadOptions, DtdrTrainOptions } from './model/options.js';
import { ChangeQueue } from './model/changes.js';
import { requireEncoder, retrieverFromState, withAddedTools, withRemovedTools } from './model/tool-changes.js';
import type { ToolSetSnapshot } from './model/tool-changes.js';

export { REFIT_IN_BACKGROUND_UP_TO, REFIT_TIMEOUT, REFIT_UP_TO } from './model/refits.js';
export { MAX_FORGETTABLE } from './model/learning-window.js';
export type { Retrieval } from './selection/retrieval.js';
export type { DtdrLoadOptions, DtdrTrainOptions } from './model/options.js';

/** Learned runs folded into the state forget replays from per task (about 50 ms of DTDR-G learning on two cores). */
const FOLD_CHUNK = 250;
/** Demonstrations stored with a model for prompt examples. */
const EXAMPLES_KEPT = 64;

/**
 * A trained retriever with its encoder: the object apps hold. `retrieve(query, history)` embeds
 * what the method needs, ranks every tool and END, and returns the thresholded candidate set.
 *
 * Concurrency: the calls that change the model (`learn`, `forget`, `addTools`, `removeTools`)
 * are applied one at a time, in the order they were called, whether or not the caller awaits
 * each; each is checked against the model as the changes called before it left it (so two
 * concurrent `addTools` of one name add it once and refuse the second). A `rank`/`retrieve`
 * waits for the changes called before it, then ranks on that state; changes called after it wait
 * until it has ranked. So any interleaving of calls gives the results and the final model of the
 * same calls made one after another, and no ranking ever sees half a change. Two exceptions, by
 * design: past REFIT_UP_TO, a model with a refitter refits in the background, and the refitted
 * model lands later as a change of its own (`settle()` waits for it); and a ranking does not wait
 * for a change while it refits (a `learn` or `forget` on a refitter: seconds, at most
 * `refitTimeout`): it answers from the model as it is then (during a forget's refit, the model as
 * it was before any learned run; model/changes.ts).
 */
export class Dtdr {
  /** The retriever as trained (or natively extended), before tool-set changes are applied. */
  private base: Retriever;
  /** The tools `base` ranks, in label order. */
  private baseTools: ToolSpec[];
  private changes: ToolChanges;
  private view: Retriever;

  /** The order of changes and rankings (changes.ts). */
  private readonly queue = new ChangeQueue();
  private enqueue<T>(change: () => T | Promise<T>): Promise<T> {
    return this.queue.enqueue(change);
  }

  private constructor(
    retriever: Retriever,
    tools: ToolSpec[],
    readonly encoder: Encoder | undefined,
    private readonly training: ModelArtifact['training'],
    /** A few demonstrations kept with the model, for prompt examples. */
    readonly examples: Plan[] = [],
    changes: ToolChanges = NO_CHANGES,
    refits: DtdrLoadOptions = {},
  ) {
    this.refits = new Refits(refits.refitter, refits.refitTimeout);
    this.base = retriever;
    this.baseTools = tools;
    this.changes = changes;
    this.view = this.applyChanges();
  }

  private applyChanges(): Retriever {
    const c = this.changes;
    this.knownNames = undefined;
    return c.removed.length === 0 && c.added.length === 0
      ? this.base
      : new ChangedToolSet(this.base, this.baseTools, c);
  }

  /** The retriever that ranks (tool-set changes applied). */
  get retriever(): Retriever {
    return this.view;
  }

  /** The tools this model can offer now: trained and added ones, minus removed ones. */
  get tools(): ToolSpec[] {
    const removed = new Set(this.changes.removed);
    return [...this.baseTools, ...this.changes.added].filter((t) => !removed.has(t.name));
  }

  /** The tools removed with `removeTools` (and not added back): adapters never offer or run them. */
  get removedTools(): string[] {
    return [...this.changes.removed, ...(this.changes.dropped ?? [])];
  }

  /**
   * Adds tools after training. They are retrievable at once from their descriptions, with no
   * demonstration; what the model learned is kept (DTDR-G extends its tables natively, other
   * methods mix a description ranking in). Re-adding a removed tool's name brings it back.
   * Applied after the changes called before it (see the class notes): adding a name the model has
   * by then is refused with a DtdrError.
   */
  async addTools(specs: ToolSpec[]): Promise<void> {
    checkTools(specs);
    const copies = specs.map((t) => ({ ...t }));
    return this.enqueue(() => this.addNow(copies));
  }

  private async addNow(specs: ToolSpec[]): Promise<void> {
    this.swap(await withAddedTools(this.snapshot, specs, this.encoder));
  }

  /** The tool set's part of the model, which tool changes read and replace (model/tool-changes.ts). */
  private get snapshot(): ToolSetSnapshot {
    return { base: this.base, baseTools: this.baseTools, changes: this.changes, beforeLearning: this.beforeLearning };
  }

  /** Swaps a changed tool set in at once, and the retriever that ranks with it. */
  private swap(next: ToolSetSnapshot): void {
    [this.base, this.baseTools, this.changes, this.beforeLearning] = [
      next.base,
      next.baseTools,
      next.changes,
      next.beforeLearning,
    ];
    this.view = this.applyChanges();
  }

  /**
   * Removes tools: never offered again, in any candidate set or prompt; the others keep their order.
   * When no other change is pending it is applied at once (and a wrong name throws at once);
   * otherwise it waits for the changes called before it and the returned promise settles when it
   * is applied. Rankings already in flight finish on the tools they started with.
   */
  removeTools(names: string[]): Promise<void> {
    if (this.queue.pending === 0) {
      this.removeNow(names);
      return Promise.resolve();
    }
    const copy = Array.isArray(names) ? [...names] : names;
    return this.enqueue(() => this.removeNow(copy));
  }

  private removeNow(names: string[]): void {
    const current = this.tools.map((t) => t.name);
    this.swap(withRemovedTools(this.snapshot, names, current, this.learned, this.encoder));
  }

  /** Demonstrations folded in after training, oldest first (kept so `forget` can take them out). */
  private learned: Plan[] = [];
  /** The state before the forgettable learned demonstrations, replayed from when forgetting. */
  private beforeLearning?: ModelArtifact;

  /** How many learned demonstrations `forget` can still take out (see MAX_FORGETTABLE). */
  get learnedCount(): number {
    return this.learned.length;
  }

  /**
   * Folds new demonstrations (e.g. an app's finished, validated runs) into the model without a
   * full refit, in time proportional to them: graph counts, cluster centroids, heads and DTDR-G's
   * conformal thresholds. Methods that learn nothing from demonstrations (random, bm25, qts)
   * keep them for `forget` only. Plans must call tools the model was trained or natively extended
   * with and has not removed (checked when the changes called before it are applied). A plan is a
   * `Plan` or, as for `Dtdr.train`, a chain `{id?, query, tools: string[]}`.
   */
  async learn(plans: (Plan | ChainPlanInput)[]): Promise<void> {
    const given = readPlans(plans, 'options');
    return this.enqueue(async () => {
      checkPlans(
        given,
        this.baseTools.map((t) => t.name),
        this.changes.added.map((t) => t.name),
        this.changes.removed,
      );
      if (given.length === 0) return;
      // Nothing is recorded before the runs are in the model: a learn that fails (refit, encoder) leaves it as it was.
      const before = this.beforeLearning ?? snapshot(this.base, this.baseTools, this.encoder, this.training);
      const learned = [...this.learned, ...given];
      const due = this.refitsAtAll() ? this.refits.due(learned.length) : undefined;
      if (due === 'now') await this.refit(learned);
      else {
        const input = await this.learnInput(given);
        if (input) this.base.learn!(input);
      }
      [this.beforeLearning, this.learned] = [before, learned];
      if (due === 'background') this.refitInBackground();
      this.view = this.applyChanges();
      if (this.learned.length > this.refits.keeps(this.refitsAtAll(), MAX_FORGETTABLE)) {
        await this.foldOldestLearned(this.learned.length - MAX_FORGETTABLE / 2);
        this.folded = true;
      }
    });
  }

  /** Whether learned demonstrations were folded into the state `forget` replays from (no refit can see them again). */
  private folded = false;
  /** When and where refits run, and the one in flight. */
  private readonly refits: Refits;

  /** Why refits on the refitter failed (and what the model did instead), oldest first. */
  get refitErrors(): readonly string[] {
    return this.refits.failures;
  }

  /**
   * A model of a method that refits from tools (the registry's `learning`: the default method)
   * that started from its tools alone holds the demonstrations it has learned (none folded away)
   * and refits on all of them, so its calibration and confidence are those of a model trained on
   * the same runs.
   */
  private refitsAtAll(): boolean {
    const refits = methodEntry(this.method)?.learning === 'refit-from-tools';
    return refits && this.training.plans === 0 && !this.folded && this.encoder !== undefined;
  }

  /** What a refit needs of this model. */
  private get refitModel(): RefitModel {
    return {
      method: this.method,
      encoder: this.encoder,
      seed: this.training.seed,
      fromState: (tools, state) => retrieverFromState(this.base, tools, state, this.encoder),
    };
  }

  /** Trains the model anew on `plans` over the same tools (tool changes stay as they are); learn waits for it. */
  private async refit(plans: Plan[]): Promise<void> {
    const tools = this.baseTools;
    this.base = (await this.queue.whileRefitting(() => this.refits.fit(this.refitModel, plans, tools, true)))!;
    this.refits.fittedOn = plans.length;
  }

  /**
   * Refits on the runs learned so far while `learn` goes on folding new ones in; the refitted
   * model, with the runs learned meanwhile folded in, replaces the live one as a model change
   * (rankings before it see the old model, after it the new). Dropped when a change it could not
   * see came first (forget, tool changes): the next learn starts another.
   */
  private refitInBackground(): void {
    const [plans, tools, generation] = [this.learned.slice(), this.baseTools, this.refits.generation];
    this.refits.background(this.refitModel, plans, tools, (fitted) =>
      this.enqueue(async () => {
        if (generation !== this.refits.generation || tools !== this.baseTools) return;
        const newer = this.learned.slice(plans.length);
        const input = newer.length > 0 ? await this.learnInput(newer, fitted) : undefined;
        if (input) fitted.learn!(input);
        this.base = fitted;
        this.refits.fittedOn = plans.length;
        this.view = this.applyChanges();
      }),
    );
  }

  /**
   * Resolves when the model changes called so far are applied and no background refit is in flight
   * (its model swapped in or dropped). For tests, evaluations and saving a model at its best.
   */
  async settle(): Promise<void> {
    await this.queue.settled;
    while (this.refits.inFlight) {
      await this.refits.inFlight;
      await this.queue.settled;
    }
  }

  /**
   * Folds the `count` oldest learned demonstrations into the state `forget` replays from: they can no longer be
   * forgotten.
   */
  private async foldOldestLearned(count: number): Promise<void> {
    const oldest = this.learned.slice(0, count);
    const { retriever, artifact } = loadRetriever(this.beforeLearning!, { encoder: this.encoder });
    // A task apart per chunk (9,500 runs in one block held the thread 1.7 s); it changes only what
    // forget replays from, not the live model, so rankings do not wait for it.
    await this.queue.whileRefitting(async () => {
      for (let i = 0; i < oldest.length; i += FOLD_CHUNK) {
        const input = await this.learnInput(oldest.slice(i, i + FOLD_CHUNK), retriever);
        if (input) retriever.learn!(input);
        await nextTask();
      }
    });
    this.beforeLearning = snapshot(retriever, artifact.tools, this.encoder, artifact.training);
    this.learned = this.learned.slice(count);
    this.refits.generation++;
  }

  /**
   * Removes what came from demonstrations handed to `learn` — by plan id, or by a predicate —
   * by replaying the remaining ones onto the model as it was before learning. Returns how many
   * were forgotten. The newest learned demonstrations can be (at least MAX_FORGETTABLE / 2 of them,
   * at most MAX_FORGETTABLE, or REFIT_IN_BACKGROUND_UP_TO for a model that refits in the background);
   * older ones, like those the model was trained on, need a new training to leave it.
   */
  async forget(which: readonly string[] | ((plan: Plan) => boolean)): Promise<number> {
    const match = forgetMatch(which);
    return this.enqueue(async () => {
      const keep = this.learned.filter((p) => !match(p));
      const forgotten = this.learned.length - keep.length;
      if (forgotten === 0 || !this.beforeLearning) return 0;
      const { retriever, artifact } = loadRetriever(this.beforeLearning, { encoder: this.encoder });
      this.base = retriever;
      this.baseTools = artifact.tools;
      this.learned = keep;
      this.refits.fittedOn = 0;
      this.refits.generation++;
      this.refits.abandon('a forget made it pointless');
      // Until the refit lands, the model as it was before any learned run answers: none of them, so none forgotten.
      this.view = this.applyChanges();
      // Refit where learn would (after a failed worker, here only up to REFIT_UP_TO runs; else replayed).
      const refits = this.refitsAtAll() && (this.refits.refitter || keep.length <= REFIT_UP_TO);
      const fitted =
        keep.length > 0 && refits
          ? await this.queue.whileRefitting(() =>
              this.refits.fit(this.refitModel, keep, this.baseTools, keep.length <= REFIT_UP_TO),
            )
          : undefined;
      if (fitted) [this.base, this.refits.fittedOn] = [fitted, keep.length];
      else {
        const input = keep.length > 0 ? await this.learnInput(keep, retriever) : undefined;
        if (input) retriever.learn!(input);
      }
      this.view = this.applyChanges();
      return forgotten;
    });
  }

  /** What `retriever.learn` needs for `plans` (their embeddings); undefined when it learns nothing. */
  private async learnInput(plans: Plan[], retriever: Retriever = this.base): Promise<LearnInput | undefined> {
    if (!retriever.learn) return undefined;
    const needs = fitNeeds(retriever.method);
    const encoder = needs.queries || needs.contexts ? this.requireEncoder('learning') : undefined;
    const input: LearnInput = { plans };
    if (needs.queries) input.queryVectors = await this.refits.queries(encoder!, plans);
    if (needs.contexts)
      input.contextVectors = await embedAll(
        encoder!,
        plans.flatMap((p) => planSteps(p).map((s) => contextText(s.query, s.history, retriever.historyLength))),
      );
    return input;
  }

  private requireEncoder(what: string): Encoder {
    return requireEncoder(this.encoder, this.method, what);
  }

  /**
   * Trains a model on `tools` and, optionally, demonstrations (`plans`: full plans or chains `{id?, query, tools}`),
   * with the default method DTDR-G unless `method` says otherwise.
   *
   * @throws {@link DtdrError} `'options'` for malformed tools, plans or options; `'encoder'` when the method needs an
   * encoder and none is given.
   */
  static async train(options: DtdrTrainOptions): Promise<Dtdr> {
    if (!options || typeof options !== 'object')
      throw new DtdrError('options', 'Dtdr.train needs an options object {tools, plans?, encoder?}');
    const method = options.method ?? DEFAULT_METHOD;
    checkTools(options.tools);
    if (!options.allowUndescribed && fitNeeds(method).tools) checkToolsDescribed(options.tools);
    if (options.plans !== undefined && !Array.isArray(options.plans))
      throw new DtdrError('options', 'plans must be an array of plans', { field: 'plans' });
    checkPlanSizes(options.plans);
    // The model keeps copies: a caller mutating its arrays later must not change the model.
    const tools = options.tools.map((t) => ({ ...t }));
    const plans = readPlans(options.plans ?? [], 'options');
    const retriever = await trainRetriever(method, tools, plans, options.encoder, options);
    return new Dtdr(
      retriever,
      tools,
      options.encoder,
      {
        dataset: options.dataset,
        plans: plans.length,
        historyLength: options.historyLength ?? TRAIN_DEFAULTS.historyLength,
        seed: options.seed ?? TRAIN_DEFAULTS.seed,
        ...(options.clusters !== undefined ? { clusters: options.clusters } : {}),
      },
      plans.slice(0, EXAMPLES_KEPT),
      NO_CHANGES,
      options,
    );
  }

  /**
   * Restores a saved model — its JSON artifact (format v1 to v3; older versions are converted as
   * they load) or its binary form (`toBinary()`); the encoder must be the one it was trained with.
   * Throws a DtdrError naming what is wrong.
   */
  static load(saved: unknown, encoder?: Encoder, source?: string, options: DtdrLoadOptions = {}): Dtdr {
    const binary = saved instanceof Uint8Array;
    // The binary decoder checks its header's nesting; a JSON artifact is checked here, before anything walks it.
    if (!binary) checkNesting(saved, MAX_MODEL_NESTING, { what: 'the model', code: 'artifact', file: source });
    const artifact = binary ? decodeBinaryModel(saved, source) : saved;
    const { retriever, artifact: a } = loadRetriever(artifact, { encoder, source, binary });
    if ((retriever.needs.query || retriever.needs.context) && !encoder) {
      throw new DtdrError('encoder', `a ${a.method} model needs the encoder it was trained with (${a.encoder?.id})`, {
        file: source,
      });
    }
    const examples = (a.examples ?? []).map((e) => chainPlan(String(e.id), e.query, e.tools));
    const model = new Dtdr(retriever, a.tools, encoder, a.training, examples, readToolChanges(a, source), options);
    const window = readLearningWindow(a, encoder, source);
    if (window) {
      model.learned = window.learned;
      model.refits.fittedOn = window.fitted ?? window.learned.length;
      model.folded = window.folded;
      model.beforeLearning = window.before;
    }
    return model;
  }

  /** The retrieval method this model was trained with. */
  get method(): MethodName {
    return this.base.method;
  }

  /** Names of the tools this model can offer. */
  private knownNames?: Set<string>;

  /**
   * Every tool and END, ranked for the next step. Waits for the model changes called before it,
   * then ranks on that state (see the class notes on concurrency).
   */
  rank(query: string, history: readonly string[] = []): Promise<Ranking> {
    return this.queue.read(() => this.rankNow(query, history));
  }

  /** Ranks on the model as it is now: the view is taken before any await, so a later change cannot reach it. */
  private async rankNow(query: string, history: readonly string[]): Promise<Ranking> {
    checkQuery(query);
    checkHistory(history, (this.knownNames ??= new Set(this.tools.map((t) => t.name))));
    const view = this.view;
    const input: RankInput = { query, history };
    const { needs } = view;
    if (needs.query || needs.context) {
      if (!this.encoder) throw new DtdrError('encoder', `${this.method} needs an encoder to rank`);
      const texts = [
        ...(needs.query ? [query] : []),
        ...(needs.context ? [contextText(query, history, view.historyLength)] : []),
      ];
      const vectors = await this.encoder.embed(texts);
      if (needs.query) input.queryVector = vectors[0];
      if (needs.context) input.contextVector = vectors[vectors.length - 1];
    }
    return view.rank(input);
  }

  /**
   * The candidate tools for the next step of `query` after the calls in `history` (oldest first):
   * a calibrated ranking and the set to show the model, or END when the plan looks finished.
   *
   * @throws {@link DtdrError} with code `'options'` when `query` is empty or blank (an app that
   *   passes a blank message is told so rather than that the plan is finished), too long, or when
   *   `history` names a tool the model does not know.
   */
  async retrieve(query: string, history: readonly string[] = [], options?: SelectOptions): Promise<Retrieval> {
    checkSelectOptions(options);
    const ranking = await this.rank(query, history);
    const set = selectCandidates(ranking, options);
    const confident = set.confident ?? ranking.confident;
    return { ...set, confident, ...(ranking.backoff ? { backoff: ranking.backoff } : {}), ranking };
  }

  /**
   * How the default method was fitted (folds, calibration error, conformal thresholds, chosen l and K); undefined for
   * other methods.
   */
  get diagnostics(): GatedDiagnostics | undefined {
    return (this.retriever as { diagnostics?: GatedDiagnostics }).diagnostics;
  }

  /** The model as the compact binary v2 container (numbers in typed sections, SHA-256 checked). */
  toBinary(): Uint8Array {
    return encodeBinaryModel(this.toJSON());
  }

  /** The model as a JSON artifact (learned runs and tool changes included); `Dtdr.load` restores it. */
  toJSON(): ModelArtifact {
    const examples = this.examples.map((p) => ({ id: p.id, query: p.query, tools: planTools(p) }));
    const artifact = saveRetriever(this.base, this.baseTools, this.encoder, this.training, examples);
    const c = this.changes;
    const fitted = this.refitsAtAll() ? Math.min(this.refits.fittedOn, this.learned.length) : undefined;
    const window = { learned: this.learned, before: this.beforeLearning!, folded: this.folded, fitted };
    return {
      ...artifact,
      ...(c.removed.length === 0 && c.added.length === 0 && !c.dropped?.length ? {} : { toolChanges: copyChanges(c) }),
      // Saved while it holds runs, or has folded some in (a reload must not refit on later runs alone).
      ...(this.beforeLearning && (this.learned.length > 0 || this.folded)
        ? { learning: saveLearningWindow(window, artifact) }
        : {}),
    };
  }
}

/** A deep copy of a retriever's saved form: the state `forget` replays from. */
const snapshot = (r: Retriever, tools: ToolSpec[], encoder: Encoder | undefined, training: ModelArtifact['training']) =>
  JSON.parse(JSON.stringify(saveRetriever(r, tools, encoder, training))) as ModelArtifact;

/** What {@link safeLoadModel} returns: the model, or the DtdrError that says why it could not be loaded. */
export type SafeLoad = { ok: true; model: Dtdr } | { ok: false; error: DtdrError };

/** `Dtdr.load` that returns a result instead of throwing: for loading stored models at app start. */
export function safeLoadModel(saved: unknown, encoder?: Encoder, source?: string, options?: DtdrLoadOptions): SafeLoad {
  try {
    return { ok: true, model: Dtdr.load(saved, encoder, source, options) };
  } catch (error) {
    return {
      ok: false,
      error: DtdrError.isInstance(error)
        ? error
        : new DtdrError('artifact', `cannot load the model: ${String(error)}`, { file: source, cause: error }),
    };
  }
}

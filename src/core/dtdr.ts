import { saveRetriever, loadRetriever, type ModelArtifact } from './model/artifact.js';
import type { Encoder } from './base/encoder.js';
import { DtdrError } from './base/errors.js';
import type { GatedDiagnostics } from './retrieval/default/index.js';
import type { MethodName, RankInput, Ranking, Retriever } from './retrieval/types.js';
import { checkSelectOptions, selectCandidates, type SelectOptions } from './selection/select.js';
import type { Retrieval } from './selection/retrieval.js';
import { contextText } from './base/text.js';
import { DEFAULT_METHOD, fitNeeds, TRAIN_DEFAULTS } from './retrieval/methods.js';
import { trainRetriever } from './retrieval/train.js';
import { chainPlan, planTools } from './plans/plan.js';
import { checkHistory, checkPlanSizes, checkQuery, checkTools, checkToolsDescribed } from './base/checks.js';
import { forgetMatch, readLearningWindow, saveLearningWindow } from './model/learning-window.js';
import { ChangedToolSet, copyChanges, NO_CHANGES, readToolChanges } from './model/toolset.js';
import { checkPlans, readPlans, type ChainPlanInput } from './plans/input.js';
import { decodeBinaryModel, encodeBinaryModel } from './model/binary.js';
import { checkNesting, MAX_MODEL_NESTING } from './base/limits.js';
import type { Plan, ToolSpec } from './base/types.js';
import { RefitSchedule } from './model/refit-schedule.js';
import type { DtdrLoadOptions, DtdrTrainOptions } from './model/options.js';
import { ChangeQueue } from './model/changes.js';
import { withAddedTools, withRemovedTools } from './model/tool-changes.js';
import { refitsAtAll, type LearningModel, type ModelSnapshot } from './model/snapshot.js';
import { loadTraining } from './retrieval/load-training.js';

/** `learn` and `forget`, loaded on the first of them: an app that only loads and retrieves never downloads them. */
const learnForget = () => import('./model/learn-forget.js');

export { REFIT_IN_BACKGROUND_UP_TO, REFIT_TIMEOUT, REFIT_UP_TO } from './model/refit-schedule.js';
export { MAX_FORGETTABLE } from './model/learning-window.js';
export type { Retrieval } from './selection/retrieval.js';
export type { DtdrLoadOptions, DtdrTrainOptions } from './model/options.js';

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
  /** The model's state that changes replace as a whole (model/learning.ts, model/tool-changes.ts). */
  private state!: ModelSnapshot;
  /** The retriever that ranks: the state's, with its tool changes applied. */
  private ranker!: Retriever;
  /** Names of the tools the ranker can offer (computed on first use after a swap). */
  private knownNames?: Set<string>;

  /** The order of changes and rankings (changes.ts). */
  private readonly queue = new ChangeQueue();
  /** When and where refits run, and the one in flight. */
  private readonly refits: RefitSchedule;
  /** What learn and forget need of this model (model/learning.ts). */
  private readonly learning: LearningModel;

  private constructor(
    state: ModelSnapshot,
    readonly encoder: Encoder | undefined,
    private readonly training: ModelArtifact['training'],
    /** A few demonstrations kept with the model, for prompt examples. */
    readonly examples: Plan[] = [],
    refits: DtdrLoadOptions = {},
  ) {
    this.refits = new RefitSchedule(refits.refitter, refits.refitTimeout);
    this.swap(state);
    const { queue } = this;
    this.learning = {
      encoder,
      training,
      refits: this.refits,
      queue,
      current: () => this.state,
      swap: (next) => this.swap(next),
    };
  }

  /** Swaps a next state in at once, and the retriever that ranks with it (kept where its parts are). */
  private swap(next: ModelSnapshot): void {
    const last = this.state as ModelSnapshot | undefined;
    this.state = next;
    if (last && last.base === next.base && last.baseTools === next.baseTools && last.changes === next.changes) return;
    const c = next.changes;
    this.knownNames = undefined;
    this.ranker =
      c.removed.length === 0 && c.added.length === 0 ? next.base : new ChangedToolSet(next.base, next.baseTools, c);
  }

  /** The retriever that ranks (tool-set changes applied). */
  get retriever(): Retriever {
    return this.ranker;
  }

  /** The tools this model can offer now: trained and added ones, minus removed ones. */
  get tools(): ToolSpec[] {
    const { baseTools, changes } = this.state;
    const removed = new Set(changes.removed);
    return [...baseTools, ...changes.added].filter((t) => !removed.has(t.name));
  }

  /** The tools removed with `removeTools` (and not added back): adapters never offer or run them. */
  get removedTools(): string[] {
    const { changes } = this.state;
    return [...changes.removed, ...(changes.dropped ?? [])];
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
    return this.queue.enqueue(async () => {
      const next = await withAddedTools(this.state, copies, this.encoder);
      this.swap({ ...this.state, ...next });
    });
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
    return this.queue.enqueue(() => this.removeNow(copy));
  }

  private removeNow(names: string[]): void {
    const current = this.tools.map((t) => t.name);
    const next = withRemovedTools(this.state, names, current, this.state.learned, this.encoder);
    this.swap({ ...this.state, ...next });
  }

  /** How many learned demonstrations `forget` can still take out (see MAX_FORGETTABLE). */
  get learnedCount(): number {
    return this.state.learned.length;
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
    return this.queue.enqueue(async () => {
      const { baseTools, changes } = this.state;
      const addedNames = changes.added.map((t) => t.name);
      checkPlans(
        given,
        baseTools.map((t) => t.name),
        addedNames,
        changes.removed,
      );
      if (given.length > 0) await (await learnForget()).learnRuns(this.learning, given);
    });
  }

  /** Why refits on the refitter failed (and what the model did instead), oldest first. */
  get refitErrors(): readonly string[] {
    return this.refits.failures;
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
   * Removes what came from demonstrations handed to `learn` — by plan id, or by a predicate —
   * by replaying the remaining ones onto the model as it was before learning. Returns how many
   * were forgotten. The newest learned demonstrations can be (at least MAX_FORGETTABLE / 2 of them,
   * at most MAX_FORGETTABLE, or REFIT_IN_BACKGROUND_UP_TO for a model that refits in the background);
   * older ones, like those the model was trained on, need a new training to leave it.
   */
  async forget(which: readonly string[] | ((plan: Plan) => boolean)): Promise<number> {
    const match = forgetMatch(which);
    return this.queue.enqueue(async () => (await learnForget()).forgetRuns(this.learning, match));
  }

  /**
   * Loads DTDR-G's training code (its fit and online learning). A bundled app downloads it on the
   * first `Dtdr.train`, `learn` or `forget`, which await this themselves; call it before using
   * `retriever.learn` directly, or to fetch the code ahead of need. On Node it is loaded already.
   */
  static loadTraining(): Promise<void> {
    return loadTraining();
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
      { base: retriever, baseTools: tools, changes: NO_CHANGES, learned: [], folded: false },
      options.encoder,
      {
        dataset: options.dataset,
        plans: plans.length,
        historyLength: options.historyLength ?? TRAIN_DEFAULTS.historyLength,
        seed: options.seed ?? TRAIN_DEFAULTS.seed,
        ...(options.clusters !== undefined ? { clusters: options.clusters } : {}),
      },
      plans.slice(0, EXAMPLES_KEPT),
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
    const window = readLearningWindow(a, encoder, source);
    const state: ModelSnapshot = {
      base: retriever,
      baseTools: a.tools,
      changes: readToolChanges(a, source),
      learned: window?.learned ?? [],
      folded: window?.folded ?? false,
      beforeLearning: window?.before,
    };
    const model = new Dtdr(state, encoder, a.training, examples, options);
    if (window) model.refits.fittedOn = window.fitted ?? window.learned.length;
    return model;
  }

  /** The retrieval method this model was trained with. */
  get method(): MethodName {
    return this.state.base.method;
  }

  /**
   * Every tool and END, ranked for the next step. Waits for the model changes called before it,
   * then ranks on that state (see the class notes on concurrency).
   */
  rank(query: string, history: readonly string[] = []): Promise<Ranking> {
    return this.queue.read(() => this.rankNow(query, history));
  }

  /** Ranks on the model as it is now: the ranker is taken before any await, so a later change cannot reach it. */
  private async rankNow(query: string, history: readonly string[]): Promise<Ranking> {
    checkQuery(query);
    checkHistory(history, (this.knownNames ??= new Set(this.tools.map((t) => t.name))));
    const ranker = this.ranker;
    const input: RankInput = { query, history };
    const { needs } = ranker;
    if (needs.query || needs.context) {
      if (!this.encoder) throw new DtdrError('encoder', `${this.method} needs an encoder to rank`);
      const texts = [
        ...(needs.query ? [query] : []),
        ...(needs.context ? [contextText(query, history, ranker.historyLength)] : []),
      ];
      const vectors = await this.encoder.embed(texts);
      if (needs.query) input.queryVector = vectors[0];
      if (needs.context) input.contextVector = vectors[vectors.length - 1];
    }
    return ranker.rank(input);
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
    // While a forget refits, the model it started from (it has not happened yet).
    const { state, fittedOn } = this.state.committed ?? { state: this.state, fittedOn: this.refits.fittedOn };
    const { base, baseTools, changes: c, learned, beforeLearning, folded } = state;
    const artifact = saveRetriever(base, baseTools, this.encoder, this.training, examples);
    const fitted = refitsAtAll(this.learning, state) ? Math.min(fittedOn, learned.length) : undefined;
    const window = { learned, before: beforeLearning!, folded, fitted };
    return {
      ...artifact,
      ...(c.removed.length === 0 && c.added.length === 0 && !c.dropped?.length ? {} : { toolChanges: copyChanges(c) }),
      // Saved while it holds runs, or has folded some in (a reload must not refit on later runs alone).
      ...(beforeLearning && (learned.length > 0 || folded) ? { learning: saveLearningWindow(window, artifact) } : {}),
    };
  }
}

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

import { loadRetriever, saveRetriever, toolsHash, type ModelArtifact } from './artifact.js';
import type { Encoder } from './encoder.js';
import { DtdrError } from './errors.js';
import type { GatedDiagnostics, GatedState } from './retrievers/gated.js';
import type { Backoff, LearnInput, MethodName, RankInput, Ranking, Retriever } from './retrievers/types.js';
import { checkSelectOptions, selectCandidates, type Candidate, type SelectOptions } from './select.js';
import { contextText } from './text.js';
import { DEFAULT_METHOD, embedAll, fitNeeds, labelsOf, TRAIN_DEFAULTS, trainRetriever, type TrainOptions } from './train.js';
import { chainPlan, planSteps, planTools } from './plan.js';
import { checkHistory, checkPlanSizes, checkQuery, checkTools } from './checks.js';
import { ChangedToolSet, checkAddedTools, checkRemovedTools, extendGatedState, NO_CHANGES, type ToolChanges } from './living/toolset.js';
import { GatedRetriever } from './retrievers/gated.js';
import { decodeBinaryModel, encodeBinaryModel } from './living/binary.js';
import { toolText } from './text.js';
import type { Plan, ToolSpec } from './types.js';

/** Demonstrations stored with a model for prompt examples. */
const EXAMPLES_KEPT = 64;

export interface Retrieval {
  /** F_t: the tools (and maybe END) to show the model next, best first. */
  candidates: Candidate[];
  /** True when the set was widened because the retriever was unsure; `reason` says why. */
  widened: boolean;
  reason?: string;
  /**
   * For the default method: the share of steps whose set holds a tool that can come next
   * (split-conformal, measured on held-out demonstrations; default 0.95).
   */
  target?: number;
  confident: boolean;
  backoff?: Backoff;
  /** The full ranking over every tool and END. */
  ranking: Ranking;
}

export interface DtdrTrainOptions extends TrainOptions {
  /** Default `dtdr-g` (DEFAULT_METHOD): the gated, calibrated combination. */
  method?: MethodName;
  tools: ToolSpec[];
  /** Demonstrations. Optional for dtdr-g, bm25, qts and random, which can start from the tools alone. */
  plans?: Plan[];
  /** Needed by every method but random, bm25 and dr. */
  encoder?: Encoder;
  /** Dataset name recorded in the artifact. */
  dataset?: string;
}

/**
 * A trained retriever with its encoder: the object apps hold. `retrieve(query, history)` embeds
 * what the method needs, ranks every tool and END, and returns the thresholded candidate set.
 */
export class Dtdr {
  /** The retriever as trained (or natively extended), before tool-set changes are applied. */
  private base: Retriever;
  /** The tools `base` ranks, in label order. */
  private baseTools: ToolSpec[];
  private changes: ToolChanges;
  private view: Retriever;

  private constructor(
    retriever: Retriever,
    tools: ToolSpec[],
    readonly encoder: Encoder | undefined,
    private readonly training: ModelArtifact['training'],
    /** A few demonstrations kept with the model, for prompt examples. */
    readonly examples: Plan[] = [],
    changes: ToolChanges = NO_CHANGES,
  ) {
    this.base = retriever;
    this.baseTools = tools;
    this.changes = changes;
    this.view = this.applyChanges();
  }

  private applyChanges(): Retriever {
    const c = this.changes;
    this.knownNames = undefined;
    return c.removed.length === 0 && c.added.length === 0 ? this.base : new ChangedToolSet(this.base, this.baseTools, c);
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

  /**
   * Adds tools after training. They are retrievable at once from their descriptions, with no
   * demonstration; what the model learned is kept (DTDR-G extends its tables natively, other
   * methods mix a description ranking in). Re-adding a removed tool's name brings it back.
   */
  async addTools(specs: ToolSpec[]): Promise<void> {
    checkTools(specs);
    const removed = new Set(this.changes.removed);
    const back = specs.filter((t) => removed.has(t.name));
    const fresh = specs.filter((t) => !removed.has(t.name)).map((t) => ({ ...t }));
    checkAddedTools(fresh, [...this.baseTools, ...this.changes.added].map((t) => t.name));
    if (back.length > 0) this.changes = { ...this.changes, removed: this.changes.removed.filter((n) => !back.some((t) => t.name === n)) };
    if (fresh.length > 0) {
      if (this.base instanceof GatedRetriever) {
        const encoder = this.requireEncoder('adding tools');
        const vectors = await encoder.embed(fresh.map((t) => toolText(t.name, t.description)));
        const state = extendGatedState(this.base.state(), this.baseTools.length, fresh.length, vectors.map((v) => Array.from(v)));
        if (this.beforeLearning) {
          const before = this.beforeLearning;
          const tools = [...before.tools, ...fresh.map((t) => ({ name: t.name, description: t.description }))];
          const extended = extendGatedState(before.state as GatedState, before.tools.length, fresh.length, vectors.map((v) => Array.from(v)));
          this.beforeLearning = { ...before, tools, labels: labelsOf(tools), toolsHash: toolsHash(tools), state: extended };
        }
        this.baseTools = [...this.baseTools, ...fresh];
        this.base = GatedRetriever.fromState(this.baseTools, encoder.dimension, state);
      } else {
        const added = [...this.changes.added, ...fresh];
        let vectors: number[][] | null = null;
        if (this.encoder && (this.base.needs.query || this.base.needs.context)) {
          const all = [...this.baseTools, ...added];
          vectors = (await this.encoder.embed(all.map((t) => toolText(t.name, t.description)))).map((v) => Array.from(v));
        }
        this.changes = { ...this.changes, added, vectors };
      }
    }
    this.view = this.applyChanges();
  }

  /** Removes tools: never offered again, in any candidate set or prompt; the others keep their order. */
  removeTools(names: string[]): void {
    checkRemovedTools(names, this.tools.map((t) => t.name));
    this.changes = { ...this.changes, removed: [...this.changes.removed, ...names] };
    this.view = this.applyChanges();
  }

  /** Demonstrations folded in after training, oldest first (kept so `forget` can take them out). */
  private learned: Plan[] = [];
  /** The trained state before the first `learn`, replayed from when forgetting. */
  private beforeLearning?: ModelArtifact;

  /** How many demonstrations `learn` has folded in since training. */
  get learnedCount(): number {
    return this.learned.length;
  }

  /**
   * Folds new demonstrations (e.g. an app's finished, validated runs) into the model without a
   * full refit, in time proportional to them: graph counts, cluster centroids, heads and DTDR-G's
   * conformal thresholds. Methods that learn nothing from demonstrations (random, bm25, qts)
   * keep them for `forget` only. Plans must call tools the model was trained or natively extended with.
   */
  async learn(plans: Plan[]): Promise<void> {
    checkPlans(plans, this.baseTools.map((t) => t.name), this.changes.added.map((t) => t.name));
    if (plans.length === 0) return;
    this.beforeLearning ??= JSON.parse(JSON.stringify(saveRetriever(this.base, this.baseTools, this.encoder, this.training)));
    await this.foldIn(plans);
    this.learned.push(...plans.map(copyPlan));
  }

  /**
   * Removes what came from demonstrations handed to `learn` — by plan id, or by a predicate —
   * by replaying the remaining ones onto the model as it was before learning. Returns how many
   * were forgotten. (Demonstrations the model was trained on need a new training to leave it.)
   */
  async forget(which: readonly string[] | ((plan: Plan) => boolean)): Promise<number> {
    const match = typeof which === 'function' ? which : ((ids) => (p: Plan) => ids.has(p.id))(new Set(which));
    if (typeof which !== 'function' && !Array.isArray(which)) throw new DtdrError('options', 'forget takes plan ids or a predicate', { field: 'which' });
    const keep = this.learned.filter((p) => !match(p));
    const forgotten = this.learned.length - keep.length;
    if (forgotten === 0 || !this.beforeLearning) return 0;
    const { retriever, artifact } = loadRetriever(this.beforeLearning, { encoder: this.encoder });
    this.base = retriever;
    this.baseTools = artifact.tools;
    this.learned = keep;
    if (keep.length > 0) await this.foldIn(keep);
    else this.view = this.applyChanges();
    return forgotten;
  }

  private async foldIn(plans: Plan[]): Promise<void> {
    if (!this.base.learn) return;
    const needs = fitNeeds(this.base.method);
    const encoder = needs.queries || needs.contexts ? this.requireEncoder('learning') : undefined;
    const input: LearnInput = { plans };
    if (needs.queries) input.queryVectors = await embedAll(encoder!, plans.map((p) => p.query));
    if (needs.contexts) input.contextVectors = await embedAll(encoder!, plans.flatMap((p) => planSteps(p).map((s) => contextText(s.query, s.history, this.base.historyLength))));
    this.base.learn(input);
    this.view = this.applyChanges();
  }

  private requireEncoder(what: string): Encoder {
    if (!this.encoder) throw new DtdrError('encoder', `${what} to a ${this.method} model needs its encoder`, { hint: 'load the model with the encoder it was trained with' });
    return this.encoder;
  }

  static async train(options: DtdrTrainOptions): Promise<Dtdr> {
    if (!options || typeof options !== 'object') throw new DtdrError('options', 'Dtdr.train needs an options object {tools, plans?, encoder?}');
    const method = options.method ?? DEFAULT_METHOD;
    checkTools(options.tools);
    if (options.plans !== undefined && !Array.isArray(options.plans)) throw new DtdrError('options', 'plans must be an array of plans', { field: 'plans' });
    checkPlanSizes(options.plans);
    // The model keeps copies: a caller mutating its arrays later must not change the model.
    const tools = options.tools.map((t) => ({ ...t }));
    const plans = [...(options.plans ?? [])];
    const retriever = await trainRetriever(method, tools, plans, options.encoder, options);
    return new Dtdr(retriever, tools, options.encoder, {
      dataset: options.dataset,
      plans: plans.length,
      historyLength: options.historyLength ?? TRAIN_DEFAULTS.historyLength,
      seed: options.seed ?? TRAIN_DEFAULTS.seed,
      ...(options.clusters !== undefined ? { clusters: options.clusters } : {}),
    }, plans.slice(0, EXAMPLES_KEPT));
  }

  /**
   * Restores a saved model — its JSON artifact (v1 or v2) or its binary form (`toBinary()`); the
   * encoder must be the one it was trained with. Throws a DtdrError naming what is wrong.
   */
  static load(saved: unknown, encoder?: Encoder, source?: string): Dtdr {
    const artifact = saved instanceof Uint8Array ? decodeBinaryModel(saved, source) : saved;
    const { retriever, artifact: a } = loadRetriever(artifact, { encoder, source });
    if ((retriever.needs.query || retriever.needs.context) && !encoder) {
      throw new DtdrError('encoder', `a ${a.method} model needs the encoder it was trained with (${a.encoder?.id})`, { file: source });
    }
    const examples = (a.examples ?? []).map((e) => chainPlan(String(e.id), e.query, e.tools));
    const model = new Dtdr(retriever, a.tools, encoder, a.training, examples, readToolChanges(a, source));
    const learning = (a as { learning?: { plans?: unknown; before?: unknown } }).learning;
    if (learning !== undefined) {
      if (!learning || !Array.isArray(learning.plans) || !learning.before) throw new DtdrError('artifact', 'learning must hold {plans, before}', { file: source, field: 'learning' });
      model.learned = learning.plans.map((p, i) => readPlan(p, `learning.plans[${i}]`, source));
      model.beforeLearning = loadRetriever(learning.before, { encoder, source }).artifact;
    }
    return model;
  }

  get method(): MethodName {
    return this.base.method;
  }

  /** Names of the tools this model can offer. */
  private knownNames?: Set<string>;

  async rank(query: string, history: readonly string[] = []): Promise<Ranking> {
    checkQuery(query);
    checkHistory(history, (this.knownNames ??= new Set(this.tools.map((t) => t.name))));
    const input: RankInput = { query, history };
    const { needs } = this.view;
    if (needs.query || needs.context) {
      if (!this.encoder) throw new DtdrError('encoder', `${this.method} needs an encoder to rank`);
      const texts = [...(needs.query ? [query] : []), ...(needs.context ? [contextText(query, history, this.view.historyLength)] : [])];
      const vectors = await this.encoder.embed(texts);
      if (needs.query) input.queryVector = vectors[0];
      if (needs.context) input.contextVector = vectors[vectors.length - 1];
    }
    return this.view.rank(input);
  }

  async retrieve(query: string, history: readonly string[] = [], options?: SelectOptions): Promise<Retrieval> {
    checkSelectOptions(options);
    const ranking = await this.rank(query, history);
    const set = selectCandidates(ranking, options);
    return { ...set, confident: ranking.confident, ...(ranking.backoff ? { backoff: ranking.backoff } : {}), ranking };
  }

  /** How the default method was fitted (folds, calibration error, conformal thresholds, chosen l and K); undefined for other methods. */
  get diagnostics(): GatedDiagnostics | undefined {
    return (this.retriever as { diagnostics?: GatedDiagnostics }).diagnostics;
  }

  /** The model as the compact binary v2 container (numbers in typed sections, SHA-256 checked). */
  toBinary(): Uint8Array {
    return encodeBinaryModel(this.toJSON());
  }

  toJSON(): ModelArtifact {
    const examples = this.examples.map((p) => ({ id: p.id, query: p.query, tools: planTools(p) }));
    const artifact = saveRetriever(this.base, this.baseTools, this.encoder, this.training, examples);
    const c = this.changes;
    return {
      ...artifact,
      ...(c.removed.length === 0 && c.added.length === 0 ? {} : { toolChanges: copyChanges(c) }),
      ...(this.beforeLearning && this.learned.length > 0 ? { learning: { plans: this.learned.map(copyPlan), before: this.beforeLearning } } : {}),
    };
  }
}

function copyChanges(c: ToolChanges): ToolChanges {
  return { removed: [...c.removed], added: c.added.map((t) => ({ ...t })), vectors: c.vectors ? c.vectors.map((v) => [...v]) : null };
}

/** The tool-set changes saved with a model, checked. */
function readToolChanges(artifact: ModelArtifact, source?: string): ToolChanges {
  const raw = (artifact as { toolChanges?: unknown }).toolChanges;
  if (raw === undefined) return NO_CHANGES;
  const fail = (field: string, message: string): never => {
    throw new DtdrError('artifact', message, { file: source, field: `toolChanges.${field}` });
  };
  const c = raw as Partial<ToolChanges>;
  if (!c || typeof c !== 'object') fail('', 'must be an object');
  if (!Array.isArray(c.removed) || c.removed.some((n) => typeof n !== 'string')) fail('removed', 'must list tool names');
  if (!Array.isArray(c.added)) fail('added', 'must list tools');
  try {
    checkTools([...artifact.tools, ...c.added!], 'tools');
  } catch (e) {
    fail('added', DtdrError.isInstance(e) ? e.message : String(e));
  }
  const names = new Set([...artifact.tools, ...c.added!].map((t) => t.name));
  c.removed!.forEach((n, i) => names.has(n) || fail(`removed[${i}]`, `names no tool of the model: "${n}"`));
  const dim = artifact.encoder?.dimension;
  if (c.vectors != null && (!Array.isArray(c.vectors) || c.vectors.length !== names.size || c.vectors.some((v) => !Array.isArray(v) || v.length !== dim))) fail('vectors', 'one description vector per tool of the encoder dimension expected');
  return { removed: [...c.removed!], added: c.added!.map((t) => ({ ...t })), vectors: c.vectors ?? null };
}

export type SafeLoad = { ok: true; model: Dtdr } | { ok: false; error: DtdrError };

/** `Dtdr.load` that returns a result instead of throwing: for loading stored models at app start. */
export function safeLoadModel(saved: unknown, encoder?: Encoder, source?: string): SafeLoad {
  try {
    return { ok: true, model: Dtdr.load(saved, encoder, source) };
  } catch (error) {
    return { ok: false, error: DtdrError.isInstance(error) ? error : new DtdrError('artifact', `cannot load the model: ${String(error)}`, { file: source, cause: error }) };
  }
}

/** `Dtdr.load` under the name the docs use: throws a DtdrError. */
export const loadModel = (saved: unknown, encoder?: Encoder, source?: string): Dtdr => Dtdr.load(saved, encoder, source);

function copyPlan(p: Plan): Plan {
  return { id: p.id, query: p.query, nodes: p.nodes.map((n) => ({ ...n })), edges: p.edges.map(([a, b]) => [a, b] as [number, number]), order: [...p.order] };
}

/** Plans to learn: well-formed, calling tools the retriever knows. */
function checkPlans(plans: unknown, known: string[], addedByMixing: string[]): asserts plans is Plan[] {
  if (!Array.isArray(plans)) throw new DtdrError('options', 'learn takes an array of plans', { field: 'plans', hint: 'build plans with chainPlan(id, query, tools) or planFromRecord' });
  const names = new Set(known);
  const mixed = new Set(addedByMixing);
  checkPlanSizes(plans);
  plans.forEach((p, i) => {
    readPlan(p, `plans[${i}]`);
    for (const [k, n] of (p as Plan).nodes.entries()) {
      if (!names.has(n.tool)) {
        throw new DtdrError('options', mixed.has(n.tool)
          ? `"${n.tool}" was added after training to a method that mixes added tools in by description; it cannot learn from plans that call it`
          : `plan ${JSON.stringify((p as Plan).id)} calls "${n.tool}", which is not one of the model's tools`, { field: `plans[${i}].nodes[${k}].tool`, hint: mixed.has(n.tool) ? 'retrain with the tool, or use dtdr-g, which extends itself natively' : 'add the tool first (addTools), or fix the plan' });
      }
    }
  });
}

/** A stored or passed plan, checked for shape. */
function readPlan(p: unknown, field: string, file?: string): Plan {
  const plan = p as Plan;
  const ok = plan && typeof plan === 'object' && typeof plan.id === 'string' && typeof plan.query === 'string'
    && Array.isArray(plan.nodes) && plan.nodes.length > 0 && plan.nodes.every((n) => n && typeof n.tool === 'string')
    && Array.isArray(plan.edges) && plan.edges.every((e) => Array.isArray(e) && e.length === 2 && e.every((x) => Number.isInteger(x) && x >= 0 && x < plan.nodes.length))
    && Array.isArray(plan.order) && plan.order.length === plan.nodes.length && [...plan.order].sort((a, b) => a - b).every((x, i) => x === i);
  if (!ok) throw new DtdrError(file ? 'artifact' : 'options', 'not a plan: expected {id, query, nodes: [{tool}], edges: [[from, to]], order}', { file, field, hint: 'build plans with chainPlan(id, query, tools) or planFromRecord' });
  return copyPlan(plan);
}

import { loadRetriever, saveRetriever, type ModelArtifact } from './artifact.js';
import type { Encoder } from './encoder.js';
import { DtdrError } from './errors.js';
import type { GatedDiagnostics } from './retrievers/gated.js';
import type { Backoff, MethodName, RankInput, Ranking, Retriever } from './retrievers/types.js';
import { checkSelectOptions, selectCandidates, type Candidate, type SelectOptions } from './select.js';
import { contextText } from './text.js';
import { DEFAULT_METHOD, TRAIN_DEFAULTS, trainRetriever, type TrainOptions } from './train.js';
import { chainPlan, planTools } from './plan.js';
import { checkHistory, checkQuery, checkTools } from './checks.js';
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

  private requireEncoder(what: string): Encoder {
    if (!this.encoder) throw new DtdrError('encoder', `${what} to a ${this.method} model needs its encoder`, { hint: 'load the model with the encoder it was trained with' });
    return this.encoder;
  }

  static async train(options: DtdrTrainOptions): Promise<Dtdr> {
    if (!options || typeof options !== 'object') throw new DtdrError('options', 'Dtdr.train needs an options object {tools, plans?, encoder?}');
    const method = options.method ?? DEFAULT_METHOD;
    checkTools(options.tools);
    if (options.plans !== undefined && !Array.isArray(options.plans)) throw new DtdrError('options', 'plans must be an array of plans', { field: 'plans' });
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
    return new Dtdr(retriever, a.tools, encoder, a.training, examples, readToolChanges(a, source));
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
    return c.removed.length === 0 && c.added.length === 0 ? artifact : { ...artifact, toolChanges: structuredCopy(c) };
  }
}

function structuredCopy(c: ToolChanges): ToolChanges {
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

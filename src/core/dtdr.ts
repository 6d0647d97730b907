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
  private constructor(
    readonly retriever: Retriever,
    readonly tools: ToolSpec[],
    readonly encoder: Encoder | undefined,
    private readonly training: ModelArtifact['training'],
    /** A few demonstrations kept with the model, for prompt examples. */
    readonly examples: Plan[] = [],
  ) {}

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

  /** Restores a saved model; the encoder must be the one it was trained with. */
  static load(artifact: unknown, encoder?: Encoder, source?: string): Dtdr {
    const { retriever, artifact: a } = loadRetriever(artifact, { encoder, source });
    if ((retriever.needs.query || retriever.needs.context) && !encoder) {
      throw new DtdrError('encoder', `a ${a.method} model needs the encoder it was trained with (${a.encoder?.id})`, { file: source });
    }
    const examples = (a.examples ?? []).map((e) => chainPlan(String(e.id), e.query, e.tools));
    return new Dtdr(retriever, a.tools, encoder, a.training, examples);
  }

  get method(): MethodName {
    return this.retriever.method;
  }

  /** Names of the tools this model can offer. */
  private knownNames?: Set<string>;

  async rank(query: string, history: readonly string[] = []): Promise<Ranking> {
    checkQuery(query);
    checkHistory(history, (this.knownNames ??= new Set(this.tools.map((t) => t.name))));
    const input: RankInput = { query, history };
    const { needs } = this.retriever;
    if (needs.query || needs.context) {
      if (!this.encoder) throw new DtdrError('encoder', `${this.method} needs an encoder to rank`);
      const text = needs.context ? contextText(query, history, this.retriever.historyLength) : query;
      const [vector] = await this.encoder.embed([text]);
      if (needs.context) input.contextVector = vector;
      else input.queryVector = vector;
    }
    return this.retriever.rank(input);
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

  toJSON(): ModelArtifact {
    const examples = this.examples.map((p) => ({ id: p.id, query: p.query, tools: planTools(p) }));
    return saveRetriever(this.retriever, this.tools, this.encoder, this.training, examples);
  }
}

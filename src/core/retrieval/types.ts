import type { Plan, ToolSpec } from '../base/types.js';

/** A retrieval method: the paper's baselines and methods, the two variants and the default `dtdr-g`. */
export type MethodName =
  'random' | 'bm25' | 'qts' | 'dr' | 'lr' | 'dtdr-c' | 'dtdr-l' | 'dtdr-h' | 'dtdr-cb' | 'dtdr-g';

/**
 * What users would pick instead, scored by `dtdr eval` side by side: the Vercel AI SDK's default
 * tool search and Orama's BM25, vector and hybrid search, run through their own npm packages at
 * the edge (src/cli/peers/), never from the core. Query-only: they ignore history.
 */
export type PeerName = 'aisdk-search' | 'orama-bm25' | 'orama-vector' | 'orama-hybrid';

/** What `dtdr eval` scores: dtdr's methods and the peers. */
export type EvalMethodName = MethodName | PeerName;

/** What a retriever needs embedded: the query alone, or the query + history text. */
export interface EmbeddingNeeds {
  query: boolean;
  context: boolean;
}

/** What a retriever ranks: the request, the calls so far, and the embeddings its method needs. */
export interface RankInput {
  query: string;
  /** Tools called so far, oldest first. */
  history: readonly string[];
  /** encoder(query), when `needs.query`. */
  queryVector?: Float32Array;
  /** encoder(contextText(query, history)), when `needs.context`. */
  contextVector?: Float32Array;
  /**
   * Labels (this retriever's indices) the app removed (`Dtdr.removeTools`): a retriever never
   * offers them and never names them in a reason. Set by the tool-set view, not by callers.
   */
  unavailable?: ReadonlySet<number>;
}

/** How far a dependency graph had to back off to find the history (DTDR-C, DR). */
export interface Backoff {
  /** `cluster`: the query's own cluster; `global`: all demonstrations pooled. */
  scope: 'cluster' | 'global';
  /** How many of the last calls matched (0 = none: the scope's overall next-tool frequencies). */
  historyUsed: number;
  /** How many of the last calls were looked for: min(l, calls so far). */
  historyWanted: number;
  /** Demonstration steps behind the distribution used. */
  support: number;
  /** Context length looked up, start-of-plan markers included (l when nothing backed off at cluster scope). */
  level?: number;
}

/**
 * Every tool and END ranked for one step: probabilities, their order, whether the step is confident and why not, and
 * the conformal set where the method computes one.
 */
export interface Ranking {
  /** Every tool the model can offer (removed tools are not among them) and END, aligned with `probabilities`. */
  labels: readonly string[];
  /**
   * A probability for each label; sums to 1 (or 0 for a retriever that abstains on END). It may be
   * a view into a buffer shared with other rankings (DTDR-G, up to 512 labels): copy it
   * (`Float64Array.from`) before transferring its buffer to a worker.
   */
  probabilities: Float64Array;
  /** Label indices, best first (computed on first read where the ranking offers `top`). */
  order: Uint32Array;
  /** The first k of `order`, cheaper than the whole order (candidate selection needs only a few). */
  top?(k: number): Uint32Array;
  /** Set by graph retrievers: where the distribution came from. */
  backoff?: Backoff;
  /** False when the retriever is unsure (backed off, little support, or a flat distribution). */
  confident: boolean;
  /** Why the retriever is unsure, in words fit for a log or a prompt note; absent when confident. */
  cause?: string;
  /**
   * Set by retrievers with group-conditional calibration (dtdr-g): the kind of step this is, decided
   * at rank time (e.g. `seen/many`, `new-history/none`, `tools-only`); each group has its own
   * held-out conformal scores. Evaluation reports its figures per group.
   */
  group?: string;
  /** Set by calibrated retrievers (dtdr-g): the conformal threshold for this step's candidate set. */
  set?: {
    /** Keep every label whose probability is at least this. */
    threshold: number;
    /** The share of steps whose set must hold an acceptable tool. */
    target: number;
    confident: boolean;
    /**
     * Labels that join the set whatever their probability (dtdr-g: tools a rule says the request asks for, then
     * never-demonstrated tools it matches).
     */
    include?: number[];
    /**
     * Labels ranked by their description alone (dtdr-g: tools no demonstration calls, added after training or not):
     * where a set would hold most of the labels, they join it only where `include` names them.
     */
    describedOnly?: readonly number[] | Uint32Array;
    /**
     * Held-out coverage of the k most probable labels, k = 1, 2, … (dtdr-g): where a set would hold half the labels
     * or more, selection cuts it and says what the cut set held (SelectOptions.smallAppCut).
     */
    coverageBySize?: readonly number[];
    /**
     * The descriptions' favourites, best first (dtdr-g, on unsure steps whose threshold keeps more than 8 labels, and
     * on `firstDay` steps): where the cap (`SelectOptions.widenMax`) cuts the set short, they fill it after the learned
     * ranking's first ones.
     */
    described?: readonly number[] | Uint32Array;
    /**
     * The step is a request's first (no calls yet) on a model that can call no step confident (dtdr-g's first day: no
     * confident group has its held-out steps yet, or the demonstrations call under half the tools). It carries
     * `described`, and selection fills its set with them (`SelectOptions.fillFirstSteps`): the set then offers what
     * the tools alone would for the request's later calls too.
     */
    firstDay?: true;
    /**
     * The held-out steps that set `threshold` do not speak for other requests (dtdr-g: the demonstrations call under
     * half the tools, a slice of the app): the set claims no coverage (`CandidateSet.target` absent).
     */
    noClaim?: true;
  };
}

/**
 * A trained retrieval method: ranks every tool and END for a step. `dtdr.retriever` is one; dtdr's
 * own methods (`MethodName`) implement it. `Dtdr.train` and `Dtdr.load` take only those methods: a
 * retriever of your own can rank (`rank`, then `selectCandidates`) but not be trained or saved by a `Dtdr`.
 */
export interface Retriever {
  readonly method: MethodName;
  /** Tool names then END. */
  readonly labels: readonly string[];
  readonly needs: EmbeddingNeeds;
  /** History length l the retriever looks at (0 when it ignores history). */
  readonly historyLength: number;
  /** Ranks every tool and END for one step. */
  rank(input: RankInput): Ranking;
  /** Learned state for the model artifact (plain JSON). */
  state(): unknown;
  /**
   * Folds new demonstrations in, in time proportional to them (no refit): graph counts, cluster
   * centroids, heads, calibration. Absent for methods that learn nothing from demonstrations.
   * Returns true where it left work for `learnMore`.
   */
  learn?(input: LearnInput): boolean | void;
  /**
   * Continues the work the last `learn` left (it returned true), one bounded part per call (DTDR-G: the head's
   * columns of new tools past the first four); returns whether any is left. `Dtdr` calls it between tasks until none
   * is, before its learn resolves; `state()` and the next `learn` finish what is left first. Absent where learn leaves
   * nothing.
   */
  learnMore?(): boolean;
}

/** New demonstrations for `Retriever.learn`, with the vectors the method's fitNeeds ask for. */
export interface LearnInput {
  plans: Plan[];
  /** encoder(plan.query) per plan. */
  queryVectors?: Float32Array[];
  /** encoder(contextText) per step, in the order of `trainingSteps(plans)`. */
  contextVectors?: Float32Array[];
}

/** Settings of online learning (heads continue training on the new demonstrations only). */
export const ONLINE_HEAD = { epochs: 6, learningRate: 0.01 } as const;

/** How far training has come: the phase, the fraction done and, while a head trains, its loss. */
export interface TrainingProgress {
  phase: string;
  /** 0..1 within the phase. */
  fraction: number;
  /** Training loss, for learned heads. */
  loss?: number;
}

/** A checked model file's parts, for a method's state reader (`fromState` in the method registry, methods.ts). */
export interface StateInput {
  tools: ToolSpec[];
  /** Tool names then END. */
  labels: string[];
  /** The encoder's dimension (0 for methods that embed nothing). */
  dim: number;
  /** The training history length l the file records (default 3). */
  historyLength: number;
  /** The method's saved state (`Retriever.state()`), a JSON object. */
  state: Record<string, unknown>;
}

export interface FitNeeds {
  queries: boolean;
  tools: boolean;
  contexts: boolean;
}

/** A peer's fitted search (see PeerName): ranks every tool and END, asynchronously (its package's API is). */
export interface PeerRetriever {
  readonly method: PeerName;
  /** Tool names then END. */
  readonly labels: readonly string[];
  readonly needs: EmbeddingNeeds;
  readonly historyLength: 0;
  rank(input: RankInput): Promise<Ranking>;
  /**
   * The package's own time for the last `rank`, in µs, when `rank` wraps more than the search (the
   * AI SDK's search runs inside a generateText round with a mock model; the SDK times the search).
   */
  lastSearchMicros?(): number;
}

/** How `dtdr eval` builds a peer: the edge passes these in (EvaluateOptions.peers). */
export interface Peer {
  readonly name: PeerName;
  /** Tool vectors are encoder(toolText(name, description)), as QTS and DTDR-G embed them. */
  readonly needs: { tools: boolean };
  fit(tools: ToolSpec[], toolVectors?: Float32Array[]): Promise<PeerRetriever>;
}

/**
 * The method registry: one entry per method (name, what its fit needs embedded, whether it trains
 * on tools alone, how it fits and loads, how it takes tool changes and learned runs), the options
 * every method's training shares, and the name checks. Training itself is train.ts.
 */
import { DtdrError } from '../base/errors.js';
import { planSteps } from '../plans/plan.js';
import { Bm25Retriever, QtsRetriever, RandomRetriever } from './baselines.js';
import { ColdStartRetriever, heldOutMrr } from './cold-start.js';
import { seededRandom, shuffleInPlace } from '../base/random.js';
import type { ClusterOptions } from './cluster.js';
import { ClusterRetriever } from './cluster.js';
import { DependencyRetriever } from './dependency.js';
import { GatedRetriever, type FoldWorkers, type GatedOptions, type GatedState } from './default/index.js';
import { gatedStateWithoutTool, withToolVectors } from './default/without-tool.js';
import { gatedStateWithTools } from './default/with-tools.js';
import { LearnedRetriever } from './learned.js';
import type { LinearHeadOptions } from './linear-head.js';
import type { FitNeeds, MethodName, PeerName, Retriever, StateInput, TrainingProgress } from './types.js';
import { END, type Plan, type PlanStep, type ToolSpec } from '../base/types.js';

/** Other packages' tool search that `dtdr eval` compares with (run at the edge; see PeerName). */
export const PEERS: readonly PeerName[] = ['aisdk-search', 'orama-bm25', 'orama-vector', 'orama-hybrid'];

export function isPeer(name: string): name is PeerName {
  return (PEERS as readonly string[]).includes(name);
}

/** What `Dtdr.train` and `dtdr train` use when no method is given: DTDR-G, the gated combination. */
export const DEFAULT_METHOD: MethodName = 'dtdr-g';

/** Options of training, shared by every method (`Dtdr.train`, `dtdr train`, `evaluateMethods`). */
export interface TrainOptions {
  /** l: how many of the last tools DTDR conditions on. Default 3 (the paper's best). */
  historyLength?: number;
  /** DTDR-C's K. Default round(demonstrations / 10). */
  clusters?: number;
  /** DTDR-C's and DTDR-CB's k-means (see ClusterOptions.kmeans). Default `auto`. */
  kmeans?: ClusterOptions['kmeans'];
  /** Seed for k-means, shuffling and the random baseline. Default 0. */
  seed?: number;
  /** Linear-head training settings (lr, dtdr-l, dtdr-h, dtdr-g). */
  head?: LinearHeadOptions;
  /** DTDR-G's settings: coverage target, folds, ablations (see GatedOptions). */
  gated?: Omit<GatedOptions, 'historyLength' | 'clusters' | 'seed' | 'head'>;
  /**
   * DTDR-G: run the cross-fitting rounds on these worker threads (`foldWorkers()` from `dtdr/node`)
   * from PARALLEL_FROM_PLANS demonstrations on. The model is the same bit for bit; the caller closes
   * the workers. Default: none (one thread). Used by trainRetriever, Dtdr.train and the CLI.
   */
  workers?: FoldWorkers;
  /** Called as training proceeds, with the phase and the share of it done (for progress bars). */
  onProgress?: (progress: TrainingProgress) => void;
}

export const TRAIN_DEFAULTS = { historyLength: 3, seed: 0 };

/** What a method's fit gets: the tools, the demonstrations, the vectors its `needs` ask for, the options. */
export interface MethodFit {
  tools: ToolSpec[];
  plans: Plan[];
  /** Tool names then END. */
  labels: string[];
  vectors: FitVectors;
  options: TrainOptions;
  historyLength: number;
  seed: number;
}

/**
 * One method: its name, which texts its fit needs embedded (an encoder is then recorded in its
 * model files and required to load them), whether it trains on tools alone, how it fits, how it
 * reads its saved state, and how it takes tools added after training (null: the facade mixes a
 * description ranking in, model/toolset.ts). The shape of transformers.js's SUPPORTED_TASKS.
 */
export interface MethodEntry {
  name: MethodName;
  needs: FitNeeds;
  toolsOnly: boolean;
  fit(input: MethodFit): Retriever;
  fromState(input: StateInput): Retriever;
  /** The saved state with tools added before END (`vectors`: their description vectors), or null. */
  withTools: ((state: unknown, oldToolCount: number, vectors: number[][]) => unknown) | null;
  /**
   * The saved state without tool `r` of `toolCount` (Dtdr.removeTools), where it can leave exactly
   * (nothing learned about it); undefined: the facade masks it instead.
   */
  withoutTool?: (state: unknown, toolCount: number, r: number) => unknown;
  /** The saved state with new description vectors for tools `indices` (a removed tool added back with a new spec). */
  withToolVectors?: (state: unknown, indices: number[], vectors: number[][]) => unknown;
  /**
   * How `learn` takes runs into a model of this method: a model trained on tools alone refits on
   * every run it has learned (`'refit-from-tools'`: the default method, whose calibration needs the
   * fit's held-out steps), or each run is folded into the state (`'fold'`: the retriever's `learn`;
   * a method that learns nothing keeps the runs for `forget` only). Default `'fold'`.
   */
  learning?: 'refit-from-tools' | 'fold';
  /** The same fit with work spread over worker threads (TrainOptions.workers), where the method has one. */
  fitParallel?: (input: MethodFit, workers: FoldWorkers) => Promise<Retriever>;
}

const NEEDS = (queries: boolean, tools: boolean, contexts: boolean): FitNeeds => ({ queries, tools, contexts });
const clusterOptions = (f: MethodFit): ClusterOptions => {
  const { clusters, kmeans } = f.options;
  return { historyLength: f.historyLength, clusters, seed: f.seed, kmeans };
};
const learned = (name: 'lr' | 'dtdr-l' | 'dtdr-h', needs: FitNeeds): MethodEntry => ({
  name,
  needs,
  toolsOnly: false,
  fit: (f) => {
    const vectors = { queries: f.vectors.queries, contexts: f.vectors.contexts };
    const settings = { historyLength: f.historyLength, head: f.options.head, seed: f.seed };
    return LearnedRetriever.fit(name, f.labels, f.plans, vectors, settings, f.options.onProgress);
  },
  fromState: (input) => LearnedRetriever.fromState(name, input),
  withTools: null,
});

/** The method registry: one entry per method, in the order `dtdr eval` lists them. */
export const METHOD_REGISTRY: MethodEntry[] = [
  {
    name: 'random',
    needs: NEEDS(false, false, false),
    toolsOnly: true,
    fit: (f) => new RandomRetriever(f.labels, f.seed),
    fromState: RandomRetriever.fromState.bind(RandomRetriever),
    withTools: null,
  },
  {
    name: 'bm25',
    needs: NEEDS(false, false, false),
    toolsOnly: true,
    fit: (f) => new Bm25Retriever(f.labels, f.tools),
    fromState: Bm25Retriever.fromState.bind(Bm25Retriever),
    withTools: null,
  },
  {
    name: 'qts',
    needs: NEEDS(false, true, false),
    toolsOnly: true,
    fit: (f) => new QtsRetriever(f.labels, f.vectors.tools!),
    fromState: QtsRetriever.fromState.bind(QtsRetriever),
    withTools: null,
  },
  {
    name: 'dr',
    needs: NEEDS(false, false, false),
    toolsOnly: false,
    fit: (f) => DependencyRetriever.fit(f.labels, f.plans),
    fromState: (input) => DependencyRetriever.fromState(input.labels, input.state as never),
    withTools: null,
  },
  learned('lr', NEEDS(true, false, false)),
  {
    name: 'dtdr-c',
    needs: NEEDS(true, false, false),
    toolsOnly: false,
    fit: (f) => ClusterRetriever.fit(f.labels, f.plans, f.vectors.queries!, clusterOptions(f), f.options.onProgress),
    fromState: ClusterRetriever.fromState.bind(ClusterRetriever),
    withTools: null,
  },
  learned('dtdr-l', NEEDS(false, false, true)),
  learned('dtdr-h', NEEDS(true, false, false)),
  {
    name: 'dtdr-cb',
    needs: NEEDS(true, false, false),
    toolsOnly: false,
    fit: (f) => fitColdStart(f.labels, f.tools, f.plans, f.vectors.queries!, clusterOptions(f), f.options.onProgress),
    fromState: ColdStartRetriever.fromState.bind(ColdStartRetriever),
    withTools: null,
  },
  {
    name: 'dtdr-g',
    needs: NEEDS(true, true, false),
    toolsOnly: true,
    fit: (f) => {
      const options = gatedOptionsOf(f.options, f.seed);
      return GatedRetriever.fit(f.tools, f.plans, f.vectors.queries!, f.vectors.tools!, options, f.options.onProgress);
    },
    fromState: (input) => GatedRetriever.fromState(input.tools, input.dim, input.state as unknown as GatedState),
    withTools: (state, oldToolCount, vectors) => gatedStateWithTools(state as GatedState, oldToolCount, vectors),
    withoutTool: (state, toolCount, r) => gatedStateWithoutTool(state as GatedState, toolCount, r),
    withToolVectors: (state, indices, vectors) => withToolVectors(state as GatedState, indices, vectors),
    learning: 'refit-from-tools',
    fitParallel: (f, workers) => {
      const options = gatedOptionsOf(f.options, f.seed);
      const { queries, tools } = f.vectors;
      return GatedRetriever.fitParallel(f.tools, f.plans, queries!, tools!, workers, options, f.options.onProgress);
    },
  },
];

/** Every method's name, in registry order. */
export const METHODS: readonly MethodName[] = METHOD_REGISTRY.map((m) => m.name);

/** The registry entry of a method (undefined for an unknown name). */
export function methodEntry(name: string): MethodEntry | undefined {
  return METHOD_REGISTRY.find((m) => m.name === name);
}

export function isMethod(name: string): name is MethodName {
  return methodEntry(name) !== undefined;
}

export function assertMethod(name: string): MethodName {
  if (isMethod(name)) return name;
  throw new DtdrError('options', `unknown method "${name}"`, { field: 'method', hint: `one of: ${methodNames()}` });
}

function methodNames(): string {
  return METHOD_REGISTRY.map((m) => m.name).join(', ');
}

/** Which texts a method needs embedded to fit. */
export function fitNeeds(method: MethodName): FitNeeds {
  return assertEntry(method).needs;
}

/** Whether a method embeds anything (its model files record the encoder, and loading checks it). */
export function usesEncoder(method: string): boolean {
  const needs = methodEntry(method)?.needs;
  return needs !== undefined && (needs.queries || needs.tools || needs.contexts);
}

export function assertEntry(name: string): MethodEntry {
  return methodEntry(assertMethod(name))!;
}

export function labelsOf(tools: readonly ToolSpec[]): string[] {
  return [...tools.map((t) => t.name), END];
}

/** Precomputed vectors a fit may use; `trainRetriever` fills in what is missing. */
export interface FitVectors {
  queries?: Float32Array[];
  tools?: Float32Array[];
  contexts?: Float32Array[];
}

function gatedOptionsOf(options: TrainOptions, seed: number): GatedOptions {
  return {
    ...options.gated,
    seed,
    ...(options.historyLength !== undefined ? { historyLength: options.historyLength } : {}),
    ...(options.clusters !== undefined ? { clusters: options.clusters } : {}),
    ...(options.head ? { head: options.head } : {}),
  };
}

/**
 * DTDR-CB: κ ∈ {0.5, 2, 8, 32} picked on a held-out fifth of the demonstrations (at most 2,000 of its steps), then
 * refit on all.
 */
function fitColdStart(
  labels: string[],
  tools: ToolSpec[],
  plans: Plan[],
  queries: Float32Array[],
  options: ClusterOptions,
  onProgress?: (p: TrainingProgress) => void,
): ColdStartRetriever {
  const bm25 = new Bm25Retriever(labels, tools);
  const kappas = [0.5, 2, 8, 32];
  let kappa = 2;
  if (plans.length >= 20) {
    const order = shuffleInPlace(
      plans.map((_, i) => i),
      seededRandom((options.seed ?? 0) + 31),
    );
    const cut = Math.floor(plans.length * 0.8);
    const fitIdx = order.slice(0, cut);
    const heldIdx = order.slice(cut);
    const cluster = ClusterRetriever.fit(
      labels,
      fitIdx.map((i) => plans[i]),
      fitIdx.map((i) => queries[i]),
      { ...options, clusters: options.clusters && Math.max(1, Math.round(options.clusters * 0.8)) },
    );
    // κ is one of four values: 2,000 held-out steps pick it as well as 50,000 (at 100,000 demonstrations) would.
    const steps: (PlanStep & { queryVector: Float32Array })[] = [];
    for (const i of heldIdx) {
      if (steps.length >= 2000) break;
      for (const s of planSteps(plans[i])) steps.push({ ...s, queryVector: queries[i] });
    }
    steps.length = Math.min(steps.length, 2000);
    let best = -1;
    for (const k of kappas) {
      const mrr = heldOutMrr(new ColdStartRetriever(cluster, bm25, k), steps);
      if (mrr > best) [best, kappa] = [mrr, k];
    }
  }
  return new ColdStartRetriever(ClusterRetriever.fit(labels, plans, queries, options, onProgress), bm25, kappa);
}

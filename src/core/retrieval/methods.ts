/**
 * The method registry: one entry per method (name, what its fit needs embedded, whether it trains
 * on tools alone, how it fits and loads, how it takes tool changes and learned runs), the options
 * every method's training shares, and the name checks. Training itself is train.ts.
 */
import { DtdrError } from '../base/errors.js';
import { GatedRetriever, type FoldWorkers, type GatedOptions, type GatedState } from './default/index.js';
import { gatedStateWithoutTool, gatedStateWithTools, withToolVectors } from './default/with-tools.js';
import type { ClusterOptions } from './cluster.js';
import type { LinearHeadOptions } from './linear-head.js';
import type { FitNeeds, MethodName, PeerName, Retriever, StateInput, TrainingProgress } from './types.js';
import { END, type Plan, type ToolSpec } from '../base/types.js';

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
  /**
   * Its fit and `learn` need code loaded on demand first (load-training.ts): DTDR-G keeps its
   * training apart from ranking so that an app that only retrieves never downloads it. Default false.
   */
  trainingApart?: boolean;
}

/** A method's FitNeeds, in the order queries, tools, contexts. */
export const NEEDS = (queries: boolean, tools: boolean, contexts: boolean): FitNeeds => ({ queries, tools, contexts });
/** The default method's entry: always registered (the paper's methods join with `dtdr/methods`). */
const GATED_ENTRY: MethodEntry = {
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
  trainingApart: true,
  fitParallel: (f, workers) => {
    const options = gatedOptionsOf(f.options, f.seed);
    const { queries, tools } = f.vectors;
    return GatedRetriever.fitParallel(f.tools, f.plans, queries!, tools!, workers, options, f.options.onProgress);
  },
};

/**
 * Every method dtdr knows, in the order `dtdr eval` lists them. Only the registered ones train and
 * load: DTDR-G always; the paper's methods and baselines once `dtdr/methods` is imported (the Node
 * entry, the CLI and `evaluateMethods` register them), so a browser app that ships DTDR-G carries none of them.
 */
export const METHODS: readonly MethodName[] = [
  'random',
  'bm25',
  'qts',
  'dr',
  'lr',
  'dtdr-c',
  'dtdr-l',
  'dtdr-h',
  'dtdr-cb',
  'dtdr-g',
];

const REGISTRY = new Map<MethodName, MethodEntry>([[GATED_ENTRY.name, GATED_ENTRY]]);

/** Adds (or replaces) a method's entry; `dtdr/methods` registers the paper's methods with it. */
export function registerMethod(entry: MethodEntry): void {
  REGISTRY.set(entry.name, entry);
}

/** Removes a method's entry (tests of what an app without it sees). The default method stays. */
export function unregisterMethod(name: MethodName): void {
  if (name !== DEFAULT_METHOD) REGISTRY.delete(name);
}

/** The registered entries, in METHODS order (then any other registered name). */
export function registeredMethods(): MethodEntry[] {
  const order = (m: MethodEntry) => (METHODS.includes(m.name) ? METHODS.indexOf(m.name) : METHODS.length);
  return [...REGISTRY.values()].sort((a, b) => order(a) - order(b));
}

/** The registry entry of a method (undefined for an unknown or unregistered name). */
export function methodEntry(name: string): MethodEntry | undefined {
  return REGISTRY.get(name as MethodName);
}

/** Whether `name` is a method dtdr knows (registered or not). */
export function isMethod(name: string): name is MethodName {
  return (METHODS as readonly string[]).includes(name) || REGISTRY.has(name as MethodName);
}

export function assertMethod(name: string): MethodName {
  if (isMethod(name)) return name;
  throw new DtdrError('options', `unknown method "${name}"`, { field: 'method', hint: `one of: ${methodNames()}` });
}

function methodNames(): string {
  return [...new Set([...METHODS, ...REGISTRY.keys()])].join(', ');
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

/** The entry of a known method, or a DtdrError saying how to register it. */
export function assertEntry(name: string): MethodEntry {
  const method = assertMethod(name);
  const entry = REGISTRY.get(method);
  if (entry) return entry;
  throw new DtdrError('options', `"${method}" is not registered in this app`, {
    field: 'method',
    hint:
      "import 'dtdr/methods' once before training or loading it: it registers the paper's methods and " +
      `baselines (${DEFAULT_METHOD}, the default, needs nothing)`,
  });
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

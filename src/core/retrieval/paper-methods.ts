/**
 * The paper's methods and baselines as registry entries (random, BM25, QTS, DR, LR, DTDR-C, DTDR-L,
 * DTDR-H, DTDR-CB). Not in the runtime registry until `registerPaperMethods()` runs — `dtdr/methods`
 * calls it — so an app bundle that ships only the default method leaves this code out.
 */
import { planSteps } from '../plans/plan.js';
import { Bm25Retriever, QtsRetriever, RandomRetriever } from './baselines.js';
import { ColdStartRetriever, heldOutMrr } from './cold-start.js';
import { seededRandom, shuffleInPlace } from '../base/random.js';
import type { ClusterOptions } from './cluster.js';
import { ClusterRetriever } from './cluster.js';
import { DependencyRetriever } from './dependency.js';
import { LearnedRetriever } from './learned.js';
import { NEEDS, registerMethod, type MethodEntry, type MethodFit } from './methods.js';
import type { FitNeeds, TrainingProgress } from './types.js';
import type { PlanStep, Plan, ToolSpec } from '../base/types.js';

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

/** The paper's methods and baselines, in the order `dtdr eval` lists them. */
export const PAPER_METHODS: readonly MethodEntry[] = [
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
];

/** Registers the paper's methods and baselines (idempotent): they then train, load and evaluate like the default. */
export function registerPaperMethods(): void {
  for (const entry of PAPER_METHODS) registerMethod(entry);
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

/**
 * DTDR-C, the paper's per-cluster dependency graphs: k-means over the demonstrations' request
 * vectors, one weighted graph per cluster, backing off to shorter histories and then to all
 * clusters pooled. The graphs and their counting are dependency.ts's and graph.ts's.
 */
import { DtdrError } from '../base/errors.js';
import { int, num, numbers, optNum, vectors } from '../base/validate.js';
import { MAX_PLAN_STEPS } from '../base/limits.js';
import type { Plan } from '../base/types.js';
import { backoffDistribution, DependencyGraph, type GraphLevel } from './graph.js';
import { euclideanKMeans, twoLevelKMeans } from './kmeans.js';
import { dotAt, packRows } from './kernels/rows.js';
import { packMatrix, type PackedMatrix } from './kernels/matvec.js';
import { makeRanking, requireVector } from './ranking.js';
import type { EmbeddingNeeds, LearnInput, RankInput, Ranking, Retriever, TrainingProgress } from './types.js';
import type { StateInput } from './types.js';
import { backoffCause, countPlans, historyIndices, labelIndices, startCount } from './dependency.js';

/** Above this many point-cluster pairs (n·K), DTDR-C clusters with the two-level k-means. */
export const LARGE_KMEANS = 2e6;

export interface ClusterOptions {
  /** K; default round(demonstrations / 10), as in the paper. */
  clusters?: number;
  /** l: how many of the last tools the graphs condition on. Default 3. */
  historyLength?: number;
  seed?: number;
  /** k-means iterations at most. Default 30 (assignments barely move after that). */
  maxIterations?: number;
  /** Steps a cluster context needs behind it to count as confident. Default 2. */
  minSupport?: number;
  /**
   * `lloyd`: plain k-means (Lloyd's, exact), `two-level`: ≈√K coarse clusters split in proportion to
   * their size, far faster at thousands of demonstrations. Default `auto`: two-level above 2·10⁶
   * demonstration-cluster pairs (about 4,500 demonstrations at K = n/10; UltraTool's 3,027 stay on lloyd), else lloyd.
   */
  kmeans?: 'auto' | 'lloyd' | 'two-level';
}

/**
 * DTDR-C: k-means over demonstration-query embeddings; one weighted dependency graph per cluster
 * gives next-tool probabilities for the last ≤ l tools. A history the query's cluster never saw
 * backs off to shorter histories, then to all clusters pooled, and says so in `backoff`.
 */
export class ClusterRetriever implements Retriever {
  readonly method = 'dtdr-c' as const;
  readonly needs: EmbeddingNeeds = { query: true, context: false };
  private readonly index: Map<string, number>;

  constructor(
    readonly labels: readonly string[],
    readonly historyLength: number,
    readonly centroids: Float64Array[],
    readonly graphs: DependencyGraph[],
    readonly global: DependencyGraph,
    readonly minSupport = 2,
    /** Demonstrations behind each centroid (for running-mean updates when learning online). */
    readonly sizes: number[] = graphs.map((g) => startCount(g)),
    /** Trained with K = demonstrations / this (the default rule): learning grows K likewise. Null for a fixed K. */
    readonly plansPerCluster: number | null = null,
  ) {
    this.index = labelIndices(labels);
  }

  /** DTDR-C from a checked model file's state (DTDR-CB's cluster part too). */
  static fromState({ labels, dim, state: s }: StateInput): ClusterRetriever {
    const fail = (field: string, message: string): never => {
      throw new DtdrError('artifact', message, { field });
    };
    const centroids = s.centroids as number[][];
    const graphs = s.graphs as never[];
    if (!Array.isArray(centroids) || centroids.some((c) => c?.length !== dim)) {
      fail('state.centroids', 'centroids must match the encoder dimension');
    }
    vectors('state.centroids', centroids, undefined, dim);
    const oneEach = Array.isArray(graphs) && graphs.length === centroids.length;
    if (!oneEach) fail('state.graphs', 'one graph per cluster expected');
    const hl = int('state.historyLength', s.historyLength, 0, MAX_PLAN_STEPS);
    const L = labels.length;
    const graphOf = (g: never, i: number) =>
      DependencyGraph.fromState(hl, g, { labels: L, field: `state.graphs[${i}]` });
    const clusterGraphs = graphs.map(graphOf);
    const global = DependencyGraph.fromState(hl, s.global as never, { labels: L, field: 'state.global' });
    optNum('state.minSupport', s.minSupport, { min: 0 });
    const sized = Array.isArray(s.sizes) && s.sizes.length === centroids.length;
    if (sized) numbers('state.sizes', s.sizes, undefined, { min: 0 });
    if (typeof s.plansPerCluster === 'number') num('state.plansPerCluster', s.plansPerCluster);
    const sizes = sized ? (s.sizes as number[]).map(Number) : clusterGraphs.map(startCount);
    const perCluster = typeof s.plansPerCluster === 'number' && s.plansPerCluster > 0 ? s.plansPerCluster : null;
    const rows = centroids.map((c) => Float64Array.from(c));
    return new ClusterRetriever(labels, hl, rows, clusterGraphs, global, Number(s.minSupport ?? 2), sizes, perCluster);
  }

  /**
   * Each new plan joins its nearest cluster: counted into that cluster's graph and the pooled one,
   * and the centroid moves to the running mean of its demonstrations' queries.
   */
  learn(input: LearnInput): void {
    const queries = input.plans.map((_, i) => requireVector(input.queryVectors?.[i], 'dtdr-c', 'queryVectors'));
    // K grows with the demonstrations as at training (K = demonstrations / plansPerCluster): the
    // batch's queries farthest from every centroid seed the new clusters (farthest-first), which a
    // few Lloyd steps over the batch then move to the means of the queries they attract.
    if (this.plansPerCluster) {
      const total = this.sizes.reduce((a, b) => a + b, 0) + queries.length;
      const grow = Math.min(queries.length, Math.round(total / this.plansPerCluster) - this.centroids.length);
      const nearest = queries.map((q) => this.distance(q, this.cluster(q)));
      const first = this.centroids.length;
      for (let g = 0; g < grow; g++) {
        let far = 0;
        for (let i = 1; i < queries.length; i++) if (nearest[i] > nearest[far]) far = i;
        if (nearest[far] <= 0) break;
        this.centroids.push(Float64Array.from(queries[far]));
        this.graphs.push(new DependencyGraph(this.historyLength));
        this.sizes.push(0);
        const k = this.centroids.length - 1;
        queries.forEach((q, i) => (nearest[i] = Math.min(nearest[i], this.distance(q, k))));
      }
      for (let iteration = 0; iteration < 3 && this.centroids.length > first; iteration++) {
        const sums = new Map<number, { v: Float64Array; n: number }>();
        for (const q of queries) {
          const k = this.cluster(q);
          if (k < first) continue;
          let s = sums.get(k);
          if (!s) sums.set(k, (s = { v: new Float64Array(q.length), n: 0 }));
          for (let j = 0; j < q.length; j++) s.v[j] += q[j];
          s.n++;
        }
        for (const [k, s] of sums) for (let j = 0; j < s.v.length; j++) this.centroids[k][j] = s.v[j] / s.n;
        this.packed = undefined;
      }
    }
    input.plans.forEach((plan, i) => {
      const q = queries[i];
      const k = this.cluster(q);
      const n = ++this.sizes[k];
      const c = this.centroids[k];
      for (let j = 0; j < c.length; j++) c[j] += (q[j] - c[j]) / n;
      this.packed = undefined;
      countPlans(this.graphs[k], [plan], this.index);
      countPlans(this.global, [plan], this.index);
    });
  }

  static fit(
    labels: readonly string[],
    plans: Plan[],
    queryVectors: Float32Array[],
    options: ClusterOptions = {},
    onProgress?: (p: TrainingProgress) => void,
  ): ClusterRetriever {
    const l = options.historyLength ?? 3;
    const k = Math.max(1, Math.min(plans.length, options.clusters ?? Math.round(plans.length / 10)));
    if (!Number.isInteger(k) || !Number.isInteger(l) || l < 1) {
      throw new DtdrError(
        'options',
        `clusters and historyLength must be positive integers (got ${options.clusters}, ${options.historyLength})`,
      );
    }
    let result: { clusters: ArrayLike<number>; centroids: ArrayLike<number>[] };
    const kmeans = options.kmeans ?? 'auto';
    if (kmeans !== 'auto' && kmeans !== 'lloyd' && kmeans !== 'two-level')
      throw new DtdrError('options', `kmeans must be auto, lloyd or two-level, got "${String(kmeans)}"`, {
        field: 'kmeans',
      });
    const dim = queryVectors[0]?.length ?? 0;
    if (kmeans === 'two-level' || (kmeans === 'auto' && plans.length * k > LARGE_KMEANS)) {
      // Tens of thousands of demonstrations: two-level k-means (O(n·√K·d) per pass, not O(n·K·d)).
      const km = twoLevelKMeans(packRows(queryVectors, dim), plans.length, dim, k, {
        seed: options.seed,
        onProgress: (fraction) => onProgress?.({ phase: 'k-means', fraction }),
      });
      result = {
        clusters: km.assignment,
        centroids: Array.from({ length: km.k }, (_, c) => km.centroids.subarray(c * dim, (c + 1) * dim)),
      };
    } else {
      const maxIterations = options.maxIterations ?? 30;
      const km = euclideanKMeans(packRows(queryVectors, dim), plans.length, dim, k, {
        seed: options.seed,
        maxIterations,
        onIteration: (iteration) => onProgress?.({ phase: 'k-means', fraction: iteration / maxIterations }),
      });
      result = {
        clusters: km.assignment,
        centroids: Array.from({ length: km.k }, (_, c) => km.centroids.subarray(c * dim, (c + 1) * dim)),
      };
    }
    const clusters = result.centroids.length;
    const index = labelIndices(labels);
    const graphs = Array.from({ length: clusters }, () => new DependencyGraph(l));
    plans.forEach((plan, i) => countPlans(graphs[result.clusters[i]], [plan], index));
    const global = new DependencyGraph(l);
    countPlans(global, plans, index);
    onProgress?.({ phase: 'k-means', fraction: 1 });
    const sizes = new Array<number>(clusters).fill(0);
    for (let i = 0; i < plans.length; i++) sizes[result.clusters[i]]++;
    return new ClusterRetriever(
      labels,
      l,
      result.centroids.map((c) => Float64Array.from(c)),
      graphs,
      global,
      options.minSupport ?? 2,
      sizes,
      options.clusters === undefined ? 10 : null,
    );
  }

  /** Squared distance from a query to centroid k. */
  private distance(q: Float32Array, k: number): number {
    const c = this.centroids[k];
    let d = 0;
    for (let j = 0; j < c.length; j++) d += (c[j] - q[j]) ** 2;
    return d;
  }

  /** Centroids packed row by row with their squared norms, rebuilt when learning moves them. */
  private packed?: { matrix: PackedMatrix; norms: Float64Array; dots: Float64Array; count: number };

  /**
   * Index of the centroid nearest to the query embedding: argmin |c − q|² = argmax (2 q·c − |c|²),
   * one unrolled dot product per centroid over a packed matrix.
   */
  cluster(queryVector: Float32Array): number {
    let packed = this.packed;
    if (!packed || packed.count !== this.centroids.length) {
      const d = queryVector.length;
      const rows = new Float32Array(this.centroids.length * d);
      const norms = new Float64Array(this.centroids.length);
      this.centroids.forEach((c, k) => {
        rows.set(c, k * d);
        const row = rows.subarray(k * d, (k + 1) * d);
        norms[k] = dotAt(row, 0, row, 0, d);
      });
      packed = this.packed = {
        matrix: packMatrix(rows, this.centroids.length, d),
        norms,
        dots: new Float64Array(this.centroids.length),
        count: this.centroids.length,
      };
    }
    packed.matrix.times(queryVector, packed.dots);
    let best = 0;
    let bestScore = -Infinity;
    for (let k = 0; k < packed.count; k++) {
      const score = 2 * packed.dots[k] - packed.norms[k];
      if (score > bestScore) [best, bestScore] = [k, score];
    }
    return best;
  }

  rank(input: RankInput): Ranking {
    const q = requireVector(input.queryVector, 'dtdr-c', 'queryVector');
    const graph = this.graphs[this.cluster(q)];
    const l = this.historyLength;
    const levels: GraphLevel[] = [];
    for (let j = l; j >= 1; j--) levels.push({ graph, scope: 'cluster', level: j });
    for (let j = l; j >= 0; j--) levels.push({ graph: this.global, scope: 'global', level: j });
    const history = historyIndices(input.history, this.index);
    const { probabilities, backoff, matchedLevel } = backoffDistribution(levels, history, this.labels.length, l);
    const backedOff = backoff.scope !== 'cluster' || matchedLevel < l;
    const cause = backedOff
      ? backoffCause(backoff)
      : backoff.support < this.minSupport
        ? `only ${backoff.support} demonstration steps support this context (fewer than ${this.minSupport})`
        : undefined;
    return makeRanking(this.labels, probabilities, { backoff, confident: !cause, ...(cause ? { cause } : {}) });
  }

  state() {
    return {
      historyLength: this.historyLength,
      minSupport: this.minSupport,
      centroids: this.centroids.map((c) => Array.from(c, (x) => Math.fround(x))),
      graphs: this.graphs.map((g) => g.state()),
      global: this.global.state(),
      sizes: [...this.sizes],
      plansPerCluster: this.plansPerCluster,
    };
  }
}

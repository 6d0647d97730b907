import { DtdrError } from '../base/errors.js';
import { hashString, seededRandom, shuffleInPlace } from '../base/random.js';
import { terms, toolText } from '../base/text.js';
import type { ToolSpec } from '../base/types.js';
import { packMatrix, type PackedMatrix } from './kernels/matvec.js';
import { makeRanking, requireVector, softmaxInPlace } from './ranking.js';
import { optNum, vectors } from '../base/validate.js';
import type { EmbeddingNeeds, RankInput, Ranking, Retriever, StateInput } from './types.js';

/** A seeded random permutation per (query, history): the floor every method must beat. */
export class RandomRetriever implements Retriever {
  readonly method = 'random' as const;
  readonly needs: EmbeddingNeeds = { query: false, context: false };
  readonly historyLength = 0;
  constructor(
    readonly labels: readonly string[],
    readonly seed: number,
  ) {}

  static fromState({ labels, state: s }: StateInput): RandomRetriever {
    optNum('state.seed', s.seed, { min: -(2 ** 53), max: 2 ** 53 });
    return new RandomRetriever(labels, Number(s.seed ?? 0));
  }

  rank(input: RankInput): Ranking {
    const random = seededRandom(this.seed ^ hashString(`${input.query}\u0000${input.history.join('\u0001')}`));
    const order = new Uint32Array(this.labels.length);
    for (let i = 0; i < order.length; i++) order[i] = i;
    shuffleInPlace(order, random);
    return {
      labels: this.labels,
      probabilities: new Float64Array(this.labels.length).fill(1 / this.labels.length),
      order,
      confident: false,
    };
  }

  state() {
    return { seed: this.seed };
  }
}

/** Okapi BM25 of the query against each tool's name and description. END has no text: score 0. */
export class Bm25Retriever implements Retriever {
  readonly method = 'bm25' as const;
  readonly needs: EmbeddingNeeds = { query: false, context: false };
  readonly historyLength = 0;
  /**
   * Inverted index, one typed-array run per term: the tools holding it, its frequency there, and
   * BM25's length-normalised denominator, precomputed (a step touches only its terms' postings).
   */
  private readonly postings = new Map<
    string,
    { docs: Uint32Array; tf: Float64Array; denominator: Float64Array; idf: number }
  >();
  private readonly lengths: Float64Array;
  private readonly averageLength: number;

  static fromState({ tools, labels, state: s }: StateInput): Bm25Retriever {
    optNum('state.k1', s.k1, { min: 0 });
    optNum('state.b', s.b, { min: 0, max: 1 });
    return new Bm25Retriever(labels, tools, Number(s.k1 ?? 1.2), Number(s.b ?? 0.75));
  }

  constructor(
    readonly labels: readonly string[],
    tools: ToolSpec[],
    readonly k1 = 1.2,
    readonly b = 0.75,
  ) {
    this.lengths = new Float64Array(tools.length);
    const lists = new Map<string, [number, number][]>(); // term → [tool, term frequency]
    tools.forEach((tool, i) => {
      const tokens = terms(toolText(tool.name, tool.description));
      this.lengths[i] = tokens.length;
      const counts = new Map<string, number>();
      for (const t of tokens) counts.set(t, (counts.get(t) ?? 0) + 1);
      for (const [t, tf] of counts) {
        let list = lists.get(t);
        if (!list) lists.set(t, (list = []));
        list.push([i, tf]);
      }
    });
    this.averageLength = this.lengths.reduce((a, x) => a + x, 0) / Math.max(1, tools.length) || 1;
    const n = tools.length;
    for (const [term, list] of lists) {
      this.postings.set(term, {
        docs: Uint32Array.from(list, ([doc]) => doc),
        tf: Float64Array.from(list, ([, tf]) => tf),
        denominator: Float64Array.from(
          list,
          ([doc, tf]) => tf + this.k1 * (1 - this.b + (this.b * this.lengths[doc]) / this.averageLength),
        ),
        idf: Math.log(1 + (n - list.length + 0.5) / (list.length + 0.5)),
      });
    }
  }

  rank(input: RankInput): Ranking {
    const n = this.lengths.length;
    const scores = new Float64Array(this.labels.length);
    const k1 = this.k1 + 1;
    for (const term of new Set(terms(input.query))) {
      const posting = this.postings.get(term);
      if (!posting) continue;
      const { docs, tf, denominator, idf } = posting;
      for (let p = 0; p < docs.length; p++) scores[docs[p]] += (idf * tf[p] * k1) / denominator[p];
    }
    let sum = 0;
    for (let i = 0; i < scores.length; i++) sum += scores[i];
    if (sum === 0) {
      const uniform = new Float64Array(this.labels.length).fill(1 / n);
      uniform[this.labels.length - 1] = 0;
      return makeRanking(this.labels, uniform, { confident: false });
    }
    for (let i = 0; i < scores.length; i++) scores[i] /= sum;
    return makeRanking(this.labels, scores);
  }

  state() {
    return { k1: this.k1, b: this.b };
  }
}

/** Query–tool similarity: cosine between the query and each tool's description embedding. */
export class QtsRetriever implements Retriever {
  readonly method = 'qts' as const;
  readonly needs: EmbeddingNeeds = { query: true, context: false };
  readonly historyLength = 0;
  constructor(
    readonly labels: readonly string[],
    readonly toolVectors: Float32Array[],
    readonly temperature = 0.05,
  ) {}

  static fromState({ tools, labels, dim, state: s }: StateInput): QtsRetriever {
    const rows = s.toolVectors as number[][];
    if (!Array.isArray(rows) || rows.length !== tools.length || rows.some((v) => v?.length !== dim)) {
      const field = 'state.toolVectors';
      throw new DtdrError('artifact', 'one vector per tool of the encoder dimension expected', { field });
    }
    vectors('state.toolVectors', rows, tools.length, dim);
    optNum('state.temperature', s.temperature, { min: 1e-6, max: 1e6 });
    return new QtsRetriever(
      labels,
      rows.map((v) => Float32Array.from(v)),
      Number(s.temperature ?? 0.05),
    );
  }

  /** The tool vectors in the float32 matrix kernel (built on first use). */
  private packed?: PackedMatrix;

  rank(input: RankInput): Ranking {
    const q = requireVector(input.queryVector, 'qts', 'queryVector');
    const logits = new Float64Array(this.labels.length).fill(-Infinity);
    const T = this.toolVectors.length;
    if (T > 0) {
      const d = this.toolVectors[0].length;
      this.packed ??= packMatrix(Float32Array.from(this.toolVectors.flatMap((v) => Array.from(v))), T, d);
      this.packed.times(q, logits); // END (the last label) keeps -Infinity: QTS never proposes it
    }
    return makeRanking(this.labels, softmaxInPlace(logits, this.temperature));
  }

  state() {
    return { temperature: this.temperature, toolVectors: this.toolVectors.map((v) => Array.from(v)) };
  }
}

/**
 * One step's scratch: the signal matrix (in the WebAssembly kernel's memory), context, Gram–Schmidt
 * buffers and label sets, reused from step to step so that ranking allocates almost nothing.
 */
import { gateKernel, type GateKernel, type PackedMatrix } from '../kernels/matvec.js';
import type { KeptScores, LexicalQuery } from '../lexical.js';
import { G, S } from './layout.js';

export interface StepInput {
  terms: LexicalQuery;
  queryVector: Float32Array;
  history: number[];
}

/** Called tools projected out of the query, at most (longer histories keep their first 16 distinct calls). */
export const MAX_BASIS = 16;
/** The gate kernel's input vectors: the gate's scores, the head's logits and the descriptions' scores. */
export const SCORES = 0;
export const LOGITS = 1;
export const DESCRIBED = 2;
export const noTerms = (): LexicalQuery => ({ postings: [] });

/** Scratch buffers for one step; reused so ranking allocates little. */
export class Workspace {
  readonly x: Float32Array;
  readonly context = new Float64Array(G);
  /** Gram–Schmidt scratch: orthonormal directions, their coefficients over the called tools, and γ. */
  readonly basis: Float64Array;
  /** The called tools' similarity rows and coefficients the history-aware embedding takes off (reused per step). */
  readonly residualRows: Float32Array[] = [];
  readonly residualGammas: number[] = [];
  readonly coef = new Float64Array(MAX_BASIS * MAX_BASIS);
  readonly gamma = new Float64Array(MAX_BASIS);
  /** Per-step scratch of the evidence signals and the gate. */
  readonly top: number[] = [];
  readonly weights: Float64Array;
  readonly touched: LabelSet;
  /** Graph keys of this step's history, by history length. */
  readonly keys: string[] = [];
  /** Labels where called, schema or END may be non-zero this step: those rows are zero elsewhere, from step to step. */
  readonly sparse: LabelSet;
  /**
   * Rows a plan's later steps would write again with the same values (computeSignals): the
   * lexical query whose plain scores the lexical row holds (the unserved row is zero off its
   * tools), and whether the bag row holds the current soft assignment's bag signal.
   */
  lexicalRows: KeptScores | undefined;
  bagRow = false;
  readonly signalWeights = new Float64Array(S);
  /** Some demonstration has the last (up to 3) calls in a row, from the plan's start when shorter. */
  known = false;
  /** The WebAssembly passes over every label (exponentials, the gate's sum, clip, division). */
  readonly kernel: GateKernel;
  readonly scores: Float64Array;
  readonly acc: Float64Array;
  readonly logits: Float64Array;
  readonly dots: Float64Array;
  /** The request whose soft cluster assignment `top` and `weights` hold, and for which centroids. */
  readonly assigned: { query: Float64Array; centroids?: PackedMatrix; m: number; weightSum: number };
  constructor(
    private readonly labels: number,
    dim: number,
    clusters: number,
  ) {
    this.assigned = { query: new Float64Array(dim).fill(NaN), m: 0, weightSum: 0 };
    // Signals, scores and head logits live in the kernel's memory: its passes read them in place.
    this.kernel = gateKernel(labels, S, 3);
    this.x = this.kernel.x;
    this.scores = this.kernel.inputs[SCORES];
    this.acc = new Float64Array(labels);
    this.touched = new LabelSet(labels);
    this.sparse = new LabelSet(labels);
    this.logits = this.kernel.inputs[LOGITS];
    this.dots = new Float64Array(Math.max(1, clusters));
    this.basis = new Float64Array(MAX_BASIS * dim);
    this.weights = new Float64Array(Math.max(1, clusters)); // soft-assignment weights: at most one per cluster
  }

  /** Signal row `s` of the matrix: one value per label. */
  row(s: number): Float32Array {
    return this.x.subarray(s * this.labels, (s + 1) * this.labels);
  }

  private block = new ArrayBuffer(0);
  private blockUsed = 0;

  /**
   * A copy of `source[0 .. n)` that the caller may keep (a ranking's probabilities). Small copies
   * (up to 512 labels) are views into a shared 16 KB block, one allocation for several steps
   * instead of one each: a typed array's own buffer costs more to allocate (and collect) than a
   * ranking of a few hundred labels takes to copy. A kept view keeps its block alive (at most
   * 16 KB); larger copies get their own buffer. Views never overlap.
   */
  keepCopy(source: Float64Array, n: number): Float64Array {
    const bytes = n * Float64Array.BYTES_PER_ELEMENT;
    if (bytes > BLOCK_BYTES / 4) return source.slice(0, n);
    if (this.blockUsed + bytes > this.block.byteLength) {
      this.block = new ArrayBuffer(BLOCK_BYTES);
      this.blockUsed = 0;
    }
    const out = new Float64Array(this.block, this.blockUsed, n);
    this.blockUsed += bytes;
    out.set(source.subarray(0, n));
    return out;
  }
}

const BLOCK_BYTES = 16 * 1024;

/** A set of label indices with O(1) add and reset and no allocation per step. */
export class LabelSet {
  readonly list: Uint32Array;
  private readonly mark: Uint8Array;
  size = 0;
  constructor(labels: number) {
    this.list = new Uint32Array(labels);
    this.mark = new Uint8Array(labels);
  }
  add(label: number): void {
    if (this.mark[label]) return;
    this.mark[label] = 1;
    this.list[this.size++] = label;
  }
  reset(): void {
    for (let i = 0; i < this.size; i++) this.mark[this.list[i]] = 0;
    this.size = 0;
  }
  /** Zeroes `values` at the members, then empties the set. */
  clearValues(values: Float64Array): void {
    for (let i = 0; i < this.size; i++) values[this.list[i]] = 0;
    this.reset();
  }
}

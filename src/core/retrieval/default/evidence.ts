/**
 * What demonstrations teach DTDR-G: per-cluster and pooled dependency graphs, each cluster's tool
 * bag, and the linear head over [request, last l calls, calls so far] with its replay buffer for
 * online learning — as ranking reads them. Fitting them (once per cross-fitting fold and once on all
 * the demonstrations) is evidence-fit.ts, training code.
 */
import { DependencyGraph } from '../graph.js';
import type { PackedMatrix } from '../kernels/matvec.js';
import type { LinearHead, LinearHeadData } from '../linear-head.js';
import type { ReplayBuffer } from '../replay-buffer.js';

/** What demonstrations teach; fitted once per cross-fitting fold and once on all of them. */
export interface Evidence {
  historyLength: number;
  k: number;
  centroids: Float32Array;
  graphs: DependencyGraph[];
  global: DependencyGraph;
  /** Per cluster: label → share of the cluster's plans that use it. */
  bags: Map<number, number>[];
  head?: LinearHead;
  /** Label → one-hot slot for tools seen in training histories. */
  vocabulary: Map<number, number>;
  /** Demonstrations per cluster (running means when learning online). */
  sizes: number[];
  /** The centroids for the float32 kernel (built on first use; dropped when learning moves them). */
  packedCentroids?: PackedMatrix;
  /** The head's training examples, rehearsed when learning online. */
  replay: ReplayBuffer;
  /** Columns of new tools the last learn call left for `learnMore` (head-columns.ts); not saved. */
  pendingColumns?: PendingColumns;
  /**
   * Demonstrated steps per label and the rarely demonstrated tools (built on first use; dropped when learning or adding
   * tools).
   */
  rarity?: Rarity;
}

/**
 * The head's columns a learn call left for `learnMore` (head-columns.ts), the fewest demonstrated first, with that
 * call's examples.
 */
export interface PendingColumns {
  labels: number[];
  examples: LinearHeadData;
  seed: number;
}

/** Tools with fewer demonstrated steps than this keep part of their voice (see `rarity`). */
export const FEW_DEMONSTRATIONS = 5;

export interface Rarity {
  /** Demonstrated steps per label (the pooled graph's unigram row; steps with several acceptable tools share one). */
  counts: Float64Array;
  /** Tools with fewer than FEW_DEMONSTRATIONS steps… */
  labels: Uint32Array;
  /** Tools no demonstration called (count < 0.5, e.g. added after training). */
  unseen: Uint32Array;
}

/**
 * Demonstrated steps per label, from the pooled graph's unigram row, and the rarely or never
 * demonstrated tools. A tool added after training has floor values in every evidence signal: the
 * graphs and head say "never", when the truth is "never seen"; its description speaks for it
 * through the mix with the descriptions' ranking (shrinkage.ts) and the added-tools rule. (Lifting
 * its evidence toward its description peer's, as before, added no hit in `npm run check --
 * added-tools` and let an added flashlight tool take up to 0.6 of requests that never asked for it:
 * the living-model tests.) The counts also decide a step's calibration group.
 */
export function rarity(ev: Evidence, labels: number): Rarity {
  if (ev.rarity && ev.rarity.counts.length === labels) return ev.rarity;
  const counts = new Float64Array(labels);
  const row = ev.global.lookupKey(DependencyGraph.key([], 0));
  if (row) for (let k = 0; k < row.labels.length; k++) counts[row.labels[k]] += row.weights[k];
  const rare: number[] = [];
  for (let f = 0; f < labels - 1; f++) if (counts[f] < FEW_DEMONSTRATIONS) rare.push(f);
  ev.rarity = { counts, labels: Uint32Array.from(rare), unseen: Uint32Array.from(rare.filter((f) => counts[f] < 0.5)) };
  return ev.rarity;
}

export function headSlots(history: readonly number[], l: number, vocabulary: Map<number, number>): Uint32Array {
  const width = vocabulary.size + 2;
  const called = new Set<number>();
  for (const h of history) called.add(vocabulary.get(h) ?? vocabulary.size);
  const slots = new Uint32Array(l + called.size);
  for (let k = 0; k < l; k++) {
    const h = history[history.length - l + k];
    slots[k] = k * width + (h === undefined ? vocabulary.size : (vocabulary.get(h) ?? vocabulary.size + 1));
  }
  let k = l;
  for (const id of called) slots[k++] = l * width + id;
  return slots;
}

export function headSparseSize(l: number, vocabulary: Map<number, number>): number {
  return l * (vocabulary.size + 2) + vocabulary.size + 1;
}

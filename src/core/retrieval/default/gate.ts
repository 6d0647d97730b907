import { seededRandom, shuffleInPlace } from '../../base/random.js';
import { countBelow } from '../../plans/plan.js';

/**
 * The learned gate of DTDR-G: a conditional logit over the candidate labels of a step whose
 * per-signal weights depend on the step's context,
 *
 *   score(f) = Σ_s a_s · x_s(f),   a = Θ · g(step),
 *
 * where x_s(f) are the signals (lexical, embedding, dependency graphs, head, …) for label f and
 * g(step) describes how much each signal can be trusted here (history matched, support, …). It is
 * fitted on held-out folds by maximising log Σ_{f ∈ F*} p(f): the probability that the ranking's
 * mass lands on some acceptable tool.
 */
export interface GateData {
  signals: number;
  contexts: number;
  /** Per step: context features, `contexts` each. */
  context: Float32Array;
  /** Candidate rows: `signals` values each, steps' rows contiguous. */
  values: Float32Array;
  /** 1 where the candidate is acceptable. */
  accept: Uint8Array;
  /** Step i's candidates are rows offsets[i] .. offsets[i+1]-1. */
  offsets: Uint32Array;
}

export class GateDataBuilder {
  private readonly context: number[] = [];
  private values = new Float32Array(1 << 16);
  private accept = new Uint8Array(1 << 12);
  private rows = 0;
  private readonly offsets: number[] = [0];
  constructor(
    readonly signals: number,
    readonly contexts: number,
  ) {}

  /** Adds one step: its context and, for each candidate label, the signal column and acceptability. */
  add(
    context: ArrayLike<number>,
    candidates: readonly number[],
    signal: (s: number, label: number) => number,
    acceptable: (label: number) => boolean,
  ): void {
    for (let g = 0; g < this.contexts; g++) this.context.push(context[g]);
    const S = this.signals;
    this.reserve(candidates.length);
    for (const label of candidates) {
      for (let s = 0; s < S; s++) this.values[this.rows * S + s] = signal(s, label);
      this.accept[this.rows] = acceptable(label) ? 1 : 0;
      this.rows++;
    }
    this.offsets.push(this.rows);
  }

  get steps(): number {
    return this.offsets.length - 1;
  }

  /** Its steps as arrays a worker can send back (cross-fit.ts). */
  parts(): GateParts {
    return {
      context: Float64Array.from(this.context),
      values: this.values.slice(0, this.rows * this.signals),
      accept: this.accept.slice(0, this.rows),
      offsets: Uint32Array.from(this.offsets),
    };
  }

  /** Room for `rows` more candidate rows (the buffers double until they fit). */
  private reserve(rows: number): void {
    const need = this.rows + rows;
    while (need * this.signals > this.values.length)
      this.values = grown(this.values, new Float32Array(this.values.length * 2));
    while (need > this.accept.length) this.accept = grown(this.accept, new Uint8Array(this.accept.length * 2));
  }

  /** Adds another builder's steps (its `parts()`), after this one's: the same as adding them here. */
  append(parts: GateParts): void {
    const rows = parts.offsets[parts.offsets.length - 1];
    for (const c of parts.context) this.context.push(c);
    this.reserve(rows);
    this.values.set(parts.values, this.rows * this.signals);
    this.accept.set(parts.accept, this.rows);
    for (let i = 1; i < parts.offsets.length; i++) this.offsets.push(this.rows + parts.offsets[i]);
    this.rows += rows;
  }

  /** The data of the listed steps (all when omitted). */
  build(steps?: readonly number[]): GateData {
    const S = this.signals;
    const G = this.contexts;
    const pick = steps ?? Array.from({ length: this.steps }, (_, i) => i);
    const total = pick.reduce((a, i) => a + this.offsets[i + 1] - this.offsets[i], 0);
    const context = new Float32Array(pick.length * G);
    const values = new Float32Array(total * S);
    const accept = new Uint8Array(total);
    const offsets = new Uint32Array(pick.length + 1);
    let row = 0;
    pick.forEach((i, k) => {
      for (let g = 0; g < G; g++) context[k * G + g] = this.context[i * G + g];
      const from = this.offsets[i];
      const to = this.offsets[i + 1];
      values.set(this.values.subarray(from * S, to * S), row * S);
      accept.set(this.accept.subarray(from, to), row);
      row += to - from;
      offsets[k + 1] = row;
    });
    return { signals: S, contexts: G, context, values, accept, offsets };
  }
}

/** `into` with `from` copied to its start. */
function grown<A extends Float32Array | Uint8Array>(from: A, into: A): A {
  into.set(from);
  return into;
}

/** A GateDataBuilder's steps as plain arrays: contexts (float64, as added), rows, acceptability, step offsets. */
export interface GateParts {
  context: Float64Array;
  values: Float32Array;
  accept: Uint8Array;
  offsets: Uint32Array;
}

/** a = Θ · g for step i. */
export function signalWeights(theta: Float64Array, data: GateData, step: number, out: Float64Array): Float64Array {
  const { signals: S, contexts: G, context } = data;
  for (let s = 0; s < S; s++) {
    let a = 0;
    for (let g = 0; g < G; g++) a += theta[s * G + g] * context[step * G + g];
    out[s] = a;
  }
  return out;
}

/**
 * Softmax over a step's candidates at temperature T; returns the probabilities (length = candidates),
 * in `into` (a view of its first candidates) when given: the trainers reuse one buffer per fit.
 */
export function stepProbabilities(
  theta: Float64Array,
  data: GateData,
  step: number,
  temperature = 1,
  a = new Float64Array(data.signals),
  into?: Float64Array,
): Float64Array {
  signalWeights(theta, data, step, a);
  const S = data.signals;
  const from = data.offsets[step];
  const to = data.offsets[step + 1];
  const p = into ? into.subarray(0, to - from) : new Float64Array(to - from);
  for (let r = from; r < to; r++) {
    let z = 0;
    for (let s = 0; s < S; s++) z += a[s] * data.values[r * S + s];
    p[r - from] = z / temperature;
  }
  return softmax(p, p.length);
}

/** The softmax of p[0 .. n), in place. */
function softmax(p: Float64Array, n: number): Float64Array {
  let max = -Infinity;
  for (let k = 0; k < n; k++) if (p[k] > max) max = p[k];
  let sum = 0;
  for (let k = 0; k < n; k++) sum += p[k] = Math.exp(p[k] - max);
  for (let k = 0; k < n; k++) p[k] /= sum;
  return p;
}

/** The most candidates any step of `data` has (the size of a reusable probabilities buffer). */
export function widestStep(data: GateData): number {
  let widest = 0;
  for (let i = 0; i + 1 < data.offsets.length; i++) widest = Math.max(widest, data.offsets[i + 1] - data.offsets[i]);
  return widest;
}

export interface GateTrainOptions {
  epochs?: number;
  learningRate?: number;
  batchSize?: number;
  l2?: number;
  seed?: number;
  /** Per weight, the strength of a pull back to `initial` (a Gaussian prior's precision per step); none by default. */
  pull?: Float64Array;
}

/** Fits Θ (signals × contexts) with Adam from `initial`; returns Θ and the final mean loss. */
export function trainGate(
  data: GateData,
  initial: Float64Array,
  options: GateTrainOptions = {},
): { theta: Float64Array; loss: number } {
  const epochs = options.epochs ?? 30;
  const lr0 = options.learningRate ?? 0.05;
  const batchSize = options.batchSize ?? 64;
  const l2 = options.l2 ?? 1e-4;
  const { signals: S, contexts: G } = data;
  const n = data.offsets.length - 1;
  const theta = Float64Array.from(initial);
  if (n === 0) return { theta, loss: NaN };
  const m = new Float64Array(theta.length);
  const v = new Float64Array(theta.length);
  const grad = new Float64Array(theta.length);
  const a = new Float64Array(S);
  const ga = new Float64Array(S);
  const buffer = new Float64Array(widestStep(data));
  const random = seededRandom((options.seed ?? 0) + 53);
  const order = Array.from({ length: n }, (_, i) => i);
  let step = 0;
  let loss = 0;
  for (let epoch = 0; epoch < epochs; epoch++) {
    shuffleInPlace(order, random);
    loss = 0;
    for (let start = 0; start < n; start += batchSize) {
      grad.fill(0);
      const end = Math.min(n, start + batchSize);
      for (let b = start; b < end; b++) {
        const i = order[b];
        const p = stepProbabilities(theta, data, i, 1, a, buffer);
        const from = data.offsets[i];
        let accepted = 0;
        for (let k = 0; k < p.length; k++) if (data.accept[from + k]) accepted += p[k];
        if (accepted <= 0) continue; // no acceptable candidate in the pool: nothing to learn here
        loss -= Math.log(accepted + 1e-12);
        ga.fill(0);
        for (let k = 0; k < p.length; k++) {
          const dz = p[k] - (data.accept[from + k] ? p[k] / accepted : 0);
          if (dz === 0) continue;
          const row = (from + k) * S;
          for (let s = 0; s < S; s++) ga[s] += dz * data.values[row + s];
        }
        for (let s = 0; s < S; s++) for (let g = 0; g < G; g++) grad[s * G + g] += ga[s] * data.context[i * G + g];
      }
      step++;
      const scale = 1 / (end - start);
      const lr = (lr0 * Math.sqrt(1 - 0.999 ** step)) / (1 - 0.9 ** step);
      for (let k = 0; k < theta.length; k++) {
        const g = grad[k] * scale + l2 * theta[k] + (options.pull ? options.pull[k] * (theta[k] - initial[k]) : 0);
        m[k] = 0.9 * m[k] + 0.1 * g;
        v[k] = 0.999 * v[k] + 0.001 * g * g;
        theta[k] -= (lr * m[k]) / (Math.sqrt(v[k]) + 1e-8);
      }
    }
    loss /= n;
  }
  return { theta, loss };
}

/** Mean −log P(acceptable) of the steps at temperature T. */
export function gateLoss(theta: Float64Array, data: GateData, temperature = 1): number {
  return stepLogits(theta, data).loss(temperature);
}

/**
 * Every candidate's logit at temperature 1 (Θ fixed), computed once, and the held-out loss at any
 * temperature from them: the same sums in the same order as stepProbabilities, so the same loss
 * bit for bit, without recomputing a step's signal weights at each of the search's 32 temperatures.
 */
function stepLogits(theta: Float64Array, data: GateData) {
  const S = data.signals;
  const n = data.offsets.length - 1;
  const z = new Float64Array(data.offsets[n]);
  const a = new Float64Array(S);
  for (let i = 0; i < n; i++) {
    signalWeights(theta, data, i, a);
    for (let r = data.offsets[i]; r < data.offsets[i + 1]; r++) {
      let v = 0;
      for (let s = 0; s < S; s++) v += a[s] * data.values[r * S + s];
      z[r] = v;
    }
  }
  const p = new Float64Array(widestStep(data));
  const loss = (temperature: number) => {
    let total = 0;
    let counted = 0;
    for (let i = 0; i < n; i++) {
      const from = data.offsets[i];
      const m = data.offsets[i + 1] - from;
      for (let k = 0; k < m; k++) p[k] = z[from + k] / temperature;
      softmax(p, m);
      let accepted = 0;
      for (let k = 0; k < m; k++) if (data.accept[from + k]) accepted += p[k];
      if (accepted <= 0) continue;
      total -= Math.log(accepted + 1e-12);
      counted++;
    }
    return counted ? total / counted : 0;
  };
  return { loss };
}

/** Temperature scaling: the T in [0.25, 4] minimising the held-out loss (golden-section on log T). */
export function fitTemperature(theta: Float64Array, data: GateData): number {
  const { loss } = stepLogits(theta, data);
  let lo = Math.log(0.25);
  let hi = Math.log(4);
  const phi = (Math.sqrt(5) - 1) / 2;
  let x1 = hi - phi * (hi - lo);
  let x2 = lo + phi * (hi - lo);
  let f1 = loss(Math.exp(x1));
  let f2 = loss(Math.exp(x2));
  for (let it = 0; it < 30; it++) {
    if (f1 < f2) {
      hi = x2;
      x2 = x1;
      f2 = f1;
      x1 = hi - phi * (hi - lo);
      f1 = loss(Math.exp(x1));
    } else {
      lo = x1;
      x1 = x2;
      f1 = f2;
      x2 = lo + phi * (hi - lo);
      f2 = loss(Math.exp(x2));
    }
  }
  return Math.exp((lo + hi) / 2);
}

export { expectedCalibrationError } from '../../base/metrics.js';

/**
 * Isotonic regression (pool-adjacent-violators) of outcomes on scores: a monotone map from a
 * raw top-1 probability to the observed accuracy. Returns breakpoints for `applyIsotonic`.
 */
export function fitIsotonic(scores: readonly number[], outcomes: readonly number[]): { x: number[]; y: number[] } {
  const idx = scores.map((_, i) => i).sort((i, j) => scores[i] - scores[j]);
  const blocks: { sum: number; n: number; x: number }[] = [];
  for (const i of idx) {
    blocks.push({ sum: outcomes[i], n: 1, x: scores[i] });
    while (
      blocks.length > 1 &&
      blocks[blocks.length - 2].sum / blocks[blocks.length - 2].n >=
        blocks[blocks.length - 1].sum / blocks[blocks.length - 1].n
    ) {
      const last = blocks.pop()!;
      const prev = blocks[blocks.length - 1];
      prev.sum += last.sum;
      prev.n += last.n;
      prev.x = last.x;
    }
  }
  return { x: blocks.map((b) => b.x), y: blocks.map((b) => b.sum / b.n) };
}

export function applyIsotonic(map: { x: number[]; y: number[] }, score: number): number {
  if (map.x.length === 0) return score;
  const last = map.x.length - 1;
  return score >= map.x[last] ? map.y[last] : map.y[countBelow(map.x, score)];
}

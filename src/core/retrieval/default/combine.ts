/**
 * The gate at rank time: each signal's weight is Θ·context, and a label's score is the weighted sum
 * of its signals. priorGate is the hand-set starting point (and the whole gate of a tools-only model).
 */
import { CALLED, CG, C_CALLS, C_SERVED, EMBU, ENDS, G, GG, HEAD, LEXU, S } from './layout.js';
import { SCORES, type Workspace } from './workspace.js';

/**
 * Combined scores z(f) = Σ_s a_s x_s(f) with a = Θ·context, written into w.scores; returns max z.
 * Called, schema and END are zero off `w.sparse`, and adding a zero changes no sum: one pass
 * adds the eight signals that can be non-zero anywhere, in signal order, and the labels in
 * `w.sparse` are summed over every signal — the same sums, bit for bit, as one pass per signal.
 */
export function combine(theta: Float64Array, w: Workspace, labels: number): number {
  const a = w.signalWeights;
  for (let s = 0; s < S; s++) {
    let v = 0;
    for (let g = 0; g < G; g++) v += theta[s * G + g] * w.context[g];
    a[s] = v;
  }
  const z = w.scores;
  const x = w.x;
  // Signals 0–7 (LEX … HEAD) are the dense ones, in signal order.
  w.kernel.combine(a, SCORES);
  const { list, size } = w.sparse;
  for (let i = 0; i < size; i++) {
    const f = list[i];
    let v = 0;
    for (let s = 0; s < S; s++) if (a[s] !== 0) v += a[s] * x[s * labels + f];
    z[f] = v;
  }
  return w.kernel.max(SCORES, labels);
}

/**
 * The gate's starting point, and the whole gate of a model trained on tools alone: descriptions
 * rank the tools, repeat calls are unlikely, and END grows with the calls made and the share of
 * the request they served. Fixed by hand (there is nothing to learn it from), not tuned on any
 * evaluation set.
 */
export function priorGate(): Float64Array {
  const theta = new Float64Array(S * G);
  const set = (s: number, g: number, v: number) => (theta[s * G + g] = v);
  set(LEXU, 0, 3);
  set(EMBU, 0, 8);
  set(CG, 0, 0.5);
  set(GG, 0, 0.5);
  set(HEAD, 0, 0.5);
  set(CALLED, 0, -2);
  set(ENDS, 0, -4);
  set(ENDS, C_CALLS, 2);
  set(ENDS, C_SERVED, 6);
  return theta;
}

/**
 * The gate at rank time: each signal's weight is Θ·context, and a label's score is the weighted sum
 * of its signals. priorGate is the hand-set starting point (and the whole gate of a tools-only model).
 */
import { CALLED, CG, C_CALLS, C_SERVED, EMB, EMBU, ENDS, G, GG, HEAD, LEXU, S } from './layout.js';
import { SCORES, type Workspace } from './workspace.js';

/**
 * Combined scores z(f) = Σ_s a_s x_s(f) with a = Θ·context, written into the kernel's input
 * `which` (w.scores unless told); returns max z.
 * Called, schema and END are zero off `w.sparse`, and adding a zero changes no sum: one pass
 * adds the eight signals that can be non-zero anywhere, in signal order, and the labels in
 * `w.sparse` are summed over every signal — the same sums, bit for bit, as one pass per signal.
 */
export function combine(theta: Float64Array, w: Workspace, labels: number, which = SCORES): number {
  const a = w.signalWeights;
  for (let s = 0; s < S; s++) {
    let v = 0;
    for (let g = 0; g < G; g++) v += theta[s * G + g] * w.context[g];
    a[s] = v;
  }
  const z = w.kernel.inputs[which];
  const x = w.x;
  // Signals 0–7 (LEX … HEAD) are the dense ones, in signal order.
  w.kernel.combine(a, which);
  const { list, size } = w.sparse;
  for (let i = 0; i < size; i++) {
    const f = list[i];
    let v = 0;
    for (let s = 0; s < S; s++) if (a[s] !== 0) v += a[s] * x[s * labels + f];
    z[f] = v;
  }
  return w.kernel.max(which, labels);
}

/**
 * The starting point of the gate that demonstrations train (fit.ts): descriptions rank the tools,
 * repeat calls are unlikely, and END grows with the calls made and the share of the request they
 * served. Fixed by hand, not tuned on any evaluation set. A model trained on tools alone uses
 * toolsOnlyGate instead.
 */
export function priorGate(): Float64Array {
  return gateWeights([
    [LEXU, 0, 3],
    [EMBU, 0, 8],
    [CG, 0, 0.5],
    [GG, 0, 0.5],
    [HEAD, 0, 0.5],
    [CALLED, 0, -2],
    [ENDS, 0, -4],
    [ENDS, C_CALLS, 2],
    [ENDS, C_SERVED, 6],
  ]);
}

/**
 * The pull of the gate's fit back to priorGate, per weight: a prior worth `priorSteps` held-out
 * steps on the `pulled` signals' weights (ExperimentalGatedSettings), whatever the steps' number.
 */
export function priorPull(steps: number, priorSteps: number, pulled: readonly number[]): Float64Array {
  const pull = new Float64Array(S * G);
  for (const s of pulled) pull.fill(priorSteps / Math.max(1, steps), s * G, (s + 1) * G);
  return pull;
}

/**
 * The whole gate of a model trained on tools alone (nothing to learn it from). It ranks by the
 * history-aware BM25 (request terms the called tools matched count less), the plain embedding of
 * the request, a penalty on repeat calls, and END growing with the calls made and the share of the
 * request they served. Unlike priorGate it leaves out embedding-unserved: that signal renormalises
 * what is left of the request once the called tools' directions are projected out, and with a
 * word-vector encoder those directions carry the request's own topic, so after a call or two the
 * leftover is noise scaled up to full weight ("Email the invoice to Anna" after files_search and
 * contacts_search ranked restaurant_book first). What the calls served is discounted term by term
 * in BM25 instead, which only touches the terms they matched, and a called tool loses up to the
 * plain embedding's whole weight (−8: the most a perfect match adds), as the projection took its
 * own direction out before. The END bias (−2 here, −4 in priorGate) was chosen on the training
 * plans of UltraTool, RestBench and Seal-Tools run tools-only (their test plans untouched), from
 * −4 and −2 with END's served weight 6 or 8. Test-plan figures: `npm run experiment -- tools-only`.
 */
export function toolsOnlyGate(): Float64Array {
  return gateWeights([
    [LEXU, 0, 3],
    [EMB, 0, 8],
    // Zero until the model learns online from its first plans (learning.ts), as in priorGate.
    [CG, 0, 0.5],
    [GG, 0, 0.5],
    [HEAD, 0, 0.5],
    [CALLED, 0, -8],
    [ENDS, 0, -2],
    [ENDS, C_CALLS, 2],
    [ENDS, C_SERVED, 6],
  ]);
}

/** Θ with the given (signal, context, weight) entries and zeros elsewhere. */
function gateWeights(entries: readonly (readonly [signal: number, context: number, weight: number])[]): Float64Array {
  const theta = new Float64Array(S * G);
  for (const [s, g, v] of entries) theta[s * G + g] = v;
  return theta;
}

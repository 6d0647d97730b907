/**
 * Evidence decides the weight: the learned ranking counts only as far as the demonstrations
 * support it. Each label's probability is a mix of the learned model's and the tools-only
 * model's (descriptions alone), weighed per label by how demonstrated it is and per request by
 * how close the request lies to the demonstrations (novelty.ts):
 *
 *   λ_f = trust · min(1, demonstrated steps of f)          (END: trust)
 *   p(f) = (1 − λ_f) p_T(f) + M · λ_f p_L(f) / Σ_g λ_g p_L(g),   M = Σ_g λ_g p_T(g)
 *
 * So a tool no demonstration used keeps its description's probability, what the demonstrations
 * taught only shares out the mass the descriptions give the tools they demonstrated, and a request
 * outside the demonstrations is ranked by its descriptions. With every label demonstrated and a
 * familiar request (trust 1) it is the learned ranking unchanged.
 */
import { toolsOnlyGate } from './combine.js';
import { G, HEAD, CG, GG, BAG } from './layout.js';

/** The tools-only gate with the evidence signals off: the descriptions' ranking of a step. */
export const DESCRIPTIONS_GATE: Float64Array = (() => {
  const theta = toolsOnlyGate();
  for (const s of [CG, GG, BAG, HEAD]) for (let g = 0; g < G; g++) theta[s * G + g] = 0;
  return theta;
})();

/**
 * How far each label falls short of one demonstrated step: max(0, 1 − count), so λ_f = 1 − deficit · unseen.
 * Made once per set of counts (`into`: a buffer of at least `n` to reuse): read per label at rank
 * time, it spares a branch per tool that a random mix of demonstrated and undemonstrated tools
 * mispredicts (at 16,000 tools, most of the pass).
 */
export function deficits(counts: ArrayLike<number>, n = counts.length, into?: Float64Array): Float64Array {
  const d = into ?? new Float64Array(n);
  for (let f = 0; f < n; f++) d[f] = Math.max(0, 1 - counts[f]);
  return d;
}

/**
 * Mixes the learned probabilities `p` (in place) with the descriptions' `pT`. END (label `end`;
 * −1: none) is about the calls, not the descriptions: it keeps its learned probability. The tools
 * share the rest: a tool with demonstrations (deficit 0: see `deficits`) gets the learned model's
 * share of the mass the descriptions give the demonstrated tools, and a tool with none (deficit 1)
 * keeps `unseen` of its description's share (partly demonstrated tools in between). `unavailable`
 * tools (removed) get 0, each ranking renormalised over the others before they mix.
 */
export function shrinkInPlace(
  p: { [i: number]: number; length: number },
  pT: ArrayLike<number>,
  deficit: ArrayLike<number>,
  n: number,
  end: number,
  unseen: number,
  unavailable?: ReadonlySet<number>,
): void {
  const endL = end >= 0 ? p[end] : 0;
  const endT = end >= 0 ? pT[end] : 0;
  // Within the tools: q_L = p / (1 − endL), q_T = pT / (1 − endT), each over the tools that are
  // available (removed tools leave both rankings before they mix: the learned ranking's mass on a
  // removed tool goes to the tools it ranks next, not to the undemonstrated tools the descriptions
  // carry).
  let [availL, availT] = [1 - endL, 1 - endT];
  if (unavailable) for (const f of unavailable) if (f !== end) [availL, availT] = [availL - p[f], availT - pT[f]];
  // END keeps its learned share of what remains available.
  const keptL = availL + endL;
  if (!(keptL > 0) || !(availT > 0)) return;
  if (end >= 0) p[end] = endL / keptL;
  const toolsL = availL / keptL;
  const off = (f: number) => f === end || (unavailable !== undefined && unavailable.has(f));
  if (!(toolsL > 0)) {
    for (let f = 0; f < n; f++) if (f !== end && off(f)) p[f] = 0;
    return;
  }
  // λ_f = 1 − deficit_f · unseen. The usual step (no removed tools) runs the two ranges around
  // END with no per-label test: at 16,000 tools this pass is a sizeable share of a step.
  const stop = end >= 0 && end < n ? end : n;
  let mass = 0;
  let learned = 0;
  if (unavailable) {
    for (let f = 0; f < n; f++) {
      if (off(f)) continue;
      const l = 1 - deficit[f] * unseen;
      mass += l * pT[f];
      learned += l * p[f];
    }
  } else {
    for (let f = 0; f < stop; f++) {
      const l = 1 - deficit[f] * unseen;
      mass += l * pT[f];
      learned += l * p[f];
    }
    for (let f = stop + 1; f < n; f++) {
      const l = 1 - deficit[f] * unseen;
      mass += l * pT[f];
      learned += l * p[f];
    }
  }
  mass /= availT;
  const fromT = toolsL / availT;
  if (!(learned > 0)) {
    for (let f = 0; f < n; f++) if (f !== end) p[f] = off(f) ? 0 : pT[f] * fromT;
    return;
  }
  learned /= availL;
  const scale = (mass / learned) * (toolsL / availL);
  if (unavailable) {
    for (let f = 0; f < n; f++) {
      if (off(f)) continue;
      const l = 1 - deficit[f] * unseen;
      p[f] = (1 - l) * pT[f] * fromT + scale * l * p[f];
    }
    for (const f of unavailable) if (f !== end && f < n) p[f] = 0;
    return;
  }
  for (let f = 0; f < stop; f++) {
    const l = 1 - deficit[f] * unseen;
    p[f] = (1 - l) * pT[f] * fromT + scale * l * p[f];
  }
  for (let f = stop + 1; f < n; f++) {
    const l = 1 - deficit[f] * unseen;
    p[f] = (1 - l) * pT[f] * fromT + scale * l * p[f];
  }
}

/**
 * The share of its description's probability a never-demonstrated tool keeps: the Good–Turing
 * chance of such a step (unseenShare) for a request like the demonstrations', rising to all of it
 * as the request's novelty p-value falls below `novelBelow` (exchangeability, which Good–Turing
 * assumes, is what a novel request breaks).
 */
export function unseenKeep(goodTuring: number, pValue: number, novelBelow: number): number {
  const trust = Math.min(1, pValue / novelBelow);
  return 1 - (1 - goodTuring) * trust;
}

/**
 * Good–Turing: the chance that the next step needs a tool no demonstration used is about the share
 * of demonstrated tool steps whose tool was used exactly once (END aside). 1 with no steps. At least
 * prior / (steps + prior): Good–Turing assumes the demonstrations are drawn like the steps to come,
 * and an app's first runs, from the few features its users tried first, repeat a few tools.
 */
export function unseenShare(counts: ArrayLike<number>, n: number, end: number, prior = 0): number {
  let once = 0;
  let steps = 0;
  for (let f = 0; f < n; f++) {
    if (f === end) continue;
    steps += counts[f];
    if (counts[f] >= 0.5 && counts[f] < 1.5) once++;
  }
  return steps > 0 ? Math.min(1, Math.max(once / steps, prior / (steps + prior))) : 1;
}

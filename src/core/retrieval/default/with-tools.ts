/**
 * Tools added to a fitted DTDR-G (Dtdr.addTools): its saved state gains each tool's description
 * vector, lexical entry and an empty column in every learned table (graph rows, cluster bags, the
 * head with the lowest bias of any tool; each step rule widens its own), so the gate's description
 * signals rank it at once, with the same learned weights as before.
 */
import type { LinearHeadState } from '../linear-head.js';
import type { SavedState } from './rule.js';
import type { GatedState } from './state.js';
import { STEP_RULES } from './step-rules.js';

/**
 * DTDR-G's state with `added` tools inserted before END: every label index ≥ the old END moves by
 * `added.length`; the new columns start empty (no demonstration yet).
 */
export function gatedStateWithTools(state: GatedState, oldToolCount: number, addedVectors: number[][]): GatedState {
  const added = addedVectors.length;
  const T = oldToolCount;
  const move = (label: number) => (label >= T ? label + added : label);
  const remapRows = (rows: [string, [number, number][]][]) =>
    rows.map(
      ([key, row]) => [key, row.map(([l, w]) => [move(l), w] as [number, number])] as [string, [number, number][]],
    );
  const e = state.evidence;
  const out: GatedState = {
    ...state,
    toolVectors: [...state.toolVectors, ...addedVectors],
    addedTools: [...(state.addedTools ?? []), ...Array.from({ length: added }, (_, k) => T + k)],
    evidence: e && {
      ...e,
      graphs: e.graphs.map(remapRows),
      global: remapRows(e.global),
      bags: e.bags.map((bag) => bag.map(([l, share]) => [move(l), share] as [number, number])),
      vocabulary: e.vocabulary.map(move),
      head: e.head && extendHeadState(e.head, T, added),
      ...(e.replay ? { replay: { ...e.replay, targets: e.replay.targets.map((t) => t.map(move)) } } : {}),
    },
  };
  // Each step rule widens its own saved tables (a rule's `withTools`).
  for (const rule of STEP_RULES) rule.withTools?.(out as unknown as SavedState, T, added);
  return out;
}

/** Inserts `added` empty classes before the END class (the last); their bias is the lowest of the tools'. */
function extendHeadState(head: LinearHeadState, T: number, added: number): LinearHeadState {
  const C = head.classes;
  const C2 = C + added;
  const widen = (rows: number, from: number[], fill: (row: number) => number): number[] => {
    const out = new Array<number>(rows * C2);
    for (let r = 0; r < rows; r++) {
      for (let c = 0; c < T; c++) out[r * C2 + c] = from[r * C + c];
      for (let k = 0; k < added; k++) out[r * C2 + T + k] = fill(r);
      for (let c = T; c < C; c++) out[r * C2 + c + added] = from[r * C + c];
    }
    return out;
  };
  const biasRow = head.dim;
  let lowest = Infinity;
  for (let c = 0; c < T; c++) lowest = Math.min(lowest, head.weights[biasRow * C + c]);
  return {
    ...head,
    classes: C2,
    weights: widen(head.dim + 1, head.weights, (row) => (row === biasRow ? (Number.isFinite(lowest) ? lowest : 0) : 0)),
    // CSR one-hot rows hold only demonstrated labels: none is new, END's column moves.
    ...(head.support
      ? { support: { start: head.support.start, cols: head.support.cols.map((c) => (c >= T ? c + added : c)) } }
      : { sparseWeights: widen(head.sparseSize, head.sparseWeights, () => 0) }),
  };
}

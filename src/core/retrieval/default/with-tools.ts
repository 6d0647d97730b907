/**
 * Tools added to a fitted DTDR-G (Dtdr.addTools): its saved state gains each tool's description
 * vector, lexical entry and an empty column in every learned table (graph rows, cluster bags, the
 * head with the lowest bias of any tool; each step rule widens its own), so the gate's description
 * signals rank it at once, with the same learned weights as before. And the inverse, a tool leaving
 * (Dtdr.removeTools) where it was added after training and no demonstration taught anything about
 * it, and new description vectors for tools added back with new specs. Through the method registry.
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
  const e = state.evidence;
  const out: GatedState = {
    ...state,
    toolVectors: [...state.toolVectors, ...addedVectors],
    addedTools: [...(state.addedTools ?? []), ...Array.from({ length: added }, (_, k) => T + k)],
    evidence: e && movedEvidence(e, move, e.head && extendHeadState(e.head, T, added)),
  };
  // Each step rule widens its own saved tables (a rule's `withTools`).
  for (const rule of STEP_RULES) rule.withTools?.(out as unknown as SavedState, T, added);
  return out;
}

/**
 * The saved evidence with every label moved by `move` (tools inserted or removed) and the head given: graph rows,
 * cluster bags, the history vocabulary and the replay targets.
 */
function movedEvidence(
  e: NonNullable<GatedState['evidence']>,
  move: (label: number) => number,
  head: LinearHeadState | null,
): NonNullable<GatedState['evidence']> {
  const moveRows = (rows: [string, [number, number][]][]) =>
    rows.map(
      ([key, row]) => [key, row.map(([l, w]) => [move(l), w] as [number, number])] as [string, [number, number][]],
    );
  return {
    ...e,
    graphs: e.graphs.map(moveRows),
    global: moveRows(e.global),
    bags: e.bags.map((bag) => bag.map(([l, share]) => [move(l), share] as [number, number])),
    vocabulary: e.vocabulary.map(move),
    head,
    ...(e.replay ? { replay: { ...e.replay, targets: e.replay.targets.map((t) => t.map(move)) } } : {}),
  };
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

/**
 * Whether DTDR-G's tool `r` (one added after training) can leave its state exactly: no
 * demonstration taught anything about it or any tool after it, so its label is in no learned
 * table but the empty column `gatedStateWithTools` made (and the head's, which only renormalises).
 */
function canCompactGatedTool(state: GatedState, toolCount: number, r: number): boolean {
  if (!(state.addedTools ?? []).includes(r)) return false;
  const taught = (label: number) => label >= r && label < toolCount;
  const e = state.evidence;
  if (e) {
    const rows = [...e.graphs.flat(), ...e.global];
    if (rows.some(([, row]) => row.some(([l]) => taught(l)))) return false;
    if (e.bags.some((bag) => bag.some(([l]) => taught(l))) || e.vocabulary.some(taught)) return false;
    if (e.replay?.targets.some((t) => t.some(taught))) return false;
    if (e.head?.support?.cols.some(taught)) return false;
  }
  const c = state.combinations;
  return !(c && (c.together.some(taught) || c.entry.some(taught) || c.offsets[r] !== c.offsets[toolCount]));
}

/**
 * DTDR-G's state without tool `r` (of `toolCount`): the inverse of gatedStateWithTools for one tool; undefined where
 * something was learned about it (canCompactGatedTool).
 */
export function gatedStateWithoutTool(state: GatedState, toolCount: number, r: number): GatedState | undefined {
  if (!canCompactGatedTool(state, toolCount, r)) return undefined;
  const move = (label: number) => (label > r ? label - 1 : label);
  const e = state.evidence;
  const c = state.combinations;
  return {
    ...state,
    toolVectors: state.toolVectors.filter((_, i) => i !== r),
    addedTools: (state.addedTools ?? []).filter((l) => l !== r).map(move),
    evidence: e && movedEvidence(e, move, e.head && dropHeadClass(e.head, r, move)),
    ...(c
      ? {
          combinations: {
            ...c,
            offsets: c.offsets.filter((_, i) => i !== r + 1),
            entry: c.entry.filter((_, i) => i !== r).map((l) => (l < 0 ? l : move(l))),
          },
        }
      : {}),
  };
}

/** The head without class `r`: its column leaves the weights (the other classes' logits are untouched). */
function dropHeadClass(head: LinearHeadState, r: number, move: (label: number) => number): LinearHeadState {
  const C = head.classes;
  const drop = (from: number[]) => from.filter((_, i) => i % C !== r);
  return {
    ...head,
    classes: C - 1,
    weights: drop(head.weights),
    ...(head.support
      ? { support: { start: head.support.start, cols: head.support.cols.map(move) } }
      : { sparseWeights: drop(head.sparseWeights) }),
  };
}

/**
 * DTDR-G's state with the description vectors of tools `indices` replaced (a removed tool added back with a new
 * description).
 */
export function withToolVectors(state: GatedState, indices: number[], vectors: number[][]): GatedState {
  const toolVectors = [...state.toolVectors];
  indices.forEach((i, k) => (toolVectors[i] = vectors[k]));
  return { ...state, toolVectors };
}

/**
 * A tool leaves a fitted DTDR-G (Dtdr.removeTools), or takes a new description: the inverse of
 * with-tools.ts for a tool added after training that no demonstration taught anything about, and
 * the description vectors of tools added back with new specs. Through the method registry.
 */
import type { LinearHeadState } from '../linear-head.js';
import type { GatedState } from './state.js';

/**
 * Whether DTDR-G's tool `r` (one added after training) can leave its state exactly: no
 * demonstration taught anything about it or any tool after it, so its label is in no learned
 * table but the empty column `gatedStateWithTools` made (and the head's, which only renormalises).
 */
export function canCompactGatedTool(state: GatedState, toolCount: number, r: number): boolean {
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

/** DTDR-G's state without tool `r` (canCompactGatedTool holds): the inverse of gatedStateWithTools for one tool. */
export function compactGatedState(state: GatedState, toolCount: number, r: number): GatedState {
  const move = (label: number) => (label > r ? label - 1 : label);
  const remapRows = (rows: [string, [number, number][]][]) =>
    rows.map(
      ([key, row]) => [key, row.map(([l, w]) => [move(l), w] as [number, number])] as [string, [number, number][]],
    );
  const e = state.evidence;
  const c = state.combinations;
  return {
    ...state,
    toolVectors: state.toolVectors.filter((_, i) => i !== r),
    addedTools: (state.addedTools ?? []).filter((l) => l !== r).map(move),
    evidence: e && {
      ...e,
      graphs: e.graphs.map(remapRows),
      global: remapRows(e.global),
      bags: e.bags.map((bag) => bag.map(([l, share]) => [move(l), share] as [number, number])),
      vocabulary: e.vocabulary.map(move),
      head: e.head && dropHeadClass(e.head, r),
      ...(e.replay ? { replay: { ...e.replay, targets: e.replay.targets.map((t) => t.map(move)) } } : {}),
    },
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
function dropHeadClass(head: LinearHeadState, r: number): LinearHeadState {
  const C = head.classes;
  const drop = (from: number[]) => from.filter((_, i) => i % C !== r);
  return {
    ...head,
    classes: C - 1,
    weights: drop(head.weights),
    ...(head.support
      ? { support: { start: head.support.start, cols: head.support.cols.map((l) => (l > r ? l - 1 : l)) } }
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

/** DTDR-G's state without tool `r` (of `toolCount`), or undefined where something was learned about it. */
export function gatedStateWithoutTool(state: GatedState, toolCount: number, r: number): GatedState | undefined {
  return canCompactGatedTool(state, toolCount, r) ? compactGatedState(state, toolCount, r) : undefined;
}

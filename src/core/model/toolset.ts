/**
 * Tool-set changes after training. An app's tools change with every release or MCP server: a new
 * tool must be retrievable at once from its description, a removed one never offered again, and
 * nothing learned thrown away.
 *
 * - Removing is a mask on any retriever: the tool's probability becomes 0, the rest are
 *   renormalised (their order is untouched), and it is gone from `tools` and every prompt.
 * - Adding to DTDR-G is native: its state gains the tool's description vector, lexical entry and
 *   an empty column in every learned table (graph rows, cluster bags, the head with the lowest
 *   bias of any tool), so the gate's description signals rank it at once, with the same learned
 *   weights as before.
 * - Adding to the other methods mixes a description ranking in (embedding similarity when the
 *   model has an encoder, else BM25 over names and descriptions): P = (1 − β)·P_method + β·P_desc
 *   over old and new tools, β = 0.3, and a step whose description ranking puts an added tool
 *   first is reported as unsure, so the set widens and says why.
 */
import { checkTools } from '../base/checks.js';
import { DtdrError } from '../base/errors.js';
import { isValidToolName } from '../base/limits.js';
import { MAX_VECTOR_NUMBER } from '../base/validate.js';
import { LexicalIndex } from '../retrieval/lexical.js';
import { packMatrix, type PackedMatrix } from '../retrieval/kernels/matvec.js';
import type { Ranking, RankInput, Retriever } from '../retrieval/types.js';
import { terms } from '../base/text.js';
import { END, type ToolSpec } from '../base/types.js';
import type { GatedState } from '../retrieval/default/index.js';
import type { LinearHeadState } from '../retrieval/linear-head.js';

/** Weight of the description ranking for tools added to methods other than DTDR-G. */
export const ADDED_TOOL_SHARE = 0.3;

/** What a model remembers of tool-set changes (saved in the artifact). */
export interface ToolChanges {
  /** Tools removed after training: never offered again. */
  removed: string[];
  /** Tools added to a method without native support. */
  added: ToolSpec[];
  /** Description vectors of every tool, base then added (null without an encoder: BM25 is used). */
  vectors: number[][] | null;
  /**
   * Tools removed that left the model entirely (DTDR-G's added, never-demonstrated tools): their
   * names only, so adapters still refuse them. Absent: none.
   */
  dropped?: string[];
}

export const NO_CHANGES: ToolChanges = { removed: [], added: [], vectors: null };

/**
 * DTDR-G's state with `added` tools inserted before END: every label index ≥ the old END moves by
 * `added.length`; the new columns start empty (no demonstration yet).
 */
export function extendGatedState(state: GatedState, oldToolCount: number, added: number, addedVectors: number[][]): GatedState {
  const T = oldToolCount;
  const move = (label: number) => (label >= T ? label + added : label);
  const remapRows = (rows: [string, [number, number][]][]) => rows.map(([key, row]) => [key, row.map(([l, w]) => [move(l), w] as [number, number])] as [string, [number, number][]]);
  const e = state.evidence;
  return {
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
    ...(state.combinations ? { combinations: extendCombinations(state.combinations, T, added) } : {}),
  };
}

/** The new-combination table with `added` empty slots (never demonstrated, no entry) before END's (empty too). */
function extendCombinations(c: NonNullable<GatedState['combinations']>, T: number, added: number): NonNullable<GatedState['combinations']> {
  const tools = c.offsets.slice(0, T + 1);
  const last = tools[tools.length - 1];
  return { ...c, offsets: [...tools, ...Array.from({ length: added + 1 }, () => last)], entry: [...c.entry.slice(0, T), ...Array.from({ length: added + 1 }, () => -1)] };
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
 * table but the empty column `extendGatedState` made (and the head's, which only renormalises).
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
  if (c && (c.together.some(taught) || c.entry.some(taught) || c.offsets[r] !== c.offsets[toolCount])) return false;
  const w = state.sequenceWords;
  return !w || !w.tools.some(taught);
}

/** DTDR-G's state without tool `r` (canCompactGatedTool holds): the inverse of extendGatedState for one tool. */
export function compactGatedState(state: GatedState, toolCount: number, r: number): GatedState {
  const move = (label: number) => (label > r ? label - 1 : label);
  const remapRows = (rows: [string, [number, number][]][]) => rows.map(([key, row]) => [key, row.map(([l, w]) => [move(l), w] as [number, number])] as [string, [number, number][]]);
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
    ...(c ? { combinations: { ...c, offsets: c.offsets.filter((_, i) => i !== r + 1), entry: c.entry.filter((_, i) => i !== r).map((l) => (l < 0 ? l : move(l))) } } : {}),
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
    ...(head.support ? { support: { start: head.support.start, cols: head.support.cols.map((l) => (l > r ? l - 1 : l)) } } : { sparseWeights: drop(head.sparseWeights) }),
  };
}

/** DTDR-G's state with the description vectors of tools `indices` replaced (a removed tool added back with a new description). */
export function withToolVectors(state: GatedState, indices: number[], vectors: number[][]): GatedState {
  const toolVectors = [...state.toolVectors];
  indices.forEach((i, k) => (toolVectors[i] = vectors[k]));
  return { ...state, toolVectors };
}

/** Checks tools to add against the current ones. */
export function checkAddedTools(specs: ToolSpec[], current: readonly string[]): void {
  const names = new Set(current);
  specs.forEach((t, i) => {
    if (names.has(t.name)) throw new DtdrError('options', `the model already has a tool "${t.name}"`, { field: `tools[${i}].name`, hint: 'remove it first to replace it, or give the new tool another name' });
    names.add(t.name);
  });
}

/** Checks tool names to remove. */
export function checkRemovedTools(names: unknown, current: readonly string[]): asserts names is string[] {
  if (!Array.isArray(names)) throw new DtdrError('options', 'removeTools takes an array of tool names', { field: 'names' });
  const known = new Set(current);
  names.forEach((n, i) => {
    if (typeof n !== 'string' || !known.has(n)) throw new DtdrError('options', `the model has no tool ${JSON.stringify(n)} to remove`, { field: `names[${i}]` });
  });
  if (names.length > 0 && new Set(names).size >= known.size) throw new DtdrError('options', 'cannot remove every tool', { hint: 'a model needs at least one tool to offer' });
}

/**
 * A retriever seen through tool-set changes: removed tools masked, added tools (for methods
 * without native support) mixed in by description. Ranks over base labels + added tools + END.
 */
export class ChangedToolSet implements Retriever {
  readonly labels: readonly string[];
  private readonly baseLabels: readonly string[];
  private readonly removed: Set<number>;
  private readonly lexical?: LexicalIndex;
  /** Description vectors of every tool (base, then added) in the float32 matrix kernel. */
  private readonly vectors?: PackedMatrix;
  /** Labels indices of the added tools in `labels`. */
  private readonly addedFrom: number;

  constructor(readonly base: Retriever, baseTools: readonly ToolSpec[], readonly changes: ToolChanges) {
    this.baseLabels = base.labels;
    const baseNames = base.labels.slice(0, -1);
    this.addedFrom = baseNames.length;
    this.labels = [...baseNames, ...changes.added.map((t) => t.name), END];
    const index = new Map(this.labels.map((l, i) => [l, i]));
    this.removed = new Set(changes.removed.map((n) => index.get(n)!).filter((i) => i !== undefined));
    if (changes.added.length > 0) {
      const all = [...baseTools, ...changes.added];
      if (changes.vectors && changes.vectors.length === all.length) this.vectors = packMatrix(changes.vectors.flat(), all.length, changes.vectors[0]?.length ?? 0);
      else this.lexical = new LexicalIndex(all);
    }
  }

  get method() {
    return this.base.method;
  }
  get needs() {
    // Added tools are matched against the query's own embedding.
    return this.vectors ? { query: true, context: this.base.needs.context } : this.base.needs;
  }
  get historyLength() {
    return this.base.historyLength;
  }
  state(): unknown {
    return this.base.state();
  }

  rank(input: RankInput): Ranking {
    // The base retriever's own label indices: its tools keep theirs, added ones come after them.
    const unavailable = this.removed.size > 0 ? new Set([...this.removed].filter((f) => f < this.addedFrom)) : undefined;
    const baseRanking = this.base.rank(unavailable ? { ...input, unavailable } : input);
    const L = this.labels.length;
    const T = L - 1;
    const p = new Float64Array(L);
    const baseEnd = this.baseLabels.length - 1;
    for (let i = 0; i < baseEnd; i++) p[i] = baseRanking.probabilities[i];
    p[T] = baseRanking.probabilities[baseEnd];
    let cause = baseRanking.cause;
    let confident = baseRanking.confident;
    if (this.changes.added.length > 0) {
      const desc = this.descriptionProbabilities(input);
      let best = -1;
      for (let f = 0; f < T; f++) if (!this.removed.has(f) && (best < 0 || desc[f] > desc[best])) best = f;
      for (let f = 0; f < T; f++) p[f] = (1 - ADDED_TOOL_SHARE) * p[f] + ADDED_TOOL_SHARE * desc[f];
      p[T] *= 1 - ADDED_TOOL_SHARE;
      if (best >= this.addedFrom) {
        confident = false;
        cause = `"${this.labels[best]}" was added after training and matches the request best by its description; it has no demonstrations yet`;
      }
    }
    let sum = 0;
    for (let f = 0; f < L; f++) {
      if (this.removed.has(f)) p[f] = 0;
      sum += p[f];
    }
    if (sum > 0) for (let f = 0; f < L; f++) p[f] /= sum;
    // The base order, in this view's label indices; added tools after it.
    const position = new Float64Array(L).fill(Infinity);
    baseRanking.order.forEach((i, k) => (position[i === baseEnd ? T : i] = k));
    const kept: number[] = [];
    for (let f = 0; f < L; f++) if (!this.removed.has(f)) kept.push(f);
    // Removed tools leave the order entirely; ties keep the base retriever's order.
    const order = this.changes.added.length > 0 ? kept.sort((a, b) => p[b] - p[a] || position[a] - position[b] || a - b) : kept.sort((a, b) => position[a] - position[b]);
    return {
      labels: this.labels,
      probabilities: p,
      order: Uint32Array.from(order),
      confident,
      ...(baseRanking.backoff ? { backoff: baseRanking.backoff } : {}),
      ...(cause && !confident ? { cause } : {}),
      ...(baseRanking.set ? { set: { ...baseRanking.set, confident, ...this.includeInView(baseRanking.set.include, baseEnd, T) } } : {}),
    };
  }

  /** The labels the base retriever says must be offered, in this view's indices; a removed tool never. */
  private includeInView(include: number[] | undefined, baseEnd: number, end: number): { include?: number[] } {
    if (!include) return {};
    const kept = include.map((i) => (i === baseEnd ? end : i)).filter((i) => !this.removed.has(i));
    return kept.length > 0 ? { include: kept } : {};
  }

  /** A softmax over every tool's description match to the query (END excluded). */
  private descriptionProbabilities(input: RankInput): Float64Array {
    const T = this.labels.length - 1;
    const s = new Float64Array(T);
    if (this.vectors) {
      const q = input.queryVector;
      if (!q) throw new DtdrError('options', 'added tools are matched by the query embedding; rank through Dtdr, which embeds for you');
      this.vectors.times(q, s);
      for (let f = 0; f < T; f++) s[f] /= 0.05;
    } else {
      const plain = new Float32Array(T);
      this.lexical!.score(this.lexical!.prepare(terms(input.query)), [], plain, new Float32Array(T));
      for (let f = 0; f < T; f++) s[f] = plain[f];
    }
    // Over every tool, removed ones included: removing then only rescales what remains, so the
    // remaining tools keep their order.
    let max = -Infinity;
    for (let f = 0; f < T; f++) if (s[f] > max) max = s[f];
    let sum = 0;
    for (let f = 0; f < T; f++) sum += s[f] = Math.exp(s[f] - max);
    for (let f = 0; f < T; f++) s[f] /= sum;
    return s;
  }
}

/** A deep copy of tool-set changes (what a saved model holds). */
export function copyChanges(c: ToolChanges): ToolChanges {
  return { removed: [...c.removed], added: c.added.map((t) => ({ ...t })), vectors: c.vectors ? c.vectors.map((v) => [...v]) : null, ...(c.dropped?.length ? { dropped: [...c.dropped] } : {}) };
}

/** The tool-set changes saved with a model, checked. */
export function readToolChanges(artifact: { tools: ToolSpec[]; encoder?: { dimension?: number } | null }, source?: string): ToolChanges {
  const raw = (artifact as { toolChanges?: unknown }).toolChanges;
  if (raw === undefined) return NO_CHANGES;
  const fail = (field: string, message: string): never => {
    throw new DtdrError('artifact', message, { file: source, field: `toolChanges.${field}` });
  };
  const c = raw as Partial<ToolChanges>;
  if (!c || typeof c !== 'object') fail('', 'must be an object');
  if (!Array.isArray(c.removed) || c.removed.some((n) => typeof n !== 'string')) fail('removed', 'must list tool names');
  if (!Array.isArray(c.added)) fail('added', 'must list tools');
  try {
    checkTools([...artifact.tools, ...c.added!], 'tools');
  } catch (e) {
    fail('added', DtdrError.isInstance(e) ? e.message : String(e));
  }
  const names = new Set([...artifact.tools, ...c.added!].map((t) => t.name));
  c.removed!.forEach((n, i) => names.has(n) || fail(`removed[${i}]`, `names no tool of the model: "${n}"`));
  const dim = artifact.encoder?.dimension;
  if (c.vectors != null && (!Array.isArray(c.vectors) || c.vectors.length !== names.size || c.vectors.some((v) => !Array.isArray(v) || v.length !== dim))) fail('vectors', 'one description vector per tool of the encoder dimension expected');
  c.vectors?.forEach((v, i) => v.forEach((x, j) => (typeof x === 'number' && Math.abs(x) <= MAX_VECTOR_NUMBER) || fail(`vectors[${i}][${j}]`, `must be a finite number in [-${MAX_VECTOR_NUMBER}, ${MAX_VECTOR_NUMBER}], got ${JSON.stringify(x)}`)));
  if (c.dropped !== undefined && (!Array.isArray(c.dropped) || c.dropped.some((n) => !isValidToolName(n) || names.has(n)))) fail('dropped', 'must list names of tools the model no longer has');
  return { removed: [...c.removed!], added: c.added!.map((t) => ({ ...t })), vectors: c.vectors ?? null, ...(c.dropped?.length ? { dropped: [...c.dropped] } : {}) };
}

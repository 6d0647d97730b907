/**
 * Tool-set changes after training. An app's tools change with every release or MCP server: a new
 * tool must be retrievable at once from its description, a removed one never offered again, and
 * nothing learned thrown away.
 *
 * - Removing is a mask on any retriever: the tool leaves the labels of every ranking (labels are
 *   the visible tools and END), the rest are renormalised (their order is untouched; DTDR-G
 *   renormalises its learned and its description ranking apart before it mixes them, so a tool
 *   no demonstration called keeps its description's share only: shrinkage.ts), and it is
 *   gone from `tools` and every prompt. The method's state keeps what it learned from the tool's
 *   demonstrations — evidence about the others too: the steps around its calls, the normalisers
 *   every other tool's score shares — so the others rank exactly as before, and re-adding the name
 *   brings it back. DTDR-G drops a removed tool nothing was learned about from its state
 *   (retrieval/default/with-tools.ts) before it gets here.
 * - Adding to a method with native support (its registry entry's `withTools`: DTDR-G) is the
 *   method's own (retrieval/default/with-tools.ts).
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

/** Checks tools to add against the current ones. */
export function checkAddedTools(specs: ToolSpec[], current: readonly string[]): void {
  const names = new Set(current);
  specs.forEach((t, i) => {
    if (names.has(t.name))
      throw new DtdrError('options', `the model already has a tool "${t.name}"`, {
        field: `tools[${i}].name`,
        hint: 'remove it first to replace it, or give the new tool another name',
      });
    names.add(t.name);
  });
}

/** Checks tool names to remove. */
export function checkRemovedTools(names: unknown, current: readonly string[]): asserts names is string[] {
  if (!Array.isArray(names))
    throw new DtdrError('options', 'removeTools takes an array of tool names', { field: 'names' });
  const known = new Set(current);
  names.forEach((n, i) => {
    if (typeof n !== 'string' || !known.has(n))
      throw new DtdrError('options', `the model has no tool ${JSON.stringify(n)} to remove`, { field: `names[${i}]` });
  });
  if (names.length > 0 && new Set(names).size >= known.size)
    throw new DtdrError('options', 'cannot remove every tool', { hint: 'a model needs at least one tool to offer' });
}

/**
 * A retriever seen through tool-set changes: removed tools masked, added tools (for methods
 * without native support) mixed in by description. Ranks over the base labels and added tools
 * that are not removed, then END.
 */
export class ChangedToolSet implements Retriever {
  /** The visible tools (base, then added) and END. */
  readonly labels: readonly string[];
  private readonly baseLabels: readonly string[];
  /** Base labels, added tools and END: the labels this view ranks before removed tools leave. */
  private readonly allLabels: readonly string[];
  /** Per label of `allLabels`, its index in `labels`, or -1 for a removed tool. */
  private readonly viewIndex: Int32Array;
  private readonly removed: Set<number>;
  private readonly lexical?: LexicalIndex;
  /** Description vectors of every tool (base, then added) in the float32 matrix kernel. */
  private readonly vectors?: PackedMatrix;
  /** Labels indices of the added tools in `labels`. */
  private readonly addedFrom: number;

  constructor(
    readonly base: Retriever,
    baseTools: readonly ToolSpec[],
    readonly changes: ToolChanges,
  ) {
    this.baseLabels = base.labels;
    const baseNames = base.labels.slice(0, -1);
    this.addedFrom = baseNames.length;
    this.allLabels = [...baseNames, ...changes.added.map((t) => t.name), END];
    const index = new Map(this.allLabels.map((l, i) => [l, i]));
    this.removed = new Set(changes.removed.map((n) => index.get(n)!).filter((i) => i !== undefined));
    this.viewIndex = new Int32Array(this.allLabels.length).fill(-1);
    const labels: string[] = [];
    this.allLabels.forEach((l, i) => {
      if (this.removed.has(i)) return;
      this.viewIndex[i] = labels.length;
      labels.push(l);
    });
    this.labels = labels;
    if (changes.added.length > 0) {
      const all = [...baseTools, ...changes.added];
      if (changes.vectors && changes.vectors.length === all.length)
        this.vectors = packMatrix(changes.vectors.flat(), all.length, changes.vectors[0]?.length ?? 0);
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
    const unavailable =
      this.removed.size > 0 ? new Set([...this.removed].filter((f) => f < this.addedFrom)) : undefined;
    const baseRanking = this.base.rank(unavailable ? { ...input, unavailable } : input);
    const L = this.allLabels.length;
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
        cause =
          `"${this.allLabels[best]}" was added after training and matches the request best by its description; it ` +
          `has no demonstrations yet`;
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
    const order =
      this.changes.added.length > 0
        ? kept.sort((a, b) => p[b] - p[a] || position[a] - position[b] || a - b)
        : kept.sort((a, b) => position[a] - position[b]);
    // Removed tools leave the labels: the ranking is over the visible tools and END.
    const view = this.viewIndex;
    const probabilities = new Float64Array(this.labels.length);
    for (let f = 0; f < L; f++) if (view[f] >= 0) probabilities[view[f]] = p[f];
    return {
      labels: this.labels,
      probabilities,
      order: Uint32Array.from(order, (f) => view[f]),
      confident,
      ...(baseRanking.backoff ? { backoff: baseRanking.backoff } : {}),
      ...(cause && !confident ? { cause } : {}),
      ...(baseRanking.set
        ? {
            set: {
              ...baseRanking.set,
              confident,
              ...this.inView('include', baseRanking.set.include, baseEnd, T),
              ...this.inView('describedOnly', baseRanking.set.describedOnly, baseEnd, T),
              // Always replaced: the base's favourites are in its own label indices.
              described: this.inView('described', baseRanking.set.described, baseEnd, T).described,
            },
          }
        : {}),
    };
  }

  /**
   * A label list of the base retriever's set (`include`: labels it says must be offered; `describedOnly`;
   * `described`), in this view's indices; a removed tool never.
   */
  private inView<K extends 'include' | 'describedOnly' | 'described'>(
    key: K,
    labels: readonly number[] | Uint32Array | undefined,
    baseEnd: number,
    end: number,
  ): { [k in K]?: number[] } {
    if (!labels) return {};
    const kept = Array.from(labels, (i) => (i === baseEnd ? end : i))
      .filter((i) => !this.removed.has(i))
      .map((i) => this.viewIndex[i]);
    return (kept.length > 0 ? { [key]: kept } : {}) as { [k in K]?: number[] };
  }

  /** A softmax over every tool's description match to the query (END excluded), removed tools included. */
  private descriptionProbabilities(input: RankInput): Float64Array {
    const T = this.allLabels.length - 1;
    const s = new Float64Array(T);
    if (this.vectors) {
      const q = input.queryVector;
      if (!q)
        throw new DtdrError(
          'options',
          'added tools are matched by the query embedding; rank through Dtdr, which embeds for you',
        );
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

/**
 * The changes without added tool `name` (a method without native support: its state never held the
 * tool), its name kept in `dropped` so adapters still refuse it; undefined when it is not an added
 * tool or `learned` runs call it (forget replays them, so the tool stays, masked). Without this, each
 * add-and-remove cycle left the tool and its description vector in the model file for good.
 */
export function withoutAddedTool(
  c: ToolChanges,
  baseCount: number,
  name: string,
  learned: readonly { nodes: readonly { tool: string }[] }[],
): ToolChanges | undefined {
  const i = c.added.findIndex((t) => t.name === name);
  if (i < 0 || learned.some((p) => p.nodes.some((n) => n.tool === name))) return undefined;
  return {
    ...c,
    added: c.added.filter((_, k) => k !== i),
    vectors: c.vectors ? c.vectors.filter((_, k) => k !== baseCount + i) : null,
    dropped: [...(c.dropped ?? []), name],
  };
}

/** A deep copy of tool-set changes (what a saved model holds). */
export function copyChanges(c: ToolChanges): ToolChanges {
  return {
    removed: [...c.removed],
    added: c.added.map((t) => ({ ...t })),
    vectors: c.vectors ? c.vectors.map((v) => [...v]) : null,
    ...(c.dropped?.length ? { dropped: [...c.dropped] } : {}),
  };
}

/** The tool-set changes saved with a model, checked. */
export function readToolChanges(
  artifact: { tools: ToolSpec[]; encoder?: { dimension?: number } | null },
  source?: string,
): ToolChanges {
  const raw = (artifact as { toolChanges?: unknown }).toolChanges;
  if (raw === undefined) return NO_CHANGES;
  const fail = (field: string, message: string): never => {
    throw new DtdrError('artifact', message, { file: source, field: `toolChanges.${field}` });
  };
  const c = raw as Partial<ToolChanges>;
  if (!c || typeof c !== 'object') fail('', 'must be an object');
  if (!Array.isArray(c.removed) || c.removed.some((n) => typeof n !== 'string'))
    fail('removed', 'must list tool names');
  if (!Array.isArray(c.added)) fail('added', 'must list tools');
  try {
    checkTools([...artifact.tools, ...c.added!], 'tools');
  } catch (e) {
    fail('added', DtdrError.isInstance(e) ? e.message : String(e));
  }
  const names = new Set([...artifact.tools, ...c.added!].map((t) => t.name));
  c.removed!.forEach((n, i) => names.has(n) || fail(`removed[${i}]`, `names no tool of the model: "${n}"`));
  const dim = artifact.encoder?.dimension;
  if (
    c.vectors != null &&
    (!Array.isArray(c.vectors) ||
      c.vectors.length !== names.size ||
      c.vectors.some((v) => !Array.isArray(v) || v.length !== dim))
  )
    fail('vectors', 'one description vector per tool of the encoder dimension expected');
  c.vectors?.forEach((v, i) =>
    v.forEach(
      (x, j) =>
        (typeof x === 'number' && Math.abs(x) <= MAX_VECTOR_NUMBER) ||
        fail(
          `vectors[${i}][${j}]`,
          `must be a finite number in [-${MAX_VECTOR_NUMBER}, ${MAX_VECTOR_NUMBER}], got ${JSON.stringify(x)}`,
        ),
    ),
  );
  if (
    c.dropped !== undefined &&
    (!Array.isArray(c.dropped) || c.dropped.some((n) => !isValidToolName(n) || names.has(n)))
  )
    fail('dropped', 'must list names of tools the model no longer has');
  return {
    removed: [...c.removed!],
    added: c.added!.map((t) => ({ ...t })),
    vectors: c.vectors ?? null,
    ...(c.dropped?.length ? { dropped: [...c.dropped] } : {}),
  };
}

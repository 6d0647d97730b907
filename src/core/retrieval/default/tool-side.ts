/**
 * The tool side of DTDR-G, which depends on no demonstration and every fold shares: labels, the
 * lexical index over names and descriptions, description vectors and their dot products, and the
 * schema links (which tool's outputs feed which tool's required inputs).
 */
import { terms } from '../../base/text.js';
import { END, type ToolSpec } from '../../base/types.js';
import { labelIndices } from '../dependency.js';
import { packMatrix, replaceIfChanged, type PackedMatrix } from '../kernels/matvec.js';
import { gramRows, type GramRows } from '../kernels/training.js';
import { LexicalIndex } from '../lexical.js';

/** What every fold shares: the tool side, which depends on no demonstration. */
export class ToolSide {
  readonly labels: string[];
  readonly end: number;
  readonly lexical: LexicalIndex;
  readonly index: Map<string, number>;
  constructor(
    readonly tools: ToolSpec[],
    readonly toolVectors: Float32Array,
    readonly dim: number,
    readonly lexicalOrder: number,
  ) {
    this.labels = [...tools.map((t) => t.name), END];
    this.end = tools.length;
    this.index = labelIndices(this.labels);
    this.lexical = new LexicalIndex(tools);
    const names = (schema: unknown, requiredOnly: boolean): string[] => {
      const s = schema as { properties?: Record<string, unknown>; required?: unknown } | undefined;
      if (!s || typeof s !== 'object' || !s.properties || typeof s.properties !== 'object') return [];
      const keys =
        requiredOnly && Array.isArray(s.required)
          ? s.required.filter((k): k is string => typeof k === 'string')
          : Object.keys(s.properties);
      return keys.map((k) => terms(k).join(' ')).filter(Boolean);
    };
    this.inputs = tools.map((t) => names(t.parameters, true));
    this.outputs = tools.map((t) => [...new Set(names(t.returns, false))]);
    this.inputs.forEach((needs, f) => {
      for (const n of needs) {
        let list = this.needing.get(n);
        if (!list) this.needing.set(n, (list = []));
        list.push(f);
      }
    });
  }

  private readonly inputs: string[][];
  private readonly outputs: string[][];
  /** Input name → the tools that require it (once per time they list it). */
  private readonly needing = new Map<string, number[]>();
  private readonly fedRows = new Map<number, { tools: Uint32Array; shares: Float64Array }>();

  /**
   * The tools whose required inputs tool c's outputs name, with the share of each one's required
   * inputs they cover (the schema signal): a step touches only the tools its calls feed. Computed
   * once per called tool and kept, like the similarity rows.
   */
  inputsFedBy(c: number): { tools: Uint32Array; shares: Float64Array } {
    return keptRow(this.fedRows, c, KEPT_ROWS, () => {
      const fed = new Map<number, number>();
      for (const o of this.outputs[c]) for (const f of this.needing.get(o) ?? []) fed.set(f, (fed.get(f) ?? 0) + 1);
      return {
        tools: Uint32Array.from(fed.keys()),
        shares: Float64Array.from(fed, ([f, hits]) => hits / this.inputs[f].length),
      };
    });
  }

  /** Tool description vectors for the float32 kernel (built on first use). */
  private packedTools?: PackedMatrix;

  /** The last query and its dot products: every step of a plan has the same request. */
  private lastDots?: { query: Float64Array; dots: Float32Array };

  /** q·t for every tool t, into out[0 .. tools). */
  toolDots(q: ArrayLike<number>, out: Float32Array | Float64Array): void {
    const last = (this.lastDots ??= { query: new Float64Array(this.dim).fill(NaN), dots: new Float32Array(this.end) });
    if (replaceIfChanged(last.query, q))
      (this.packedTools ??= packMatrix(this.toolVectors, this.end, this.dim)).times(q, last.dots);
    // A float32 row takes a block copy (the same values); a float64 one converts each.
    if (out instanceof Float32Array) out.set(last.dots.subarray(0, this.end));
    else for (let f = 0; f < this.end; f++) out[f] = last.dots[f];
  }

  /** Called tools' similarity rows (c·t for every tool t), computed once per tool and kept. */
  private readonly similarityRows = new Map<number, Float32Array>();
  /** The tool vectors in the kernel that computes similarity rows (built on first use). */
  private gram?: GramRows;

  similarityRow(c: number): Float32Array {
    // At 16,000 tools the cross-fitting calls thousands of distinct tools: a row per ~64 KB of
    // budget, not a fixed 512, or popular rows are recomputed over and over (14 s of the fit).
    const keep = Math.max(KEPT_ROWS, Math.floor(SIMILARITY_FLOATS / Math.max(1, this.end)));
    return keptRow(this.similarityRows, c, keep, () =>
      (this.gram ??= gramRows(this.toolVectors, this.end, this.dim)).row(c),
    );
  }
}

/** Rows kept per cache, at least. */
const KEPT_ROWS = 512;
/** Floats the similarity rows may hold in all (64 MB) before the least recently used is dropped. */
const SIMILARITY_FLOATS = 16 * 1024 * 1024;

/** A per-tool row, computed on first use and kept: at most `keep`, the least recently used dropped first. */
function keptRow<V>(rows: Map<number, V>, c: number, keep: number, make: () => V): V {
  let row = rows.get(c);
  if (row === undefined) {
    row = make();
    if (rows.size >= keep) rows.delete(rows.keys().next().value as number);
  } else rows.delete(c); // re-inserted below: the Map's order is the order of use
  rows.set(c, row);
  return row;
}

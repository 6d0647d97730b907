/**
 * Checks for the numbers a saved model holds. Every loader reads its state through these, so a
 * file whose numbers are NaN, infinite, strings, out of range or of the wrong shape is refused
 * with a DtdrError('artifact') naming the field (a dotted path such as
 * `state.gate.temperature`) instead of loading and ranking with NaN. They only read: a valid
 * file loads exactly as before.
 */
import { DtdrError } from './errors.js';

/** What to do about a model file whose content is wrong. */
export const DAMAGED_MODEL_HINT = 'the model file was damaged or edited by hand: restore it from a backup or retrain';
const HINT = DAMAGED_MODEL_HINT;

/** Throws the DtdrError('artifact') for `field`. */
export function stateError(field: string, message: string, hint = HINT): never {
  throw new DtdrError('artifact', message, { field, hint });
}

function shown(v: unknown): string {
  if (typeof v === 'number') return String(v);
  if (typeof v === 'string') return JSON.stringify(v.length > 40 ? `${v.slice(0, 40)}…` : v);
  if (Array.isArray(v)) return `an array of ${v.length}`;
  return v === null ? 'null' : typeof v;
}

export interface Range {
  min?: number;
  max?: number;
  /** The bounds themselves are out of range. */
  exclusive?: boolean;
  integer?: boolean;
}

/**
 * The largest magnitude a saved number may have when its field states no bound: far beyond any
 * count, weight or coordinate dtdr writes, and small enough that sums and products of them in
 * ranking (in float32 kernels too) stay finite.
 */
export const MAX_STATE_NUMBER = 1e9;
/** Bound for embedding coordinates and linear-head weights (trained ones are far smaller). */
export const MAX_VECTOR_NUMBER = 1e6;
/**
 * Bound for the coordinates of an embedding a model learns or fits on: a saved head's
 * standardisation means are checked to be within it, so a larger one (a damaged embedding store's
 * all-1e6 vector) would make a model that does not load. Encoders' vectors are unit length.
 */
export const MAX_EMBEDDING_NUMBER = 1e4;
/** A coordinate or weight: finite, |x| ≤ MAX_VECTOR_NUMBER. */
export const COORDINATE: Range = { min: -MAX_VECTOR_NUMBER, max: MAX_VECTOR_NUMBER };

function inRange(v: unknown, r: Range): v is number {
  if (typeof v !== 'number' || !Number.isFinite(v)) return false;
  if (r.integer && !Number.isInteger(v)) return false;
  const min = r.min ?? -MAX_STATE_NUMBER;
  const max = r.max ?? MAX_STATE_NUMBER;
  if (r.exclusive ? v <= min : v < min) return false;
  if (r.exclusive ? v >= max : v > max) return false;
  return true;
}

function rangeText(r: Range): string {
  const kind = r.integer ? 'an integer' : 'a finite number';
  return (
    `${kind} in ${r.exclusive ? '(' : '['}${r.min ?? -MAX_STATE_NUMBER}, ` +
    `${r.max ?? MAX_STATE_NUMBER}${r.exclusive ? ')' : ']'}`
  );
}

/** A number (finite, and within `range`). */
export function num(field: string, v: unknown, range: Range = {}): number {
  if (!inRange(v, range)) stateError(field, `must be ${rangeText(range)}, got ${shown(v)}`);
  return v;
}

/** An integer in [min, max]. */
export function int(field: string, v: unknown, min: number, max = Number.MAX_SAFE_INTEGER): number {
  return num(field, v, { min, max, integer: true });
}

/** `num` when the value is present; `undefined` passes. */
export function optNum(field: string, v: unknown, range: Range = {}): void {
  if (v !== undefined) num(field, v, range);
}

/** An array (of `length` when given). */
export function array(field: string, v: unknown, length?: number): unknown[] {
  if (!Array.isArray(v)) stateError(field, `must be an array, got ${shown(v)}`);
  if (length !== undefined && (v as unknown[]).length !== length)
    stateError(field, `must hold ${length} entries, got ${(v as unknown[]).length}`);
  return v as unknown[];
}

/** An object (not null, not an array). */
export function object(field: string, v: unknown): Record<string, unknown> {
  if (!v || typeof v !== 'object' || Array.isArray(v)) stateError(field, `must be an object, got ${shown(v)}`);
  return v as Record<string, unknown>;
}

/** An array of numbers, each within `range` (of `length` when given). */
export function numbers(field: string, v: unknown, length?: number, range: Range = {}): number[] {
  const a = array(field, v, length);
  for (let i = 0; i < a.length; i++)
    if (!inRange(a[i], range)) stateError(`${field}[${i}]`, `must be ${rangeText(range)}, got ${shown(a[i])}`);
  return a as number[];
}

/** An array of `count` (when given) vectors, each of `dim` coordinates (finite, |x| ≤ MAX_VECTOR_NUMBER). */
export function vectors(field: string, v: unknown, count: number | undefined, dim: number): number[][] {
  const a = array(field, v, count);
  a.forEach((row, i) => numbers(`${field}[${i}]`, row, dim, COORDINATE));
  return a as number[][];
}

/** `[label, weight]` pairs: labels integers in [0, labels), weights within `weights`. */
export function labelWeights(
  field: string,
  v: unknown,
  labels: number,
  weights: Range = { min: 0 },
): [number, number][] {
  const a = array(field, v);
  a.forEach((pair, i) => {
    const p = array(`${field}[${i}]`, pair, 2);
    int(`${field}[${i}][0]`, p[0], 0, labels - 1);
    num(`${field}[${i}][1]`, p[1], weights);
  });
  return a as [number, number][];
}

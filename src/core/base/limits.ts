/**
 * The bounds every entry point shares — the library, the CLI, dataset files, saved models and the
 * framework adapters — so that no input is accepted in one place and refused in another, and no
 * accepted input can stall an app. Each is far beyond what a real tool set or request needs.
 */
import { DtdrError } from './errors.js';

/** Longest request (a query, or a plan's request in a data file), in characters. */
export const MAX_QUERY_CHARS = 100_000;
/** Longest tool description, in characters. */
export const MAX_DESCRIPTION_CHARS = 100_000;
/** Longest tool name, in characters (MCP allows 128; OpenAI 64). */
export const MAX_TOOL_NAME_CHARS = 128;
/** Most steps (tool calls) in one plan. */
export const MAX_PLAN_STEPS = 256;
/** Most links in one plan: as many as a DAG over MAX_PLAN_STEPS steps can have (256 × 255 / 2). */
export const MAX_PLAN_LINKS = (MAX_PLAN_STEPS * (MAX_PLAN_STEPS - 1)) / 2;

/** The input bounds in one object, as the public API exports them (`dtdr`'s `INPUT_LIMITS`). */
export const INPUT_LIMITS = Object.freeze({
  /** Longest request, in characters. */
  queryChars: MAX_QUERY_CHARS,
  /** Longest tool description, in characters. */
  descriptionChars: MAX_DESCRIPTION_CHARS,
  /** Longest tool name, in characters. */
  toolNameChars: MAX_TOOL_NAME_CHARS,
  /** Most calls in one plan. */
  planSteps: MAX_PLAN_STEPS,
});

/** `12,345`: how the bounds are written in messages. */
export const formatCount = (n: number): string => n.toLocaleString('en');

/**
 * The tool-name rule: 1 to 128 characters, each a letter, a digit, `_`, `-`, `.`, `:`, `/` or a
 * single inner space; no space at either end. It admits every name of OpenAI function calling,
 * MCP (SEP-986) and the public datasets (Seal-Tools has `requestFirst Aid Assistance`), and keeps
 * out everything that could change a prompt's structure: angle brackets, quotes, braces, pipes,
 * backticks, newlines and other control characters.
 */
export const TOOL_NAME_RULE = 'a tool name is 1–128 letters, digits, "_", "-", ".", ":", "/" or single inner spaces';
const TOOL_NAME = /^[\p{L}\p{N}_.:/-]+(?: [\p{L}\p{N}_.:/-]+)*$/u;

/** True when `name` follows the tool-name rule. */
export function isValidToolName(name: string): boolean {
  return name.length >= 1 && name.length <= MAX_TOOL_NAME_CHARS && TOOL_NAME.test(name);
}

/** Throws a DtdrError naming the tool and the rule when `name` breaks it. */
export function checkToolName(
  name: unknown,
  where: { field?: string; file?: string; line?: number; code?: 'options' | 'data' | 'artifact' } = {},
): asserts name is string {
  const { code = 'options', ...details } = where;
  if (typeof name !== 'string' || name.length === 0)
    throw new DtdrError(code, 'a tool needs a non-empty string name', details);
  if (!isValidToolName(name)) {
    const shown = JSON.stringify(name.length > 60 ? `${name.slice(0, 60)}…` : name);
    throw new DtdrError(code, `tool name ${shown} breaks the tool-name rule: ${TOOL_NAME_RULE}`, {
      ...details,
      hint: 'rename the tool (e.g. replace other characters with "_")',
    });
  }
}

/**
 * Deepest nesting of arrays and objects accepted anywhere a structure is read: a tool's JSON
 * Schema, a model call's arguments. Real schemas nest a handful of levels; recursion over a
 * structure 100,000 levels deep would overflow the stack.
 */
export const MAX_NESTING = 64;
/** Deepest nesting of a saved model (its tool schemas nest up to MAX_NESTING inside it). */
export const MAX_MODEL_NESTING = MAX_NESTING + 32;

/**
 * How deep `value` nests arrays and objects, counted without recursion and given up (returning
 * `limit + 1`) as soon as it passes `limit`: safe on any input, however deep.
 */
export function nestingDepth(value: unknown, limit: number): number {
  let deepest = 0;
  // Two parallel stacks, not one of [value, depth] pairs: a model of a million small arrays is
  // walked without a million pairs beside it.
  const values: unknown[] = [value];
  const depths: number[] = [0];
  while (values.length > 0) {
    const v = values.pop();
    const depth = depths.pop()!;
    if (!v || typeof v !== 'object' || ArrayBuffer.isView(v)) continue;
    const d = depth + 1;
    if (d > limit) return limit + 1;
    if (d > deepest) deepest = d;
    // Only arrays and objects go on the stack: a model's long number arrays cost no memory here.
    if (Array.isArray(v)) {
      for (const x of v)
        if (x && typeof x === 'object') {
          values.push(x);
          depths.push(d);
        }
    } else {
      for (const k in v) {
        const x = (v as Record<string, unknown>)[k];
        if (Object.hasOwn(v, k) && x && typeof x === 'object') {
          values.push(x);
          depths.push(d);
        }
      }
    }
  }
  return deepest;
}

/** What {@link boundedJson} shows in place of what lies deeper than its limit. */
export const NESTED_TOO_DEEP = '[nested deeper than this prompt shows]';

/**
 * JSON text of `value` for a prompt, where `value` (a tool's result, a model's arguments) need not
 * be trusted: a value nesting up to `limit` levels is JSON.stringify's text as it is; deeper, the
 * parts below `limit` are replaced by {@link NESTED_TOO_DEEP}, so a result 200,000 levels deep (or
 * one that refers to itself) renders as bounded text instead of throwing a RangeError out of
 * JSON.stringify's recursion. The copy recurses at most `limit` levels.
 */
export function boundedJson(value: unknown, limit = MAX_NESTING): string {
  if (nestingDepth(value, limit) <= limit) return JSON.stringify(value);
  const cut = (v: unknown, depth: number): unknown => {
    if (v && typeof v === 'object' && typeof (v as { toJSON?: unknown }).toJSON === 'function')
      v = (v as { toJSON: () => unknown }).toJSON();
    if (!v || typeof v !== 'object' || ArrayBuffer.isView(v)) return v;
    if (depth >= limit) return NESTED_TOO_DEEP;
    if (Array.isArray(v)) return v.map((x) => cut(x, depth + 1));
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) out[k] = cut(x, depth + 1);
    return out;
  };
  return JSON.stringify(cut(value, 0));
}

/** Throws a DtdrError when `value` nests deeper than `limit`. */
export function checkNesting(
  value: unknown,
  limit: number,
  where: { what: string; code: 'options' | 'data' | 'artifact' | 'tool-call'; field?: string; file?: string },
): void {
  if (nestingDepth(value, limit) > limit) {
    throw new DtdrError(where.code, `${where.what} nests deeper than ${limit} levels`, {
      field: where.field,
      file: where.file,
      hint: 'flatten it: no real tool schema, argument or model nests this deep',
    });
  }
}

/**
 * Bytes of memory one parsed JSON array or object costs a load: V8 holds `[0]` or `{}` in about
 * 61 bytes of heap (2.4 million `[0]`: 146 MB), but parsing and walking them takes the process's
 * resident memory to about 220 bytes each at the peak (1.3 million `{}` in a 9.9 MB header: +288 MB).
 */
export const DECODED_CONTAINER_BYTES = 160;
/** Bytes of memory one value slot of a parsed JSON array or object takes (a pointer or a double, and a key). */
export const DECODED_VALUE_BYTES = 16;

/**
 * The most memory JSON text (as UTF-8 bytes) can take once parsed, from one pass over the bytes
 * before parsing: every array and object at DECODED_CONTAINER_BYTES, every value at
 * DECODED_VALUE_BYTES, and the text itself (strings and numbers decode to no more than their
 * text, counted once more). So text that would parse to far more than its size — 9 MB of `[0]`
 * is 146 MB parsed, 3 million `{}` 183 MB — is refused in milliseconds, before JSON.parse spends
 * seconds and the memory on it. In the same pass, whether arrays and objects nest deeper than
 * `nestingLimit` (then it stops: `tooDeep`), so 10 million brackets are refused before parsing too.
 * Brackets and commas inside strings do not count.
 */
export function measureJson(bytes: Uint8Array, nestingLimit: number): { tooDeep: boolean; decodedBytes: number } {
  let containers = 0;
  let commas = 0;
  let depth = 0;
  let inString = false;
  for (let i = 0; i < bytes.length; i++) {
    const b = bytes[i];
    if (inString) {
      if (b === 0x5c)
        i++; // a backslash escapes the next byte
      else if (b === 0x22) inString = false;
    } else if (b === 0x22) inString = true;
    else if (b === 0x5b || b === 0x7b) {
      containers++;
      if (++depth > nestingLimit) return { tooDeep: true, decodedBytes: Infinity };
    } else if (b === 0x5d || b === 0x7d) depth--;
    else if (b === 0x2c) commas++;
  }
  const decodedBytes =
    containers * DECODED_CONTAINER_BYTES + (commas + containers) * DECODED_VALUE_BYTES + bytes.length;
  return { tooDeep: false, decodedBytes };
}

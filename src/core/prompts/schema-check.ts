/**
 * Checking a model's arguments against a tool's own JSON Schema in time linear in the answer.
 * The schema comes from the app or an MCP server and the arguments from a model, so neither may
 * stall the app. The validator (@cfworker/json-schema) runs on a copy of the schema with two
 * keywords taken out and handled here:
 *
 * - `uniqueItems` is checked by hashing each item's canonical JSON (keys sorted), not pair by
 *   pair. It is followed where an array's schema is certain: through `properties`,
 *   `additionalProperties`, `items`, `prefixItems`, `allOf` and local `$ref`s; under `anyOf`,
 *   `oneOf`, `not` and `if` (where a branch may not apply) it is not checked.
 * - `pattern` runs only when it is safe for a backtracking engine: no backreference and no
 *   repeated group that holds a repetition or an alternation (`(a+)+`, `(a|a)*`: the shapes that
 *   take exponential time). An unsafe pattern is skipped (the app's tool still sees the value);
 *   a safe one is checked on strings up to MAX_PATTERN_INPUT characters, so even a pattern that
 *   backtracks polynomially (`\s*\s*$`) stays bounded.
 *
 * Arguments nested deeper than MAX_NESTING are refused before any of this.
 */
import { Validator, type Schema } from '@cfworker/json-schema';
import { DtdrError } from '../base/errors.js';
import { MAX_NESTING, nestingDepth } from '../base/limits.js';
import type { JsonSchema } from '../base/types.js';

/** Longest string a schema's `pattern` is run on; a longer value is not checked against it. */
export const MAX_PATTERN_INPUT = 1000;

/** Whether `pattern` is free of the shapes that make a backtracking engine take exponential time. */
export function isSafePattern(pattern: string): boolean {
  if (pattern.length > 1000) return false;
  const groups: { repeats: boolean; alternates: boolean }[] = [{ repeats: false, alternates: false }];
  let last: { repeats: boolean; alternates: boolean } | 'atom' | undefined;
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i];
    if (c === '\\') {
      const next = pattern[i + 1] ?? '';
      if (/[1-9]/.test(next) || next === 'k') return false; // a backreference
      i++;
      last = 'atom';
    } else if (c === '[') {
      for (i++; i < pattern.length && pattern[i] !== ']'; i++) if (pattern[i] === '\\') i++;
      last = 'atom';
    } else if (c === '(') {
      groups.push({ repeats: false, alternates: false });
      last = undefined;
    } else if (c === ')') {
      if (groups.length < 2) return false;
      const group = groups.pop()!;
      if (group.repeats) groups[groups.length - 1].repeats = true;
      last = group;
    } else if (c === '|') {
      groups[groups.length - 1].alternates = true;
      last = undefined;
    } else if (c === '*' || c === '+' || c === '?' || c === '{') {
      let repeating = c !== '?';
      if (c === '{') {
        const m = /^\{(\d+)(,(\d*))?\}/.exec(pattern.slice(i));
        if (!m) {
          last = 'atom';
          continue;
        }
        repeating = m[2] !== undefined && (m[3] === '' || Number(m[3]) > 1);
        i += m[0].length - 1;
      }
      if (pattern[i + 1] === '?' || pattern[i + 1] === '+') i++; // lazy or possessive marker
      if (repeating) {
        if (last && last !== 'atom' && (last.repeats || last.alternates)) return false;
        groups[groups.length - 1].repeats = true;
      }
      last = 'atom';
    } else last = 'atom';
  }
  return true;
}

interface Prepared {
  validator: Validator;
  /** The schema as given (uniqueItems is read from it). */
  schema: JsonSchema;
  hasUnique: boolean;
}
const prepared = new WeakMap<JsonSchema, Prepared>();

/**
 * The schema without `uniqueItems`, each safe `pattern` limited to MAX_PATTERN_INPUT characters, each unsafe one
 * dropped.
 */
function runnableCopy(schema: unknown, found: { unique: boolean }): unknown {
  if (Array.isArray(schema)) return schema.map((s) => runnableCopy(s, found));
  if (!schema || typeof schema !== 'object') return schema;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(schema)) {
    if (key === 'uniqueItems') {
      if (value === true) found.unique = true;
      continue;
    }
    if (key === 'pattern' && typeof value === 'string') continue;
    // Property names in `properties` are data, not keywords: copy them as they are.
    out[key] =
      key === 'properties' ||
      key === '$defs' ||
      key === 'definitions' ||
      key === 'patternProperties' ||
      key === 'dependentSchemas'
        ? value && typeof value === 'object' && !Array.isArray(value)
          ? Object.fromEntries(
              Object.entries(value as Record<string, unknown>).map(([k, s]) => [k, runnableCopy(s, found)]),
            )
          : value
        : runnableCopy(value, found);
  }
  const pattern = (schema as { pattern?: unknown }).pattern;
  if (typeof pattern === 'string' && isSafePattern(pattern)) {
    out.allOf = [
      ...(Array.isArray(out.allOf) ? (out.allOf as unknown[]) : []),
      { if: { maxLength: MAX_PATTERN_INPUT }, then: { pattern } },
    ];
  }
  return out;
}

function prepare(schema: JsonSchema): Prepared {
  let p = prepared.get(schema);
  if (!p) {
    if (nestingDepth(schema, MAX_NESTING) > MAX_NESTING)
      throw new DtdrError('options', `a tool's parameters schema nests deeper than ${MAX_NESTING} levels`, {
        hint: 'flatten the schema',
      });
    const found = { unique: false };
    const copy = runnableCopy(schema, found);
    p = { validator: new Validator(copy as Schema, '2020-12', false), schema, hasUnique: found.unique };
    prepared.set(schema, p);
  }
  return p;
}

/** Canonical JSON: object keys sorted, so equal values (as JSON Schema defines equality) give equal text. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value && typeof value === 'object')
    return `{${Object.keys(value)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonical((value as Record<string, unknown>)[k])}`)
      .join(',')}}`;
  return JSON.stringify(value) ?? 'null';
}

/** The `uniqueItems` violations in `instance`, found by hashing; see the file notes for where they are followed. */
function duplicateItems(root: JsonSchema, instance: unknown): string[] {
  const problems: string[] = [];
  const resolve = (ref: string): unknown => {
    if (!ref.startsWith('#')) return undefined;
    let node: unknown = root;
    for (const part of ref.slice(1).split('/').filter(Boolean)) {
      const key = decodeURIComponent(part).replace(/~1/g, '/').replace(/~0/g, '~');
      node =
        node && typeof node === 'object' && Object.hasOwn(node, key)
          ? (node as Record<string, unknown>)[key]
          : undefined;
    }
    return node;
  };
  const visit = (schema: unknown, value: unknown, where: string, hops: number): void => {
    if (!schema || typeof schema !== 'object' || problems.length >= 5) return;
    const s = schema as Record<string, unknown>;
    if (typeof s.$ref === 'string' && hops < 32) visit(resolve(s.$ref), value, where, hops + 1);
    if (Array.isArray(s.allOf)) for (const sub of s.allOf) visit(sub, value, where, hops + 1);
    if (Array.isArray(value)) {
      if (s.uniqueItems === true) {
        const seen = new Map<string, number>();
        for (const [i, item] of value.entries()) {
          const key = canonical(item);
          const first = seen.get(key);
          if (first !== undefined) {
            problems.push(`${where || 'arguments'}: Duplicate items at indexes ${first} and ${i}.`);
            break;
          }
          seen.set(key, i);
        }
      }
      const prefix = Array.isArray(s.prefixItems) ? s.prefixItems : Array.isArray(s.items) ? s.items : [];
      value.forEach((item, i) =>
        visit(i < prefix.length ? prefix[i] : !Array.isArray(s.items) ? s.items : undefined, item, `${where}/${i}`, 0),
      );
    } else if (value && typeof value === 'object') {
      const properties =
        s.properties && typeof s.properties === 'object' ? (s.properties as Record<string, unknown>) : {};
      for (const [k, v] of Object.entries(value))
        visit(Object.hasOwn(properties, k) ? properties[k] : s.additionalProperties, v, `${where}/${k}`, 0);
    }
  };
  visit(root, instance, '', 0);
  return problems;
}

/** The problems with `args` under `schema` (empty when they match), each `location: message`. */
export function argumentProblems(schema: JsonSchema, args: unknown): string[] {
  if (nestingDepth(args, MAX_NESTING) > MAX_NESTING) return [`arguments: nest deeper than ${MAX_NESTING} levels`];
  const p = prepare(schema);
  const result = p.validator.validate(args);
  const problems = result.valid
    ? []
    : result.errors
        .filter(
          (e) => e.keyword !== 'properties' && e.keyword !== '$ref' && e.keyword !== 'allOf' && e.keyword !== 'if',
        )
        .map((e) => `${e.instanceLocation.replace(/^#\/?/, '') || 'arguments'}: ${e.error}`);
  if (p.hasUnique) problems.push(...duplicateItems(p.schema, args).map((m) => m.replace(/^\//, '')));
  return problems;
}

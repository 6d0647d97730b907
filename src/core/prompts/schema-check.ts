/**
 * Checking a model's arguments against a tool's own JSON Schema in bounded time. The schema comes
 * from the app or an MCP server and the arguments from a model, so neither may stall the app: any
 * schema and any arguments are checked, or refused with a DtdrError, within a fixed amount of work.
 * The validator (@cfworker/json-schema) runs on a copy of the schema in which:
 *
 * - every object and array is a counting proxy: each keyword the validator reads, on each subschema
 *   it applies, is one step of at most MAX_CHECK_READS per check. A `$ref`/`allOf` fan-out that
 *   applies 2^30 subschemas to one value, or an `anyOf` of 2^16 whose errors overflow the stack, is
 *   refused with a DtdrError when the budget runs out, never a hang or a raw RangeError;
 * - `pattern` becomes a format of ours that runs the expression only where pattern-cost.ts prices it
 *   within MAX_PATTERN_TEST for the value's length (an exponential shape never; `^a*a*a*b$` on short
 *   values; `^[a-z]+-\d+$` on values up to MAX_PATTERN_INPUT characters) and charges that price to
 *   MAX_PATTERN_WORK per check; a value it may not run on is not checked against it (the app's tool
 *   still sees the value). `patternProperties` keys run on property names, which cannot be skipped:
 *   an exponential one refuses the schema, and each time the validator reads one it is charged for
 *   every property name of the largest object at the price of the longest;
 * - each `format` the validator knows is charged by the value's length, and `url` (whose regular
 *   expression takes seconds on 36 characters) is checked with the URL parser instead;
 * - `uniqueItems` is taken out and checked by hashing each item's canonical JSON (keys sorted), not
 *   pair by pair. It is followed where an array's schema is certain: through `properties`,
 *   `additionalProperties`, `items`, `prefixItems`, `allOf` and local `$ref`s; under `anyOf`,
 *   `oneOf`, `not` and `if` (where a branch may not apply) it is not checked.
 *
 * Arguments nested deeper than MAX_NESTING are refused before any of this.
 */
import { format as formats, Validator, type Schema } from '@cfworker/json-schema';
import { DtdrError } from '../base/errors.js';
import { MAX_NESTING, nestingDepth } from '../base/limits.js';
import type { JsonSchema } from '../base/types.js';
import { longestWithin, patternPrice } from './pattern-cost.js';
import {
  chargeRead,
  closeBudget,
  countedArguments,
  countedData,
  counting,
  countingRequired,
  MAX_CHECK_READS,
  MAX_PATTERN_WORK,
  openBudget,
  OverBudget,
  patternMap,
  work,
} from './schema-budget.js';

/** Longest string a schema's `pattern` is run on; a longer value is not checked against it. */
export const MAX_PATTERN_INPUT = 1000;
/** Most one pattern test may cost (pattern-cost.ts units, a few ns each); a costlier value is not checked by it. */
export const MAX_PATTERN_TEST = 10_000_000;

/** Whether `pattern` is free of the shapes that make a backtracking engine take exponential time. */
export function isSafePattern(pattern: string): boolean {
  return patternPrice(pattern) !== undefined;
}

/** The format that stands for `pattern` in the runnable copy, registered once per pattern. */
function patternFormat(pattern: string): string | undefined {
  const name = `dtdr:pattern:${pattern}`;
  if (Object.hasOwn(formats, name)) return name;
  const price = patternPrice(pattern);
  if (!price) return undefined;
  const longest = longestWithin(price, MAX_PATTERN_TEST, MAX_PATTERN_INPUT);
  if (longest === 0) return undefined;
  const regex = new RegExp(pattern, 'u');
  formats[name] = (value: string) => {
    if (value.length > longest) return true; // not checked: see the file notes
    work(price(value.length));
    return regex.test(value);
  };
  return name;
}

/** A URL with an http(s) or ftp scheme and a host, by the URL parser (linear) instead of cfworker's regex. */
function isUrl(value: string): boolean {
  try {
    const url = new URL(value);
    return /^(https?|ftp):$/.test(url.protocol) && url.hostname !== '';
  } catch {
    return false;
  }
}

/** The format that stands for a known format in the runnable copy: charged by length; `url` by the URL parser. */
function knownFormat(name: string): string {
  const ours = `dtdr:format:${name}`;
  if (Object.hasOwn(formats, ours)) return ours;
  const check = name === 'url' ? isUrl : formats[name];
  formats[ours] = (value: string) => {
    work(value.length + 1);
    return check(value);
  };
  return ours;
}

/**
 * The format that stands for `minLength`/`maxLength`: the validator would count a string's length
 * (in code points) at every subschema applied to it, uncharged; here each count is charged.
 */
function lengthFormat(min: number, max: number): string {
  const name = `dtdr:length:${min}:${max}`;
  if (!Object.hasOwn(formats, name))
    formats[name] = (value: string) => {
      work(value.length + 1);
      // A string's code points number between half its UTF-16 length and all of it.
      if (value.length < min || value.length > 2 * max) return false;
      let length = 0;
      for (const _ of value) length++;
      return length >= min && length <= max;
    };
  return name;
}

interface Prepared {
  validator: Validator;
  /** The schema as given (uniqueItems is read from it). */
  schema: JsonSchema;
  hasUnique: boolean;
}
const prepared = new WeakMap<JsonSchema, Prepared>();

/** Maps whose keys are names (of properties, definitions), not keywords: copied key by key. */
const NAME_MAPS = new Set(['properties', '$defs', 'definitions', 'patternProperties', 'dependentSchemas']);
/** Keywords whose values are data, never schemas: copied as they are (counted where the validator reads them). */
const DATA = new Set(['enum', 'const', 'default', 'examples', 'required', 'dependentRequired']);

/**
 * The runnable copy (see the file notes): counting proxies, `uniqueItems` out, each `pattern` and
 * known `format` replaced by a format of ours, each `patternProperties` key priced.
 */
function runnableCopy(schema: unknown, found: { unique: boolean }, where: string): unknown {
  if (Array.isArray(schema))
    return new Proxy(
      schema.map((s, i) => runnableCopy(s, found, `${where}/${i}`)),
      counting,
    );
  if (!schema || typeof schema !== 'object') return schema;
  const out: Record<string, unknown> = {};
  const checks: unknown[] = [];
  for (const [key, value] of Object.entries(schema)) {
    if (key === 'uniqueItems') {
      if (value === true) found.unique = true;
      continue;
    }
    if (key === 'pattern' && typeof value === 'string') {
      const name = patternFormat(value);
      if (name) checks.push(new Proxy({ format: name }, counting));
      continue;
    }
    if ((key === 'minLength' || key === 'maxLength') && typeof value === 'number') continue; // lengthFormat below
    if (key === 'format' && typeof value === 'string' && Object.hasOwn(formats, value) && !value.startsWith('dtdr:')) {
      out.format = knownFormat(value);
      continue;
    }
    if (DATA.has(key) || !NAME_MAPS.has(key) || !value || typeof value !== 'object' || Array.isArray(value)) {
      out[key] =
        key === 'required' && Array.isArray(value)
          ? new Proxy([...(value as unknown[])], countingRequired)
          : DATA.has(key)
            ? countedData(value)
            : runnableCopy(value, found, `${where}/${key}`);
      continue;
    }
    const map: Record<string, unknown> = {};
    for (const [name, sub] of Object.entries(value as Record<string, unknown>))
      map[name] = runnableCopy(sub, found, `${where}/${key}/${name}`);
    if (key !== 'patternProperties') {
      out[key] = new Proxy(map, counting);
      continue;
    }
    const prices = new Map<string, (n: number) => number>();
    for (const name of Object.keys(map)) {
      const price = patternPrice(name);
      if (!price)
        throw new DtdrError(
          'options',
          `a tool's parameters schema has a patternProperties key ${JSON.stringify(name.slice(0, 80))} that can ` +
            'take exponential time (a repeated group holding a repetition or an alternation, or a backreference)',
          { field: `${where}/patternProperties`, hint: 'rewrite the pattern without nested or overlapping repetition' },
        );
      prices.set(name, price);
    }
    out[key] = patternMap(map, prices);
  }
  const { minLength, maxLength } = schema as { minLength?: unknown; maxLength?: unknown };
  if (typeof minLength === 'number' || typeof maxLength === 'number')
    checks.push(
      new Proxy(
        {
          format: lengthFormat(
            typeof minLength === 'number' ? minLength : 0,
            typeof maxLength === 'number' ? maxLength : Infinity,
          ),
        },
        counting,
      ),
    );
  if (checks.length > 0)
    out.allOf = new Proxy([...(Array.isArray(out.allOf) ? (out.allOf as unknown[]) : []), ...checks], counting);
  return new Proxy(out, counting);
}

function prepare(schema: JsonSchema): Prepared {
  let p = prepared.get(schema);
  if (!p) {
    if (nestingDepth(schema, MAX_NESTING) > MAX_NESTING)
      throw new DtdrError('options', `a tool's parameters schema nests deeper than ${MAX_NESTING} levels`, {
        hint: 'flatten the schema',
      });
    const found = { unique: false };
    const copy = runnableCopy(schema, found, 'parameters');
    try {
      p = { validator: new Validator(copy as Schema, '2020-12', false), schema, hasUnique: found.unique };
    } catch (cause) {
      throw new DtdrError('options', `a tool's parameters schema cannot be used: ${messageOf(cause)}`, { cause });
    }
    prepared.set(schema, p);
  }
  return p;
}

const messageOf = (e: unknown) => (e instanceof Error ? e.message : String(e)).slice(0, 300);

/** The most keys of one object, and the longest key, in `value` (walked without recursion). */
function keyShape(value: unknown): { keys: number; longest: number } {
  let keys = 0;
  let longest = 0;
  const stack = [value];
  while (stack.length > 0) {
    const v = stack.pop();
    if (!v || typeof v !== 'object') continue;
    if (Array.isArray(v)) {
      for (const x of v) if (x && typeof x === 'object') stack.push(x);
      continue;
    }
    const own = Object.keys(v);
    keys = Math.max(keys, own.length);
    for (const k of own) {
      longest = Math.max(longest, k.length);
      const x = (v as Record<string, unknown>)[k];
      if (x && typeof x === 'object') stack.push(x);
    }
  }
  return { keys, longest };
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
    chargeRead(); // a $ref/allOf fan-out is walked here too
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

/**
 * The problems with `args` under `schema` (empty when they match), each `location: message`.
 *
 * @throws {@link DtdrError} `tool-call` when the check would take more than its budget (see the
 *   file notes: a schema that fans out, or arguments too large for it), `options` when the schema
 *   cannot be used (an exponential patternProperties key, an unresolvable `$ref`). `tool` names the
 *   tool in the message.
 */
export function argumentProblems(schema: JsonSchema, args: unknown, tool?: string): string[] {
  if (nestingDepth(args, MAX_NESTING) > MAX_NESTING) return [`arguments: nest deeper than ${MAX_NESTING} levels`];
  const whose = tool === undefined ? "a tool's" : `${JSON.stringify(tool)}'s`;
  let p: Prepared;
  try {
    p = prepare(schema);
  } catch (error) {
    if (DtdrError.isInstance(error)) throw error;
    throw new DtdrError('options', `${whose} parameters schema cannot be used: ${messageOf(error)}`, { cause: error });
  }
  const shape = keyShape(args);
  openBudget(shape);
  try {
    const result = p.validator.validate(countedArguments(args));
    const problems = result.valid
      ? []
      : result.errors
          .filter(
            (e) => e.keyword !== 'properties' && e.keyword !== '$ref' && e.keyword !== 'allOf' && e.keyword !== 'if',
          )
          .map(
            (e) =>
              `${e.instanceLocation.replace(/^#\/?/, '') || 'arguments'}: ${e.error
                .replace(/^String does not match format "dtdr:pattern:[^]*"\.$/, 'String does not match pattern.')
                .replace(
                  /^String does not match format "dtdr:length:(\d+):(\d+|Infinity)"\.$/,
                  (_, min: string, max: string) =>
                    `String length is not within ${min} and ${max === 'Infinity' ? 'any' : max} characters.`,
                )
                .replace(/format "dtdr:format:/, 'format "')}`,
          );
    if (p.hasUnique) problems.push(...duplicateItems(p.schema, args).map((m) => m.replace(/^\//, '')));
    return problems;
  } catch (error) {
    if (DtdrError.isInstance(error)) throw error;
    if (error instanceof OverBudget || error instanceof RangeError)
      throw new DtdrError(
        'tool-call',
        `checking arguments against ${whose} parameters schema needs more than its budget ` +
          `(${MAX_CHECK_READS.toLocaleString('en-US')} reads, ` +
          `${MAX_PATTERN_WORK.toLocaleString('en-US')} pattern steps): refused unchecked`,
        {
          hint:
            'the schema applies too many subschemas to one value ($ref/allOf/anyOf fan-out), runs costly ' +
            'patterns on many values, or the arguments are too large for it; simplify the schema',
          cause: error,
        },
      );
    throw new DtdrError('options', `${whose} parameters schema cannot be checked: ${messageOf(error)}`, {
      cause: error,
    });
  } finally {
    closeBudget();
  }
}

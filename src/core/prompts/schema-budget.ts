/**
 * The work budget of one schema check and the counting proxies that spend it: every read the
 * validator makes, and every pattern, property-name and format test, is charged here, and the check
 * is refused (OverBudget) when the budget runs out. Apart from schema-check.ts, which builds the
 * runnable schema and reports the problems.
 */
/** Reads of the schema and arguments the validator may make in one check (each subschema applied: 50 or more). */
export const MAX_CHECK_READS = 1_000_000;
/** Most all the pattern, property-name and format tests of one check may cost together. */
export const MAX_PATTERN_WORK = 100_000_000;

/** Thrown inside the validator when a check's budget runs out; turned into a DtdrError by argumentProblems. */
export class OverBudget extends Error {}

/**
 * The budget of the check running now. Checks are synchronous and never nest, so one module-level
 * budget serves them all; while none runs (the validator being built) `reads` is infinite.
 */
let reads = Infinity;
let patternWork = 0;
/** What testing one patternProperties key on every property name of the largest object costs, in this check. */
let keyWork: (price: (n: number) => number) => number = () => 0;
function over(): never {
  throw new OverBudget();
}
/** Charges `units` of pattern, property-name or format testing to the check running now (none while none runs). */
export function work(units: number): void {
  if (reads !== Infinity && (patternWork += units) > MAX_PATTERN_WORK) over();
}

/** Opens a check's budget: MAX_CHECK_READS reads, no pattern work yet, property-name tests priced by `shape`. */
export function openBudget(shape: { keys: number; longest: number }): void {
  keyWork = (price) => shape.keys * price(shape.longest);
  patternWork = 0;
  reads = MAX_CHECK_READS;
}

/** Closes it: while no check runs, reads are unlimited and nothing is charged. */
export function closeBudget(): void {
  reads = Infinity;
  patternWork = 0;
  keyWork = () => 0;
}

/** One read outside the validator (a walk of our own), charged like the validator's. */
export function chargeRead(): void {
  if (--reads < 0) over();
}

/** Every read the validator makes of the schema or the arguments goes through here: one step each. */
export const counting: ProxyHandler<object> = {
  get(target, key) {
    if (--reads < 0) over();
    return (target as Record<PropertyKey, unknown>)[key];
  },
  has(target, key) {
    if (--reads < 0) over();
    return key in target;
  },
  ownKeys(target) {
    const keys = Reflect.ownKeys(target);
    if ((reads -= keys.length + 1) < 0) over();
    return keys;
  },
};

/**
 * For `required`: each name the validator reads may make an error object (a missing property), which
 * costs a few plain reads; counted as REQUIRED_READ of them.
 */
const REQUIRED_READ = 4;
export const countingRequired: ProxyHandler<object> = {
  ...counting,
  get(target, key) {
    if ((reads -= REQUIRED_READ) < 0) over();
    return (target as Record<PropertyKey, unknown>)[key];
  },
};

/** The arguments behind counting proxies (a copy: nested at most MAX_NESTING levels, checked before). */
export function countedArguments(value: unknown): unknown {
  if (!value || typeof value !== 'object') return value;
  if (Array.isArray(value)) return new Proxy(value.map(countedArguments), counting);
  const copy: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) copy[k] = countedArguments(v);
  return new Proxy(copy, counting);
}

/** A patternProperties map: reading a pattern's subschema means testing it on every property name of an object. */
export function patternMap(map: Record<string, unknown>, prices: Map<string, (n: number) => number>): object {
  return new Proxy(map, {
    ...counting,
    get(target, key) {
      if (--reads < 0) over();
      const price = typeof key === 'string' ? prices.get(key) : undefined;
      if (price) work(keyWork(price));
      return (target as Record<PropertyKey, unknown>)[key];
    },
  });
}

/** Data the validator compares or loops over (`enum`, `const`, `required`), behind counting proxies, unchanged. */
export function countedData(value: unknown): unknown {
  if (!value || typeof value !== 'object') return value;
  if (Array.isArray(value)) return new Proxy(value.map(countedData), counting);
  return new Proxy(Object.fromEntries(Object.entries(value).map(([k, v]) => [k, countedData(v)])), counting);
}

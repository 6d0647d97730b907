/**
 * How long a schema's regular expression may run on a string of a given length, in a backtracking
 * engine (every JavaScript engine is one). A schema `pattern` or `patternProperties` key comes from
 * an app or an MCP server and the string from a model, so neither may stall the app.
 *
 * The pattern is parsed into sequences, alternations and quantified atoms, and:
 *
 * - refused outright (exponential time) when it has a backreference, or a repeated group holding an
 *   alternation or a quantifier that can match a varying count (`(a+)+`, `(a|aa)*`, `(a?a?)*`,
 *   `((a|aa))+`), however deep inside that group;
 * - otherwise priced: the ways the engine can split a string of `n` characters among its
 *   quantifiers, bounded by the product, over each sequence, of `n + 1` for every quantifier whose
 *   count varies (`^a*a*a*a*a*a*b$`: (n+1)^6), times `n + 1` start positions when the pattern is
 *   not anchored with `^`, times `n + 1` for the characters each way reads. A quantified character
 *   followed by a literal character it cannot match (`[a-z]+-`) goes on from one place only and
 *   multiplies by 1: so ordinary patterns (`^[a-z]+-\d+$`, an e-mail shape) price at a small power
 *   of `n` and run on long values, while stacked overlapping quantifiers price high and run only on
 *   short ones.
 *
 * The price is an upper bound on the engine's work up to a constant (a few nanoseconds a unit,
 * measured on V8), not an estimate of it.
 */

/** Patterns longer than this are not analysed (and not run). */
export const MAX_PATTERN_SOURCE = 1000;

type Node =
  { kind: 'char'; source: string; literal?: string } | { kind: 'anchor' } | { kind: 'group'; branches: Item[][] };
interface Item {
  atom: Node;
  min: number;
  max: number;
}

class Unsafe extends Error {}

/** A recursive-descent reader of a regular expression's structure, enough to bound its matching cost. */
class PatternParser {
  i = 0;
  constructor(readonly pattern: string) {}

  alternation(): Item[][] {
    const branches: Item[][] = [[]];
    while (this.i < this.pattern.length) {
      const c = this.pattern[this.i];
      if (c === ')') break;
      if (c === '|') {
        this.i++;
        branches.push([]);
        continue;
      }
      const atom = this.atom();
      const quantified = this.quantifier();
      branches[branches.length - 1].push({ atom, ...(quantified ?? { min: 1, max: 1 }) });
    }
    return branches;
  }

  atom(): Node {
    const c = this.pattern[this.i];
    if (c === '^' || c === '$') {
      this.i++;
      return { kind: 'anchor' };
    }
    if (c === '(') {
      this.i++;
      if (this.pattern[this.i] === '?') {
        // (?: (?= (?! (?<= (?<! (?<name>
        this.i++;
        if (this.pattern[this.i] === '<' && this.pattern[this.i + 1] !== '=' && this.pattern[this.i + 1] !== '!') {
          const close = this.pattern.indexOf('>', this.i);
          if (close < 0) throw new Unsafe();
          this.i = close + 1;
        } else this.i += this.pattern[this.i] === '<' ? 2 : 1;
      }
      const branches = this.alternation();
      if (this.pattern[this.i] !== ')') throw new Unsafe();
      this.i++;
      return { kind: 'group', branches };
    }
    if (c === '[') {
      const start = this.i;
      for (this.i++; this.i < this.pattern.length && this.pattern[this.i] !== ']'; this.i++)
        if (this.pattern[this.i] === '\\') this.i++;
      this.i++;
      return { kind: 'char', source: this.pattern.slice(start, this.i) };
    }
    if (c === '\\') {
      const next = this.pattern[this.i + 1] ?? '';
      if (/[1-9]/.test(next) || next === 'k') throw new Unsafe(); // a backreference
      const start = this.i;
      this.i += 2;
      if (
        (next === 'u' && this.pattern[this.i] === '{') ||
        ((next === 'p' || next === 'P') && this.pattern[this.i] === '{')
      ) {
        const close = this.pattern.indexOf('}', this.i);
        this.i = close < 0 ? this.pattern.length : close + 1;
      } else if (next === 'u') this.i += 4;
      else if (next === 'x') this.i += 2;
      else if (next === 'c') this.i += 1;
      const source = this.pattern.slice(start, this.i);
      // An escaped punctuation character is that character.
      return /[^A-Za-z0-9]/.test(next) && source.length === 2
        ? { kind: 'char', source, literal: next }
        : { kind: 'char', source };
    }
    this.i++;
    return c === '.' ? { kind: 'char', source: c } : { kind: 'char', source: c, literal: c };
  }

  quantifier(): { min: number; max: number } | undefined {
    const c = this.pattern[this.i];
    let q: { min: number; max: number } | undefined;
    if (c === '*') q = { min: 0, max: Infinity };
    else if (c === '+') q = { min: 1, max: Infinity };
    else if (c === '?') q = { min: 0, max: 1 };
    else if (c === '{') {
      const m = /^\{(\d+)(,(\d*))?\}/.exec(this.pattern.slice(this.i, this.i + 24));
      if (!m) return undefined;
      const min = Number(m[1]);
      q = { min, max: m[2] === undefined ? min : m[3] === '' ? Infinity : Number(m[3]) };
      this.i += m[0].length - 1;
    }
    if (!q) return undefined;
    this.i++;
    if (this.pattern[this.i] === '?') this.i++; // lazy: the same paths, tried in another order
    return q;
  }
}

/** Parses `pattern` (as the `u` flag reads it) into alternatives of quantified atoms; Unsafe on a backreference. */
function parse(pattern: string): Item[][] {
  const parser = new PatternParser(pattern);
  const top = parser.alternation();
  if (parser.i < pattern.length) throw new Unsafe(); // an unmatched ')'
  return top;
}

/** Whether `items` can match in more than one way: an alternation or a quantifier whose count varies. */
function ambiguous(branches: Item[][]): boolean {
  if (branches.length > 1) return true;
  return branches.some((seq) =>
    seq.some((it) => it.max > it.min || (it.atom.kind === 'group' && ambiguous(it.atom.branches))),
  );
}

/** Throws Unsafe where a group repeated a varying number of times holds anything ambiguous (exponential paths). */
function checkNested(branches: Item[][]): void {
  for (const seq of branches)
    for (const it of seq) {
      if (it.atom.kind !== 'group') continue;
      if (it.max > 1 && it.max > it.min && ambiguous(it.atom.branches)) throw new Unsafe();
      checkNested(it.atom.branches);
    }
}

const stops = new WeakMap<Item, boolean>();
/** Whether the quantified character of `item` cannot match `next`'s one literal character (one way on, then). */
function stopsAt(item: Item, next: Item | undefined): boolean {
  const known = stops.get(item);
  if (known !== undefined) return known;
  const { atom } = item;
  let result = false;
  if (atom.kind === 'char' && next && next.min >= 1 && next.atom.kind === 'char' && next.atom.literal !== undefined) {
    try {
      result = !new RegExp(`^(?:${atom.source})$`, 'u').test(next.atom.literal);
    } catch {
      result = false;
    }
  }
  stops.set(item, result);
  return result;
}

function priceBranches(branches: Item[][], n: number): number {
  let total = 0;
  for (const seq of branches) {
    let product = 1;
    for (const [k, it] of seq.entries()) {
      const inner = it.atom.kind === 'group' ? priceBranches(it.atom.branches, n) : 1;
      // A fixed count repeats the atom's own choices; a varying count adds where to stop.
      let price = inner ** Math.min(Math.max(it.min, 1), 64);
      if (it.max > it.min && !stopsAt(it, seq[k + 1])) price *= Math.min(it.max - it.min, n) + 1;
      product *= price;
    }
    total += product;
  }
  return total;
}

/**
 * The price of running `pattern` on a string of `n` characters (see the file notes), as a function
 * of `n`; undefined when the pattern can take exponential time, has a backreference, does not
 * parse, or is longer than MAX_PATTERN_SOURCE.
 */
export function patternPrice(pattern: string): ((n: number) => number) | undefined {
  if (pattern.length > MAX_PATTERN_SOURCE) return undefined;
  let tree: Item[][];
  try {
    new RegExp(pattern, 'u');
    tree = parse(pattern);
    checkNested(tree);
  } catch {
    return undefined;
  }
  const anchored = tree.every((seq) => seq[0]?.atom.kind === 'anchor');
  return (n) => (anchored ? 1 : n + 1) * priceBranches(tree, n) * (n + 1);
}

/** The longest string, up to `cap` characters, on which `price` stays within `steps`; 0 when none does. */
export function longestWithin(price: (n: number) => number, steps: number, cap: number): number {
  if (price(cap) <= steps) return cap;
  let lo = 0;
  let hi = cap;
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2);
    if (price(mid) <= steps) lo = mid;
    else hi = mid - 1;
  }
  return price(lo) <= steps ? lo : 0;
}

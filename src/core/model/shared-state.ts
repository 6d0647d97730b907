/**
 * The state `forget` replays from (a model's `learning.before`) is a second copy of the model's
 * state, and much of it is the same as the live state's: learning leaves DTDR-G's head and its
 * replay sample as fitted, and no method's learning touches the tool vectors (request coverage's
 * counts change as runs are learned: then it is written twice). A saved model writes such a part
 * once: `learning.same` lists the parts of `before` equal to the live state's, which `before` then
 * leaves out, and loading copies them back before `before` is checked like any artifact.
 */
import { DtdrError } from '../base/errors.js';

/** The parts of a state that may be shared, as paths from the artifact; nothing else is read from `same`. */
export const SHAREABLE = [
  'state.evidence.replay',
  'state.evidence.head',
  'state.toolVectors',
  'state.coverage',
  'state.sequenceWords',
  'state.combinations',
  'state.diagnostics',
] as const;

type Json = unknown;

function at(root: Json, path: string): { parent: Record<string, Json>; key: string } | undefined {
  const keys = path.split('.');
  let node = root;
  for (const key of keys.slice(0, -1)) {
    if (!node || typeof node !== 'object' || Array.isArray(node) || !Object.hasOwn(node, key)) return undefined;
    node = (node as Record<string, Json>)[key];
  }
  if (!node || typeof node !== 'object' || Array.isArray(node)) return undefined;
  return { parent: node as Record<string, Json>, key: keys[keys.length - 1] };
}

/** Whether two JSON values are equal (numbers by value: the state's arrays are compared element by element). */
function same(a: Json, b: Json): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a)) {
    const other = b as Json[];
    if (a.length !== other.length) return false;
    for (let i = 0; i < a.length; i++) if (!same(a[i], other[i])) return false;
    return true;
  }
  const ka = Object.keys(a);
  const kb = Object.keys(b);
  if (ka.length !== kb.length) return false;
  for (const k of ka)
    if (!Object.hasOwn(b, k) || !same((a as Record<string, Json>)[k], (b as Record<string, Json>)[k])) return false;
  return true;
}

/** `before` without the parts equal to `live`'s (a shallow copy along the paths), and which they are. */
export function withoutShared<T>(before: T, live: Json): { before: T; same: string[] } {
  const out = copyAlongPaths(before) as Json;
  const shared: string[] = [];
  for (const path of SHAREABLE) {
    const mine = at(out, path);
    const theirs = at(live, path);
    if (!mine || !theirs || !Object.hasOwn(mine.parent, mine.key) || !Object.hasOwn(theirs.parent, theirs.key))
      continue;
    if (!same(mine.parent[mine.key], theirs.parent[theirs.key])) continue;
    delete mine.parent[mine.key];
    shared.push(path);
  }
  return { before: out as T, same: shared };
}

/** `before` with the parts `same` lists copied from `live` (each a deep copy); a DtdrError for anything else. */
export function withShared(before: Json, live: Json, sameParts: unknown, source?: string): Json {
  if (sameParts === undefined) return before;
  const fail = (field: string, message: string): never => {
    throw new DtdrError('artifact', message, { file: source, field });
  };
  if (!Array.isArray(sameParts)) fail('learning.same', 'must list parts of the state');
  const out = copyAlongPaths(before);
  (sameParts as unknown[]).forEach((path, i) => {
    if (typeof path !== 'string' || !(SHAREABLE as readonly string[]).includes(path))
      fail(`learning.same[${i}]`, `names no part of the state that may be shared: ${JSON.stringify(path)}`);
    const theirs = at(live, path as string);
    const mine = at(out, path as string);
    if (!theirs || !Object.hasOwn(theirs.parent, theirs.key))
      fail(`learning.same[${i}]`, `names a part the model's state does not have: ${path as string}`);
    if (!mine || Object.hasOwn(mine.parent, mine.key))
      fail(`learning.same[${i}]`, `names a part learning.before has or cannot hold: ${path as string}`);
    mine!.parent[mine!.key] = structuredClone(theirs!.parent[theirs!.key]);
  });
  return out;
}

/** A copy of `v` whose objects along every path in SHAREABLE are new (arrays and other values shared). */
function copyAlongPaths<T>(v: T): T {
  if (!v || typeof v !== 'object' || Array.isArray(v)) return v;
  const out = { ...(v as Record<string, Json>) };
  for (const key of ['state']) {
    const state = out[key];
    if (state && typeof state === 'object' && !Array.isArray(state)) {
      const copy = { ...(state as Record<string, Json>) };
      const evidence = copy.evidence;
      if (evidence && typeof evidence === 'object' && !Array.isArray(evidence))
        copy.evidence = { ...(evidence as Record<string, Json>) };
      out[key] = copy;
    }
  }
  return out as T;
}

/**
 * Tools added and removed after training, as functions from one snapshot of a model's tool set to
 * the next: `Dtdr` computes the next snapshot, then swaps it in at once, so a ranking never sees
 * half a change. A method that takes tools natively (its registry entry's `withTools`,
 * `withoutTool`, `withToolVectors`: DTDR-G) grows or shrinks its own state; for the others the
 * changes are kept beside it (toolset.ts) and applied by `ChangedToolSet`.
 */
import type { Encoder } from '../base/encoder.js';
import { DtdrError } from '../base/errors.js';
import { toolText } from '../base/text.js';
import type { Plan, ToolSpec } from '../base/types.js';
import { labelsOf, methodEntry } from '../retrieval/methods.js';
import type { Retriever } from '../retrieval/types.js';
import { withTools, type ModelArtifact } from './artifact.js';
import { checkAddedTools, checkRemovedTools, withoutAddedTool, type ToolChanges } from './toolset.js';

/** What tool-set changes read and replace of a model. */
export interface ToolSetSnapshot {
  /** The retriever as trained (or natively extended), before `changes` are applied. */
  base: Retriever;
  /** The tools `base` ranks, in label order. */
  baseTools: ToolSpec[];
  changes: ToolChanges;
  /** The state before the forgettable learned runs, which forget replays from: changed alike. */
  beforeLearning?: ModelArtifact;
}

/** The model's encoder, or a DtdrError saying that `what` needs it. */
export function requireEncoder(encoder: Encoder | undefined, method: string, what: string): Encoder {
  if (!encoder)
    throw new DtdrError('encoder', `${what} to a ${method} model needs its encoder`, {
      hint: 'load the model with the encoder it was trained with',
    });
  return encoder;
}

/** The snapshot with `specs` added (a removed tool's name brings it back with the spec given). */
export async function withAddedTools(
  s: ToolSetSnapshot,
  specs: ToolSpec[],
  encoder: Encoder | undefined,
): Promise<ToolSetSnapshot> {
  const removed = new Set(s.changes.removed);
  const back = specs.filter((t) => removed.has(t.name));
  const fresh = specs.filter((t) => !removed.has(t.name)).map((t) => ({ ...t }));
  checkAddedTools(
    fresh,
    [...s.baseTools, ...s.changes.added].map((t) => t.name),
  );
  let next = { ...s };
  if (back.length > 0) {
    next.changes = { ...next.changes, removed: next.changes.removed.filter((n) => !back.some((t) => t.name === n)) };
    next = await withReplacedSpecs(next, back, encoder);
  }
  if (next.changes.dropped?.some((n) => fresh.some((t) => t.name === n)))
    next.changes = { ...next.changes, dropped: next.changes.dropped.filter((n) => !fresh.some((t) => t.name === n)) };
  if (fresh.length === 0) return next;
  const entry = methodEntry(next.base.method)!;
  if (entry.withTools) {
    // The method takes tools natively (its registry entry's withTools): its state grows.
    const extend = entry.withTools;
    const known = requireEncoder(encoder, next.base.method, 'adding tools');
    const embedded = await known.embed(fresh.map((t) => toolText(t.name, t.description)));
    const vectors = embedded.map((v) => Array.from(v));
    const state = extend(next.base.state(), next.baseTools.length, vectors);
    const before = next.beforeLearning;
    if (before)
      next.beforeLearning = withTools(
        before,
        [...before.tools, ...fresh.map((t) => ({ name: t.name, description: t.description }))],
        extend(before.state, before.tools.length, vectors),
      );
    next.baseTools = [...next.baseTools, ...fresh];
    next.base = retrieverFromState(next.base, next.baseTools, state, known);
    return next;
  }
  const added = [...next.changes.added, ...fresh];
  let vectors: number[][] | null = null;
  if (encoder && (next.base.needs.query || next.base.needs.context)) {
    const all = [...next.baseTools, ...added];
    vectors = (await encoder.embed(all.map((t) => toolText(t.name, t.description)))).map((v) => Array.from(v));
  }
  next.changes = { ...next.changes, added, vectors };
  return next;
}

/**
 * The snapshot with `names` removed (checked against `current`, the tools the model offers now).
 * Added tools that nothing was learned about (`learned`: the runs learned since training) leave
 * the model; the others are masked.
 */
export function withRemovedTools(
  s: ToolSetSnapshot,
  names: string[],
  current: string[],
  learned: readonly Plan[],
  encoder: Encoder | undefined,
): ToolSetSnapshot {
  checkRemovedTools(names, current);
  let next = { ...s };
  const masked = names.filter((name) => {
    const dropped = withoutGatedTool(next, name, encoder);
    if (dropped) {
      next = dropped;
      return false;
    }
    const without = withoutAddedTool(next.changes, next.baseTools.length, name, learned);
    if (without) next.changes = without;
    return !without;
  });
  next.changes = { ...next.changes, removed: [...next.changes.removed, ...masked] };
  return next;
}

/**
 * The snapshot with an added, never-demonstrated tool taken out of the method's state (and the
 * state forget replays from); undefined when the method cannot.
 */
function withoutGatedTool(s: ToolSetSnapshot, name: string, encoder: Encoder | undefined): ToolSetSnapshot | undefined {
  const [r, before] = [s.baseTools.findIndex((t) => t.name === name), s.beforeLearning];
  const rBefore = before ? before.tools.findIndex((t) => t.name === name) : -1;
  const without = methodEntry(s.base.method)?.withoutTool;
  if (!without || !encoder || r < 0) return undefined;
  const state = without(s.base.state(), s.baseTools.length, r);
  const stateBefore = before ? without(before.state, before.tools.length, rBefore) : undefined;
  if (state === undefined || (before && stateBefore === undefined)) return undefined;
  const baseTools = s.baseTools.filter((_, i) => i !== r);
  return {
    base: retrieverFromState(s.base, baseTools, state, encoder),
    baseTools,
    changes: { ...s.changes, dropped: [...(s.changes.dropped ?? []), name] },
    beforeLearning: before
      ? withTools(
          before,
          before.tools.filter((_, i) => i !== rBefore),
          stateBefore,
        )
      : before,
  };
}

/** The method's retriever (that of `like`) over `tools` from its saved `state`. */
export function retrieverFromState(
  like: Retriever,
  tools: ToolSpec[],
  state: unknown,
  encoder: Encoder | undefined,
): Retriever {
  const entry = methodEntry(like.method)!;
  return entry.fromState({
    tools,
    labels: labelsOf(tools),
    dim: requireEncoder(encoder, like.method, 'changing tools').dimension,
    historyLength: like.historyLength,
    state: state as Record<string, unknown>,
  });
}

/** The snapshot with tools it has (removed ones added back) given new specs: their descriptions and schemas. */
async function withReplacedSpecs(
  s: ToolSetSnapshot,
  specs: ToolSpec[],
  encoder: Encoder | undefined,
): Promise<ToolSetSnapshot> {
  const byName = new Map(specs.map((t) => [t.name, { ...t }]));
  const update = (tools: ToolSpec[]) => tools.map((t) => byName.get(t.name) ?? t);
  const revector = methodEntry(s.base.method)?.withToolVectors;
  if (revector) {
    const known = requireEncoder(encoder, s.base.method, 'adding tools');
    const vectors = (await known.embed(specs.map((t) => toolText(t.name, t.description)))).map((v) => Array.from(v));
    const at = (tools: ToolSpec[]) => specs.map((t) => tools.findIndex((b) => b.name === t.name));
    const baseTools = update(s.baseTools);
    const before = s.beforeLearning;
    return {
      ...s,
      baseTools,
      base: retrieverFromState(s.base, baseTools, revector(s.base.state(), at(baseTools), vectors), known),
      beforeLearning: before
        ? withTools(before, update(before.tools), revector(before.state, at(before.tools), vectors))
        : before,
    };
  }
  // Other methods: the tool's spec (prompts, schemas) and its description vector are new; the
  // method's own tables are as trained.
  const baseTools = update(s.baseTools);
  const added = update(s.changes.added);
  const vectors =
    s.changes.vectors && encoder
      ? (await encoder.embed([...baseTools, ...added].map((t) => toolText(t.name, t.description)))).map((v) =>
          Array.from(v),
        )
      : s.changes.vectors;
  return { ...s, baseTools, changes: { ...s.changes, added, vectors } };
}

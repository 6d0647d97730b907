/**
 * The layout of DTDR-G's signal matrix: the eleven signals it scores every label with, the eight
 * context features the gate weighs them by, their indices, and the floors of the log signals.
 * Every other file of the default method indexes signals and contexts through these names.
 */

export const SIGNALS = [
  'lexical', // BM25 of the request against the tool's name and description, earlier request terms weighing more
  'lexical-unserved', // the same, with request terms the called tools already matched discounted
  'embedding', // cosine of request and tool description embeddings
  'embedding-unserved', // cosine after projecting the called tools' directions out of the request
  'cluster-graph', // log P(next | recent calls) in the nearest clusters' dependency graphs
  'pooled-graph', // log P(next | recent calls) over all demonstrations, with back-off
  'cluster-tools', // log share of nearby demonstrations that use the tool at all
  'head', // log-probability from the linear head
  'called', // the tool was called already
  'schema', // a called tool's output names a required input of this tool
  'end', // the label is END
] as const;
export type SignalName = (typeof SIGNALS)[number];

export const CONTEXTS = [
  'bias',
  'cluster-match', // how much of the recent history the nearest clusters know (0..1)
  'cluster-support', // demonstration weight behind that, log-scaled to 0..1
  'pooled-match', // how much of the recent history any demonstration knows (0..1)
  'pooled-support',
  'calls', // calls so far, min(n, 4) / 4
  'served', // share of the request's matched terms the called tools served
  'head-confidence', // the head's top probability
] as const;

export const S = SIGNALS.length;
export const G = CONTEXTS.length;
export const [LEX, LEXU, EMB, EMBU, CG, GG, BAG, HEAD, CALLED, SCHEMA, ENDS] = SIGNALS.map((_, i) => i);
export const [, C_MATCH, C_SUPPORT, G_MATCH, G_SUPPORT, C_CALLS, C_SERVED, C_HEAD] = CONTEXTS.map((_, i) => i);
/** Calls the "history known" check looks at, whatever l the graphs use. */
export const KNOWN_HISTORY = 3;
export const FLOOR_GRAPH = 1e-3;
export const FLOOR_BAG = 1e-2;

/**
 * What the demonstrations of a plan say (issue 22: words the demonstrations never used). Where a
 * step would confidently end the plan, the calls so far form a sequence S. When many
 * demonstrations have exactly S and none of their requests used a word this request uses — a word
 * common enough that their silence counts (expected in at least MIN_EXPECTED of them) and that a
 * tool outside S explains strongly (request coverage, coverage.ts) — the request asks for more
 * than S: the step is unsure and that tool joins the set. "Convert 80 dollars to euros and email
 * the result to Anna" after `currency_convert`: about a hundred conversions, none says "email".
 *
 * The rule speaks only where it earned it: at fit time every demonstration's END step is checked
 * with its own words taken out of its sequence's (leave one out); each firing is a false alarm,
 * and the rule is on only where at most MAX_ALARMS of those steps fire. Template-like requests
 * (the demo set) say the same words per sequence: on. Free-text requests (UltraTool) use words of
 * their own: off, and those models decide as before.
 */
import type { Plan } from '../../base/types.js';
import { array, int, num, numbers, object, stateError } from '../../base/validate.js';
import { requestWords, type CoverageModel } from './coverage.js';
import { WORD_TOOLS } from './combinations.js';

/** Demonstrations a sequence needs before its requests' words count. */
export const MIN_SEQUENCE_PLANS = 20;
/** How many of a sequence's demonstrations would be expected to use a word (its share of all requests × theirs) for their silence to count. */
export const MIN_EXPECTED = 3;
/** A word counts when its best tool explains it at least this many times better than NULL (generic words) does. */
export const WORD_GAIN = 10;
/** Share of held-out END steps on which the rule may fire (false alarms) for it to be on. */
export const MAX_ALARMS = 0.05;

export interface SequenceWords {
  /** A word counts when its best tool explains it at least this many times better than NULL does (WORD_GAIN by default). */
  gain: number;
  /** Demonstrations fitted on. */
  plans: number;
  /** Per request-coverage word id (at fit): demonstrations whose request uses it. */
  df: Uint32Array;
  /** Sequence (tool label indices joined by ",") → its demonstrations and the sorted word ids their requests used. */
  sequences: Map<string, { plans: number; words: Uint32Array }>;
  /** Share of demonstrations' END steps (own words left out) on which the rule fired. */
  alarms: number;
  enabled: boolean;
}

/** The saved form, columnar. */
export interface SequenceWordsState {
  gain: number;
  plans: number;
  df: number[];
  toolOffsets: number[];
  tools: number[];
  sequencePlans: number[];
  wordOffsets: number[];
  words: number[];
  alarms: number;
  enabled: boolean;
}

const keyOf = (tools: readonly number[]) => tools.join(',');

function sortedHas(list: Uint32Array, x: number): boolean {
  let lo = 0;
  let hi = list.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (list[mid] < x) lo = mid + 1;
    else hi = mid;
  }
  return lo < list.length && list[lo] === x;
}

/** Fits the per-sequence words and scores the rule on the demonstrations' END steps, each leaving its own words out. */
export function fitSequenceWords(plans: readonly Plan[], toolIndex: Map<string, number>, coverage: CoverageModel, gain = WORD_GAIN): SequenceWords {
  const V = coverage.names.length;
  const df = new Uint32Array(V);
  const bySequence = new Map<string, { tools: number[]; members: Uint32Array[] }>();
  for (const plan of plans) {
    const tools = plan.order.map((k) => toolIndex.get(plan.nodes[k].tool)).filter((x): x is number => x !== undefined);
    const words = requestWords(coverage, plan.query);
    for (const w of words) df[w]++;
    const key = keyOf(tools);
    const entry = bySequence.get(key) ?? { tools, members: [] };
    entry.members.push(words);
    bySequence.set(key, entry);
  }
  const sequences = new Map<string, { plans: number; words: Uint32Array }>();
  let checked = 0;
  let alarms = 0;
  for (const [key, { tools, members }] of bySequence) {
    if (members.length < MIN_SEQUENCE_PLANS) continue;
    const counts = new Map<number, number>();
    for (const words of members) for (const w of words) counts.set(w, (counts.get(w) ?? 0) + 1);
    sequences.set(key, { plans: members.length, words: Uint32Array.from([...counts.keys()].sort((a, b) => a - b)) });
    // Leave one out: the sequence without this demonstration (still enough of them), its words then.
    if (members.length < MIN_SEQUENCE_PLANS + 1) continue;
    for (const words of members) {
      const own = new Set(words);
      const left = Uint32Array.from([...counts].filter(([w, c]) => c - (own.has(w) ? 1 : 0) > 0).map(([w]) => w).sort((a, b) => a - b));
      const dfLeft = (w: number) => df[w] - (own.has(w) ? 1 : 0);
      checked++;
      if (unsaid(coverage, gain, words, tools, { plans: members.length - 1, words: left }, dfLeft, plans.length - 1, () => true)) alarms++;
    }
  }
  const rate = checked > 0 ? alarms / checked : 1;
  return { gain, plans: plans.length, df, sequences, alarms: rate, enabled: checked >= MIN_SEQUENCE_PLANS && rate <= MAX_ALARMS };
}

/**
 * The word of the request that the demonstrations of the sequence `history` never used, though
 * MIN_EXPECTED of them would have by its frequency, and that tools outside the sequence explain
 * (the fewest holding `share` of its alignment, at most WORD_TOOLS, the first `wordGain` times NULL);
 * the strongest such word. Undefined where the sequence has too few demonstrations or none is found.
 */
function unsaid(cov: CoverageModel, wordGain: number, words: Uint32Array, history: readonly number[], sequence: { plans: number; words: Uint32Array }, df: (w: number) => number, plans: number, usable: (a: number) => boolean): { word: string; tools: number[] } | undefined {
  let best: { word: string; tools: number[] } | undefined;
  let bestGain = 0;
  for (const w of words) {
    if (sortedHas(sequence.words, w) || (sequence.plans * df(w)) / Math.max(1, plans) < MIN_EXPECTED) continue;
    const tools = cov.tools[w];
    const probs = cov.probs[w];
    if (!tools || tools.length === 0 || probs[0] < wordGain * Math.max(cov.nullProb[w], 1e-9)) continue;
    let total = cov.nullProb[w];
    for (let k = 0; k < probs.length; k++) total += probs[k];
    let mass = 0;
    let k = 0;
    while (k < tools.length && k < WORD_TOOLS && mass < cov.share * total) mass += probs[k++];
    if (mass < cov.share * total) continue;
    const strong = Array.from(tools.subarray(0, k));
    if (strong.some((a) => history.includes(a) || !usable(a))) continue;
    const gain = probs[0] / Math.max(cov.nullProb[w], 1e-9);
    if (gain > bestGain) [best, bestGain] = [{ word: cov.names[w], tools: strong }, gain];
  }
  return best;
}

/** At a step that would end the plan: what the request asks for beyond the calls so far, by the rule above (undefined when off or silent). */
export function askedBeyond(s: SequenceWords, cov: CoverageModel, words: Uint32Array, history: readonly number[], usable: (a: number) => boolean): { word: string; tools: number[]; plans: number } | undefined {
  if (!s.enabled || history.length === 0) return undefined;
  const sequence = s.sequences.get(keyOf(history));
  if (!sequence) return undefined;
  // Words the alignment learned after the fit (added tools' descriptions) have no frequency: never counted.
  const found = unsaid(cov, s.gain, words, history, sequence, (w) => (w < s.df.length ? s.df[w] : 0), s.plans, usable);
  return found && { ...found, plans: sequence.plans };
}

export function sequenceWordsState(s: SequenceWords): SequenceWordsState {
  const toolOffsets = [0];
  const tools: number[] = [];
  const sequencePlans: number[] = [];
  const wordOffsets = [0];
  const words: number[] = [];
  for (const [key, entry] of s.sequences) {
    const ids = key.split(',').map(Number);
    tools.push(...ids);
    toolOffsets.push(tools.length);
    sequencePlans.push(entry.plans);
    words.push(...entry.words);
    wordOffsets.push(words.length);
  }
  return { gain: s.gain, plans: s.plans, df: Array.from(s.df), toolOffsets, tools, sequencePlans, wordOffsets, words, alarms: +s.alarms.toFixed(6), enabled: s.enabled };
}

/** Throws a DtdrError('artifact') for the first thing in a saved table a fit could not have written. */
export function checkSequenceWordsState(field: string, v: unknown, labels: number, words: number): asserts v is SequenceWordsState {
  const s = object(field, v);
  num(`${field}.gain`, s.gain, { min: 1 });
  int(`${field}.plans`, s.plans, 0);
  numbers(`${field}.df`, s.df, words, { min: 0, integer: true });
  const n = array(`${field}.sequencePlans`, s.sequencePlans).length;
  numbers(`${field}.sequencePlans`, s.sequencePlans, n, { min: 1, integer: true });
  const toolOffsets = numbers(`${field}.toolOffsets`, s.toolOffsets, n + 1, { min: 0, integer: true });
  const wordOffsets = numbers(`${field}.wordOffsets`, s.wordOffsets, n + 1, { min: 0, integer: true });
  for (const [name, offsets] of [['toolOffsets', toolOffsets], ['wordOffsets', wordOffsets]] as const) {
    if (offsets[0] !== 0 || offsets.some((o, i) => i > 0 && o < offsets[i - 1])) stateError(`${field}.${name}`, 'must start at 0 and rise');
  }
  // Tools only (END is never called; tools added later take the places before it), word ids of the alignment.
  numbers(`${field}.tools`, s.tools, toolOffsets[n], { min: 0, max: labels - 2, integer: true });
  const list = numbers(`${field}.words`, s.words, wordOffsets[n], { min: 0, max: words - 1, integer: true });
  for (let i = 0; i < n; i++) for (let k = wordOffsets[i] + 1; k < wordOffsets[i + 1]; k++) if (list[k] <= list[k - 1]) stateError(`${field}.words`, `sequence ${i}'s words must rise strictly`);
  num(`${field}.alarms`, s.alarms, { min: 0, max: 1 });
  if (typeof s.enabled !== 'boolean') stateError(`${field}.enabled`, 'must be true or false');
}

export function sequenceWordsFromState(s: SequenceWordsState): SequenceWords {
  const sequences = new Map<string, { plans: number; words: Uint32Array }>();
  s.sequencePlans.forEach((plans, i) => {
    sequences.set(keyOf(s.tools.slice(s.toolOffsets[i], s.toolOffsets[i + 1])), { plans, words: Uint32Array.from(s.words.slice(s.wordOffsets[i], s.wordOffsets[i + 1])) });
  });
  return { gain: s.gain, plans: s.plans, df: Uint32Array.from(s.df), sequences, alarms: s.alarms, enabled: s.enabled };
}

/**
 * The new-combinations rule: which tools the demonstrations combine. A request
 * word that a tool explains strongly (request coverage, coverage.ts), where no demonstration calls
 * that tool together with the calls so far, says the plan is leaving the demonstrations: the
 * memorised continuation is likely wrong. Such a step is not confident, and the tool — or, when the
 * demonstrations always call one tool right before it (`sms_send` after `contacts_search`), that
 * tool first — joins the set.
 *
 * The rule speaks only where it earned it: at fit time it is scored on the demonstrations
 * themselves, each plan with its own sequence held out (pair counts minus that sequence's plans),
 * at every step after the first that calls a tool, and it is switched on only if the tools it
 * named were called later in the plan in at least PRECISION of at least MIN_FIRED firings. Where
 * END is on top ("the plan is done") a firing on a complete demonstration is a false alarm: the
 * rule speaks there too only if it fired on at most END_ALARMS of the held-out END steps. Where request words foretell
 * tools (the demo set, RestBench-TMDB, the synthetic worlds) it is on; where they are noisy
 * (UltraTool, Seal-Tools) it is off, and those models rank and decide as before; the README gives
 * the measured precisions. (The alignment model behind it saw every request, the held-out ones
 * included: the score is optimistic, but only the switch depends on it.)
 */
import type { Plan } from '../../../base/types.js';
import { int, num, numbers, object, stateError } from '../../../base/validate.js';
import { sequenceKey } from '../../../plans/plan.js';
import type { StepRule } from '../rule.js';
import { terms } from '../../../base/text.js';
import { requestWordsOf, type CoverageModel } from '../coverage.js';

/** Demonstrations the switch is scored on, at most (every stride-th beyond it). */
const MAX_CHECKED_PLANS = 10_000;

/** Held-out precision the rule needs to be switched on. */
export const PRECISION = 0.75;
/** Held-out steps the rule must fire on before its precision counts. */
export const MIN_FIRED = 20;
/** Demonstrations on whose END step the rule may fire (held out) for it to speak where END is on top. */
export const END_ALARMS = 0.2;
/** Share of a tool's demonstrated calls that one tool directly precedes, for that tool to be its entry. */
export const ENTRY_SHARE = 0.9;
export interface Combinations {
  /** Per label: the labels some demonstration calls together with it (sorted; itself included). */
  together: Uint32Array[];
  /** Per label: the tool the demonstrations call directly before it at least ENTRY_SHARE of the time, or -1. */
  entry: Int32Array;
  /** Whether the rule is on, and the held-out evidence that decided it. */
  enabled: boolean;
  fired: number;
  precision: number;
  /** Share of demonstrations (their sequence held out) on whose END step the rule fires: false alarms. */
  endAlarms: number;
  /** Whether the rule also speaks where END is on top ("the plan is done"): on, and endAlarms ≤ END_ALARMS. */
  atEnd: boolean;
}

export interface CombinationsState {
  offsets: number[];
  together: number[];
  entry: number[];
  enabled: boolean;
  fired: number;
  precision: number;
  endAlarms: number;
  atEnd: boolean;
}

function called(plan: Plan, toolIndex: Map<string, number>): number[] {
  return plan.order.map((k) => toolIndex.get(plan.nodes[k].tool)).filter((x): x is number => x !== undefined);
}

/**
 * Fits the pair table and entries from `plans`, and scores the rule on them with each sequence
 * held out. `planWords`: each plan's request words under `coverage`, where the caller has them.
 */
export function fitCombinations(
  plans: readonly Plan[],
  toolIndex: Map<string, number>,
  labels: number,
  coverage: CoverageModel | undefined,
  planWords?: readonly Uint32Array[],
): Combinations {
  const pairs = new Map<number, number>();
  const perSequence = new Map<string, number>();
  const precedes = new Map<number, number>();
  const calls = new Float64Array(labels);
  const orders = plans.map((p) => called(p, toolIndex));
  orders.forEach((order, i) => {
    const key = sequenceKey(plans[i]);
    perSequence.set(key, (perSequence.get(key) ?? 0) + 1);
    const distinct = [...new Set(order)];
    for (const a of distinct) for (const b of distinct) pairs.set(a * labels + b, (pairs.get(a * labels + b) ?? 0) + 1);
    order.forEach((a, t) => {
      calls[a]++;
      if (t > 0) precedes.set(a * labels + order[t - 1], (precedes.get(a * labels + order[t - 1]) ?? 0) + 1);
    });
  });
  const lists: number[][] = Array.from({ length: labels }, () => []);
  for (const key of pairs.keys()) lists[Math.floor(key / labels)].push(key % labels);
  const entry = new Int32Array(labels).fill(-1);
  for (const [key, count] of precedes) {
    const a = Math.floor(key / labels);
    if (count >= ENTRY_SHARE * calls[a]) entry[a] = key % labels;
  }
  // The rule on each demonstration, its own sequence held out: fires at later steps (the first
  // step has no calls to combine with), right when the tool it names is called later in the plan.
  // At the END step (every call made) a firing is a false alarm: scored apart, for `endAlarms`.
  let [fired, right, alarms, checked] = [0, 0, 0, 0];
  // The switch needs thousands of checks, not 100,000 demonstrations' worth: above
  // MAX_CHECKED_PLANS every stride-th plan is checked (the counts above use every plan).
  const stride = Math.ceil(orders.length / MAX_CHECKED_PLANS);
  if (coverage)
    orders.forEach((order, i) => {
      if (i % stride !== 0) return;
      checked++;
      const own = new Set(order);
      const n = perSequence.get(sequenceKey(plans[i]))!;
      const together = (a: number, b: number) =>
        (pairs.get(a * labels + b) ?? 0) - (own.has(a) && own.has(b) ? n : 0) > 0;
      const words = planWords?.[i] ?? requestWordsOf(coverage, terms(plans[i].query));
      for (let t = 1; t <= order.length; t++) {
        const found = askedApart(coverage, words, order.slice(0, t), together, () => true);
        if (!found) continue;
        if (t === order.length) alarms++;
        else {
          fired++;
          if (found.tools.some((a) => order.slice(t).includes(a))) right++;
        }
      }
    });
  const precision = fired > 0 ? right / fired : 0;
  const endAlarms = checked > 0 ? alarms / checked : 0;
  const enabled = fired >= MIN_FIRED && precision >= PRECISION;
  return {
    together: lists.map((l) => Uint32Array.from(l.sort((x, y) => x - y))),
    entry,
    enabled,
    fired,
    precision,
    endAlarms,
    atEnd: enabled && endAlarms <= END_ALARMS,
  };
}

/**
 * Online learning: new demonstrations' tools count as combined (the switch and the entries stay as
 * fitted: they need the counts a fit keeps no longer).
 */
export function learnCombinations(c: Combinations, plans: readonly Plan[], toolIndex: Map<string, number>): void {
  for (const plan of plans) {
    const distinct = [...new Set(called(plan, toolIndex))];
    for (const a of distinct) {
      // Every label has a slot (fit and load size the table to the labels), tools added later too.
      const list = c.together[a];
      const missing = distinct.filter((b) => !sortedHas(list, b));
      if (missing.length) c.together[a] = Uint32Array.from([...list, ...missing].sort((x, y) => x - y));
    }
  }
}

/** An empty list, shared (no allocation per ranked step). */
const NONE = new Uint32Array(0);

/** Whether some demonstration calls `a` together with every call in `history`. */
export function demonstratedWith(c: Combinations, history: readonly number[], a: number): boolean {
  for (const h of history) {
    const list = c.together[h];
    if (!list || !sortedHas(list, a)) return false;
  }
  return true;
}

/**
 * The request word, of those that ask for tools no demonstration combines with the calls so far: the
 * fewest of its best tools that hold `share` of its alignment (NULL included, at most WORD_TOOLS),
 * the best explaining it `gain` times better than NULL, none called yet and none called together
 * with every call so far in a demonstration; of several, the one with the largest gain.
 */
export function askedApart(
  cov: CoverageModel,
  words: Uint32Array,
  history: readonly number[],
  together: (h: number, a: number) => boolean,
  usable: (a: number) => boolean,
): Asked | undefined {
  let best: Asked | undefined;
  let bestGain = 0;
  for (const w of words) {
    const strong = strongTools(cov, w, cov.gain);
    if (!strong || strong.tools.some((a) => !usable(a) || history.includes(a) || history.every((h) => together(h, a))))
      continue;
    // The demonstrations that say the word and call its tools (coverage.ts counts them), for the reason.
    const { said, calls } = cov;
    const called = calls?.[w].subarray(0, strong.tools.length);
    // The word the alignment is surest of: "text" (sms_send) before "find" (files_search).
    if (strong.gain > bestGain) {
      const counts = said && called ? { said: said[w], calls: Array.from(called) } : {};
      [best, bestGain] = [{ word: cov.names[w], tools: strong.tools, ...counts }, strong.gain];
    }
  }
  return best;
}

/** A request word whose tools no demonstration combines with the calls so far, with the counts behind it. */
interface Asked {
  word: string;
  tools: number[];
  /** Demonstrations whose request says the word, and of them those calling each of `tools` (absent: older files). */
  said?: number;
  calls?: number[];
}

/**
 * What the request asks for apart from the demonstrations (`askedApart`), and what to offer now:
 * those tools, and before them the tool the demonstrations always call right before the best one
 * when it has not been called. Undefined when the rule is off or nothing is found.
 */
export function newCombination(
  c: Combinations,
  cov: CoverageModel,
  words: Uint32Array,
  history: readonly number[],
  usable: (a: number) => boolean,
): (Asked & { tool: number; offer: number[] }) | undefined {
  if (!c.enabled || history.length === 0) return undefined;
  const found = askedApart(cov, words, history, (h, a) => sortedHas(c.together[h] ?? NONE, a), usable);
  if (!found) return undefined;
  const before = c.entry[found.tools[0]] ?? -1;
  const offer = before >= 0 && !history.includes(before) && usable(before) ? [before, ...found.tools] : found.tools;
  return { ...found, tool: found.tools[0], offer: [...new Set(offer)] };
}

export function combinationsState(c: Combinations): CombinationsState {
  const offsets = [0];
  for (const l of c.together) offsets.push(offsets[offsets.length - 1] + l.length);
  return {
    offsets,
    together: c.together.flatMap((l) => Array.from(l)),
    entry: Array.from(c.entry),
    enabled: c.enabled,
    fired: c.fired,
    precision: +c.precision.toFixed(6),
    endAlarms: +c.endAlarms.toFixed(6),
    atEnd: c.atEnd,
  };
}

/** Throws a DtdrError('artifact') for the first thing in a saved table a fit could not have written. */
export function checkCombinationsState(field: string, v: unknown, labels: number): asserts v is CombinationsState {
  const s = object(field, v);
  // One slot per label, END's (the last) included; its list is empty: no demonstration calls END.
  const offsets = numbers(`${field}.offsets`, s.offsets, labels + 1, { min: 0, integer: true });
  if (offsets[0] !== 0 || offsets.some((o, i) => i > 0 && o < offsets[i - 1]))
    stateError(`${field}.offsets`, 'must start at 0 and rise');
  if (offsets[labels] !== offsets[labels - 1])
    stateError(`${field}.offsets`, 'END (the last label) must have no combined tools');
  // Tools only (END is never called), each list strictly rising (ranking searches them by halving).
  const together = numbers(`${field}.together`, s.together, offsets[labels], {
    min: 0,
    max: labels - 2,
    integer: true,
  });
  for (let a = 0; a < labels; a++)
    for (let k = offsets[a] + 1; k < offsets[a + 1]; k++)
      if (together[k] <= together[k - 1]) stateError(`${field}.together`, `label ${a}'s tools must rise strictly`);
  numbers(`${field}.entry`, s.entry, labels, { min: -1, max: labels - 2, integer: true });
  if (typeof s.enabled !== 'boolean') stateError(`${field}.enabled`, 'must be true or false');
  int(`${field}.fired`, s.fired, 0);
  num(`${field}.precision`, s.precision, { min: 0, max: 1 });
  num(`${field}.endAlarms`, s.endAlarms, { min: 0, max: 1 });
  if (typeof s.atEnd !== 'boolean') stateError(`${field}.atEnd`, 'must be true or false');
}

/** The table from its saved form (checked by checkCombinationsState: one slot per label). */
export function combinationsFromState(s: CombinationsState): Combinations {
  const { offsets, together, entry, ...switches } = s;
  const lists = Array.from({ length: offsets.length - 1 }, (_, a) =>
    Uint32Array.from(together.slice(offsets[a], offsets[a + 1])),
  );
  return { together: lists, entry: Int32Array.from(entry), ...switches };
}

/**
 * The rule in the pipeline (step-rules.ts): the request asks, in words, for a tool that no
 * demonstration calls together with the calls so far, so the memorised continuation is suspect.
 * Where END is on top, only if its held-out false alarms there were few (`atEnd`).
 */
export const newCombinationsRule: StepRule<Combinations> = {
  name: 'new-combinations',
  fit: (f) => fitCombinations(f.plans, f.toolIndex, f.labels, f.coverage, f.words),
  learn: (c, plans, toolIndex) => learnCombinations(c, plans, toolIndex),
  validate(saved, labels) {
    if (saved.combinations !== undefined) checkCombinationsState('state.combinations', saved.combinations, labels);
  },
  load: (saved) => (saved.combinations ? combinationsFromState(saved.combinations as CombinationsState) : undefined),
  save(c, into) {
    into.combinations = combinationsState(c);
  },
  withTools(saved, T, added) {
    const c = saved.combinations as CombinationsState | undefined;
    if (c) saved.combinations = combinationsWithTools(c, T, added);
  },
  check(c, v) {
    if ((v.best === v.side.end && !c.atEnd) || !c.enabled || !v.coverage || v.history.length === 0) return null;
    const found = newCombination(c, v.coverage, v.requestWords(), v.history, v.usable);
    if (!found) return null;
    const names = (f: number) => `"${v.side.labels[f]}"`;
    const callers = (a: Asked) => a.tools.map((f, k) => `${a.calls![k]} call ${names(f)}`).join(', ');
    const share = `${Math.round(ENTRY_SHARE * 100)}%`;
    const first =
      found.offer[0] === c.entry[found.tool] && found.offer[0] !== found.tool
        ? `; at least ${share} of the demonstrations' calls of ${names(found.tool)} come right after ` +
          names(found.offer[0])
        : '';
    const history = v.history.map(names).join(' → ');
    // Only what was counted: the request's word, the demonstrations that say it and call the tool, and that none
    // calls the tool together with the calls so far.
    const says = `the request says "${found.word}"`;
    const evidence =
      found.said === undefined
        ? `, a word the alignment gives to ${names(found.tool)}`
        : found.said > 0
          ? `, and of the ${found.said} demonstrations whose request says it, ${callers(found)}`
          : `, as the description of ${names(found.tool)} does`;
    const apart = `no demonstration calls ${names(found.tool)} together with ${history}`;
    // Where an earlier rule (request coverage) named the tool for the same word, its counts are printed once.
    const named = v.include.includes(found.tool);
    return { tools: found.offer, because: [named ? `${apart}${first}` : `${says}${evidence}; ${apart}${first}`] };
  },
};

/** The new-combination table with `added` empty slots (never demonstrated, no entry) before END's (empty too). */
function combinationsWithTools(c: CombinationsState, T: number, added: number): CombinationsState {
  const tools = c.offsets.slice(0, T + 1);
  const last = tools[tools.length - 1];
  const offsets = [...tools, ...Array.from({ length: added + 1 }, () => last)];
  return { ...c, offsets, entry: [...c.entry.slice(0, T), ...Array.from({ length: added + 1 }, () => -1)] };
}

/** Whether the ascending `list` holds x (by halving). */
function sortedHas(list: Uint32Array, x: number): boolean {
  let lo = 0;
  let hi = list.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    if (list[mid] === x) return true;
    if (list[mid] < x) lo = mid + 1;
    else hi = mid - 1;
  }
  return false;
}

/** Tools that share a word's alignment, at most: "email" is email_read's and email_send's. */
const WORD_TOOLS = 3;

/** A word's best tools and the best one's gain over NULL. */
type StrongTools = { tools: number[]; gain: number };

/**
 * A request word's best tools: the fewest that hold `share` of its alignment (NULL included, at
 * most WORD_TOOLS), and the best one's gain over NULL; undefined when that gain is below `gain` or
 * WORD_TOOLS tools do not hold the share (a word many tools, or NULL, explain).
 */
function strongTools(cov: CoverageModel, w: number, gain: number): StrongTools | undefined {
  const tools = cov.tools[w];
  const probs = cov.probs[w];
  if (!tools || tools.length === 0 || probs[0] < gain * Math.max(cov.nullProb[w], 1e-9)) return undefined;
  let total = cov.nullProb[w];
  for (let k = 0; k < probs.length; k++) total += probs[k];
  let mass = 0;
  let k = 0;
  while (k < tools.length && k < WORD_TOOLS && mass < cov.share * total) mass += probs[k++];
  if (mass < cov.share * total) return undefined;
  return { tools: Array.from(tools.subarray(0, k)), gain: probs[0] / Math.max(cov.nullProb[w], 1e-9) };
}

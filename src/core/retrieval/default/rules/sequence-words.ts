/**
 * The sequence-words rule: words the demonstrations of a plan never used. At a
 * confident step, take the demonstrations that make exactly the calls so far (END on top: the
 * plan would end) or that begin with the calls so far and the top tool. When at least
 * MIN_SEQUENCE_PLANS of them exist and none of their requests used a word this request uses — a
 * word common enough that their silence counts (expected in at least MIN_EXPECTED of them) and
 * whose best tools (the fewest holding `share` of its alignment, at most WORD_TOOLS) lie outside
 * those calls and explain it WORD_GAIN times better than NULL — the request asks for more than
 * they did: the step is unsure and those tools join the set. "Convert 80 dollars to euros and
 * email the result to Anna" after `currency_convert`: about a hundred conversions, none says "email".
 *
 * Each side speaks only where it earned it on the fit's own demonstrations. END: every
 * demonstration's END step is checked with its own words taken out of its sequence's (leave one
 * out); each firing is a false alarm, and the side is on where at most MAX_ALARMS fire (the demo
 * set 0, UltraTool 0.032: on). Steps: each demonstration is checked with its whole sequence held
 * out (a new combination then); a firing is right when the plan calls a named tool later, and the
 * side is on with at least MIN_FIRED firings right in PRECISION of them (the demo set 0.76 and the
 * synthetic worlds: on; UltraTool 0.085: off, where those steps decide as before).
 */
import type { Plan } from '../../../base/types.js';
import { array, int, num, numbers, object, stateError } from '../../../base/validate.js';
import type { StepRule } from '../rule.js';
import { MAX_CHECKED_PLANS, requestWords, sortedHas, strongTools, type CoverageModel } from '../coverage.js';

/** Demonstrations a sequence needs before its requests' words count. */
export const MIN_SEQUENCE_PLANS = 20;
/**
 * How many of a sequence's demonstrations would be expected to use a word (its share of all requests × theirs) for
 * their silence to count.
 */
export const MIN_EXPECTED = 3;
/** A word counts when its best tool explains it at least this many times better than NULL (generic words) does. */
export const WORD_GAIN = 10;
/** Share of held-out END steps on which the rule may fire (false alarms) for it to be on. */
export const MAX_ALARMS = 0.05;
/** Held-out precision the step side needs to be switched on. */
export const PRECISION = 0.75;
/** Held-out steps the step side must fire on before its precision counts. */
export const MIN_FIRED = 20;

export interface SequenceWords {
  /**
   * A word counts when its best tool explains it at least this many times better than NULL does (WORD_GAIN by default).
   */
  gain: number;
  /** Demonstrations fitted on. */
  plans: number;
  /** Per request-coverage word id (at fit): demonstrations whose request uses it. */
  df: Uint32Array;
  /**
   * Tool label indices joined by ",", then ",$" for a complete sequence (its demonstrations call
   * these and nothing more) or nothing for a prefix (they begin with these) → the demonstrations
   * and the sorted word ids their requests used. Groups of MIN_SEQUENCE_PLANS or more only.
   */
  sequences: Map<string, { plans: number; words: Uint32Array }>;
  /** Share of demonstrations' END steps (own words left out) on which the rule fired. */
  alarms: number;
  /** Whether the rule speaks where END is on top. */
  enabled: boolean;
  /**
   * Demonstrations' steps (own words left out; prefix: the calls up to and with the step's) on which the rule fired,
   * and the share of those whose plan later calls a tool it named.
   */
  fired: number;
  precision: number;
  /**
   * Whether the rule speaks where a tool is on top (the prefix: the calls so far and that tool): fired ≥ MIN_FIRED,
   * precision ≥ PRECISION.
   */
  atSteps: boolean;
}

/** The saved form, columnar. */
export interface SequenceWordsState {
  gain: number;
  plans: number;
  df: number[];
  toolOffsets: number[];
  tools: number[];
  /** Per group: 1 for a complete sequence, 0 for a prefix. */
  complete: number[];
  sequencePlans: number[];
  wordOffsets: number[];
  words: number[];
  alarms: number;
  enabled: boolean;
  fired: number;
  precision: number;
  atSteps: boolean;
}

const keyOf = (tools: readonly number[]) => tools.join(',');
/** Marks a complete sequence's key (its demonstrations call these tools and nothing more); without it, a prefix's. */
const END_MARK = ',$';
const completeKey = (tools: readonly number[]) => keyOf(tools) + END_MARK;

/**
 * Fits the per-sequence and per-prefix words and scores both sides of the rule on the
 * demonstrations: at END each leaves its own words out (every firing a false alarm); at a step
 * each leaves its whole sequence out — it is then a new combination, as a request beyond the
 * demonstrations is — and a firing is right when its plan calls a named tool later. `planWords`:
 * each plan's request words under `coverage`, where the caller has them.
 */
export function fitSequenceWords(
  plans: readonly Plan[],
  toolIndex: Map<string, number>,
  coverage: CoverageModel,
  gain = WORD_GAIN,
  planWords?: readonly Uint32Array[],
): SequenceWords {
  const V = coverage.names.length;
  const df = new Uint32Array(V);
  /** Per sequence: its demonstrations and how many of their requests use each word. */
  const bySequenceWords = new Map<string, { plans: number; counts: Map<number, number> }>();
  // Complete sequences (key ending in END_MARK) and every prefix of one: the demonstrations in each.
  // Per member: its request words, its sequence and the calls its plan makes after the group's.
  type Member = { words: Uint32Array; sequence: string; later: number[]; checked: boolean };
  const byGroup = new Map<string, { tools: number[]; members: Member[] }>();
  const join = (key: string, tools: number[], member: Member) => {
    const entry = byGroup.get(key) ?? { tools, members: [] };
    entry.members.push(member);
    byGroup.set(key, entry);
  };
  // The switches need thousands of checks, not 100,000 demonstrations' worth: above MAX_CHECKED_PLANS every stride-th
  // plan is checked.
  const stride = Math.ceil(plans.length / MAX_CHECKED_PLANS);
  plans.forEach((plan, i) => {
    const checked = i % stride === 0;
    const tools = plan.order.map((k) => toolIndex.get(plan.nodes[k].tool)).filter((x): x is number => x !== undefined);
    const words = planWords?.[i] ?? requestWords(coverage, plan.query);
    for (const w of words) df[w]++;
    if (tools.length === 0) return; // no call to group by (a fit's plans always have one)
    const sequence = completeKey(tools);
    const own = bySequenceWords.get(sequence) ?? { plans: 0, counts: new Map<number, number>() };
    own.plans++;
    for (const w of words) own.counts.set(w, (own.counts.get(w) ?? 0) + 1);
    bySequenceWords.set(sequence, own);
    join(sequence, tools, { words, sequence, later: [], checked });
    for (let t = 1; t <= tools.length; t++)
      join(keyOf(tools.slice(0, t)), tools.slice(0, t), { words, sequence, later: tools.slice(t), checked });
  });
  const sorted = (words: Iterable<number>) => Uint32Array.from([...words].sort((a, b) => a - b));
  const sequences = new Map<string, { plans: number; words: Uint32Array }>();
  let ends = 0;
  let endAlarms = 0;
  let fired = 0;
  let right = 0;
  for (const [key, { tools, members }] of byGroup) {
    if (members.length < MIN_SEQUENCE_PLANS) continue;
    const counts = new Map<number, number>();
    for (const { words } of members) for (const w of words) counts.set(w, (counts.get(w) ?? 0) + 1);
    sequences.set(key, { plans: members.length, words: sorted(counts.keys()) });
    if (key.endsWith(END_MARK)) {
      // Leave one out: the sequence without this demonstration (still enough of them), its words then.
      if (members.length < MIN_SEQUENCE_PLANS + 1) continue;
      for (const { words, checked } of members) {
        if (!checked) continue;
        const own = new Set(words);
        const said = (w: number) => (counts.get(w) ?? 0) - (own.has(w) ? 1 : 0) > 0;
        ends++;
        if (
          unsaid(
            coverage,
            gain,
            words,
            tools,
            { plans: members.length - 1, said },
            (w) => df[w] - (own.has(w) ? 1 : 0),
            plans.length - 1,
            () => true,
          )
        )
          endAlarms++;
      }
      continue;
    }
    // Leave the sequence out: the prefix's other sequences (still enough demonstrations), their words then.
    for (const { words, sequence, later, checked } of members) {
      if (!checked) continue;
      const own = bySequenceWords.get(sequence)!;
      const rest = members.length - own.plans;
      if (rest < MIN_SEQUENCE_PLANS) continue;
      const said = (w: number) => (counts.get(w) ?? 0) - (own.counts.get(w) ?? 0) > 0;
      const found = unsaid(
        coverage,
        gain,
        words,
        tools,
        { plans: rest, said },
        (w) => df[w] - (own.counts.get(w) ?? 0),
        plans.length - own.plans,
        () => true,
      );
      if (!found) continue;
      fired++;
      if (found.tools.some((a) => later.includes(a))) right++;
    }
  }
  const alarms = ends > 0 ? endAlarms / ends : 1;
  const precision = fired > 0 ? right / fired : 0;
  return {
    gain,
    plans: plans.length,
    df,
    sequences,
    alarms,
    enabled: ends >= MIN_SEQUENCE_PLANS && alarms <= MAX_ALARMS,
    fired,
    precision,
    atSteps: fired >= MIN_FIRED && precision >= PRECISION,
  };
}

/**
 * The word of the request that the demonstrations of the sequence `history` never used, though
 * MIN_EXPECTED of them would have by its frequency, and that tools outside the sequence explain
 * (`strongTools`: the fewest holding `share` of its alignment, the first `wordGain` times NULL);
 * the strongest such word. Undefined where the sequence has too few demonstrations or none is found.
 */
function unsaid(
  cov: CoverageModel,
  wordGain: number,
  words: Uint32Array,
  history: readonly number[],
  sequence: { plans: number; said: (w: number) => boolean },
  df: (w: number) => number,
  plans: number,
  usable: (a: number) => boolean,
): { word: string; tools: number[] } | undefined {
  let best: { word: string; tools: number[] } | undefined;
  let bestGain = 0;
  for (const w of words) {
    if (sequence.said(w) || (sequence.plans * df(w)) / Math.max(1, plans) < MIN_EXPECTED) continue;
    const strong = strongTools(cov, w, wordGain);
    if (!strong || strong.tools.some((a) => history.includes(a) || !usable(a))) continue;
    if (strong.gain > bestGain) [best, bestGain] = [{ word: cov.names[w], tools: strong.tools }, strong.gain];
  }
  return best;
}

/**
 * What the request asks for beyond the demonstrations of this step, by the rule above: where END
 * is on top (`next` undefined), those whose calls are exactly `history`; where a tool is, those
 * that begin with `history` and `next`. Undefined when that side of the rule is off or silent.
 */
export function askedBeyond(
  s: SequenceWords,
  cov: CoverageModel,
  words: Uint32Array,
  history: readonly number[],
  next: number | undefined,
  usable: (a: number) => boolean,
): { word: string; tools: number[]; plans: number } | undefined {
  if (next === undefined ? !s.enabled || history.length === 0 : !s.atSteps) return undefined;
  const calls = next === undefined ? history : [...history, next];
  const sequence = s.sequences.get(next === undefined ? completeKey(calls) : keyOf(calls));
  if (!sequence) return undefined;
  // Words the alignment learned after the fit (added tools' descriptions) have no frequency: never counted.
  const found = unsaid(
    cov,
    s.gain,
    words,
    calls,
    { plans: sequence.plans, said: (w) => sortedHas(sequence.words, w) },
    (w) => (w < s.df.length ? s.df[w] : 0),
    s.plans,
    usable,
  );
  return found && { ...found, plans: sequence.plans };
}

/**
 * Online learning: new demonstrations' words join the groups they belong to (groups a fit kept,
 * MIN_SEQUENCE_PLANS or more; smaller ones stay unknown) and the word frequencies; words the
 * alignment does not know are not counted. The switches stay as fitted.
 */
export function learnSequenceWords(
  s: SequenceWords,
  plans: readonly Plan[],
  toolIndex: Map<string, number>,
  coverage: CoverageModel,
): void {
  for (const plan of plans) {
    const tools = plan.order.map((k) => toolIndex.get(plan.nodes[k].tool)).filter((x): x is number => x !== undefined);
    const words = Array.from(requestWords(coverage, plan.query)).filter((w) => w < s.df.length);
    s.plans++;
    for (const w of words) s.df[w]++;
    const keys = [completeKey(tools), ...tools.map((_, t) => keyOf(tools.slice(0, t + 1)))];
    for (const key of keys) {
      const group = s.sequences.get(key);
      if (!group) continue;
      const missing = words.filter((w) => !sortedHas(group.words, w));
      s.sequences.set(key, {
        plans: group.plans + 1,
        words: missing.length ? Uint32Array.from([...group.words, ...missing].sort((a, b) => a - b)) : group.words,
      });
    }
  }
}

export function sequenceWordsState(s: SequenceWords): SequenceWordsState {
  const toolOffsets = [0];
  const tools: number[] = [];
  const complete: number[] = [];
  const sequencePlans: number[] = [];
  const wordOffsets = [0];
  const words: number[] = [];
  for (const [key, entry] of s.sequences) {
    const whole = key.endsWith(END_MARK);
    const ids = (whole ? key.slice(0, -END_MARK.length) : key).split(',').map(Number);
    for (const id of ids) tools.push(id);
    complete.push(whole ? 1 : 0);
    toolOffsets.push(tools.length);
    sequencePlans.push(entry.plans);
    for (const w of entry.words) words.push(w);
    wordOffsets.push(words.length);
  }
  return {
    gain: s.gain,
    plans: s.plans,
    df: Array.from(s.df),
    toolOffsets,
    tools,
    complete,
    sequencePlans,
    wordOffsets,
    words,
    alarms: +s.alarms.toFixed(6),
    enabled: s.enabled,
    fired: s.fired,
    precision: +s.precision.toFixed(6),
    atSteps: s.atSteps,
  };
}

/** Throws a DtdrError('artifact') for the first thing in a saved table a fit could not have written. */
export function checkSequenceWordsState(
  field: string,
  v: unknown,
  labels: number,
  words: number,
): asserts v is SequenceWordsState {
  const s = object(field, v);
  num(`${field}.gain`, s.gain, { min: 1 });
  int(`${field}.plans`, s.plans, 0);
  numbers(`${field}.df`, s.df, words, { min: 0, integer: true });
  const n = array(`${field}.sequencePlans`, s.sequencePlans).length;
  numbers(`${field}.sequencePlans`, s.sequencePlans, n, { min: 1, integer: true });
  numbers(`${field}.complete`, s.complete, n, { min: 0, max: 1, integer: true });
  const toolOffsets = numbers(`${field}.toolOffsets`, s.toolOffsets, n + 1, { min: 0, integer: true });
  const wordOffsets = numbers(`${field}.wordOffsets`, s.wordOffsets, n + 1, { min: 0, integer: true });
  for (const [name, offsets] of [
    ['toolOffsets', toolOffsets],
    ['wordOffsets', wordOffsets],
  ] as const) {
    if (offsets[0] !== 0 || offsets.some((o, i) => i > 0 && o < offsets[i - 1]))
      stateError(`${field}.${name}`, 'must start at 0 and rise');
  }
  // Tools only (END is never called; tools added later take the places before it), word ids of the alignment.
  numbers(`${field}.tools`, s.tools, toolOffsets[n], { min: 0, max: labels - 2, integer: true });
  const list = numbers(`${field}.words`, s.words, wordOffsets[n], { min: 0, max: words - 1, integer: true });
  for (let i = 0; i < n; i++)
    for (let k = wordOffsets[i] + 1; k < wordOffsets[i + 1]; k++)
      if (list[k] <= list[k - 1]) stateError(`${field}.words`, `sequence ${i}'s words must rise strictly`);
  for (let i = 0; i < n; i++)
    if (toolOffsets[i + 1] === toolOffsets[i]) stateError(`${field}.toolOffsets`, `group ${i} has no tools`);
  num(`${field}.alarms`, s.alarms, { min: 0, max: 1 });
  int(`${field}.fired`, s.fired, 0);
  num(`${field}.precision`, s.precision, { min: 0, max: 1 });
  if (typeof s.enabled !== 'boolean') stateError(`${field}.enabled`, 'must be true or false');
  if (typeof s.atSteps !== 'boolean') stateError(`${field}.atSteps`, 'must be true or false');
}

export function sequenceWordsFromState(s: SequenceWordsState): SequenceWords {
  const sequences = new Map<string, { plans: number; words: Uint32Array }>();
  s.sequencePlans.forEach((plans, i) => {
    const tools = s.tools.slice(s.toolOffsets[i], s.toolOffsets[i + 1]);
    sequences.set(s.complete[i] ? completeKey(tools) : keyOf(tools), {
      plans,
      words: Uint32Array.from(s.words.slice(s.wordOffsets[i], s.wordOffsets[i + 1])),
    });
  });
  return {
    gain: s.gain,
    plans: s.plans,
    df: Uint32Array.from(s.df),
    sequences,
    alarms: s.alarms,
    enabled: s.enabled,
    fired: s.fired,
    precision: s.precision,
    atSteps: s.atSteps,
  };
}

/**
 * The rule in the pipeline (step-rules.ts), at a step still confident: many demonstrations make
 * exactly these calls (END on top) or begin with them and the top tool, and none of their requests
 * says a word this one says that another tool explains.
 */
export const sequenceWordsRule: StepRule<SequenceWords> = {
  name: 'sequence-words',
  fit: (f) => fitSequenceWords(f.plans, f.toolIndex, f.coverage, undefined, f.words),
  learn(s, plans, toolIndex, coverage) {
    if (coverage) learnSequenceWords(s, plans, toolIndex, coverage);
  },
  validate(saved, labels) {
    if (saved.sequenceWords === undefined) return;
    const why = "needs state.coverage (its word ids are the alignment's)";
    if (saved.coverage === undefined) stateError('state.sequenceWords', why);
    const words = (saved.coverage as { words: unknown[] }).words.length;
    checkSequenceWordsState('state.sequenceWords', saved.sequenceWords, labels, words);
  },
  load(saved) {
    const state = saved.sequenceWords as SequenceWordsState | undefined;
    return state && saved.coverage ? sequenceWordsFromState(state) : undefined;
  },
  save(s, into) {
    into.sequenceWords = sequenceWordsState(s);
  },
  check(s, v) {
    const next = v.best === v.side.end ? undefined : v.best;
    // A removed tool on top (its probability is masked later, by the caller's view) says nothing of the plan.
    if (!v.confident || !v.coverage || (next !== undefined && v.unavailable?.has(next))) return null;
    if (!(next === undefined ? s.enabled : s.atSteps)) return null;
    const found = askedBeyond(s, v.coverage, v.requestWords(), v.history, next, v.usable);
    if (!found) return null;
    const names = (list: readonly number[], join: string) => list.map((f) => `"${v.side.labels[f]}"`).join(join);
    const calls = names(next === undefined ? v.history : [...v.history, next], ' → ');
    const which = next === undefined ? `call ${calls} and nothing more` : `begin with ${calls}`;
    const said = `the request says "${found.word}" (${names(found.tools, ', ')})`;
    const none = `which none of the ${found.plans} demonstrations that ${which} says`;
    return { tools: found.tools, because: [`${said}, ${none}`] };
  },
};

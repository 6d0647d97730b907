import { checkNumber } from '../base/checks.js';
import { DtdrError } from '../base/errors.js';
import type { Ranking } from '../retrieval/types.js';

/**
 * How a ranking is cut into a candidate set: the threshold `alpha` (for methods without conformal sets), the cap, and
 * how an unsure step widens.
 */
export interface SelectOptions {
  /** Keep tools whose probability exceeds α (the paper's threshold). Default 0.1. */
  alpha?: number;
  /** Never put more than this many tools in a confident set. Default 8. */
  maxSize?: number;
  /** When the retriever is unsure, widen to this much probability mass… Default 0.95. */
  widenMass?: number;
  /** …taking at least this many tools… Default 5. */
  widenMin?: number;
  /**
   * …and at most this many. Default 12. A conformal set capped short of its threshold claims what sets of this size
   * held on held-out steps, where that is below the target.
   */
  widenMax?: number;
  /**
   * Where a calibrated set would hold half the labels or more (an app of 10–24 tools with its first demonstrations),
   * cut it to the largest size under half (at least `widenMin`) and say what sets of that size held on held-out
   * steps: a set of nearly every tool tells the model nothing. Needs the held-out curve a DTDR-G model keeps
   * (`Ranking.set.coverageBySize`). Default true.
   */
  cutHalfSets?: boolean;
  /**
   * Of an unsure set the cap (`widenMax`) cuts short (a conformal set capped short of its threshold, or a widened
   * one short of `widenMass`), the share the learned ranking keeps before the descriptions' favourites fill the rest
   * (DTDR-G: `Ranking.set.described`): there the learned ranking is unsure beyond its first few, and the tools
   * alone's favourites hold needed tools it ranks lower. A confident set keeps the learned ranking's. 1: the
   * learned ranking's first `widenMax` alone; 0 still keeps its first label. Default 2/3 (8 of 12), chosen leaving
   * each world out (`npm run experiment -- capped-fill`).
   */
  keepLearned?: number;
  /**
   * Where a request's first step meets a model that can call no step confident yet (DTDR-G's first day:
   * `Ranking.set.firstDay`), fill its unsure set's free places with the descriptions' favourites, up to
   * `widenMax` and under half the labels: such a set is sized for the next call alone, and the tools alone's dozen
   * holds more of the request's later tools (`npm run experiment -- first-step-recall`). Default true.
   */
  fillFirstSteps?: boolean;
}

/** The defaults of {@link SelectOptions}. */
export const SELECT_DEFAULTS: Required<SelectOptions> = {
  alpha: 0.1,
  maxSize: 8,
  widenMass: 0.95,
  widenMin: 5,
  widenMax: 12,
  cutHalfSets: true,
  keepLearned: 2 / 3,
  fillFirstSteps: true,
};

/** Checks selection options before any work: a typed error naming the option, never a silent odd set. */
export function checkSelectOptions(options: SelectOptions | undefined): void {
  if (options === undefined) return;
  if (options === null || typeof options !== 'object')
    throw new DtdrError('options', 'selection options must be an object', { field: 'options' });
  checkNumber(options.alpha, 'alpha', 0, 1);
  checkNumber(options.maxSize, 'maxSize', 1, 1e6, true);
  checkNumber(options.widenMass, 'widenMass', 0, 1);
  checkNumber(options.widenMin, 'widenMin', 1, 1e6, true);
  checkNumber(options.widenMax, 'widenMax', 1, 1e6, true);
  checkNumber(options.keepLearned, 'keepLearned', 0, 1);
  for (const field of ['cutHalfSets', 'fillFirstSteps'] as const)
    if (options[field] !== undefined && typeof options[field] !== 'boolean')
      throw new DtdrError('options', `${field} must be true or false`, { field });
  const min = options.widenMin ?? SELECT_DEFAULTS.widenMin;
  const max = options.widenMax ?? SELECT_DEFAULTS.widenMax;
  if (min > max) throw new DtdrError('options', `widenMin (${min}) is above widenMax (${max})`, { field: 'widenMin' });
}

/** How the claim of what such sets held on held-out steps opens, after an unsure set's causes (not in prompts). */
export const HELD_OUT_CLAIM = ' (sets like this one, of ';

/** A tool offered for the next step, with its calibrated probability. */
export interface Candidate {
  tool: string;
  probability: number;
}

/**
 * The candidate set for a step: the tools to show the model, whether it was widened because the retriever is unsure,
 * and why.
 */
export interface CandidateSet {
  /** F_t, best first; may include END. */
  candidates: Candidate[];
  /** True when the set was widened because the retriever was unsure. */
  widened: boolean;
  /** Why it was widened, in words fit for a log or a prompt note. */
  reason?: string;
  /**
   * For a conformal set: the share of such steps whose set holds an acceptable tool — the coverage target, or for a
   * set cut (`cutHalfSets`) or capped (`widenMax`) short of it, what sets of its size held on held-out steps. Absent
   * where the held-out steps do not speak for this one (`Ranking.set.noClaim`).
   */
  target?: number;
  /**
   * False where selection takes a confident ranking's confidence away: its set holds half the labels or more, or was
   * cut (`cutHalfSets`). Absent: the ranking's own.
   */
  confident?: false;
}

/**
 * The candidate set F_t a prompt carries.
 *
 * For a calibrated retriever (DTDR-G) it is the split-conformal set: every label whose calibrated
 * probability reaches the step's threshold, which holds an acceptable tool in at least the target
 * share of held-out steps (separately for confident and unsure steps); at least one label, at
 * most `widenMax`. Unsure steps are reported as widened, with the retriever's reason.
 *
 * For the others, the paper's thresholded set {f : P(f) > α}. A retriever that is unsure (it
 * backed off, has little support, or its distribution is flat) or a set that nothing clears does
 * not get to drop tools silently: the set widens to the smallest top-k holding `widenMass` of the
 * probability, within [widenMin, widenMax], and says why. Where the cap stops that short of `widenMass`, a
 * DTDR-G step carrying the descriptions' favourites keeps the learned ranking's first places (`keepLearned`, and
 * every label over α) and fills the rest with them, as a capped conformal set does. Every set is best first.
 */
export function selectCandidates(ranking: Ranking, options: SelectOptions = {}): CandidateSet {
  checkSelectOptions(options);
  // An option given as undefined keeps its default.
  const o = { ...SELECT_DEFAULTS, ...Object.fromEntries(Object.entries(options).filter(([, v]) => v !== undefined)) };
  if (ranking.set && ranking.set.threshold > 0) return conformalSet(ranking, ranking.set, o);
  const { probabilities } = ranking;
  const first = (n: number) => firstLabels(ranking, n);
  const pick = (order: Uint32Array, n: number) => candidatesAt(ranking, order, n);
  // Only the first few labels are needed: at most widenMax (or maxSize) + 1.
  const count = Math.max(o.widenMax, o.maxSize, o.widenMin) + 1;
  let order = first(count);
  const overAlpha = (list: Uint32Array) => {
    let n = 0;
    while (n < list.length && n < o.maxSize && probabilities[list[n]] > o.alpha) n++;
    return n;
  };
  const widening = (list: Uint32Array) => {
    let size = 0;
    let mass = 0;
    while (size < list.length && size < o.widenMax && (size < o.widenMin || mass < o.widenMass))
      mass += probabilities[list[size++]];
    return size;
  };
  let above = overAlpha(order);
  const reason = !ranking.confident
    ? (ranking.cause ?? 'the retriever is unsure')
    : above === 0
      ? `no tool has probability above ${o.alpha}`
      : undefined;
  // Where the set would hold most labels, those ranked by their description alone are passed over,
  // and the set is no larger for it.
  const size = reason ? Math.max(widening(order), above) : above;
  const skip = passedOver(ranking, size);
  if (skip) {
    order = first(count + skip.size).filter((i) => !skip.has(i));
    above = overAlpha(order);
  }
  if (!reason) return { candidates: withIncluded(ranking, pick(order, above), o.widenMax), widened: false };
  const widened = skip ? Math.max(Math.min(widening(order), size), above) : size;
  // A widening the cap stopped short of widenMass is filled as a capped conformal set is; labels over α stay.
  let mass = 0;
  for (let r = 0; r < widened; r++) mass += probabilities[order[r]];
  const keep = Math.max(learnedPlaces(widened, o.keepLearned), above);
  const hedge = widened === o.widenMax && mass < o.widenMass ? hedged(ranking, keep, order, skip, widened) : undefined;
  const made = withIncluded(ranking, pick(hedge ?? order, widened), o.widenMax);
  const candidates = hedge ? bestFirst(made) : made;
  const filled = hedge ? undefined : firstDayFill(ranking, candidates, skip, o);
  const why = hedge
    ? `${reason}; capped at ${o.widenMax} tools${filledAfter(keep)}`
    : filled
      ? `${reason}; ${firstDayNote(filled.length - candidates.length)}`
      : reason;
  return { candidates: filled ?? candidates, widened: true, reason: why };
}

/** The first n labels of a ranking in rank order (a partial sort where the ranking has one). */
function firstLabels(ranking: Ranking, n: number): Uint32Array {
  return ranking.top ? ranking.top(Math.min(ranking.probabilities.length, n)) : ranking.order;
}

/** The labels at order[0..n) as candidates with their probabilities. */
function candidatesAt(ranking: Ranking, order: Uint32Array, n: number): Candidate[] {
  return Array.from(order.subarray(0, n), (i) => ({ tool: ranking.labels[i], probability: ranking.probabilities[i] }));
}

/** The candidate set where the ranking carries a conformal threshold: the labels at or above it, and why so wide. */
function conformalSet(
  ranking: Ranking,
  set: NonNullable<Ranking['set']>,
  o: typeof SELECT_DEFAULTS & SelectOptions,
): CandidateSet {
  const { probabilities } = ranking;
  const first = (n: number) => firstLabels(ranking, n);
  const pick = (order: Uint32Array, n: number) => candidatesAt(ranking, order, n);
  const { threshold, target } = set;
  // The set is the best label and those after it at or above the threshold (at most widenMax):
  // only that many need ordering — the head may itself be below it — and one more to tell a
  // capped set.
  let above = 0;
  for (let i = 0; i < probabilities.length; i++) if (probabilities[i] >= threshold) above++;
  const skip = passedOver(ranking, Math.min(above, o.widenMax));
  const ranked = first(Math.min(above + 1, o.widenMax + 1) + (skip?.size ?? 0));
  const order = skip ? ranked.filter((i) => !skip.has(i)) : ranked;
  let size = Math.min(1, order.length);
  while (size < order.length && probabilities[order[size]] >= threshold) size++;
  const capped = size > o.widenMax;
  size = Math.min(size, o.widenMax);
  const labelCount = probabilities.length;
  const cut = o.cutHalfSets ? halfCut(set.coverageBySize, size, labelCount, o.widenMin) : undefined;
  if (cut) size = cut.size;
  // An unsure capped set keeps the learned ranking's first ones, then the descriptions' favourites (where the
  // ranking has them); a confident one keeps the learned ranking's.
  const keep = learnedPlaces(size, o.keepLearned);
  const hedge = capped && !cut ? hedged(ranking, keep, order, skip, size) : undefined;
  const kept = hedge ?? order;
  let mass = 0;
  for (let r = 0; r < size; r++) mass += probabilities[kept[r]];
  const made = withIncluded(ranking, pick(kept, size), o.widenMax);
  const firstDay = hedge || cut ? undefined : firstDayFill(ranking, made, skip, o);
  const candidates = firstDay ?? (hedge ? bestFirst(made) : made);
  // A set of half the labels or more is never called confident: it holds the right tool because it holds most.
  const half = candidates.length * 2 >= labelCount;
  const confident = ranking.confident && !cut && !half;
  // A set capped short of its threshold holds what sets of that size held on held-out steps, not the target.
  // (A curve shorter than widenMax: its last point, what fewer labels held, a lower bound.)
  const curve = set.coverageBySize;
  const cappedAt = capped && !cut && curve?.length ? curve[Math.min(o.widenMax, curve.length) - 1] : undefined;
  const measured = cut ? cut.coverage : cappedAt !== undefined && cappedAt < target ? cappedAt : undefined;
  const claimed = set.noClaim ? undefined : (measured ?? target);
  const cause = ranking.cause ?? (half ? 'the set holds half the labels or more' : 'unsure');
  const notes = [
    ...(confident
      ? []
      : [
          claimed === undefined
            ? cause
            : `${cause}${HELD_OUT_CLAIM}${made.length} tool${made.length === 1 ? '' : 's'}, hold a right tool in ` +
              `${Math.round(claimed * 100)}% of ${measured !== undefined ? 'held-out' : 'such'} steps)`,
        ]),
    ...(cut
      ? [
          `cut from ${cut.from} of the ${labelCount} labels` +
            (claimed === undefined
              ? ''
              : `, which a set holding a right tool in ${Math.round(target * 100)}% of held-out steps would take`),
        ]
      : []),
    ...(firstDay ? [firstDayNote(firstDay.length - made.length)] : []),
    ...(capped
      ? [
          `capped at ${o.widenMax} tools${hedge ? filledAfter(keep) : ''}, ` +
            `holding ${mass.toFixed(2)} of the probability`,
        ]
      : []),
  ];
  return {
    candidates,
    widened: !confident,
    ...(claimed !== undefined ? { target: claimed } : {}),
    ...(ranking.confident && !confident ? { confident: false as const } : {}),
    ...(notes.length ? { reason: notes.join('; ') } : {}),
  };
}

/**
 * A first day's first step (`Ranking.set.firstDay`, unsure): the set's free places, up to `widenMax` and under half
 * the labels, go to the descriptions' favourites for the request's later calls (never a label at probability 0 nor
 * one passed over), best first. Undefined where none joins.
 */
function firstDayFill(
  ranking: Ranking,
  candidates: Candidate[],
  skip: Set<number> | undefined,
  o: typeof SELECT_DEFAULTS & SelectOptions,
): Candidate[] | undefined {
  const favourites = ranking.set?.described;
  if (!o.fillFirstSteps || !ranking.set?.firstDay || ranking.confident || !favourites) return undefined;
  const { labels, probabilities } = ranking;
  const room = Math.min(o.widenMax, underHalf(labels.length));
  const have = new Set(candidates.map((c) => c.tool));
  const joined = [...candidates];
  for (const f of favourites) {
    if (joined.length >= room) break;
    if (mayJoin(ranking, f, skip) && !have.has(labels[f]))
      joined.push({ tool: labels[f], probability: probabilities[f] });
    have.add(labels[f]);
  }
  return joined.length > candidates.length ? bestFirst(joined) : undefined;
}

/** Whether a favourite may join a set: never a label at probability 0 (a removed tool), nor one passed over. */
const mayJoin = (ranking: Ranking, f: number, skip: Set<number> | undefined) =>
  ranking.probabilities[f] > 0 && !skip?.has(f);

/** Candidates best first (a filled set's favourites join in the descriptions' order). */
const bestFirst = (candidates: Candidate[]) => candidates.sort((a, b) => b.probability - a.probability);

/** How a first day's filled first step says so in its reason. */
const firstDayNote = (joined: number) =>
  `first step: ${joined} of the descriptions' favourites join for the request's later calls`;

/** How a filled capped set says so in its reason. */
const filledAfter = (keep: number) => `, the learned ranking's first ${keep} then the descriptions' favourites`;

/** How many of a capped set of `size` the learned ranking keeps (`share` of it, at least one). */
function learnedPlaces(size: number, share: number): number {
  return Math.max(1, Math.round(share * size));
}

/**
 * An unsure capped set of `size`: the first `keep` of the learned `order`, then the descriptions' favourites
 * (`set.described`) not among them (never a label at probability 0, a removed or unavailable tool, nor one passed
 * over), then the learned order's next ones should the favourites run out. Undefined for a confident ranking, one
 * without favourites, or where the learned ranking keeps every place.
 */
function hedged(
  ranking: Ranking,
  keep: number,
  order: Uint32Array,
  skip: Set<number> | undefined,
  size: number,
): Uint32Array | undefined {
  const favourites = ranking.set?.described;
  if (ranking.confident || !favourites || keep >= size) return undefined;
  const chosen = new Set<number>(order.subarray(0, keep));
  for (const f of favourites) if (chosen.size < size && mayJoin(ranking, f, skip)) chosen.add(f);
  for (const f of order) if (chosen.size < size) chosen.add(f);
  return Uint32Array.from(chosen);
}

/**
 * The cut of a set of `size` that holds half the `labels` or more: to the largest size under half, at least
 * `widenMin`, with the held-out coverage of sets that size (`curve`, k = 1, 2, …). None without the curve, below
 * 2 × widenMin labels (nothing to cut to), or where the set is under half already.
 */
function halfCut(
  curve: readonly number[] | undefined,
  size: number,
  labels: number,
  widenMin: number,
): { size: number; from: number; coverage: number } | undefined {
  if (!curve || size * 2 < labels || labels < 2 * widenMin) return undefined;
  const to = Math.max(widenMin, underHalf(labels));
  if (to >= size || to > curve.length) return undefined;
  return { size: to, from: size, coverage: curve[to - 1] };
}

/** The largest set under half of `labels` labels. */
const underHalf = (labels: number) => Math.ceil(labels / 2) - 1;

/** A set holding at least this share of the labels says nothing of any one of them. */
const MOST_LABELS = 0.6;

/**
 * The labels a set of `size` passes over: those ranked by their description alone (`set.describedOnly`: tools no
 * demonstration calls), where the set would hold most of the labels. There the threshold says nothing of any one
 * of them, and a tool added later would join the set of every request; such a tool joins only where a rule names
 * it (`set.include`: the request matches its description).
 */
function passedOver(ranking: Ranking, size: number): Set<number> | undefined {
  const described = ranking.set?.describedOnly;
  return described?.length && size >= MOST_LABELS * ranking.probabilities.length ? new Set(described) : undefined;
}

/**
 * Labels the retriever says must be offered (`set.include`: tools a rule names — the request asks
 * for them — and tools added after training that the request matches) join the set, in that
 * order, taking the places of the least probable others beyond `max`; when more are included
 * than there is room for, the most probable others keep at least half the places.
 */
function withIncluded(ranking: Ranking, chosen: Candidate[], max: number): Candidate[] {
  const include = ranking.set?.include;
  if (!include || include.length === 0) return chosen;
  // A label with probability 0 is a removed tool (it left the order): never offered, whatever asks.
  const extra = include
    .filter((i) => ranking.probabilities[i] > 0 && !chosen.some((c) => c.tool === ranking.labels[i]))
    .map((i) => ({ tool: ranking.labels[i], probability: ranking.probabilities[i] }));
  if (extra.length === 0) return chosen;
  // Free places first; beyond them the included take the places of the least probable others,
  // but never more than half the set: where many added tools match (thousands of them, say), the
  // most probable tools stay too.
  const chosenKept =
    extra.length <= max - chosen.length
      ? chosen.length
      : Math.min(chosen.length, Math.max(Math.ceil(max / 2), max - extra.length));
  const kept = extra.slice(0, Math.max(1, max - chosenKept));
  return [...chosen.slice(0, Math.max(1, max - kept.length)), ...kept].sort((a, b) => b.probability - a.probability);
}

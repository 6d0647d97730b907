/**
 * Request coverage: which words of the request the calls so far, and the candidate set,
 * explain. A word–tool alignment model, IBM Model 1 with a NULL word, is fitted by EM on (request
 * words, tools the plan calls) from the demonstrations and on (name and description words, tool)
 * from the tool descriptions, so that every tool, rare or added later, has a translation row.
 *
 * A request word w is explained by a set of tools S as well as its best member does,
 * e(w | S) = max(t(w | NULL), max_{a ∈ S} t(w | a)); NULL stands for generic words. The coverage
 * gain of tool a is log t(w | a) − log e(w | S): the likelihood a adds to explaining w. A set that
 * leaves a word with a large gain unexplained, while some tool explains it strongly, is not
 * confident, and that tool joins the set (see `unexplained`).
 *
 * The alignment can hand a common word to a tool ("how" to maps_directions, from "how do I get to
 * …"). A reason therefore prints what was counted, not what the alignment believes: of the
 * demonstrations whose request says the word, how many call the tool (`said`, `calls`; fitted and
 * learned). Requiring three in four of them before a word counts ended such alarms but let more
 * confident steps miss (UltraTool's novel sequences: 0.171 against 0.136); the counts only inform.
 */
import { terms } from '../../base/text.js';
import { array, int, num, numbers, object, stateError } from '../../base/validate.js';
import type { Plan, ToolSpec } from '../../base/types.js';

/** Tools kept per word (its largest translation probabilities). */
export const ROW_TOOLS = 8;
/** EM iterations. */
export const EM_ITERATIONS = 8;
/**
 * The rule's defaults: a word counts when its best tool's gain over the set is at least log(GAIN) and that tool's share
 * of the word's alignment at least SHARE.
 */
export const COVERAGE_DEFAULTS = { gain: 100, share: 0.5, maxInclude: 1 };

/** The fitted alignment model, sparse: per word, its best tools and their t(w | a), and t(w | NULL). */
export interface CoverageModel {
  words: Map<string, number>;
  /** Word id → word. */
  names: string[];
  nullProb: Float32Array;
  /** Per word id: tools (label indices) by decreasing t(w | tool). */
  tools: Uint32Array[];
  probs: Float32Array[];
  /**
   * Per word id, 1 where request coverage can ever name the word, whatever the set: its best tool
   * takes `share` of its alignment and beats NULL alone by `gain` (a set only explains it better).
   */
  strong: Uint8Array;
  /**
   * Per word id: the demonstrations whose request says it, and, per listed tool (as `tools`), how many of them call
   * it. Absent in files written before them: words count by the alignment alone.
   */
  said?: Uint32Array;
  calls?: Uint32Array[];
  gain: number;
  share: number;
  maxInclude: number;
}

/**
 * The saved form, columnar (flat numeric arrays pack into the binary model's sections): word i's tools are
 * tools[offsets[i] .. offsets[i+1]).
 */
export interface CoverageState {
  words: string[];
  /** t(w | NULL) per word. */
  nullProb: number[];
  offsets: number[];
  tools: number[];
  probs: number[];
  /** CoverageModel.said and .calls (flat, as `tools`); absent in files written before them. */
  said?: number[];
  calls?: number[];
  gain: number;
  share: number;
  maxInclude: number;
}

/** One word's row as fromRows builds the model: the word, t(w | NULL), [tool, t(w | tool), calls] and `said`. */
type Row = [word: string, nullProb: number, tools: [number, number, number][], said: number];

function descriptionWords(tool: ToolSpec): string[] {
  return terms(`${tool.name} ${tool.description ?? ''}`);
}

/**
 * EM for IBM Model 1 over the demonstrations' (request words, called tools) pairs and each tool's
 * (description words, tool) pair; `toolIndex` maps a tool name to its label index.
 */
export function fitCoverage(
  tools: readonly ToolSpec[],
  plans: readonly Plan[],
  toolIndex: Map<string, number>,
  options: Partial<typeof COVERAGE_DEFAULTS> = {},
): CoverageModel {
  const words = new Map<string, number>();
  const id = (w: string) => {
    let i = words.get(w);
    if (i === undefined) words.set(w, (i = words.size));
    return i;
  };
  const pairs: { w: Uint32Array; a: Uint32Array }[] = [];
  for (const plan of plans) {
    const w = Uint32Array.from(new Set(terms(plan.query).map(id)));
    const a = Uint32Array.from(
      new Set(plan.nodes.map((n) => toolIndex.get(n.tool)).filter((x): x is number => x !== undefined)),
    );
    if (w.length && a.length) pairs.push({ w, a });
  }
  const demonstrated = pairs.length;
  tools.forEach((tool, f) => {
    const w = Uint32Array.from(new Set(descriptionWords(tool).map(id)));
    if (w.length) pairs.push({ w, a: Uint32Array.of(f) });
  });
  const V = words.size;
  const NULL = tools.length; // the NULL word's slot (END's label index: END explains no word)
  // t(w | a) per (a, w) slot; each pair's words list their slots [a1 … ak, NULL]. Uniform start.
  const slotOf = new Map<number, number>();
  const slotA: number[] = [];
  const slotW: number[] = [];
  const rows = pairs.map(({ w, a }) => {
    const k = a.length + 1;
    const out = new Uint32Array(w.length * k);
    w.forEach((y, j) => {
      for (let i = 0; i < k; i++) {
        const x = i < a.length ? a[i] : NULL;
        const key = x * V + y;
        let slot = slotOf.get(key);
        if (slot === undefined) {
          slotOf.set(key, (slot = slotA.length));
          slotA.push(x);
          slotW.push(y);
        }
        out[j * k + i] = slot;
      }
    });
    return { out, k };
  });
  const t = expectationMaximization(rows, slotA, NULL);
  // The demonstrations that say each word, and of them those that call each tool (the pair's own slots).
  const said = new Uint32Array(V);
  const calls = new Float64Array(slotA.length);
  for (let p = 0; p < demonstrated; p++) {
    const { out, k } = rows[p];
    for (let r = 0; r < out.length; r += k) {
      said[slotW[out[r]]]++;
      for (let i = 0; i < k - 1; i++) calls[out[r + i]]++;
    }
  }
  const nullProb = new Float32Array(V);
  const rowsOf: [number, number, number][][] = Array.from({ length: V }, () => []);
  for (let slot = 0; slot < t.length; slot++) {
    if (slotA[slot] === NULL) nullProb[slotW[slot]] = t[slot];
    else rowsOf[slotW[slot]].push([slotA[slot], t[slot], calls[slot]]);
  }
  const byWord = [...words.keys()].map((w, i): Row => [w, nullProb[i], rowsOf[i], said[i]]);
  return fromRows(byWord, { ...COVERAGE_DEFAULTS, ...options }, true);
}

/** IBM Model 1's EM: t(w | a) per (tool, word) slot from a uniform start; each row word lists k slots, NULL last. */
function expectationMaximization(rows: { out: Uint32Array; k: number }[], slotA: number[], NULL: number): Float64Array {
  const t = new Float64Array(slotA.length).fill(1);
  const counts = new Float64Array(slotA.length);
  const totals = new Float64Array(NULL + 1);
  for (let it = 0; it < EM_ITERATIONS; it++) {
    counts.fill(0);
    totals.fill(0);
    for (const { out, k } of rows) {
      for (let r = 0; r < out.length; r += k) {
        let denom = t[out[r + k - 1]];
        for (let i = 0; i < k - 1; i++) denom += t[out[r + i]];
        for (let i = 0; i < k; i++) {
          const slot = out[r + i];
          const c = t[slot] / denom;
          counts[slot] += c;
          totals[slotA[slot]] += c;
        }
      }
    }
    for (let slot = 0; slot < t.length; slot++) t[slot] = counts[slot] / totals[slotA[slot]];
  }
  return t;
}

/** The model from its rows and settings; `counted`: the rows carry the demonstrations' counts (older files' do not). */
function fromRows(rows: Row[], o: typeof COVERAGE_DEFAULTS, counted: boolean): CoverageModel {
  const { gain, share, maxInclude } = o;
  const words = new Map<string, number>();
  const nullProb = new Float32Array(rows.length);
  const tools: Uint32Array[] = [];
  const probs: Float32Array[] = [];
  const calls: Uint32Array[] = [];
  rows.forEach(([w, n, row], i) => {
    words.set(w, i);
    nullProb[i] = Math.fround(n);
    const top = [...row].sort((x, y) => y[1] - x[1] || x[0] - y[0]).slice(0, ROW_TOOLS);
    tools.push(Uint32Array.from(top, (r) => r[0]));
    probs.push(Float32Array.from(top, (r) => r[1]));
    calls.push(Uint32Array.from(top, (r) => r[2]));
  });
  const said = Uint32Array.from(rows, (r) => r[3]);
  const strong = new Uint8Array(rows.length);
  const names = rows.map((r) => r[0]);
  const counts = counted ? { said, calls } : {};
  const m = { words, names, nullProb, tools, probs, strong, ...counts, gain, share, maxInclude };
  for (let w = 0; w < rows.length; w++) strong[w] = aligned(m, w) ? 1 : 0;
  return m;
}

export function coverageState(m: CoverageModel): CoverageState {
  const offsets = [0];
  for (const row of m.tools) offsets.push(offsets[offsets.length - 1] + row.length);
  return {
    words: [...m.names],
    nullProb: Array.from(m.nullProb),
    offsets,
    tools: m.tools.flatMap((row) => Array.from(row)),
    probs: m.probs.flatMap((row) => Array.from(row)),
    ...(m.said && m.calls ? { said: Array.from(m.said), calls: m.calls.flatMap((row) => Array.from(row)) } : {}),
    gain: m.gain,
    share: m.share,
    maxInclude: m.maxInclude,
  };
}

/** Throws a DtdrError('artifact') for the first thing in a saved coverage model a fit could not have written. */
export function checkCoverageState(field: string, v: unknown, tools: number): asserts v is CoverageState {
  const s = object(field, v);
  num(`${field}.gain`, s.gain, { min: 1 });
  num(`${field}.share`, s.share, { min: 0, max: 1 });
  int(`${field}.maxInclude`, s.maxInclude, 0, 1000);
  const words = array(`${field}.words`, s.words);
  if (words.some((w) => typeof w !== 'string') || new Set(words).size !== words.length)
    stateError(`${field}.words`, 'must list distinct words');
  const V = words.length;
  numbers(`${field}.nullProb`, s.nullProb, V, { min: 0, max: 1 });
  const offsets = numbers(`${field}.offsets`, s.offsets, V + 1, { min: 0, integer: true });
  const n = offsets[V];
  if (offsets[0] !== 0 || offsets.some((o, i) => i > 0 && (o < offsets[i - 1] || o - offsets[i - 1] > ROW_TOOLS)))
    stateError(`${field}.offsets`, `must start at 0 and rise by at most ${ROW_TOOLS} per word`);
  numbers(`${field}.tools`, s.tools, n, { min: 0, max: tools - 1, integer: true });
  numbers(`${field}.probs`, s.probs, n, { min: 0, max: 1 });
  if ((s.said === undefined) !== (s.calls === undefined)) stateError(`${field}.said`, 'said and calls come together');
  if (s.said === undefined) return;
  const said = numbers(`${field}.said`, s.said, V, { min: 0, integer: true });
  const calls = numbers(`${field}.calls`, s.calls, n, { min: 0, integer: true });
  for (let i = 0; i < V; i++)
    for (let k = offsets[i]; k < offsets[i + 1]; k++)
      if (calls[k] > said[i]) stateError(`${field}.calls`, `word ${i}'s calls exceed the demonstrations that say it`);
}

export function coverageFromState(s: CoverageState): CoverageModel {
  const row = (i: number): Row[2] => {
    const out: Row[2] = [];
    for (let j = s.offsets[i]; j < s.offsets[i + 1]; j++) out.push([s.tools[j], s.probs[j], s.calls?.[j] ?? 0]);
    return out;
  };
  const rows = s.words.map((w, i): Row => [w, s.nullProb[i], row(i), s.said?.[i] ?? 0]);
  return fromRows(rows, s, s.said !== undefined);
}

/**
 * Tools added after training get translation rows from their descriptions (no retraining): each
 * description word's t(w | tool) is its share of the description, competing with the rows' tools.
 */
export function withAddedTools(m: CoverageModel, tools: readonly ToolSpec[], added: readonly number[]): CoverageModel {
  if (added.length === 0) return m;
  const rows = new Map<number, [number, number, number][]>();
  const words = new Map(m.words);
  const nullProb = Array.from(m.nullProb);
  const listed = (i: number) =>
    Array.from(m.tools[i], (a, k) => [a, m.probs[i][k], m.calls?.[i][k] ?? 0] as [number, number, number]);
  for (const f of added) {
    const list = descriptionWords(tools[f]);
    for (const w of new Set(list)) {
      let i = words.get(w);
      if (i === undefined) {
        words.set(w, (i = words.size));
        nullProb.push(0);
      }
      const row = rows.get(i) ?? (i < m.tools.length ? listed(i) : []);
      // No demonstration calls an added tool yet.
      row.push([f, list.filter((x) => x === w).length / list.length, 0]);
      rows.set(i, row);
    }
  }
  const all = [...words.keys()].map((w, i): Row => [
    w,
    nullProb[i],
    rows.get(i) ?? (i < m.tools.length ? listed(i) : []),
    m.said?.[i] ?? 0,
  ]);
  return fromRows(all, m, m.said !== undefined);
}

/**
 * Online learning: new demonstrations join the counts (`said`, `calls`) of the words the model knows, so that a
 * reason's counts are of every demonstration. The alignment itself stays as fitted. A model without counts (an older
 * file) is left as it is.
 */
export function learnCoverage(m: CoverageModel, plans: readonly Plan[], toolIndex: Map<string, number>): void {
  const { said, calls } = m;
  if (!said || !calls) return;
  for (const plan of plans) {
    const called = new Set(plan.nodes.map((n) => toolIndex.get(n.tool)));
    for (const w of requestWordsOf(m, terms(plan.query))) {
      if (w >= said.length) continue; // a word only an added tool's description has
      said[w]++;
      m.tools[w].forEach((a, k) => called.has(a) && calls[w][k]++);
    }
  }
}

/** Whether word w's best tool takes `share` of its alignment and beats NULL by `gain` (the counts aside). */
function aligned(m: CoverageModel, w: number): boolean {
  const row = m.probs[w];
  if (row.length === 0) return false;
  let total = m.nullProb[w];
  for (let k = 0; k < row.length; k++) total += row[k];
  return row[0] >= m.share * total && row[0] / Math.max(m.nullProb[w], 1e-9) >= m.gain;
}

/** A request's word ids the model knows, from its terms (`terms(query)`; computed once per request). */
export function requestWordsOf(m: CoverageModel, queryTerms: readonly string[]): Uint32Array {
  const out: number[] = [];
  for (const w of new Set(queryTerms)) {
    const i = m.words.get(w);
    if (i !== undefined) out.push(i);
  }
  return Uint32Array.from(out);
}

/**
 * The request words `unexplained` can ever name (`m.strong`), found once per request so that a
 * step checks these few; `unexplained` over them gives the same answer as over `words`.
 */
export function strongWords(m: CoverageModel, words: Uint32Array): Uint32Array {
  return words.filter((w) => m.strong[w] === 1);
}

/**
 * The tools that explain request words the set `inSet` (called tools and candidates) leaves
 * unexplained: for each word, its best tool a* when log t(w | a*) − log e(w | set) ≥ log(gain)
 * and a* takes at least `share` of the word's alignment among NULL and its listed tools; at most
 * `maxInclude` tools, by decreasing gain. `usable(a)` filters tools that cannot be offered.
 */
export function unexplained(
  m: CoverageModel,
  words: Uint32Array,
  inSet: (a: number) => boolean,
  usable: (a: number) => boolean,
): Unexplained[] {
  const found: { tool: number; word: number; gain: number }[] = [];
  for (const w of words) {
    if (m.strong[w] !== 1) continue;
    const tools = m.tools[w];
    let explained = m.nullProb[w];
    for (let k = 0; k < tools.length; k++) if (inSet(tools[k]) && m.probs[w][k] > explained) explained = m.probs[w][k];
    const best = tools[0];
    const p = m.probs[w][0];
    if (inSet(best) || !usable(best)) continue;
    const gain = p / Math.max(explained, 1e-9);
    if (gain < m.gain) continue;
    const at = found.findIndex((x) => x.tool === best);
    if (at < 0) found.push({ tool: best, word: w, gain });
    else if (gain > found[at].gain) found[at] = { tool: best, word: w, gain };
  }
  if (found.length === 0) return [];
  return found
    .sort((x, y) => y.gain - x.gain)
    .slice(0, m.maxInclude)
    .map((x) => ({
      tool: x.tool,
      word: m.names[x.word],
      ...(m.said && m.calls ? { said: m.said[x.word], calls: m.calls[x.word][0] } : {}),
    }));
}

/**
 * A request word the set leaves unexplained and the tool that explains it; where the model has the counts, the
 * demonstrations whose request says the word and how many of them call the tool.
 */
export interface Unexplained {
  tool: number;
  word: string;
  said?: number;
  calls?: number;
}

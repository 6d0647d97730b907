/**
 * The added-tools rule: tools added after training (Dtdr.addTools) that no demonstration calls yet
 * join the set where the request matches them by description, within the rank that held the needed
 * tool in the coverage target's share of held-out steps (every tool treated as undemonstrated). An
 * added tool left out has no held-out evidence either way: the step is not confident. An included
 * one only widens the set. Its tools and reasons come after the other rules' (`last`).
 */
import { MIN_SCORES } from '../groups.js';
import type { StepRule, StepView } from '../rule.js';
import { bestValues, rankAmong } from '../signals.js';

/** The rank within which an undemonstrated added tool joins the set (0: the rule is off). */
export interface AddedToolsState {
  rank: number;
}

export const addedToolsRule: StepRule<AddedToolsState> = {
  name: 'added-tools',
  last: true,
  fit: () => ({ rank: 0 }),
  calibrate(state, heldOut) {
    state.rank = rankQuantile(
      heldOut.descriptionRanks.filter((r) => r > 0),
      heldOut.target,
    );
  },
  // Saved with the calibration groups (`groups.newToolRank`), where it has always been; checked there.
  load: (saved) => ({ rank: (saved.groups as { newToolRank?: number } | undefined)?.newToolRank ?? 0 }),
  save(state, into) {
    const groups = into.groups as { newToolRank: number } | undefined;
    if (groups) groups.newToolRank = state.rank;
  },
  check(state, v) {
    if (v.addedTools.length === 0 || state.rank <= 0) return null;
    // Where the rank spans most of the tools (a few tools, few demonstrations), rank is no evidence:
    // the descriptions must rank the tool about as high as their favourite label (END included:
    // where the calls so far served the request, no tool is asked for).
    const byRank = state.rank < RANK_IS_EVIDENCE * v.side.end;
    const fresh = v.addedTools.filter(
      (f) => v.counts[f] < 0.5 && !v.unavailable?.has(f) && (byRank || describedAsWellAsBest(v, f)),
    );
    if (fresh.length === 0) return null;
    const include = askedNewTools(v, fresh, state.rank);
    const leftOut = fresh.filter((f) => !include.includes(f));
    const names = (list: readonly number[]) => Array.from(list.slice(0, 3), (f) => `"${v.side.labels[f]}"`).join(', ');
    const one = (list: readonly number[], single: string, many: string) => (list.length === 1 ? single : many);
    const because: string[] = [];
    if (leftOut.length > 0) {
      const no = `${one(leftOut, 'has', 'have')} no demonstrations yet: the set may miss ${one(leftOut, 'it', 'them')}`;
      because.push(`${names(leftOut)} ${one(leftOut, 'was', 'were')} added after training and ${no}`);
    }
    if (include.length > 0) {
      const more = include.length > 3 ? ` and ${include.length - 3} more` : '';
      const among = `${one(include, 'is', 'are')} among the request's ${state.rank} best description matches`;
      const added =
        `${one(include, 'was', 'were')} added after training, ${one(include, 'has', 'have')} no ` +
        `demonstrations yet and`;
      because.push(`${names(include)}${more} ${added} ${among}`);
    }
    return { tools: include, because, unsure: leftOut.length > 0 };
  },
};

/** An added tool whose description probability is at least this share of the best label's counts as asked for. */
export const DESCRIPTION_PEER = 0.5;

/**
 * An added tool's description rank counts as evidence only where the rank it needs is below this share of the tools.
 */
const RANK_IS_EVIDENCE = 0.6;

/**
 * Whether the descriptions give tool `f` at least DESCRIPTION_PEER of their favourite label's probability this step.
 */
function describedAsWellAsBest(v: StepView, f: number): boolean {
  const pT = v.descriptions();
  let best = 0;
  for (let g = 0; g < v.side.labels.length; g++) best = Math.max(best, pT[g]);
  return pT[f] >= DESCRIPTION_PEER * best;
}

/** The smallest rank r such that at least `target` of the held-out ranks are ≤ r (0 below MIN_SCORES ranks). */
export function rankQuantile(ranks: readonly number[], target: number): number {
  if (ranks.length < MIN_SCORES) return 0;
  const sorted = [...ranks].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((sorted.length + 1) * target) - 1)];
}

/**
 * Added tools, not yet demonstrated, within `rank` of the best description match (embedding or lexical) for this step.
 */
function askedNewTools(v: StepView, unseen: readonly number[], rank: number): number[] {
  const [emb, lex] = [v.descriptionMatch('embedding'), v.descriptionMatch('lexical')];
  const T = v.side.end;
  const embBest = bestValues(emb, T, rank);
  const lexBest = bestValues(lex, T, rank);
  // The same rank by the centred description match (centered.ts): hubs do not crowd it.
  const centered = v.centered().score(v.queryVector);
  const cenBest = bestValues(centered, T, rank);
  const kth = (best: number[]) => (best.length < rank ? -Infinity : best[rank - 1]);
  const [embK, lexK, cenK] = [kth(embBest), kth(lexBest), kth(cenBest)];
  const bestRank = new Map<number, number>();
  for (const f of unseen) {
    let r = Infinity;
    if (emb[f] >= embK) r = rankAmong(embBest, emb[f]);
    if (lex[f] > 0 && lex[f] >= lexK) r = Math.min(r, rankAmong(lexBest, lex[f]));
    // The centred match first: among thousands of tools the plain embedding and BM25 matches
    // put hubs and one-word coincidences on top, so the tools they alone bring come after it.
    if (r < Infinity) r += rank;
    if (centered[f] >= cenK) r = rankAmong(cenBest, centered[f]);
    if (r < Infinity) bestRank.set(f, r);
  }
  const out = [...bestRank.keys()];
  // Best matches first: by the centred match's rank, then the tools only the embedding or the
  // lexical match brings, by their better rank there (ties by the centred match): where many
  // added tools qualify, the set keeps the ones the request asks for most.
  return out.length > 1
    ? out.sort((a, b) => bestRank.get(a)! - bestRank.get(b)! || centered[b] - centered[a] || a - b)
    : out;
}

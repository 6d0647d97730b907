/**
 * What fills a set the cap cuts short. Where a step's threshold would keep more labels than a set may hold, the
 * learned ranking is unsure beyond its first few; selection (select.ts) keeps those, then fills the set with the
 * descriptions' favourites, the tools-only model's, so such a set holds what the tools alone would offer too.
 */
import { topByScore } from '../ranking.js';

/** A step with more labels than this at or above its threshold may be capped: it carries the descriptions' picks. */
const WIDE_ABOVE = 8;
/** How many of the descriptions' favourites a wide step carries, best first (`Ranking.set.described`). */
const FAVOURITES = 32;

/**
 * The descriptions' favourites of a wide step (more than WIDE_ABOVE labels of `p` at or above its threshold): what
 * fills a set the cap cuts short after the learned ranking's first ones (select.ts), since there the threshold says
 * the learned ranking is unsure beyond them; and of a first day's first step (`firstDay`), whose set they fill for
 * the request's later calls. Undefined for other steps, so most steps never compute them.
 */
export function describedFavourites(
  p: Float64Array,
  { threshold, set }: { threshold: number; set: { firstDay?: true } },
  descriptions: () => Float64Array,
): Uint32Array | undefined {
  // Tools only: END is the last label, and a plan's end is no favourite of a request's words.
  const tools = () => descriptions().subarray(0, p.length - 1);
  if (set.firstDay) return topByScore(tools(), FAVOURITES, undefined, true);
  if (!(threshold > 0)) return undefined;
  let above = 0;
  for (let f = 0; f < p.length && above <= WIDE_ABOVE; f++) if (p[f] >= threshold) above++;
  return above > WIDE_ABOVE ? topByScore(tools(), FAVOURITES, undefined, true) : undefined;
}

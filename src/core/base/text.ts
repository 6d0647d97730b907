/** `getPersonMovieCredit` / `clock_alarm_cancel` → `get person movie credit` / `clock alarm cancel`. */
export function humanizeToolName(name: string): string {
  return name
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .replace(/([A-Z]+)([A-Z][a-z])/g, '$1 $2')
    .replace(/[_\-./:]+/g, ' ')
    .trim()
    .toLowerCase();
}

/**
 * The text a context-conditioned retriever embeds: the query, then the last `historyLength`
 * tools in words (DTDR-L's θ(q + f_{t-l:t-1})). Tool names are spelled out so a word-level
 * encoder can read them.
 */
export function contextText(query: string, history: readonly string[], historyLength: number): string {
  const recent = historyLength > 0 ? history.slice(-historyLength) : [];
  return recent.length === 0 ? query : `${query} | then: ${recent.map(humanizeToolName).join(', ')}`;
}

/** The text that stands for a tool in similarity search: its name in words and description. */
export function toolText(name: string, description: string): string {
  return description ? `${humanizeToolName(name)}: ${description}` : humanizeToolName(name);
}

const STOPWORDS = new Set('a an the and or of to in on for with by at from is are be it this that as i me my you your we our please can could would will'.split(' '));

/** Lower-cased word tokens for BM25, with camelCase and snake_case split and stopwords dropped. */
export function terms(text: string): string[] {
  return humanizeToolName(text)
    .split(/[^\p{L}\p{N}]+/u)
    .filter((t) => t.length > 1 && !STOPWORDS.has(t));
}

/** `getPersonMovieCredit` / `clock_alarm_cancel` → `get person movie credit` / `clock alarm cancel`. */
export function humanizeToolName(name: string): string {
  return splitAcronyms(splitCamelCase(name))
    .replace(/[_\-./:]+/g, ' ')
    .trim()
    .toLowerCase();
}

const isLower = (c: number): boolean => c >= 97 && c <= 122; // a-z
const isUpper = (c: number): boolean => c >= 65 && c <= 90; // A-Z
const isDigit = (c: number): boolean => c >= 48 && c <= 57; // 0-9

/**
 * `getPerson` → `get Person`: a space between a lower-case letter or digit and the capital after
 * it (what `s.replace(/([a-z0-9])([A-Z])/g, '$1 $2')` does), in one pass.
 */
function splitCamelCase(s: string): string {
  let out = '';
  let from = 0;
  for (let i = 1; i < s.length; i++) {
    const c = s.charCodeAt(i - 1);
    if (isUpper(s.charCodeAt(i)) && (isLower(c) || isDigit(c))) {
      out += `${s.slice(from, i)} `;
      from = i;
    }
  }
  return from === 0 ? s : out + s.slice(from);
}

/**
 * `HTMLParser` → `HTML Parser`: in a run of two or more capitals followed by a lower-case letter,
 * a space before the run's last capital. This is what `s.replace(/([A-Z]+)([A-Z][a-z])/g,
 * '$1 $2')` does, in one pass instead of that regex's backtracking, which is quadratic in the
 * length of a run of capitals.
 */
function splitAcronyms(s: string): string {
  let out = '';
  let from = 0;
  let i = 0;
  while (i < s.length) {
    if (!isUpper(s.charCodeAt(i))) {
      i++;
      continue;
    }
    const start = i;
    while (i < s.length && isUpper(s.charCodeAt(i))) i++;
    if (i - start >= 2 && i < s.length && isLower(s.charCodeAt(i))) {
      out += `${s.slice(from, i - 1)} `;
      from = i - 1;
    }
  }
  return from === 0 ? s : out + s.slice(from);
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

const STOPWORDS = new Set(
  (
    'a an the and or of to in on for with by at from is are be it this that as i me my you ' +
    'your we our please can could would will'
  ).split(' '),
);

/** Lower-cased word tokens for BM25, with camelCase and snake_case split and stopwords dropped. */
export function terms(text: string): string[] {
  for (let i = 0; i < text.length; i++) if (text.charCodeAt(i) > 127) return unicodeTerms(text);
  return asciiTerms(text);
}

/** `terms` for any text: the name split, then Unicode letters and digits. */
export function unicodeTerms(text: string): string[] {
  return humanizeToolName(text)
    .split(/[^\p{L}\p{N}]+/u)
    .filter((t) => t.length > 1 && !STOPWORDS.has(t));
}

/**
 * `unicodeTerms` for ASCII text in one pass (every request is tokenised once per plan, and most are
 * ASCII): a token is a run of letters and digits, cut where `humanizeToolName` puts a space — before
 * a capital after a lower-case letter or digit, and before the last capital of a run of two or more
 * followed by a lower-case letter. test/text-bounds.test.ts checks the two agree.
 */
export function asciiTerms(text: string): string[] {
  const out: string[] = [];
  let start = -1;
  const n = text.length;
  for (let i = 0; i <= n; i++) {
    const c = i < n ? text.charCodeAt(i) : 32;
    if (!(isLower(c) || isUpper(c) || isDigit(c))) {
      if (start >= 0) push(out, text, start, i);
      start = -1;
      continue;
    }
    if (start < 0) {
      start = i;
      continue;
    }
    if (!isUpper(c)) continue;
    const before = text.charCodeAt(i - 1);
    if (isLower(before) || isDigit(before) || (isUpper(before) && i + 1 < n && isLower(text.charCodeAt(i + 1)))) {
      push(out, text, start, i);
      start = i;
    }
  }
  return out;
}

function push(out: string[], text: string, from: number, to: number): void {
  if (to - from < 2) return;
  const t = text.slice(from, to).toLowerCase();
  if (!STOPWORDS.has(t)) out.push(t);
}

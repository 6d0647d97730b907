import type { BuiltPrompt } from './prompt/build.js';

/** Counts tokens of a text with some model's tokenizer. */
export interface TokenCounter {
  readonly id: string;
  count(text: string): number;
}

export interface PromptTokens {
  /** The cacheable prefix (guidelines, example, and the full tool list where it is shown). */
  constant: number;
  /** What changes per step. */
  variable: number;
  total: number;
}

/**
 * Tokens of a prompt, split as the paper's Figure 4 does: the total is counted on the whole text,
 * the constant part on the cacheable prefix (memoised: it repeats every step), and the variable
 * part is the difference.
 */
export function promptTokens(prompt: BuiltPrompt, counter: TokenCounter, memo = new Map<string, number>()): PromptTokens {
  let prefix = '';
  for (const s of prompt.segments) {
    if (!s.cacheable) break;
    prefix += s.text;
  }
  let constant = memo.get(prefix);
  if (constant === undefined) memo.set(prefix, (constant = prefix ? counter.count(prefix) : 0));
  const total = counter.count(prompt.text);
  return { constant, variable: total - constant, total };
}

import type { BuiltPrompt } from './build.js';

/** Counts tokens of a text with some model's tokenizer. */
export interface TokenCounter {
  readonly id: string;
  /** The number of tokens of `text`. */
  count(text: string): number;
}

/** A prompt's length in tokens: its constant (cacheable) part, its variable part and the total. */
export interface PromptTokens {
  /** The cacheable prefix (guidelines, example, and the full tool list where it is shown). */
  constant: number;
  /** What changes per step. */
  variable: number;
  total: number;
}

/**
 * Tokens of a prompt, split as the paper's Figure 4 does: the cacheable prefix (memoised, since it
 * repeats at every step) and the rest. Segments break before a blank line or a ChatML marker, where
 * BPE pre-tokenisation breaks anyway, so the two counts add up to the count of the whole text (a
 * test checks this on real prompts).
 */
export function promptTokens(
  prompt: BuiltPrompt,
  counter: TokenCounter,
  memo = new Map<string, number>(),
): PromptTokens {
  let prefix = '';
  let rest = '';
  for (const s of prompt.segments) {
    if (s.cacheable && rest === '') prefix += s.text;
    else rest += s.text;
  }
  let constant = memo.get(prefix);
  if (constant === undefined) memo.set(prefix, (constant = prefix ? counter.count(prefix) : 0));
  const variable = rest ? counter.count(rest) : 0;
  return { constant, variable, total: constant + variable };
}

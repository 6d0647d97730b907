/**
 * Constrained decoding for local models: the answers a step allows, as token sequences in a
 * trie, so a logits processor can forbid every token that would leave them. With the mask a
 * model — even a random one — can only write an allowed call (or END): the hard mask holds at
 * the logit level, not just in the prompt.
 */
import { END } from '../base/types.js';
import type { PromptFormat } from './build.js';

/**
 * The canonical answers of a step, in the format's own call syntax: each allowed tool with empty
 * arguments at the selection stage (dtdr asks for arguments in a second prompt), and END. At the
 * arguments stage only the call's opening up to its arguments is fixed (`open: true`).
 */
export function allowedAnswers(
  format: PromptFormat,
  stage: 'select' | 'arguments',
  allowed: readonly string[],
): { text: string; open: boolean }[] {
  const names = allowed.filter((n) => n !== END);
  if (format === 'react') {
    return stage === 'select'
      ? [
          ...names.map((n) => ({ text: `Action: ${n}`, open: false })),
          ...(allowed.includes(END) ? [{ text: `Action: ${END}`, open: false }] : []),
        ]
      : names.map((n) => ({ text: `Action: ${n}\nAction Input: `, open: true }));
  }
  // hermes, and openai rendered through a chat template (Qwen-style <tool_call> blocks).
  if (stage === 'arguments')
    return names.map((n) => ({ text: `<tool_call>\n{"name": ${JSON.stringify(n)}, "arguments": `, open: true }));
  return [
    ...names.map((n) => ({
      text: `<tool_call>\n{"name": ${JSON.stringify(n)}, "arguments": {}}\n</tool_call>`,
      open: false,
    })),
    ...(allowed.includes(END) ? [{ text: END, open: false }] : []),
  ];
}

interface TrieNode {
  children: Map<number, TrieNode>;
  /** An answer ends here: only end-of-sequence may follow (unless it is open). */
  end: boolean;
  /** An open answer's fixed part ends here: anything may follow. */
  open: boolean;
}

/** Token sequences of the allowed answers, for "which tokens may come next". */
export class AnswerTrie {
  private readonly root: TrieNode = { children: new Map(), end: false, open: false };

  constructor(answers: readonly { tokens: readonly number[]; open: boolean }[]) {
    for (const a of answers) {
      let node = this.root;
      for (const t of a.tokens) {
        let child = node.children.get(t);
        if (!child) node.children.set(t, (child = { children: new Map(), end: false, open: false }));
        node = child;
      }
      if (a.open) node.open = true;
      else node.end = true;
    }
  }

  /**
   * What may follow `generated`: `free` once an open answer's fixed part is written; otherwise the
   * allowed next tokens and whether an answer is complete (then end-of-sequence is allowed).
   * `dead` when `generated` already left every answer (cannot happen under the mask).
   */
  next(generated: readonly number[]): { free: boolean; tokens: number[]; complete: boolean; dead: boolean } {
    let node = this.root;
    for (const t of generated) {
      if (node.open) return { free: true, tokens: [], complete: false, dead: false };
      const child = node.children.get(t);
      if (!child) return { free: false, tokens: [], complete: false, dead: true };
      node = child;
    }
    if (node.open) return { free: true, tokens: [], complete: false, dead: false };
    return { free: false, tokens: [...node.children.keys()], complete: node.end, dead: false };
  }
}

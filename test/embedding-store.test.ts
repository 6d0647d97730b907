/**
 * A persisted embedding cache: after a reload (a fresh encoder and store opened on the same
 * file), texts embedded before are not embedded again, and a damaged line costs only a re-embed.
 */
import { appendFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { withPersistentCache, type Encoder } from '../src/core/base/encoder.js';
import { fileEmbeddingStore } from '../src/storage/file.js';
import { wordAxisEncoder } from './helpers.js';

const dir = mkdtempSync(join(tmpdir(), 'dtdr-store-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The word-axis encoder, counting the texts that reach it. */
function counting(): Encoder & { seen: string[] } {
  const base = wordAxisEncoder(['send', 'email', 'find', 'file']);
  const seen: string[] = [];
  return { ...base, seen, embed: async (texts) => (seen.push(...texts), base.embed(texts)) };
}

describe('withPersistentCache + fileEmbeddingStore', () => {
  it('embeds each text once across reloads, giving identical vectors', async () => {
    const path = join(dir, 'vectors.jsonl');
    const first = counting();
    const a = withPersistentCache(first, fileEmbeddingStore(path), 0);
    const before = await a.embed(['send email', 'find file', 'send email']);
    expect(first.seen).toEqual(['send email', 'find file']);

    const second = counting();
    const b = withPersistentCache(second, fileEmbeddingStore(path), 0);
    const after = await b.embed(['find file', 'send email', 'email file']);
    expect(second.seen).toEqual(['email file']);
    expect(Array.from(after[1])).toEqual(Array.from(before[0]));
  });

  it('skips a damaged line and re-embeds only that text', async () => {
    const path = join(dir, 'damaged.jsonl');
    await withPersistentCache(counting(), fileEmbeddingStore(path), 0).embed(['send email']);
    appendFileSync(path, '{"k": "broken');
    const third = counting();
    await withPersistentCache(third, fileEmbeddingStore(path), 0).embed(['send email', 'find file']);
    expect(third.seen).toEqual(['find file']);
  });

  it('keys vectors by encoder: another encoder does not read them', async () => {
    const path = join(dir, 'shared.jsonl');
    await withPersistentCache(counting(), fileEmbeddingStore(path), 0).embed(['send email']);
    const other = { ...counting(), id: 'another-encoder' };
    const seen: string[] = [];
    const wrapped = withPersistentCache(
      { ...other, embed: async (t) => (seen.push(...t), other.embed(t)) },
      fileEmbeddingStore(path),
      0,
    );
    await wrapped.embed(['send email']);
    expect(seen).toEqual(['send email']);
  });
});

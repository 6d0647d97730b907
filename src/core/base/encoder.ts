import { MAX_EMBEDDING_NUMBER } from './validate.js';

/** A sentence encoder: texts in, unit-norm vectors out (a zero vector for text it cannot read). */
export interface Encoder {
  /** Stable name recorded in trained models, e.g. `dtdr-glove-100d` or `Xenova/all-MiniLM-L6-v2`. */
  readonly id: string;
  readonly dimension: number;
  /** Where it was loaded from, when that is a folder on disk: recorded in models so tools can find it again. */
  readonly location?: string;
  /** SHA-256 (hex) of the model's weights and tokenizer, when known: a model refuses an encoder with other files. */
  readonly fingerprint?: string;
  /** Where it runs, as far as the runtime can tell: set by the ONNX encoders. */
  readonly backend?: EncoderBackend;
  /** Embeds a batch; returns one vector per text, in order. */
  embed(texts: readonly string[]): Promise<Float32Array[]>;
  /** Releases the runtime session, if any. */
  dispose?(): Promise<void>;
}

/** The execution provider a session actually runs on (not only the one asked for). */
export interface EncoderBackend {
  /** `webgpu`, `wasm` or `cpu`. */
  name: string;
  /** The GPU adapter's architecture or vendor, for `webgpu` (e.g. `swiftshader`). */
  adapter?: string;
  /** Why it is not the backend that was asked for, when it is not. */
  note?: string;
}

/** Least-recently-used map with a fixed capacity (Map keeps insertion order). */
export class LruCache<K, V> {
  private readonly entries = new Map<K, V>();
  hits = 0;
  misses = 0;
  constructor(readonly capacity: number) {}

  get(key: K): V | undefined {
    const value = this.entries.get(key);
    if (value === undefined) {
      this.misses++;
      return undefined;
    }
    this.hits++;
    this.entries.delete(key);
    this.entries.set(key, value);
    return value;
  }

  set(key: K, value: V): void {
    this.entries.delete(key);
    this.entries.set(key, value);
    if (this.entries.size > this.capacity) this.entries.delete(this.entries.keys().next().value as K);
  }

  get size(): number {
    return this.entries.size;
  }
}

/** What an encoder's embedding cache tells: for logs and tuning `capacity`. */
export interface EmbeddingCache {
  /** Lookups answered from the cache, and those that went to the model. */
  readonly hits: number;
  readonly misses: number;
  /** Texts held now, and at most. */
  readonly size: number;
  readonly capacity: number;
}

/**
 * Wraps an encoder so that repeated texts are embedded once: history strings repeat at every
 * step of every plan. Only the texts not in the cache reach the model, in one batch.
 */
export function withEmbeddingCache(encoder: Encoder, capacity = 4096): Encoder & { readonly cache: EmbeddingCache } {
  const cache = new LruCache<string, Float32Array>(capacity);
  return {
    id: encoder.id,
    dimension: encoder.dimension,
    ...(encoder.location !== undefined ? { location: encoder.location } : {}),
    ...(encoder.fingerprint !== undefined ? { fingerprint: encoder.fingerprint } : {}),
    ...(encoder.backend !== undefined ? { backend: encoder.backend } : {}),
    cache,
    dispose: encoder.dispose?.bind(encoder),
    async embed(texts) {
      const out: (Float32Array | undefined)[] = texts.map((t) => cache.get(t));
      const missing = [...new Set(texts.filter((_, i) => out[i] === undefined))];
      if (missing.length > 0) {
        const vectors = await encoder.embed(missing);
        const fresh = new Map(missing.map((t, i) => [t, vectors[i]]));
        fresh.forEach((v, t) => cache.set(t, v));
        texts.forEach((t, i) => (out[i] ??= fresh.get(t)));
      }
      return out as Float32Array[];
    },
  };
}

/** Where embeddings persist between sessions: a file in Node, IndexedDB in browsers, or your own. */
export interface EmbeddingStore {
  /** The stored vectors of `keys`, undefined where none is stored. */
  get(keys: readonly string[]): Promise<(Float32Array | undefined)[]>;
  /** Stores vectors by key. */
  set(entries: readonly [string, Float32Array][]): Promise<void>;
}

/**
 * Whether a vector read from a store has the encoder's length and only finite coordinates of at most
 * MAX_EMBEDDING_NUMBER (what a model can learn and still load).
 */
function isStoredVector(v: unknown, dimension: number): v is Float32Array {
  if (!v || (v as Float32Array).length !== dimension) return false;
  const x = v as Float32Array;
  for (let i = 0; i < x.length; i++) if (!(Math.abs(x[i]) <= MAX_EMBEDDING_NUMBER)) return false;
  return true;
}

/**
 * Wraps an encoder so that every text it has ever embedded is kept in `store`, keyed by the
 * encoder's fingerprint (or id) and the text: a reloaded app does not re-embed its
 * demonstrations when it learns, forgets or retrains. Only texts missing from the store reach
 * the model; an in-memory LRU sits in front.
 */
export function withPersistentCache(encoder: Encoder, store: EmbeddingStore, memory = 4096): Encoder {
  const prefix = `${encoder.fingerprint ?? encoder.id}\u0000`;
  const persistent: Encoder = {
    id: encoder.id,
    dimension: encoder.dimension,
    ...(encoder.location !== undefined ? { location: encoder.location } : {}),
    ...(encoder.fingerprint !== undefined ? { fingerprint: encoder.fingerprint } : {}),
    dispose: encoder.dispose?.bind(encoder),
    async embed(texts) {
      const unique = [...new Set(texts)];
      const stored = await store.get(unique.map((t) => prefix + t));
      const found = new Map<string, Float32Array>();
      unique.forEach((t, i) => {
        const v = stored[i];
        // A stored vector is used only when it is whole and sane (a damaged line, or one written by
        // another program, could hold NaN or 3e38); otherwise its text is embedded again and rewritten.
        if (isStoredVector(v, encoder.dimension)) found.set(t, v);
      });
      const missing = unique.filter((t) => !found.has(t));
      if (missing.length > 0) {
        const vectors = await encoder.embed(missing);
        missing.forEach((t, i) => found.set(t, vectors[i]));
        await store.set(missing.map((t, i) => [prefix + t, vectors[i]] as [string, Float32Array]));
      }
      return texts.map((t) => found.get(t)!);
    },
  };
  return memory > 0 ? withEmbeddingCache(persistent, memory) : persistent;
}

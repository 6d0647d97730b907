/** Models in IndexedDB (browsers), through idb-keyval; the store is injectable for tests. */
import { createStore, del, get, getMany, keys, set, setMany, type UseStore } from 'idb-keyval';
import type { EmbeddingStore } from '../core/base/encoder.js';
import type { ModelArtifact } from '../core/model/artifact.js';
import { DtdrError } from '../core/base/errors.js';

const PREFIX = 'dtdr-model:';

/** Stores a model: its JSON artifact, or (smaller) its binary form from `model.toBinary()`. */
export async function saveModelToIndexedDb(
  name: string,
  artifact: ModelArtifact | Uint8Array,
  store?: UseStore,
): Promise<void> {
  await set(PREFIX + name, artifact, store);
}

/** Returns the stored artifact, to pass to Dtdr.load; a missing one is a DtdrError. */
export async function loadModelFromIndexedDb(name: string, store?: UseStore): Promise<unknown> {
  const value: unknown = await get(PREFIX + name, store);
  if (value === undefined)
    throw new DtdrError('artifact', `no model named "${name}" in IndexedDB`, {
      hint: 'save one with saveModelToIndexedDb first',
    });
  return value;
}

/** Deletes a model saved with `saveModelToIndexedDb` (nothing happens when there is none). */
export function deleteModelFromIndexedDb(name: string, store?: UseStore): Promise<void> {
  return del(PREFIX + name, store);
}

/** Names of the models stored with saveModelToIndexedDb, sorted. */
export async function listModelsInIndexedDb(store?: UseStore): Promise<string[]> {
  return (await keys(store))
    .filter((k): k is string => typeof k === 'string' && k.startsWith(PREFIX))
    .map((k) => k.slice(PREFIX.length))
    .sort();
}

/** Embeddings in IndexedDB (database `dtdr-embeddings` unless you pass a store), for withPersistentCache. */
export function indexedDbEmbeddingStore(store: UseStore = createStore('dtdr-embeddings', 'vectors')): EmbeddingStore {
  return {
    get: (keys) => getMany<Float32Array>([...keys], store),
    set: (entries) =>
      setMany(
        entries.map(([k, v]) => [k, v]),
        store,
      ),
  };
}

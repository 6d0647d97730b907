/**
 * The peers `dtdr eval` compares with (see PeerName): each runs through its own npm package, loaded
 * only when named, with a DtdrError saying what to install when the package is absent.
 */
import type { Peer, PeerName } from '../../core/retrieval/types.js';
import { aiSdkPeer } from './aisdk.js';
import { oramaPeer } from './orama.js';

export function peersFor(methods: readonly string[]): Partial<Record<PeerName, Peer>> {
  const all: Record<PeerName, () => Peer> = {
    'aisdk-search': aiSdkPeer,
    'orama-bm25': () => oramaPeer('orama-bm25', 'fulltext'),
    'orama-vector': () => oramaPeer('orama-vector', 'vector'),
    'orama-hybrid': () => oramaPeer('orama-hybrid', 'hybrid'),
  };
  return Object.fromEntries(methods.filter((m): m is PeerName => m in all).map((m) => [m, all[m]()]));
}

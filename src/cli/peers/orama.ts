/**
 * Orama (@orama/orama, a dev dependency; the engine bigtool-ts, a community BigTool port for JS,
 * searches with): BM25 full-text, vector and hybrid search over the tool set, through the package's
 * own create / insertMultiple / search. Vector and hybrid search dtdr's bundled encoder vectors
 * (the tool texts QTS and DTDR-G embed), stored in an Orama vector field.
 */
import { DtdrError } from '../../core/base/errors.js';
import { END, type ToolSpec } from '../../core/base/types.js';
import type { Peer, PeerName, PeerRetriever, RankInput, Ranking } from '../../core/retrieval/types.js';
import { labelIndex, peerRanking } from './ranking.js';

type OramaModule = typeof import('@orama/orama');

let loaded: Promise<OramaModule> | undefined;

function loadOrama(): Promise<OramaModule> {
  loaded ??= import('@orama/orama').catch((cause) => {
    loaded = undefined;
    throw new DtdrError('options', 'the Orama peers need the package @orama/orama, which is not installed', {
      hint: 'install @orama/orama to compare with Orama (npm install --save-dev @orama/orama)',
      cause,
    });
  });
  return loaded;
}

export type OramaMode = 'fulltext' | 'vector' | 'hybrid';

export function oramaPeer(name: Extract<PeerName, `orama-${string}`>, mode: OramaMode): Peer {
  return {
    name,
    needs: { tools: mode !== 'fulltext' },
    async fit(tools: ToolSpec[], toolVectors?: Float32Array[]): Promise<PeerRetriever> {
      const orama = await loadOrama();
      if (mode !== 'fulltext' && (!toolVectors || toolVectors.length !== tools.length))
        throw new DtdrError('options', `${name} needs the tools' encoder vectors`, {
          hint: 'dtdr eval embeds them with the bundled encoder',
        });
      const dimension = toolVectors?.[0]?.length ?? 0;
      const db = orama.create({
        schema: {
          name: 'string',
          description: 'string',
          ...(mode === 'fulltext' ? {} : { embedding: `vector[${dimension}]` as const }),
        },
      });
      await orama.insertMultiple(
        db,
        tools.map((t, i) => ({
          id: t.name,
          name: t.name,
          description: t.description ?? '',
          ...(mode === 'fulltext' ? {} : { embedding: Array.from(toolVectors![i]) }),
        })),
      );
      const labels = [...tools.map((t) => t.name), END];
      const index = labelIndex(labels);
      // Every tool may come back: limit = the tool count, and a cosine threshold of -1 for the vector part.
      const limit = tools.length;
      return {
        method: name,
        labels,
        needs: { query: mode !== 'fulltext', context: false },
        historyLength: 0,
        async rank(input: RankInput): Promise<Ranking> {
          const vector = () => {
            if (!input.queryVector)
              throw new DtdrError('options', `${name} needs input.queryVector`, { hint: 'dtdr eval embeds the query' });
            return { value: Array.from(input.queryVector), property: 'embedding' };
          };
          const result = await (mode === 'fulltext'
            ? orama.search(db, { term: input.query, limit })
            : mode === 'vector'
              ? orama.search(db, { mode: 'vector', vector: vector(), similarity: -1, limit })
              : orama.search(db, { mode: 'hybrid', term: input.query, vector: vector(), similarity: -1, limit }));
          return peerRanking(
            labels,
            index,
            result.hits.map((h) => ({ name: h.id, score: h.score })),
          );
        },
      };
    },
  };
}

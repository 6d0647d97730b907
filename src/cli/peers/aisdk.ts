/**
 * The Vercel AI SDK's default tool search (`toolSearch()` of ai@7, no custom `search`), run through
 * the package: every tool is deferred (`deferLoading`), and a real `generateText` round with the
 * SDK's own test double (`MockLanguageModelV4` from `ai/test`) calls the search tool with the
 * step's request; the SDK binds its search registry and runs its default ranking (keywords in tool
 * names count 2, in descriptions 1). `maxResults` = the tool count, so the whole ranked list comes
 * back; the SDK's own `toolExecutionMs` of the search is the step's time (the mock round around it is
 * not the search). ai@7 is a dev dependency under the alias `ai-v7` (the project's `ai` is 6, which
 * has no toolSearch); a user's own `ai@7` is used first.
 */
import { DtdrError } from '../../core/base/errors.js';
import { END, type ToolSpec } from '../../core/base/types.js';
import type { Peer, PeerRetriever, RankInput, Ranking } from '../../core/retrieval/types.js';
import { labelIndex, peerRanking } from './ranking.js';

type AiModule = typeof import('ai-v7');
type AiTestModule = typeof import('ai-v7/test');

/** What the SDK hands the model by default (toolSearch's maxResults): the peer's candidate set. */
export const AI_SDK_DEFAULT_RESULTS = 5;
const SEARCH = 'tool_search';

let loaded: Promise<{ ai: AiModule; test: AiTestModule; from: string }> | undefined;

function loadAi(): Promise<{ ai: AiModule; test: AiTestModule; from: string }> {
  loaded ??= (async () => {
    for (const from of ['ai', 'ai-v7']) {
      try {
        const ai = (await import(from)) as AiModule;
        if (typeof ai.toolSearch !== 'function') continue; // ai@6 has no toolSearch
        return { ai, test: (await import(`${from}/test`)) as AiTestModule, from };
      } catch {
        // not installed under this name
      }
    }
    throw new DtdrError(
      'options',
      'the aisdk-search peer needs the AI SDK 7 (the package ai, version 7, with toolSearch), which is not installed',
      { hint: 'install ai@7 to compare with the AI SDK (npm install --save-dev ai@7)' },
    );
  })();
  loaded.catch(() => (loaded = undefined));
  return loaded;
}

const usage = {
  inputTokens: { total: 0, noCache: 0, cacheRead: 0, cacheWrite: 0 },
  outputTokens: { total: 0, text: 0, reasoning: 0 },
};

export function aiSdkPeer(): Peer {
  return {
    name: 'aisdk-search',
    needs: { tools: false },
    async fit(tools: ToolSpec[]): Promise<PeerRetriever> {
      const { ai, test } = await loadAi();
      if (tools.some((t) => t.name === SEARCH))
        throw new DtdrError('data', `a tool is named "${SEARCH}", the name the AI SDK peer gives its search tool`);
      const set: Parameters<AiModule['generateText']>[0]['tools'] & object = {
        [SEARCH]: ai.toolSearch({ maxResults: tools.length }),
      };
      for (const t of tools)
        set[t.name] = ai.tool({
          description: t.description ?? '',
          inputSchema: ai.jsonSchema({ type: 'object', properties: {} }),
          deferLoading: true,
        });
      // The mock model asks the search tool for the request it was prompted with, once.
      let calls = 0;
      const model = new test.MockLanguageModelV4({
        doGenerate: async (options) => {
          const user = [...options.prompt].reverse().find((m) => m.role === 'user');
          const query =
            user && Array.isArray(user.content)
              ? user.content.map((p) => (p.type === 'text' ? p.text : '')).join('')
              : '';
          return {
            content: [
              {
                type: 'tool-call',
                toolCallId: `search-${++calls}`,
                toolName: SEARCH,
                input: JSON.stringify({ query }),
              },
            ],
            finishReason: { unified: 'tool-calls', raw: undefined },
            usage,
            warnings: [],
          };
        },
      });
      const labels = [...tools.map((t) => t.name), END];
      const index = labelIndex(labels);
      let searchMs = 0;
      return {
        method: 'aisdk-search',
        labels,
        needs: { query: false, context: false },
        historyLength: 0,
        async rank(input: RankInput): Promise<Ranking> {
          const result = await ai.generateText({
            model,
            tools: set,
            prompt: input.query,
            onToolExecutionEnd: (event) => void (searchMs = event.toolExecutionMs),
          });
          const output = result.toolResults.find((r) => r.toolName === SEARCH)?.output as
            { tools?: { name: string }[] } | undefined;
          if (!output?.tools) {
            const error = result.content.find((p) => p.type === 'tool-error');
            throw new DtdrError(
              'options',
              `the AI SDK's tool search gave no result for "${input.query.slice(0, 80)}"`,
              { cause: error },
            );
          }
          return peerRanking(
            labels,
            index,
            output.tools.map((t) => ({ name: t.name })),
            { uniformOver: AI_SDK_DEFAULT_RESULTS },
          );
        },
        lastSearchMicros: () => searchMs * 1000,
      };
    },
  };
}

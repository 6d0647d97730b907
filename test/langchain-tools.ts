/** The demo tools as LangChain tools that record which ran: the adapter tests' agents call these. */
import { tool } from 'langchain';
import { z } from 'zod';
import { DEMO_TOOLS } from '../src/demo/toolset.js';

export function langchainTools(ran: string[]) {
  return DEMO_TOOLS.map((t) =>
    tool(async () => (ran.push(t.name), 'ok'), {
      name: t.name,
      description: t.description,
      schema: z.object({}).passthrough(),
    }),
  );
}

/**
 * dtdr + LangChain.js, runnable offline: `node --import tsx demos/frameworks/langchain.ts`.
 * LangChain's own FakeToolCallingModel stands in for your chat model.
 */
import { createAgent, FakeToolCallingModel, HumanMessage, tool } from 'langchain';
import { z } from 'zod';
import { Dtdr, loadEncoder } from '../../src/node.js';
import { DEMO_TOOLS, demoDataset } from '../../src/demo/index.js';
import { dtdrToolSelector } from '../../src/adapters/langchain/index.js';

const { tools: specs, plans } = demoDataset(1500);
const dtdr = await Dtdr.train({ tools: specs, plans, encoder: await loadEncoder() });
const tools = DEMO_TOOLS.map((t) =>
  tool(async (input) => JSON.stringify({ ok: true, input }), {
    name: t.name,
    description: t.description,
    schema: z.object({}).passthrough(),
  }),
);
const model = new FakeToolCallingModel({
  toolCalls: [
    [{ name: 'maps_search_place', args: { query: 'pharmacy' }, id: '1' }],
    [{ name: 'maps_directions', args: { destination: 'Main St 1' }, id: '2' }],
    [],
  ],
});
const agent = createAgent({
  model,
  tools,
  middleware: [dtdrToolSelector(dtdr, { maxTools: 5, onChoice: (c) => console.log(`offered: ${c.tools.join(', ')}`) })],
});
const result = await agent.invoke({
  messages: [new HumanMessage('Find me a pharmacy that is open and guide me there')],
});
console.log(
  `${result.messages.length} messages; tools called: ${result.messages.flatMap((m) => ('tool_calls' in m ? ((m.tool_calls as { name: string }[] | undefined) ?? []).map((c) => c.name) : [])).join(' → ')}`,
);

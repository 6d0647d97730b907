/**
 * dtdr + MCP, runnable offline: `node --import tsx demos/frameworks/mcp.ts`. An in-memory MCP
 * server; dtdr reads its tools (every page) and follows its list_changed notifications.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { Dtdr, loadEncoder } from '../../src/node.js';
import { DEMO_TOOLS } from '../../src/demo/index.js';
import { mcpTools, watchMcpTools } from '../../src/adapters/mcp/index.js';

const server = new McpServer({ name: 'assistant', version: '1.0.0' });
for (const t of DEMO_TOOLS.filter((t) => t.name !== 'currency_convert'))
  server.registerTool(t.name, { description: t.description }, async () => ({
    content: [{ type: 'text', text: 'ok' }],
  }));
const [a, b] = InMemoryTransport.createLinkedPair();
const client = new Client({ name: 'demo', version: '1.0.0' });
await Promise.all([server.connect(b), client.connect(a)]);

const dtdr = await Dtdr.train({ tools: await mcpTools(client), encoder: await loadEncoder() }); // tools alone: no demonstrations yet
await watchMcpTools(client, dtdr, { onChange: (d) => console.log('tool set changed:', d) });
const query = 'How much is 250 dollars in euros?';
console.log('before:', (await dtdr.retrieve(query)).candidates.map((c) => c.tool).join(', '));
server.registerTool(
  'currency_convert',
  { description: "Convert an amount of money between currencies at today's rate." },
  async () => ({ content: [{ type: 'text', text: '230 EUR' }] }),
);
await new Promise((r) => setTimeout(r, 100));
console.log(
  'after the server added currency_convert:',
  (await dtdr.retrieve(query)).candidates.map((c) => c.tool).join(', '),
);
await client.close();

/**
 * dtdr + Vercel AI SDK, runnable offline: `node --import tsx demos/frameworks/ai-sdk.ts`.
 * A scripted model (the SDK's own MockLanguageModelV3) stands in for your LLM; swap in any
 * provider model. Each step the model is offered only the tools dtdr retrieved.
 */
import { generateText, jsonSchema, stepCountIs, tool } from 'ai';
import { MockLanguageModelV3 } from 'ai/test';
import { Dtdr, loadEncoder } from '../../src/node.js';
import { DEMO_TOOLS, demoDataset } from '../../src/demo/index.js';
import { dtdrPrepareStep } from '../../src/adapters/ai-sdk/index.js';

const { tools: specs, plans } = demoDataset(1500);
const dtdr = await Dtdr.train({ tools: specs, plans, encoder: await loadEncoder() });
const tools = Object.fromEntries(
  DEMO_TOOLS.map((t) => [
    t.name,
    tool({
      description: t.description,
      inputSchema: jsonSchema((t.parameters ?? { type: 'object', properties: {} }) as never),
      execute: async (input) => ({ ok: true, tool: t.name, input }),
    }),
  ]),
);

const usage = {
  inputTokens: { total: 0, noCache: 0, cacheRead: 0, cacheWrite: 0 },
  outputTokens: { total: 0, text: 0, reasoning: 0 },
};
const call = (toolName: string, input: object) => ({
  content: [{ type: 'tool-call' as const, toolCallId: toolName, toolName, input: JSON.stringify(input) }],
  finishReason: { unified: 'tool-calls' as const, raw: 'tool_calls' },
  usage,
  warnings: [],
});
const llm = new MockLanguageModelV3({
  doGenerate: [
    call('files_search', { query: 'quarterly report' }),
    call('contacts_search', { name: 'Maria' }),
    call('email_send', { to: 'maria@example.org', subject: 'Report', body: 'Attached.' }),
    {
      content: [{ type: 'text', text: 'Done: the report is on its way to Maria.' }],
      finishReason: { unified: 'stop', raw: 'stop' },
      usage,
      warnings: [],
    },
  ],
});

const step = dtdrPrepareStep(dtdr, {
  tools: Object.keys(tools),
  maxTools: 5,
  onRetrieval: (r, { history }) =>
    console.log(
      `after [${history.join(', ')}]: ${r.candidates.map((c) => `${c.tool} ${c.probability.toFixed(2)}`).join(', ')}${r.widened ? ' (widened)' : ''}`,
    ),
});
const result = await generateText({
  model: llm,
  tools: step.guard(tools),
  prepareStep: step,
  stopWhen: stepCountIs(8),
  prompt: 'Email the quarterly report to Maria',
});
console.log(
  `tools offered per step: ${llm.doGenerateCalls.map((c) => c.tools?.length ?? 0).join(', ')} of ${DEMO_TOOLS.length}`,
);
console.log(result.text);

/** Tool lists and demonstrations in the forms apps have at hand (the playground reads these). */
import { describe, expect, it } from 'vitest';
import { parsePlans, parseToolList } from '../src/core/plans/dataset.js';
import { DtdrError } from '../src/core/base/errors.js';
import { loadEncoder } from '../src/encoders/node.js';

const schema = { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] };

describe('parseToolList', () => {
  it('reads OpenAI tools, bare functions, an MCP tools/list result (also inside a JSON-RPC reply), and tool_desc.json', () => {
    const expected = [{ name: 'weather_get', description: 'Weather for a city', parameters: schema }];
    expect(
      parseToolList(
        JSON.stringify([
          {
            type: 'function',
            function: { name: 'weather_get', description: 'Weather for a city', parameters: schema },
          },
        ]),
      ),
    ).toEqual(expected);
    expect(
      parseToolList(JSON.stringify([{ name: 'weather_get', description: 'Weather for a city', parameters: schema }])),
    ).toEqual(expected);
    expect(
      parseToolList(
        JSON.stringify({ tools: [{ name: 'weather_get', description: 'Weather for a city', inputSchema: schema }] }),
      ),
    ).toEqual(expected);
    expect(
      parseToolList(
        JSON.stringify({
          jsonrpc: '2.0',
          id: 1,
          result: {
            tools: [
              {
                name: 'weather_get',
                description: 'Weather for a city',
                inputSchema: schema,
                outputSchema: { type: 'object' },
              },
            ],
          },
        }),
      ),
    ).toEqual([{ ...expected[0], returns: { type: 'object' } }]);
    expect(parseToolList(JSON.stringify({ nodes: [{ id: 'weather_get', desc: 'Weather for a city' }] }))).toEqual([
      { name: 'weather_get', description: 'Weather for a city' },
    ]);
  });

  it.each([
    ['', /empty/],
    ['{"tools": []}', /empty/],
    ['{"foo": 1}', /expected a list of tools/],
    ['[{"type": "function", "function": {"description": "x"}}]', /\[0\]\.function\.name/],
    ['[{"name": "a"}, {"name": "a"}]', /duplicate tool "a"/],
    ['[{"name": "END"}]', /reserved/],
    ['[{"name": "a",', /malformed JSON/],
  ])('refuses %j with a DtdrError naming the problem', (text, message) => {
    expect(() => parseToolList(text, 'tools.json')).toThrow(DtdrError);
    expect(() => parseToolList(text, 'tools.json')).toThrow(message);
  });
});

describe('demonstrations in the short form {"query", "tools"}', () => {
  it('is a chain of calls, beside TaskBench lines in the same file', () => {
    const plans = parsePlans(
      '{"query": "rain in Oslo? then remind me", "tools": ["weather_get", "reminder_add"]}\n{"id": "t1", "user_request": "weather", "task_nodes": [{"task": "weather_get"}]}',
    );
    expect(plans.map((p) => [p.query, p.order.map((i) => p.nodes[i].tool)])).toEqual([
      ['rain in Oslo? then remind me', ['weather_get', 'reminder_add']],
      ['weather', ['weather_get']],
    ]);
    expect(plans[0].id).toBe('1'); // its line number
  });

  it.each([
    ['{"query": "", "tools": ["a"]}', /query/],
    ['{"query": "x", "tools": []}', /tools must be a non-empty array/],
    ['{"query": "x", "tools": ["a", 3]}', /tools\[1\]/],
    ['{"query": "x", "tools": ["END"]}', /reserved/],
  ])('refuses %j, naming the line and field', (line, message) => {
    expect(() => parsePlans(line, 'demos.jsonl')).toThrow(message);
    expect(() => parsePlans(line, 'demos.jsonl')).toThrow(/demos\.jsonl/);
  });
});

describe('the encoder says where it runs', () => {
  it('the bundled encoder on ONNX Runtime Web in Node reports the WASM backend', async () => {
    const encoder = await loadEncoder();
    expect(encoder.backend).toEqual({ name: 'wasm' });
    await encoder.dispose?.();
  });
});

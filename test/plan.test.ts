import { describe, expect, it } from 'vitest';
import { datasetFromFiles, parsePlans, parseToolDescriptions } from '../src/core/plans/dataset.js';
import { chainPlan, planFromRecord, planSteps, planTools } from '../src/core/plans/plan.js';
import { END } from '../src/core/base/types.js';

const walk = (record: object) =>
  planSteps(planFromRecord(record)).map((s) => ({ history: s.history, acceptable: [...s.acceptable].sort() }));

describe('walking a plan with the ground-truth history', () => {
  it('a chain accepts one tool per step, then END', () => {
    expect(planSteps(chainPlan('1', 'q', ['a', 'b', 'c'])).map((s) => [s.history, s.acceptable])).toEqual([
      [[], ['a']],
      [['a'], ['b']],
      [['a', 'b'], ['c']],
      [['a', 'b', 'c'], [END]],
    ]);
  });

  it('a DAG with two roots accepts both roots first, and the join only after both', () => {
    const steps = walk({
      user_request: 'share my location with Anna',
      task_nodes: [{ task: 'location' }, { task: 'contact' }, { task: 'sms' }],
      task_links: [
        { source: 'location', target: 'sms' },
        { source: 'contact', target: 'sms' },
      ],
    });
    expect(steps).toEqual([
      { history: [], acceptable: ['contact', 'location'] },
      { history: ['location'], acceptable: ['contact'] },
      { history: ['location', 'contact'], acceptable: ['sms'] },
      { history: ['location', 'contact', 'sms'], acceptable: [END] },
    ]);
  });

  it('treats nodes as instances: a repeated tool chains instead of forming a cycle', () => {
    const plan = planFromRecord({
      user_request: 'mail Anna and Ben',
      task_nodes: [{ task: 'contact' }, { task: 'mail' }, { task: 'contact' }, { task: 'mail' }],
      task_links: [
        { source: 'contact', target: 'mail' },
        { source: 'mail', target: 'contact' },
        { source: 'contact', target: 'mail' },
      ],
    });
    expect(plan.edges).toEqual([
      [0, 1],
      [1, 2],
      [2, 3],
    ]);
    expect(planTools(plan)).toEqual(['contact', 'mail', 'contact', 'mail']);
    expect(planSteps(plan).map((s) => s.acceptable)).toEqual([['contact'], ['mail'], ['contact'], ['mail'], [END]]);
  });

  it('orders nodes topologically when the listed order contradicts the links', () => {
    const plan = planFromRecord({
      user_request: 'q',
      task_nodes: [{ task: 'b' }, { task: 'a' }],
      task_links: [{ source: 'a', target: 'b' }],
    });
    expect(planTools(plan)).toEqual(['a', 'b']);
  });

  it('a self-link between two instances of one tool orders them', () => {
    const plan = planFromRecord({
      user_request: 'q',
      task_nodes: [{ task: 'a' }, { task: 'a' }],
      task_links: [{ source: 'a', target: 'a' }],
    });
    expect(plan.edges).toEqual([[0, 1]]);
    expect(planSteps(plan).map((s) => s.acceptable)).toEqual([['a'], ['a'], [END]]);
  });
});

describe('reading demonstrations', () => {
  it('names the file and line of malformed JSON', () => {
    expect(() => parsePlans('{"user_request":"q","task_nodes":[{"task":"a"}]}\n{oops', 'd.jsonl')).toThrow(
      /d\.jsonl, line 2: malformed JSON/,
    );
  });

  it('names the line and column of malformed JSON in tool_desc.json', () => {
    const text = '{"nodes": [\n  {"id": "a", "desc": "x"},\n  {"id": "b" "desc": "y"}\n]}';
    expect(() => parseToolDescriptions(text)).toThrow(/tool_desc\.json, line 3: malformed JSON \(.*, column 14\)/);
  });

  it("rejects a chain without its query, naming the chain form's field", () => {
    expect(() => parsePlans('{"request":"how much?","tools":["a"]}', 'd.jsonl')).toThrow(
      /line 1, query: missing or empty query/,
    );
  });

  it('rejects a plan without user_request, with the field named', () => {
    expect(() => parsePlans('{"task_nodes":[{"task":"a"}]}', 'd.jsonl')).toThrow(
      /line 1, user_request: missing or empty user_request/,
    );
  });

  it('rejects an empty plan', () => {
    expect(() => parsePlans('{"user_request":"q","task_nodes":[]}', 'd.jsonl')).toThrow(/task_nodes: empty plan/);
  });

  it('rejects a link to a node that is not in the plan', () => {
    expect(() =>
      parsePlans(
        '{"user_request":"q","task_nodes":[{"task":"a"}],"task_links":[{"source":"a","target":"z"}]}',
        'd.jsonl',
      ),
    ).toThrow(/line 1, task_links\[0\]: .*"z", which is not a node of this plan/);
  });

  it('reports a cycle in task_links instead of looping', () => {
    const line =
      '{"user_request":"q","task_nodes":[{"task":"a"},{"task":"b"}],"task_links":[{"source":"a","target":"b"},{"source":"b","target":"a"}]}';
    expect(() => parsePlans(line, 'd.jsonl')).toThrow(/line 1, task_links: task_links form a cycle among a, b/);
  });

  it('rejects a plan that calls a tool the tool descriptions do not know', () => {
    expect(() =>
      datasetFromFiles({
        name: 'x',
        data: { text: '{"id":"1","user_request":"q","task_nodes":[{"task":"ghost"}]}', file: 'data.jsonl' },
        toolDescriptions: { text: '{"nodes":[{"id":"a","desc":"A"}]}', file: 'tool_desc.json' },
      }),
    ).toThrow(/calls "ghost", which tool_desc.json does not describe/);
  });

  it('suggests the described tool a misspelled plan step meant', () => {
    const read = () =>
      datasetFromFiles({
        name: 'x',
        data: {
          text: '{"query":"q","tools":["weather_forecast"]}\n{"query":"r","tools":["weather_forcast"]}',
          file: 'data.jsonl',
        },
        toolDescriptions: {
          text: '{"nodes":[{"id":"weather_forecast","desc":"W"},{"id":"sms_send","desc":"S"}]}',
          file: 'tool_desc.json',
        },
      });
    expect(read).toThrow(
      expect.objectContaining({ line: 2, hint: expect.stringMatching(/^did you mean "weather_forecast"\?/) }),
    );
  });

  it('derives the tool set from the plans when there are no descriptions', () => {
    const d = datasetFromFiles({
      name: 'x',
      data: { text: '{"id":"1","user_request":"q","task_nodes":[{"task":"a"},{"task":"b"}]}\n', file: 'data.jsonl' },
    });
    expect(d.tools.map((t) => t.name)).toEqual(['a', 'b']);
  });
});

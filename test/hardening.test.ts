/**
 * Hardening: a saved model whose numbers cannot be right is
 * refused at load with a DtdrError naming the field, never loaded to rank with NaN; malformed
 * fields are DtdrErrors, never raw TypeErrors; model changes apply in call order whatever the
 * interleaving; an edited "v1" file cannot skip the tools-hash check; `dtdr eval` refuses
 * undescribed tools as `dtdr train` does; `learn` refuses plans that call removed tools.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { withHeader } from './fuzz-targets.js';
import { beforeAll, describe, expect, it } from 'vitest';
import { Dtdr } from '../src/core/dtdr.js';
import { DtdrError } from '../src/core/base/errors.js';
import { decodeBinaryModel } from '../src/core/model/binary.js';
import { chainPlan } from '../src/core/plans/plan.js';
import type { MethodName } from '../src/core/retrieval/types.js';
import type { ToolSpec } from '../src/core/base/types.js';
import { runCli, wordAxisEncoder } from './helpers.js';
import '../src/methods.js'; // the paper's methods, as an app that uses them imports them

const TOOLS: ToolSpec[] = [
  { name: 'files_search', description: 'search files' },
  { name: 'contacts_search', description: 'find a contact' },
  { name: 'email_send', description: 'send an email' },
];
const encoder = wordAxisEncoder(['search', 'files', 'find', 'contact', 'send', 'email']);
const PLANS = [
  chainPlan('1', 'email the file', ['files_search', 'email_send']),
  chainPlan('2', 'find a contact and email them', ['contacts_search', 'email_send']),
  chainPlan('3', 'search files', ['files_search']),
  chainPlan('4', 'find a contact', ['contacts_search']),
];

type Json = Record<string, any>;
const saved: Partial<Record<MethodName, Json>> = {};
beforeAll(async () => {
  for (const method of ['dtdr-g', 'dtdr-c', 'dtdr-h', 'qts', 'dr'] as const) {
    saved[method] = JSON.parse(
      JSON.stringify((await Dtdr.train({ method, tools: TOOLS, plans: PLANS, encoder })).toJSON()),
    );
  }
});

/** A copy of `method`'s saved model with `edit` applied. */
function edited(method: MethodName, edit: (a: Json) => void): Json {
  const copy = JSON.parse(JSON.stringify(saved[method]));
  edit(copy);
  return copy;
}

/** The DtdrError loading `artifact` throws (fails the test when it loads, or throws anything else). */
function loadError(artifact: unknown): DtdrError {
  try {
    Dtdr.load(artifact, encoder, 'model.json');
  } catch (e) {
    if (DtdrError.isInstance(e)) return e;
    throw e;
  }
  throw new Error('the model loaded');
}

describe('a model whose numbers cannot be right is refused at load, naming the field', () => {
  it('the saved models load and rank with finite probabilities (the fixtures are sound)', async () => {
    for (const a of Object.values(saved)) {
      const r = await Dtdr.load(a, encoder).retrieve('email the file');
      expect(Array.from(r.ranking.probabilities).every(Number.isFinite)).toBe(true);
    }
  });

  it('a standard deviation of 0 in a linear head', () => {
    const e = loadError(edited('dtdr-h', (a) => (a.state.head.std[2] = 0)));
    expect([e.code, e.field, e.file]).toEqual(['artifact', 'state.head.std[2]', 'model.json']);
    expect(e.hint).toMatch(/retrain/);
  });

  it('a negative temperature (DTDR-G, QTS)', () => {
    expect(loadError(edited('dtdr-g', (a) => (a.state.temperature = -1))).field).toBe('state.temperature');
    expect(loadError(edited('qts', (a) => (a.state.temperature = -0.05))).field).toBe('state.temperature');
  });

  it('a 1e999 weight (JSON.parse reads Infinity) and a string in a vector', () => {
    expect(loadError(edited('dtdr-c', (a) => (a.state.centroids[0][1] = JSON.parse('1e999')))).field).toBe(
      'state.centroids[0][1]',
    );
    expect(loadError(edited('dtdr-h', (a) => (a.state.head.weights[3] = JSON.parse('1e999')))).field).toBe(
      'state.head.weights[3]',
    );
    expect(loadError(edited('qts', (a) => (a.state.toolVectors[1][2] = 'x'))).field).toBe('state.toolVectors[1][2]');
    expect(loadError(edited('dtdr-g', (a) => (a.state.toolVectors[0][0] = '0.5'))).field).toBe(
      'state.toolVectors[0][0]',
    );
    expect(loadError(edited('dr', (a) => (a.state.frequency[0] = 'abc'))).field).toBe('state.frequency[0]');
  });

  it('graph labels of 9999 or −1 (DTDR-G, DTDR-C, DR)', () => {
    expect(saved['dtdr-g']!.state.evidence).not.toBeNull();
    expect(loadError(edited('dtdr-g', (a) => (a.state.evidence.graphs[0][0][1][0][0] = 9999))).field).toBe(
      'state.evidence.graphs[0][0][1][0][0]',
    );
    expect(loadError(edited('dtdr-g', (a) => (a.state.evidence.global[0][1][0][0] = -1))).field).toBe(
      'state.evidence.global[0][1][0][0]',
    );
    expect(loadError(edited('dtdr-c', (a) => (a.state.graphs[0][0][1][0][0] = -1))).field).toBe(
      'state.graphs[0][0][1][0][0]',
    );
    expect(loadError(edited('dr', (a) => (a.state.transitions[0][1][0][0] = 9999))).field).toBe(
      'state.transitions[0][1][0][0]',
    );
    expect(loadError(edited('dr', (a) => (a.state.transitions[0][0] = -1))).field).toBe('state.transitions[0][0]');
  });

  it('thresholds of "abc" and neighbours of −3 (DTDR-G)', () => {
    expect(loadError(edited('dtdr-g', (a) => (a.state.thresholds.confident = 'abc'))).field).toBe(
      'state.thresholds.confident',
    );
    expect(loadError(edited('dtdr-g', (a) => (a.state.thresholds.unsure = 7))).field).toBe('state.thresholds.unsure');
    expect(loadError(edited('dtdr-g', (a) => (a.state.neighbours = -3))).field).toBe('state.neighbours');
  });

  it('a tool listed twice is refused (the hash matches, the list cannot be right)', () => {
    const e = loadError(
      edited('dr', (a) => {
        a.version = 1;
        delete a.toolsHash;
        a.tools = [...a.tools, a.tools[0]];
        a.labels = [...a.tools.map((t: ToolSpec) => t.name), 'END'];
      }),
    );
    expect(e.field).toBe('tools[3].name');
  });

  it('a binary section whose dtype is an inherited property name, or whose row width disagrees with its reference, is refused', () => {
    const bytes = Dtdr.load(saved['dtdr-g'], encoder).toBinary();
    expect(() => decodeBinaryModel(rewriteHeader(bytes, (h) => (h.sections[0].dtype = 'constructor')))).toThrow(
      /section 0 is malformed/,
    );
    const width = rewriteHeader(bytes, (h) => (h.sections[0].rows = h.sections[0].rows === 0 ? 2 : 0));
    expect(() => decodeBinaryModel(width)).toThrow(/row width/);
  });
});

/** A binary model with its JSON header changed and its checksum recomputed (what a hand edit would give). */
function rewriteHeader(bytes: Uint8Array, edit: (header: Json) => void): Uint8Array {
  const headerLength = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength).getUint32(12, true);
  const header = JSON.parse(new TextDecoder().decode(bytes.subarray(16, 16 + headerLength)));
  edit(header);
  return withHeader(bytes, header);
}

describe('malformed fields are DtdrErrors, never raw TypeErrors', () => {
  it('an encoder fingerprint that is a number', () => {
    const fingerprinted = { ...encoder, fingerprint: 'a'.repeat(64) };
    const artifact = edited('dtdr-g', (a) => (a.encoder.fingerprint = 12345));
    let error: unknown;
    try {
      Dtdr.load(artifact, fingerprinted, 'model.json');
    } catch (e) {
      error = e;
    }
    expect(DtdrError.isInstance(error) && [error.code, error.field]).toEqual(['artifact', 'encoder.fingerprint']);
  });

  it('Dtdr.train accepts a plan given as {query, tools} (a chain plan) and trains as with chainPlan', async () => {
    const given = await Dtdr.train({
      tools: TOOLS,
      plans: [
        { query: 'email the file', tools: ['files_search', 'email_send'] },
        { id: 'b', query: 'find a contact', tools: ['contacts_search'] },
      ],
      encoder,
    });
    const built = await Dtdr.train({
      tools: TOOLS,
      plans: [
        chainPlan('plan-0', 'email the file', ['files_search', 'email_send']),
        chainPlan('b', 'find a contact', ['contacts_search']),
      ],
      encoder,
    });
    expect(withoutTime(given.toJSON())).toEqual(withoutTime(built.toJSON()));
  });

  it('a chain plan with no tools is refused with a hint naming chainPlan', async () => {
    const e = await Dtdr.train({ tools: TOOLS, plans: [{ query: 'q', tools: [] }], encoder }).catch((x: unknown) => x);
    expect(DtdrError.isInstance(e) && [e.code, e.field]).toEqual(['options', 'plans[0].tools']);
    expect((e as DtdrError).hint).toMatch(/chainPlan\(id, query, tools\)/);
  });
});

/** A model's JSON without its save times (its own and that of the model before learning). */
function withoutTime(a: object): object {
  return JSON.parse(JSON.stringify(a), (key, value) => (key === 'createdAt' ? undefined : value));
}

describe('model changes apply in call order, whatever the interleaving', () => {
  it('two concurrent addTools of one name add it once; the second is refused, and save → load keeps one copy', async () => {
    for (const method of ['dtdr-g', 'dtdr-c'] as const) {
      const model = await Dtdr.train({ method, tools: TOOLS, plans: PLANS, encoder });
      const tool = { name: 'calendar_add', description: 'add a calendar event' };
      const [first, second] = await Promise.allSettled([model.addTools([tool]), model.addTools([tool])]);
      expect(first.status).toBe('fulfilled');
      expect(second.status === 'rejected' && DtdrError.isInstance(second.reason) && second.reason.code).toBe('options');
      expect(model.tools.filter((t) => t.name === 'calendar_add')).toHaveLength(1);
      const back = Dtdr.load(model.toBinary(), encoder);
      expect(back.tools.filter((t) => t.name === 'calendar_add')).toHaveLength(1);
    }
  });

  it('50 retrieves interleaved with learn and addTools give the results and the final model of the same calls made in order', async () => {
    const script = (i: number): ((m: Dtdr) => Promise<unknown>) => {
      if (i % 10 === 3) return (m) => m.addTools([{ name: `notes_${i}`, description: `write note ${i}` }]);
      if (i % 10 === 6)
        return (m) => m.learn([chainPlan(`l${i}`, `write note ${i - 3} then email`, [`notes_${i - 3}`, 'email_send'])]);
      if (i % 10 === 8)
        return (m) =>
          m.learn([{ id: `c${i}`, query: 'find a contact then email', tools: ['contacts_search', 'email_send'] }]);
      return (m) =>
        m
          .retrieve(i % 2 ? 'email the file' : `write note ${i - (i % 10) + 3}`, i % 4 === 1 ? ['files_search'] : [])
          .then((r) => r.candidates.map((c) => c.tool));
    };
    const calls = Array.from({ length: 71 }, (_, i) => script(i));
    const inOrder = await Dtdr.train({ tools: TOOLS, plans: PLANS, encoder });
    const sequential: unknown[] = [];
    for (const call of calls) sequential.push(await call(inOrder));
    const interleaved = await Dtdr.train({ tools: TOOLS, plans: PLANS, encoder });
    const concurrent = await Promise.all(calls.map((call) => call(interleaved)));
    expect(calls.filter((_, i) => ![3, 6, 8].includes(i % 10))).toHaveLength(50);
    expect(concurrent).toEqual(sequential);
    expect(withoutTime(interleaved.toJSON())).toEqual(withoutTime(inOrder.toJSON()));
  });

  it('a tool removed while a change is pending is removed after it (the returned promise settles then)', async () => {
    const model = await Dtdr.train({ tools: TOOLS, plans: PLANS, encoder });
    const adding = model.addTools([{ name: 'notes_write', description: 'write a note' }]);
    const removing = model.removeTools(['notes_write']);
    await Promise.all([adding, removing]);
    expect(model.tools.map((t) => t.name)).toEqual(TOOLS.map((t) => t.name));
  });
});

describe('an edited file that says version 1 still has its tools hash checked', () => {
  it('version 1 with a hash that does not match the edited tools is refused', () => {
    const e = loadError(
      edited('dtdr-g', (a) => {
        a.version = 1;
        a.tools[0].description = 'delete every file';
      }),
    );
    expect(e.field).toBe('toolsHash');
  });

  it('version 1 with the hash dropped but an encoder fingerprint (which only v2 wrote) is refused', () => {
    const e = loadError(
      edited('dtdr-g', (a) => {
        a.version = 1;
        a.encoder.fingerprint = 'f'.repeat(64);
        delete a.toolsHash;
        a.tools[0].description = 'delete every file';
      }),
    );
    expect(e.field).toBe('toolsHash');
  });

  it('a true v1 file (no hash, no fingerprint, JSON) still loads', () => {
    const v1 = edited('dr', (a) => {
      a.version = 1;
      delete a.toolsHash;
    });
    expect(Dtdr.load(v1).method).toBe('dr');
  });
});

describe('dtdr eval refuses tools with no description, as dtdr train does', () => {
  it('a tool_desc.json with an empty "desc" is refused, and --allow-undescribed lets it through', () => {
    const dir = mkdtempSync(join(tmpdir(), 'dtdr-eval-'));
    writeFileSync(
      join(dir, 'tool_desc.json'),
      JSON.stringify({
        nodes: [
          { id: 'a', desc: 'search files' },
          { id: 'b', desc: '' },
        ],
      }),
    );
    const lines = Array.from({ length: 10 }, (_, i) =>
      JSON.stringify({
        id: `p${i}`,
        user_request: `request ${i}`,
        task_nodes: [{ task: 'a' }, { task: 'b' }],
        task_links: [{ source: 'a', target: 'b' }],
      }),
    );
    writeFileSync(join(dir, 'data.jsonl'), lines.join('\n'));
    const refused = runCli(['eval', '--data', dir, '--methods', 'dr']);
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toMatch(/1 tool has no description: b/);
    expect(refused.stderr).toMatch(/--allow-undescribed/);
    const allowed = runCli(['eval', '--data', dir, '--methods', 'dr', '--allow-undescribed']);
    expect(allowed.stderr).toBe('');
    expect(allowed.code).toBe(0);
  }, 60_000);
});

describe('learn refuses plans that call removed tools', () => {
  it('a plan calling a removed tool is refused with a DtdrError naming the step; adding the tool back allows it', async () => {
    const model = await Dtdr.train({ tools: TOOLS, plans: PLANS, encoder });
    await model.removeTools(['email_send']);
    const plan = chainPlan('x', 'email the file', ['files_search', 'email_send']);
    const e = await model.learn([plan]).catch((x: unknown) => x);
    expect(DtdrError.isInstance(e) && [e.code, e.field]).toEqual(['options', 'plans[0].nodes[1].tool']);
    expect(model.learnedCount).toBe(0);
    await model.addTools([TOOLS[2]]);
    await model.learn([plan]);
    expect(model.learnedCount).toBe(1);
  });
});

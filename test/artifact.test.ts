import { describe, expect, it } from 'vitest';
import { Dtdr } from '../src/core/dtdr.js';
import { DtdrError } from '../src/core/base/errors.js';
import { METHODS } from '../src/core/retrieval/methods.js';
import { DEMO_TOOLS, generateDemoPlans } from '../src/demo/toolset.js';
import { ROOT, wordAxisEncoder } from './helpers.js';
import '../src/methods.js'; // the paper's methods, as an app that uses them imports them

const encoder = wordAxisEncoder([
  'email',
  'mail',
  'text',
  'message',
  'call',
  'play',
  'music',
  'weather',
  'remind',
  'alarm',
  'navigate',
  'directions',
  'photos',
  'file',
  'note',
  'contacts',
  'search',
  'send',
]);
const plans = generateDemoPlans(300, 1);

describe('model artifacts', () => {
  it.each(METHODS)('%s survives a JSON round trip with identical rankings', async (method) => {
    const model = await Dtdr.train({ method, tools: DEMO_TOOLS, plans, encoder, head: { epochs: 2 } });
    const restored = Dtdr.load(JSON.parse(JSON.stringify(model)), encoder, 'model.json');
    for (const history of [[], ['contacts_search'], ['contacts_search', 'email_send']]) {
      const a = await model.rank('email Anna about the trip', history);
      const b = await restored.rank('email Anna about the trip', history);
      expect(Array.from(b.order)).toEqual(Array.from(a.order));
      Array.from(a.probabilities).forEach((p, i) => expect(b.probabilities[i]).toBeCloseTo(p, 5));
    }
  });

  const artifact = async () =>
    JSON.parse(JSON.stringify(await Dtdr.train({ method: 'dtdr-c', tools: DEMO_TOOLS, plans, encoder })));
  const rejects = (json: unknown, pattern: RegExp) => {
    let error: unknown;
    try {
      Dtdr.load(json, encoder, 'model.json');
    } catch (e) {
      error = e;
    }
    expect(DtdrError.isInstance(error)).toBe(true);
    expect((error as DtdrError).code).toBe('artifact');
    expect((error as Error).message).toMatch(pattern);
  };

  it('records format, version, method, encoder and tools', async () => {
    const a = await artifact();
    expect(a).toMatchObject({
      format: 'dtdr-model',
      version: 3,
      method: 'dtdr-c',
      encoder: { id: 'test-words', dimension: 18 },
    });
    expect(a.tools).toHaveLength(DEMO_TOOLS.length);
    expect(a.toolsHash).toMatch(/^[0-9a-f]{64}$/);
  });

  it('rejects what is not a dtdr model', () => rejects({ hello: 1 }, /model.json, format: not a dtdr model/));
  it('rejects a newer format version', async () =>
    rejects({ ...(await artifact()), version: 99 }, /version 99 is newer/));
  it('rejects an unknown method', async () =>
    rejects({ ...(await artifact()), method: 'magic' }, /unknown method "magic"/));
  it('rejects labels that do not match the tools', async () =>
    rejects({ ...(await artifact()), labels: ['x'] }, /labels must be the tool names/));
  it('rejects corrupt state', async () => {
    const a = await artifact();
    a.state.centroids = [[1, 2]];
    rejects(a, /centroids must match the encoder dimension/);
  });
  it('rejects a model loaded with another encoder', async () => {
    const a = await artifact();
    expect(() => Dtdr.load(a, wordAxisEncoder(['x', 'y']), 'model.json')).toThrow(
      /trained with encoder test-words \(18-d\) but loaded with test-words \(2-d\)/,
    );
  });
});

describe('training', () => {
  it.each(['dtdr-c', 'dtdr-l', 'dtdr-h'] as const)(
    '%s is deterministic for a seed and reports progress',
    async (method) => {
      const phases = new Set<string>();
      const a = await Dtdr.train({
        method,
        tools: DEMO_TOOLS,
        plans,
        encoder,
        seed: 3,
        head: { epochs: 3 },
        onProgress: (p) => phases.add(p.phase),
      });
      const b = await Dtdr.train({ method, tools: DEMO_TOOLS, plans, encoder, seed: 3, head: { epochs: 3 } });
      expect(JSON.stringify(a.toJSON().state)).toBe(JSON.stringify(b.toJSON().state));
      expect(phases).toContain(method === 'dtdr-c' ? 'k-means' : 'training');
    },
  );
});

describe('the shipped demo model (public/dtdr-demo.model.dtdr)', () => {
  it('loads, and matches a fresh training with the same seed', async () => {
    const { readModelFile } = await import('../src/storage/file.js');
    const { loadEncoder } = await import('../src/encoders/node.js');
    const { demoDataset } = await import('../src/demo/toolset.js');
    const real = await loadEncoder();
    const shipped = Dtdr.load(
      readModelFile(`${ROOT}/public/dtdr-demo.model.dtdr`),
      real,
      'public/dtdr-demo.model.dtdr',
    );
    const dataset = demoDataset();
    const fresh = await Dtdr.train({ tools: dataset.tools, plans: dataset.plans, encoder: real });
    expect(shipped.method).toBe('dtdr-g');
    expect(JSON.stringify(shipped.toJSON().state)).toBe(
      JSON.stringify(JSON.parse(JSON.stringify(fresh.toJSON().state))),
    );
    const r = await shipped.retrieve('Email the invoice to Anna', ['files_search', 'contacts_search']);
    expect(r.candidates[0].tool).toBe('email_send');
  }, 60_000);
});

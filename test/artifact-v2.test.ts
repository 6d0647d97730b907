/**
 * Model artifact v2: the binary container round-trips every method exactly, refuses damaged or
 * edited files with a typed error, still loads v1 files, checks the encoder's fingerprint, and a
 * file write interrupted by a crash leaves the previous model intact.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Dtdr, safeLoadModel } from '../src/core/dtdr.js';
import type { Encoder } from '../src/core/base/encoder.js';
import { DtdrError } from '../src/core/base/errors.js';
import { decodeBinaryModel, encodeBinaryModel } from '../src/core/model/binary.js';
import { DependencyGraph } from '../src/core/retrieval/graph.js';
import { METHODS } from '../src/core/retrieval/methods.js';
import { DEMO_TOOLS, generateDemoPlans } from '../src/demo/toolset.js';
import { loadEncoder } from '../src/encoders/node.js';
import { readModelFile, writeModelFile } from '../src/storage/file.js';
import { ROOT } from './helpers.js';
import { writeTinyEncoder } from './tiny-encoder.js';
import '../src/methods.js'; // the paper's methods, as an app that uses them imports them

const PLANS = generateDemoPlans(400, 2);
const QUERIES: [string, string[]][] = [
  ['Email the quarterly report to Maria', ['files_search', 'contacts_search']],
  ['Find me a pharmacy that is open and guide me there', []],
  ['Play some jazz', ['music_search']],
];

let encoder: Encoder;
let dir: string;
beforeAll(async () => {
  encoder = await loadEncoder();
  dir = mkdtempSync(join(tmpdir(), 'dtdr-v2-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('the binary container', () => {
  it('packs numbers into typed sections and gives back exactly what it was given', () => {
    const value = {
      a: [1, 2, 3],
      big: Array.from({ length: 40 }, (_, i) => i * 0.1),
      ints: Array.from({ length: 20 }, (_, i) => i - 5),
      f32: Array.from({ length: 20 }, (_, i) => Math.fround(i / 3)),
      rows: Array.from({ length: 10 }, (_, i) => [i, i / 7]),
      text: 'é',
      nested: { x: null, y: [true, 'b'] },
    };
    expect(decodeBinaryModel(encodeBinaryModel(value))).toEqual(value);
  });

  it("keeps a dependency graph's fractional counts exactly: a count summed to 0.9999999999999999 does not come back as 1", () => {
    // Steps with 3 and 6 acceptable tools give each a third or a sixth of a step: 1/3 + 1/3 + 1/6 + 1/6.
    const graph = new DependencyGraph(1);
    for (const next of [
      [0, 1, 2],
      [0, 3, 4],
      [0, 1, 2, 3, 4, 5],
      [0, 5, 6, 7, 8, 9],
    ])
      graph.add([], next);
    const count = graph.lookup([], 0)!.get(0)!;
    expect(count).toBe(1 / 3 + 1 / 3 + 1 / 6 + 1 / 6);
    expect(count).toBeLessThan(1); // on the 'none' side of the support classes' bound (groups.ts), in memory
    const back = DependencyGraph.fromState(1, decodeBinaryModel(encodeBinaryModel(graph.state())) as never);
    expect(back.lookup([], 0)!.get(0)).toBe(count); // and after a save and load: the same side
  });

  it('refuses any truncation or any flipped bit with a typed error (fast-check, 2,000 cases)', () => {
    const bytes = encodeBinaryModel({ format: 'x', numbers: Array.from({ length: 64 }, (_, i) => i / 3) });
    fc.assert(
      fc.property(fc.nat({ max: bytes.length * 8 - 1 }), fc.boolean(), (bit, truncate) => {
        const damaged = truncate ? bytes.slice(0, Math.floor(bit / 8)) : bytes.slice();
        if (!truncate) damaged[bit >> 3] ^= 1 << (bit & 7);
        try {
          decodeBinaryModel(damaged, 'm.dtdr');
          return false;
        } catch (e) {
          return DtdrError.isInstance(e) && e.code === 'artifact' && e.file === 'm.dtdr';
        }
      }),
      { numRuns: 2000 },
    );
  });
});

describe.each(METHODS)('%s model, saved as v2', (method) => {
  let model: Dtdr;
  beforeAll(async () => {
    model = await Dtdr.train({ method, tools: DEMO_TOOLS, plans: PLANS, encoder });
  }, 60_000);

  it('round-trips through the binary form exactly: the same probabilities as its JSON artifact, bit for bit', async () => {
    const bytes = model.toBinary();
    const fromBinary = Dtdr.load(bytes, encoder, 'model.dtdr');
    const fromJson = Dtdr.load(JSON.parse(JSON.stringify(model.toJSON())), encoder);
    for (const [q, h] of QUERIES) {
      const [a, b] = [await fromJson.retrieve(q, h), await fromBinary.retrieve(q, h)];
      expect(Array.from(b.ranking.probabilities)).toEqual(Array.from(a.ranking.probabilities));
    }
    const json = JSON.stringify(model.toJSON()).length;
    // Models with many learned numbers shrink; the tiny ones (a seed, BM25 constants, a few graph rows)
    // pay for the framing and the 32-byte checksum.
    if (json > 50_000) expect(bytes.length).toBeLessThan(json / 2);
    else expect(bytes.length).toBeLessThan(json + 256);
  });

  it('a v1 file (no tools hash, no fingerprint) still loads and ranks the same', async () => {
    const v1 = JSON.parse(JSON.stringify(model.toJSON()));
    v1.version = 1;
    delete v1.toolsHash;
    if (v1.encoder) delete v1.encoder.fingerprint;
    const loaded = Dtdr.load(v1, encoder);
    const [a, b] = [await model.retrieve(...QUERIES[0]), await loaded.retrieve(...QUERIES[0])];
    expect(Array.from(b.ranking.order)).toEqual(Array.from(a.ranking.order));
  });
});

describe('v2 refuses what it cannot trust', () => {
  let model: Dtdr;
  beforeAll(async () => {
    model = await Dtdr.train({ method: 'dtdr-c', tools: DEMO_TOOLS, plans: PLANS, encoder });
  });

  it('a tool list edited by hand after saving', () => {
    const edited = model.toJSON();
    edited.tools[0] = { ...edited.tools[0], description: 'something else' };
    const result = safeLoadModel(edited, encoder, 'model.json');
    expect(result.ok).toBe(false);
    if (!result.ok) {
      expect(result.error.field).toBe('toolsHash');
      expect(result.error.file).toBe('model.json');
    }
  });

  it('an encoder with the same id but other files (fingerprint)', async () => {
    const a = await loadEncoder({ model: writeTinyEncoder(join(dir, 'a', 'enc')) });
    const bFolder = writeTinyEncoder(join(dir, 'b', 'enc'));
    const tokenizer = JSON.parse(readFileSync(join(bFolder, 'tokenizer.json'), 'utf8'));
    tokenizer.model.vocab = { '[PAD]': 0, '[UNK]': 1, beta: 2, alpha: 3, gamma: 4 };
    writeFileSync(join(bFolder, 'tokenizer.json'), JSON.stringify(tokenizer));
    const b = await loadEncoder({ model: bFolder });
    expect(a.id).toBe(b.id);
    const m = await Dtdr.train({ method: 'qts', tools: DEMO_TOOLS.slice(0, 4), encoder: a });
    expect(safeLoadModel(m.toJSON(), a).ok).toBe(true);
    const r = safeLoadModel(m.toJSON(), b);
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.error.message).toMatch(/other files than the one this model was trained with/);
  });

  it('garbage, as a typed result rather than a throw', () => {
    for (const junk of [null, 42, 'model', new Uint8Array([1, 2, 3]), { format: 'dtdr-model' }]) {
      const r = safeLoadModel(junk, encoder);
      expect(r.ok).toBe(false);
    }
  });
});

describe('model files (Node)', () => {
  it('.dtdr files are binary, .json files are text; both read back', async () => {
    const model = await Dtdr.train({ method: 'dtdr-c', tools: DEMO_TOOLS, plans: PLANS, encoder });
    writeModelFile(join(dir, 'm.dtdr'), model.toJSON());
    writeModelFile(join(dir, 'm.json'), model.toJSON());
    expect(readFileSync(join(dir, 'm.dtdr')).subarray(0, 7).toString()).toBe('DTDRMDL');
    expect(readFileSync(join(dir, 'm.json'), 'utf8').startsWith('{')).toBe(true);
    expect(Dtdr.load(readModelFile(join(dir, 'm.dtdr')), encoder).tools).toHaveLength(DEMO_TOOLS.length);
  });

  it('a writer killed mid-write leaves the previous model intact', async () => {
    const target = join(dir, 'atomic.dtdr');
    const model = await Dtdr.train({ method: 'dtdr-c', tools: DEMO_TOOLS, plans: PLANS, encoder });
    writeModelFile(target, model.toJSON());
    const before = readFileSync(target);
    // A child process rewrites the file with a large artifact in a loop; kill it at random times.
    const script = `
      import { writeModelFile } from ${JSON.stringify(join(ROOT, 'src/storage/file.ts'))};
      const big = { format: 'dtdr-model', version: 2, padding: Array.from({ length: 3_000_000 }, (_, i) => i / 7) };
      for (;;) writeModelFile(${JSON.stringify(target)}, big);
    `;
    for (const delay of [150, 400, 900]) {
      const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
        cwd: ROOT,
        stdio: 'ignore',
      });
      await new Promise((r) => setTimeout(r, delay));
      child.kill('SIGKILL');
      await new Promise((r) => child.once('exit', r));
      const now = readFileSync(target);
      // Either the old model or a complete new file, never a torn one.
      if (!now.equals(before)) expect(() => decodeBinaryModel(now)).not.toThrow();
      else expect(Dtdr.load(readModelFile(target), encoder).tools).toHaveLength(DEMO_TOOLS.length);
    }
  }, 60_000);
});

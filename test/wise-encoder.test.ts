/**
 * models/dtdr-wise-100d: GloVe's rows moved nine tenths of the way toward dtdr-tool-open-100d's
 * (scripts/build/wise-encoder.ts), rows tuned on openly licensed data only. The committed folder is
 * what the script builds from the two committed folders; it loads like them; and with the tools
 * alone it ranks RestBench-TMDB, whose requests share few words with its descriptions, far better
 * than GloVe without losing Seal-Tools, whose requests spell the tool names out.
 */
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Encoder } from '../src/core/base/encoder.js';
import { loadEncoder } from '../src/encoders/node.js';
import { toolsOnlyFigures } from './worlds/tools-only.js';
import { hasSharedData, SHARED_DATA } from './helpers.js';

const ROOT = join(import.meta.dirname, '..');
const MODELS = join(ROOT, 'models');
const DIR = join(MODELS, 'dtdr-wise-100d');

/** Runs the build script with `args`, writing into a fresh folder; returns its exit, stderr and files. */
function build(...args: string[]) {
  const out = mkdtempSync(join(tmpdir(), 'dtdr-wise-'));
  const r = spawnSync(process.execPath, ['--import', 'tsx', 'scripts/build/wise-encoder.ts', '--out', out, ...args], {
    cwd: ROOT,
    encoding: 'utf8',
  });
  const read = (name: string) => readFileSync(join(out, name));
  return {
    status: r.status,
    stderr: r.stderr,
    out,
    read,
    cleanup: () => rmSync(out, { recursive: true, force: true }),
  };
}

describe('the mixed encoder dtdr-wise-100d', () => {
  let wise: Encoder;
  let glove: Encoder;
  beforeAll(async () => {
    wise = await loadEncoder({ model: DIR });
    glove = await loadEncoder();
  });
  afterAll(async () => {
    await wise.dispose?.();
    await glove.dispose?.();
  });

  it('is, byte for byte, what the build script makes of the committed GloVe and tool-open-100d folders', () => {
    const b = build();
    try {
      expect(b.status, b.stderr).toBe(0);
      const names = [
        'config.json',
        'manifest.json',
        'onnx/model_quantized.onnx',
        'tokenizer.json',
        'tokenizer_config.json',
      ];
      expect([...readdirSync(b.out), ...readdirSync(join(b.out, 'onnx')).map((f) => `onnx/${f}`)].sort()).toEqual(
        [...names, 'onnx'].sort(),
      );
      for (const name of names) expect(Buffer.compare(b.read(name), readFileSync(join(DIR, name))), name).toBe(0);
      const manifest = JSON.parse(b.read('manifest.json').toString()) as { alpha: number; tuned: { name: string } };
      expect(manifest.alpha).toBe(0.9);
      expect(manifest.tuned.name).toBe('dtdr-tool-open-100d');
    } finally {
      b.cleanup();
    }
  }, 60_000);

  it("mixes nothing at the ends: α 0 rebuilds GloVe's weight file byte for byte, α 1 tool-open-100d's", () => {
    for (const [alpha, folder] of [
      ['0', 'dtdr-glove-100d'],
      ['1', 'dtdr-tool-open-100d'],
    ] as const) {
      const b = build('--alpha', alpha);
      try {
        expect(b.status, b.stderr).toBe(0);
        const weights = 'onnx/model_quantized.onnx';
        expect(Buffer.compare(b.read(weights), readFileSync(join(MODELS, folder, weights))), folder).toBe(0);
      } finally {
        b.cleanup();
      }
    }
  }, 60_000);

  it('refuses, with a one-line message and exit 1, folders whose tokenizers differ and an α outside [0, 1]', () => {
    for (const [args, message] of [
      [['--tuned', join(MODELS, 'dtdr-use-lite')], /^wise-encoder: .*tokenizer\.json differs/],
      [['--alpha', '1.5'], /^wise-encoder: --alpha must be between 0 and 1 \(got 1\.5\)/],
    ] as const) {
      const b = build(...args);
      try {
        expect(b.status).toBe(1);
        expect(b.stderr).toMatch(message);
        expect(b.stderr).not.toMatch(/\n\s+at /); // no stack trace
      } finally {
        b.cleanup();
      }
    }
  }, 60_000);

  it('mixes tuned rows whose manifest records only sources whose licences let them ship (MIT, Apache-2.0)', () => {
    // The manifest is the rows' record of what trained them: its files must be the committed ones,
    // and the mix must be built from those very weights.
    type Manifest = {
      sha256: Record<string, string>;
      training: { corpus: { sources: Record<string, { license: string }>; kept: object } };
    };
    const tunedDir = join(MODELS, 'dtdr-tool-open-100d');
    const tuned = JSON.parse(readFileSync(join(tunedDir, 'manifest.json'), 'utf8')) as Manifest;
    const sha = (path: string) => createHash('sha256').update(readFileSync(path)).digest('hex');
    for (const [name, hash] of Object.entries(tuned.sha256)) expect(sha(join(tunedDir, name)), name).toBe(hash);
    const mix = JSON.parse(readFileSync(join(DIR, 'manifest.json'), 'utf8')) as { tuned: { sha256: string } };
    expect(mix.tuned.sha256).toBe(sha(join(tunedDir, 'onnx/model_quantized.onnx')));
    const { sources, kept } = tuned.training.corpus;
    expect(Object.keys(sources).sort()).toEqual(['HowieHwong/MetaTool', 'ShishirPatil/gorilla']);
    for (const source of Object.values(sources)) expect(['MIT', 'Apache-2.0']).toContain(source.license);
    expect(Object.keys(kept)).not.toContain('ultratool');
  });

  it('loads with the folder loader under its own id and fingerprint', () => {
    expect(wise.id).toBe('dtdr-wise-100d');
    expect(wise.dimension).toBe(100);
    expect(wise.fingerprint).not.toBe(glove.fingerprint);
  });

  it.skipIf(!hasSharedData)(
    'with the tools alone: RestBench-TMDB well above GloVe (the 0.33 line), Seal-Tools within a hundredth (real data)',
    async () => {
      const figures = async (set: string, encoder: Encoder) =>
        (await toolsOnlyFigures(`${SHARED_DATA}/${set}`, ['dtdr-g'], encoder, true)).mrr['dtdr-g'].all;
      const rest = { wise: await figures('restbench-tmdb', wise), glove: await figures('restbench-tmdb', glove) };
      const seal = { wise: await figures('seal-tools', wise), glove: await figures('seal-tools', glove) };
      console.log(
        `tools-only MRR, every plan: RestBench-TMDB ${JSON.stringify(rest)}; Seal-Tools ${JSON.stringify(seal)}`,
      );
      expect(rest.wise).toBeGreaterThanOrEqual(0.33);
      expect(rest.wise).toBeGreaterThan(rest.glove + 0.05);
      expect(seal.wise).toBeGreaterThanOrEqual(seal.glove - 0.01);
    },
    60_000,
  );
});

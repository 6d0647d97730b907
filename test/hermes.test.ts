/**
 * Mobile, on React Native's engine: the pure core runs inside Hermes (`hermes-engine-cli` from npm,
 * a host build of Hermes with no Node, DOM, WebAssembly or ONNX Runtime) as test/quickjs.test.ts
 * runs it in QuickJS. The bundle is prepared the way a React Native build prepares it: esbuild
 * bundles test/quickjs/entry.ts, then it is lowered to ES5 (TypeScript's emitter, standing in for
 * Metro's Babel preset: that Hermes has no `class` syntax) and the two Unicode property escapes of
 * the tokenizer (`\p{L}`, `\p{N}`) are spelled out as code point ranges, as Babel's
 * unicode-property-regex transform does (that Hermes has no property escapes). It loads the
 * shipped demo model and retrieves with vectors precomputed by the real encoder in Node, and must
 * give the same candidates as Node, with the same probabilities to 12 decimals. Skipped with a
 * message where the package's linux64 binary is absent (another platform).
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { Dtdr } from '../src/core/dtdr.js';
import type { Encoder } from '../src/core/base/encoder.js';
import { loadEncoder } from '../src/encoders/node.js';
import { readModelFile } from '../src/storage/file.js';
import { ROOT } from './helpers.js';

const HERMES = join(ROOT, 'node_modules/hermes-engine-cli/linux64-bin/hermes');
const hasHermes = process.platform === 'linux' && process.arch === 'x64' && existsSync(HERMES);
if (!hasHermes) console.warn('[dtdr tests] hermes-engine-cli (linux64) is absent: the Hermes test is skipped');

const REQUESTS = [
  { query: 'Email the invoice to Anna', history: ['files_search', 'contacts_search'] },
  { query: 'Find a vegan restaurant near me and text the address to Sam', history: ['maps_search_place'] },
  { query: 'Find me a pharmacy that is open and guide me there', history: [] },
  { query: 'Remind me to call the dentist tomorrow at 9', history: [] },
];

/** The code points of a Unicode property as a character-class body of `\u{…}` ranges. */
function propertyRanges(property: string): string {
  const re = new RegExp(`\\p{${property}}`, 'u');
  const hex = (c: number) => `\\u{${c.toString(16)}}`;
  let out = '';
  let start = -1;
  for (let c = 0; c <= 0x110000; c++) {
    const hit = c < 0x110000 && !(c >= 0xd800 && c <= 0xdfff) && re.test(String.fromCodePoint(c));
    if (hit && start < 0) start = c;
    if (!hit && start >= 0) {
      out += start === c - 1 ? hex(start) : `${hex(start)}-${hex(c - 1)}`;
      start = -1;
    }
  }
  return out;
}

describe.skipIf(!hasHermes)('the pure core inside Hermes (hermes-engine-cli)', () => {
  it('loads a saved model and retrieves the same candidates as in Node', async () => {
    const artifactText = JSON.stringify(readModelFile(join(ROOT, 'public/dtdr-demo.model.dtdr')));
    const real = await loadEncoder();
    const vectors: Record<string, number[]> = {};
    const recording: Encoder = {
      id: real.id,
      dimension: real.dimension,
      async embed(texts) {
        const out = await real.embed(texts);
        texts.forEach((t, i) => (vectors[t] = Array.from(out[i])));
        return out;
      },
    };
    const model = Dtdr.load(JSON.parse(artifactText), recording, 'public/dtdr-demo.model.dtdr');
    const inNode: [string, number][][] = [];
    for (const r of REQUESTS)
      inNode.push(
        (await model.retrieve(r.query, r.history)).candidates.map((c): [string, number] => [c.tool, c.probability]),
      );

    const { build } = await import('esbuild');
    const bundle = await build({
      entryPoints: [join(ROOT, 'test/quickjs/entry.ts')],
      bundle: true,
      write: false,
      format: 'iife',
      platform: 'neutral',
      target: 'es2020',
      mainFields: ['module', 'main'],
      logLevel: 'silent',
    });
    const ts = (await import('typescript')).default;
    let code = ts.transpileModule(bundle.outputFiles[0].text, {
      compilerOptions: {
        target: ts.ScriptTarget.ES5,
        downlevelIteration: true,
        allowJs: true,
        module: ts.ModuleKind.None,
      },
    }).outputText;
    expect(code).toMatch(/\\p\{[LN]\}/); // not vacuous: the tokenizer's escapes are there to spell out
    code = code.replaceAll('\\p{L}', propertyRanges('L')).replaceAll('\\p{N}', propertyRanges('N'));
    expect(code).not.toMatch(/\\p\{/);
    // The entry stores its answer in globalThis.dtdrResult: print it from there.
    const driver =
      `\nObject.defineProperty(globalThis, 'dtdrResult', { set: function (v) { print(v); }, configurable: true });\n` +
      `dtdrRetrieveAll(${JSON.stringify(artifactText)}, ${JSON.stringify(JSON.stringify(vectors))}, ${JSON.stringify(JSON.stringify(REQUESTS))});\n`;
    const dir = mkdtempSync(join(tmpdir(), 'dtdr-hermes-'));
    try {
      writeFileSync(join(dir, 'dtdr-core.js'), code + driver);
      const r = spawnSync(HERMES, ['-w', join(dir, 'dtdr-core.js')], {
        encoding: 'utf8',
        timeout: 120_000,
        maxBuffer: 64 << 20,
      });
      expect(r.status, r.stderr).toBe(0);
      const result = JSON.parse(r.stdout.trim().split('\n').pop() ?? 'null');
      expect(result.error).toBeUndefined();
      expect(result.map((c: [string, number][]) => c.map(([t]) => t))).toEqual(inNode.map((c) => c.map(([t]) => t)));
      result.forEach((c: [string, number][], i: number) =>
        c.forEach(([, p], k) => expect(p).toBeCloseTo(inNode[i][k][1], 12)),
      );
      expect(inNode[0][0][0]).toBe('email_send');
      expect(result.every((c: unknown[]) => c.length > 0)).toBe(true);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 120_000);
});

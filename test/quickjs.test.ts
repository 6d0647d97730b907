/**
 * Mobile, proven the way we can here: the pure core, bundled by esbuild, runs inside QuickJS
 * (quickjs-emscripten: a JavaScript engine with no Node, no DOM, no WebAssembly API and no
 * ONNX Runtime — a stand-in for React Native's Hermes and JavaScriptCore). It loads the shipped
 * demo model and retrieves with vectors precomputed by the real encoder in Node, and must give
 * the same candidates as Node does, with the same probabilities to 12 decimals.
 */
import { readModelFile } from '../src/storage/file.js';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { Dtdr } from '../src/core/dtdr.js';
import type { Encoder } from '../src/core/base/encoder.js';
import { loadEncoder } from '../src/encoders/node.js';
import { ROOT } from './helpers.js';

const REQUESTS = [
  { query: 'Email the invoice to Anna', history: ['files_search', 'contacts_search'] },
  { query: 'Find a vegan restaurant near me and text the address to Sam', history: ['maps_search_place'] },
  { query: 'Find me a pharmacy that is open and guide me there', history: [] },
  { query: 'Remind me to call the dentist tomorrow at 9', history: [] },
];

describe('the pure core inside QuickJS', () => {
  it('loads a saved model and retrieves the same candidates as in Node', async () => {
    // The shipped model is binary; QuickJS gets its JSON form (decoding is tested elsewhere).
    const artifactText = JSON.stringify(readModelFile(join(ROOT, 'public/dtdr-demo.model.dtdr')));
    // Node: retrieve for real, recording every text the encoder was asked to embed.
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
    const code = bundle.outputFiles[0].text;

    const { getQuickJS } = await import('quickjs-emscripten');
    const QuickJS = await getQuickJS();
    const vm = QuickJS.newContext();
    try {
      vm.unwrapResult(vm.evalCode(code, 'dtdr-core.js')).dispose();
      const fn = vm.getProp(vm.global, 'dtdrRetrieveAll');
      const args = [artifactText, JSON.stringify(vectors), JSON.stringify(REQUESTS)].map((s) => vm.newString(s));
      vm.unwrapResult(vm.callFunction(fn, vm.undefined, ...args)).dispose();
      args.forEach((h) => h.dispose());
      fn.dispose();
      vm.runtime.executePendingJobs();
      const handle = vm.getProp(vm.global, 'dtdrResult');
      const result = JSON.parse(vm.getString(handle));
      handle.dispose();
      expect(result.error).toBeUndefined();
      // The same tools in the same order; probabilities equal up to the engines' last-bit
      // differences in Math.exp/Math.log.
      expect(result.map((c: [string, number][]) => c.map(([t]) => t))).toEqual(inNode.map((c) => c.map(([t]) => t)));
      result.forEach((c: [string, number][], i: number) =>
        c.forEach(([, p], k) => expect(p).toBeCloseTo(inNode[i][k][1], 12)),
      );
      // Not a vacuous check: real candidates came back.
      expect(inNode[0][0][0]).toBe('email_send');
      expect(result.every((c: unknown[]) => c.length > 0)).toBe(true);
    } finally {
      vm.dispose();
    }
  }, 60_000);
});

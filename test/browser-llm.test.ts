/**
 * The same tiny random-weight LM, loaded by transformers.js in headless Chromium (WASM, from a
 * local folder served with the page, nothing off localhost), answering under dtdr's logit mask.
 */
import { copyFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { browserReady, pageStatus, servedPage } from './browser-page.js';
import { ROOT } from './helpers.js';
import { writeTinyLm } from './tiny-lm.js';

if (!browserReady) console.warn('[dtdr tests] chromium or python3 missing: the in-browser local model test is skipped');

describe.skipIf(!browserReady)('a local model in the browser (transformers.js, WASM, headless Chromium)', () => {
  const served = servedPage('test/browser-lm', (outDir) => {
    writeTinyLm(join(outDir, 'models', 'tiny-lm'), 3);
    // transformers.js's own ONNX Runtime build, served locally (it would come from a CDN otherwise).
    const ort = join(ROOT, 'node_modules/@huggingface/transformers/node_modules/onnxruntime-web/dist');
    mkdirSync(join(outDir, 'ort'));
    for (const f of ['ort-wasm-simd-threaded.asyncify.mjs', 'ort-wasm-simd-threaded.asyncify.wasm'])
      copyFileSync(join(ort, f), join(outDir, 'ort', f));
  });

  it('loads the model from the served folder and every masked answer is valid', async () => {
    const { outside, failed } = served();
    expect(await pageStatus(served(), 'browser-llm.png')).toBe('done: 12/12 answers valid');
    expect(outside).toEqual([]);
    // transformers.js probes optional files (generation_config.json …); a 404 for those is expected.
    expect(
      failed.filter((f) => !/generation_config\.json|preprocessor_config\.json|processor_config\.json/.test(f)),
    ).toEqual([]);
  }, 240_000);
});

/**
 * Test page (test/browser-llm.test.ts): transformers.js in the browser loads the tiny random LM
 * from /models/tiny-lm/ (WASM) and answers selection prompts under dtdr's logit mask.
 */
import * as transformers from '@huggingface/transformers';
import { END, buildSelectionPrompt, parseAnswer } from '../../src/index.js';
import { DEMO_TOOLS } from '../../src/demo/index.js';
import { transformersModel } from '../../src/llm/index.js';

const status = document.getElementById('status')!;
const out = document.getElementById('answers')!;
try {
  transformers.env.allowRemoteModels = false;
  transformers.env.allowLocalModels = true;
  transformers.env.localModelPath = '/models/';
  // ONNX Runtime's files are served with the page (transformers.js would fetch them from a CDN).
  (transformers.env.backends.onnx.wasm as { numThreads?: number }).numThreads = 1;
  const model = await transformersModel({
    model: 'tiny-lm',
    transformers,
    device: 'wasm',
    dtype: 'fp32',
    maxNewTokens: 40,
    allowRemoteModels: false,
    wasmPaths: { mjs: '/ort/ort-wasm-simd-threaded.asyncify.mjs', wasm: '/ort/ort-wasm-simd-threaded.asyncify.wasm' },
  });
  const names = DEMO_TOOLS.map((t) => t.name);
  let valid = 0;
  const total = 12;
  for (let i = 0; i < total; i++) {
    const candidates = names.slice(i, i + 3).map((tool, k) => ({ tool, probability: 1 / (k + 2) }));
    const prompt = buildSelectionPrompt({
      query: 'Email the quarterly report to Maria',
      history: [],
      tools: DEMO_TOOLS,
      strategy: 'hard',
      format: 'hermes',
      candidates,
    });
    const allowed = i % 2 ? prompt.allowed.filter((a) => a !== END) : prompt.allowed;
    const answer = parseAnswer(
      'hermes',
      await model.generate({
        stage: 'select',
        format: 'hermes',
        messages: prompt.messages,
        prompt: prompt.text,
        allowed,
      }),
    );
    const name = answer.kind === 'call' ? answer.call.name : answer.kind === 'end' ? END : '(invalid)';
    if (allowed.includes(name)) valid++;
    out.textContent += `${i + 1}. allowed ${allowed.join(', ')} → ${name}\n`;
  }
  status.textContent = `done: ${valid}/${total} answers valid`;
  status.dataset.state = 'done';
} catch (error) {
  status.textContent = `error: ${error instanceof Error ? error.message : String(error)}`;
  status.dataset.state = 'error';
}

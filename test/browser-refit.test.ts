/**
 * The browser's refit worker, for real: a page built by Vite from the library's source, where a
 * tools-only model with `refitWorker()` learns its first runs in headless Chromium; its refits run
 * in a module Web Worker that Vite bundled from `new URL('./refit-web-worker.js', import.meta.url)`,
 * and the model is the one trained on the same runs.
 */
import { describe, expect, it } from 'vitest';
import { browserReady, pageStatus, servedPage } from './browser-page.js';

if (!browserReady) console.warn('[dtdr tests] chromium or python3 missing: the browser refit-worker test is skipped');

describe.skipIf(!browserReady)('refits in a Web Worker (headless Chromium)', () => {
  const served = servedPage('test/browser-refit');

  it('each learn refits in the worker, and the model ranks as the one trained on the same runs', async () => {
    const { page, outside, failed } = served();
    expect(await pageStatus(served(), 'browser-refit.png')).toBe(
      'done: 4 refits in the worker, 10/10 rankings as trained',
    );
    expect(await page.textContent('#log')).toContain('errors: none');
    expect(outside).toEqual([]);
    expect(failed).toEqual([]);
  }, 240_000);
});

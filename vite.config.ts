/// <reference types="vitest/config" />
import { availableParallelism } from 'node:os';
import { defineConfig } from 'vite';

/**
 * The tests that take minutes, by kind: headless Chromium, the packed tarball, the real datasets
 * in ../shared/data, and long runs (fuzzing, a model's long life, refits, a local LM's answers,
 * spawned servers and CLIs). `npm test` runs every other test, in a few minutes;
 * `npm run test:slow` runs these; CI runs both.
 */
const SLOW = [
  // headless Chromium
  'test/browser.test.ts',
  'test/browser-llm.test.ts',
  'test/browser-refit.test.ts',
  'test/browser-use-lite.test.ts',
  'test/readme-recipes.test.ts',
  'test/report.test.ts',
  // the packed tarball, or a package fetched with npm pack
  'test/gateway-packed.test.ts',
  'test/package.test.ts',
  'test/peers.test.ts',
  'test/readme-outputs.test.ts',
  'test/readme-replay.test.ts',
  'test/use-lite.test.ts',
  // the real datasets
  'test/default-method.test.ts',
  'test/first-day.test.ts',
  'test/first-day-unseen.test.ts',
  'test/real-data.test.ts',
  'test/tools-only.test.ts',
  // long runs
  'test/cli.test.ts',
  'test/framework-demos.test.ts',
  'test/fuzz.test.ts',
  'test/gateway-e2e.test.ts',
  'test/living-model.test.ts',
  'test/local-llm.test.ts',
  'test/refit.test.ts',
];

// Test settings (vitest). The web demo has its own Vite config: demos/web/vite.config.ts.
export default defineConfig({
  test: {
    testTimeout: 60_000,
    hookTimeout: 120_000,
    pool: 'forks',
    globalSetup: ['test/global-setup.ts'],
    projects: [
      {
        extends: true,
        // Two forks even on two cores (vitest's default there is one): these tests are short.
        test: {
          name: 'fast',
          include: ['test/**/*.test.ts', 'src/**/*.test.ts'],
          exclude: SLOW,
          sequence: { groupOrder: 0 },
          maxWorkers: Math.max(2, availableParallelism() - 1),
        },
      },
      // `npx vitest run` runs the fast group first, then this one. Two forks even on two cores: these tests
      // wait on spawned CLIs, Chromium, npm and the disk much of their time (on 2 cores: 8 min against 16 in one).
      {
        extends: true,
        test: {
          name: 'slow',
          include: SLOW,
          sequence: { groupOrder: 1 },
          maxWorkers: Math.max(2, availableParallelism() - 1),
        },
      },
    ],
  },
});

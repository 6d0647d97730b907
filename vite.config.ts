/// <reference types="vitest/config" />
import { defineConfig } from 'vite';

// Test settings (vitest). The web demo has its own Vite config: demos/web/vite.config.ts.
export default defineConfig({
  test: {
    include: ['test/**/*.test.ts', 'src/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    pool: 'forks',
    globalSetup: ['test/global-setup.ts'],
  },
});

/// <reference types="vitest/config" />
import { defineConfig } from 'vite';

// The demo (demos/web) is a Vite app; vitest reads its settings from the same file.
export default defineConfig({
  root: '.',
  publicDir: 'public',
  build: { outDir: 'dist-demo', emptyOutDir: true },
  test: {
    include: ['test/**/*.test.ts', 'src/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    pool: 'forks',
  },
});

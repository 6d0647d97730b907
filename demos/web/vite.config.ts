import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

// The in-browser demo. `npm run demo:web` serves it; `npx vite build --config demos/web/vite.config.ts` writes a static folder
// (dist-demo/) that any static file server can serve: the bundled encoder's files and ONNX
// Runtime's .wasm are emitted as assets from their `new URL(…, import.meta.url)` references.
export default defineConfig({
  root: fileURLToPath(new URL('.', import.meta.url)),
  base: './',
  publicDir: false,
  // Pre-bundling would move onnxruntime-web away from the .wasm file it finds beside itself.
  optimizeDeps: { exclude: ['onnxruntime-web'] },
  server: { fs: { allow: [fileURLToPath(new URL('../..', import.meta.url))] } },
  // The training worker imports ONNX Runtime lazily: ES module workers keep code splitting.
  worker: { format: 'es' },
  build: {
    outDir: fileURLToPath(new URL('../../dist-demo', import.meta.url)),
    emptyOutDir: true,
    // The only large files are the runtime's .wasm and the encoder's weights, both needed.
    chunkSizeWarningLimit: 1024,
  },
});

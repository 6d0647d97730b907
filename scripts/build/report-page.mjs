// Bundles the HTML report's page script with Observable Plot into one minified IIFE, which
// `dtdr eval --report` inlines into the report (part of `npm run build` and `prepare`).
import { build } from 'esbuild';

await build({
  entryPoints: [new URL('../../src/report/page.ts', import.meta.url).pathname],
  outfile: new URL('../../dist/report/page.bundle.js', import.meta.url).pathname,
  bundle: true,
  minify: true,
  format: 'iife',
  platform: 'browser',
  target: 'es2020',
  legalComments: 'eof',
  logLevel: 'warning',
});

#!/usr/bin/env node
// Thin launcher: the CLI is compiled to dist/ when the package is packed (prepack), and in a clone
// by `npm run build` (npm start and npm test run it when dist/ is missing or stale).
import { existsSync } from 'node:fs';

const entry = new URL('../dist/cli/main.js', import.meta.url);
if (!existsSync(entry)) {
  console.error('dtdr: the CLI is not built yet — run `npm run build` in the dtdr folder first');
  process.exit(1);
}
await import(entry.href);

#!/usr/bin/env node
// Thin launcher: the CLI is compiled to dist/ by `npm install` (the package's prepare script).
import { existsSync } from 'node:fs';

const entry = new URL('../dist/cli/main.js', import.meta.url);
if (!existsSync(entry)) {
  console.error('dtdr: the CLI is not built yet — run `npm install` (or `npm run build`) in the dtdr folder first');
  process.exit(1);
}
await import(entry.href);

#!/usr/bin/env node
/**
 * Fails when npm printed a warning that this project causes. Reads the captured output of npm
 * commands (`npm ci`, `npm start`, `npm test`; files given as arguments, or stdin) and lists every
 * `npm warn` line (an EBADENGINE warning spans several).
 *
 * Not counted: warnings about the machine's own npm configuration, which no clone of this
 * repository can cause or fix: `Unknown user config "…"` (~/.npmrc), `Unknown global config "…"`
 * (the npm installation's npmrc) and `Unknown env config "…"` (npm_config_* variables). Every
 * other warning counts, the project's own .npmrc (`Unknown project config`) included, except the
 * open ones listed with their reason in .ci/npm-warnings-known.
 *
 *   node scripts/check/npm-warnings.mjs npm-ci.log npm-start.log npm-test.log
 */
import { existsSync, readFileSync } from 'node:fs';

const MACHINE = /^npm warn Unknown (user|global|env|builtin) config /i;

export function projectWarnings(text) {
  const found = [];
  for (const line of text.split(/\r?\n/)) {
    // eslint-disable-next-line no-control-regex -- the escape character is what an ANSI colour code starts with
    const plain = line.replace(/\x1b\[[0-9;]*m/g, '');
    if (!/^npm warn\b/i.test(plain) || MACHINE.test(plain)) continue;
    found.push(plain);
  }
  return found;
}

const isMain = process.argv[1] && import.meta.url === new URL(`file://${process.argv[1]}`).href;
if (isMain) {
  const files = process.argv.slice(2);
  const text = files.length ? files.map((f) => readFileSync(f, 'utf8')).join('\n') : readFileSync(0, 'utf8');
  const knownFile = new URL('../../.ci/npm-warnings-known', import.meta.url);
  const known = existsSync(knownFile)
    ? readFileSync(knownFile, 'utf8')
        .split('\n')
        .filter((l) => l.trim() && !l.startsWith('#'))
        .map((l) => new RegExp(l.trim()))
    : [];
  const all = projectWarnings(text);
  const open = all.filter((w) => known.some((k) => k.test(w)));
  const warnings = all.filter((w) => !known.some((k) => k.test(w)));
  if (open.length)
    console.log(
      `${open.length} npm warning line(s) known and still open (.ci/npm-warnings-known):\n${open.map((w) => `  ${w}`).join('\n')}`,
    );
  if (warnings.length) {
    console.error(`npm printed ${warnings.length} warning line(s) that this project causes:`);
    for (const w of warnings) console.error(`  ${w}`);
    process.exit(1);
  }
  console.log(
    open.length
      ? 'npm printed no other warning that this project causes'
      : 'npm printed no warning that this project causes',
  );
}

/**
 * Rewrites the README's printed outputs from a run (test/readme-outputs.ts generates them);
 * `--check` only compares, as test/readme-outputs.test.ts does.
 * Usage: npm run check -- readme-outputs [--check]
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { generateOutputs, readmeBlocks, rewriteReadme, ROOT, withoutTimings } from '../../test/readme-outputs.js';

const README = join(ROOT, 'README.md');
const readme = readFileSync(README, 'utf8');
const outputs = await generateOutputs();
if (!outputs.has('package-measured'))
  console.error(
    'readme-outputs: dist/ is not built (npm run build): the package figures and npm start seconds are left as they are',
  );
const next = rewriteReadme(readme, outputs);
const marked = readmeBlocks(readme);
for (const name of outputs.keys())
  if (!marked.has(name)) console.error(`readme-outputs: README.md has no <!-- output:${name} --> block`);
if (process.argv.includes('--check')) {
  const stale = [...outputs]
    .filter(
      ([name, text]) => !name.endsWith('-measured') && withoutTimings(marked.get(name) ?? '') !== withoutTimings(text),
    )
    .map(([name]) => name);
  console.log(stale.length ? `stale: ${stale.join(', ')}` : 'README outputs are current');
  process.exitCode = stale.length ? 1 : 0;
} else {
  writeFileSync(README, next);
  console.log(`README.md: ${[...outputs.keys()].join(', ')} ${next === readme ? 'unchanged' : 'rewritten'}`);
}

/**
 * Rewrites the printed outputs in README.md and docs/ from a run (test/readme-outputs.ts generates
 * them); `--check` only compares, as test/readme-outputs.test.ts does.
 * Usage: npm run check -- readme-outputs [--check]
 */
import { readFileSync, writeFileSync } from 'node:fs';
import {
  allBlocks,
  generateOutputs,
  outputFiles,
  rewriteReadme,
  ROOT,
  withoutTimings,
} from '../../test/readme-outputs.js';

const outputs = await generateOutputs();
if (!outputs.has('package-measured'))
  console.error(
    'readme-outputs: dist/ is not built (npm run build): the package figures and npm start seconds are left as they are',
  );
const marked = allBlocks();
for (const name of outputs.keys())
  if (!marked.has(name)) console.error(`readme-outputs: no file has an <!-- output:${name} --> block`);
if (process.argv.includes('--check')) {
  const stale = [...outputs]
    .filter(
      ([name, text]) => !name.endsWith('-measured') && withoutTimings(marked.get(name) ?? '') !== withoutTimings(text),
    )
    .map(([name]) => name);
  console.log(
    stale.length
      ? `stale: ${stale.join(', ')} (npm run check -- readme-outputs rewrites them)`
      : 'printed outputs are current',
  );
  process.exitCode = stale.length ? 1 : 0;
} else {
  for (const file of outputFiles()) {
    const text = readFileSync(file, 'utf8');
    const next = rewriteReadme(text, outputs);
    if (next !== text) {
      writeFileSync(file, next);
      console.log(`${file.slice(ROOT.length)}: rewritten`);
    }
  }
  console.log(`outputs: ${[...outputs.keys()].join(', ')}`);
}

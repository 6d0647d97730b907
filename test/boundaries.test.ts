/** The shape rules as tests: a pure core, and entry points that pull only their platform's code. */
import { readFileSync, readdirSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from './helpers.js';

const importsOf = (file: string) => [...readFileSync(file, 'utf8').matchAll(/(?:^|\n)\s*(?:import|export)[^'";]*?from\s+['"]([^'"]+)['"]/g)].map((m) => m[1]);

function closure(entry: string): Map<string, string[]> {
  const seen = new Map<string, string[]>();
  const visit = (file: string) => {
    if (seen.has(file)) return;
    const specifiers = importsOf(file);
    seen.set(file, specifiers);
    for (const s of specifiers) if (s.startsWith('.')) visit(resolve(dirname(file), s.replace(/\.js$/, '.ts')));
  };
  visit(resolve(ROOT, entry));
  return seen;
}

const external = (graph: Map<string, string[]>) => new Set([...graph.values()].flat().filter((s) => !s.startsWith('.')));

describe('code boundaries', () => {
  it('the core imports no DOM, node:*, ONNX Runtime, transformers.js or IndexedDB code', () => {
    const core = join(ROOT, 'src/core');
    for (const f of readdirSync(core, { recursive: true }) as string[]) {
      if (!f.endsWith('.ts')) continue;
      for (const s of importsOf(join(core, f))) expect(s, `${f} imports ${s}`).toMatch(/^(\.|ml-kmeans$|ml-matrix$|@cfworker\/json-schema$|@noble\/hashes\/(sha2|utils)$)/);
    }
  });

  it('the browser entry pulls no Node-only module', () => {
    for (const s of external(closure('src/index.ts'))) expect(s).not.toMatch(/^node:|^fs$|^path$|onnxruntime-node/);
  });

  it('the Node entry pulls no IndexedDB code', () => {
    expect([...external(closure('src/node.ts'))]).not.toContain('idb-keyval');
  });
});

/**
 * The public surface: every entry point of package.json exports exactly the names docs/api.md lists for it,
 * and each of them has a doc comment. A name exported for a test, or added without a word in the API
 * page, fails here; tests reach internals through src/core/ directly.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { ROOT } from './helpers.js';

type ExportTarget = string | { [condition: string]: ExportTarget };
const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { exports: Record<string, ExportTarget> };

/** The compiled files a package.json exports entry points at (every condition), as their sources under src/. */
function sourcesOf(target: ExportTarget): string[] {
  if (typeof target === 'string')
    return /^\.\/dist\/.*\.js$/.test(target) ? [target.replace(/^\.\/dist\//, 'src/').replace(/\.js$/, '.ts')] : [];
  return [...new Set(Object.values(target).flatMap(sourcesOf))];
}

// Each named code entry (`dtdr/node`, `dtdr/ai-sdk`, …) and its one source file; `dtdr` itself is
// `dtdr/node` or `dtdr/browser` by condition, checked below.
const entries = new Map<string, string>();
for (const [subpath, target] of Object.entries(pkg.exports)) {
  const sources = sourcesOf(target);
  if (subpath === '.' || sources.length === 0) continue;
  expect(sources, `${subpath} points at one module`).toHaveLength(1);
  entries.set(`dtdr${subpath.slice(1)}`, sources[0]);
}

const program = (() => {
  const config = ts.readConfigFile(join(ROOT, 'tsconfig.build.json'), (path) => ts.sys.readFile(path));
  const parsed = ts.parseJsonConfigFileContent(config.config, ts.sys, ROOT);
  return ts.createProgram(
    [...entries.values()].map((f) => join(ROOT, f)),
    { ...parsed.options, noEmit: true },
  );
})();
const checker = program.getTypeChecker();

/** Each name an entry exports, with its doc comment (empty when it has none). */
function exportsOf(source: string): Map<string, string> {
  const file = program.getSourceFile(join(ROOT, source));
  const module = file && checker.getSymbolAtLocation(file);
  if (!module) throw new Error(`${source} is not a module`);
  const out = new Map<string, string>();
  for (const symbol of checker.getExportsOfModule(module)) {
    const target = symbol.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(symbol) : symbol;
    out.set(symbol.name, ts.displayPartsToString(target.getDocumentationComment(checker)).trim());
  }
  return out;
}

/** docs/api.md's lists: each `## ` section names its entries in code spans and its exports in table rows. */
function documented(): Map<string, string[]> {
  const page = readFileSync(join(ROOT, 'docs/api.md'), 'utf8');
  const out = new Map<string, string[]>();
  for (const section of page.split(/^## /m).slice(1)) {
    const [heading] = section.split('\n');
    const names = [...section.matchAll(/^\| `([\w$]+)` \|/gm)].map((m) => m[1]);
    for (const [, entry] of heading.matchAll(/`(dtdr\/[\w-]+)`/g))
      out.set(entry, [...(out.get(entry) ?? []), ...names]);
  }
  return out;
}

describe('the public API', () => {
  const listed = documented();

  it('`dtdr` is `dtdr/node` under Node and `dtdr/browser` elsewhere', () => {
    const main = pkg.exports['.'] as Record<string, ExportTarget>;
    expect(sourcesOf(main.node)).toEqual([entries.get('dtdr/node')]);
    expect(sourcesOf(main.default)).toEqual([entries.get('dtdr/browser')]);
  });

  it('docs/api.md lists the entries package.json exports, and no other', () => {
    expect([...listed.keys()].sort()).toEqual([...entries.keys()].sort());
  });

  it.each([...entries])('%s exports exactly the names docs/api.md lists for it', (entry, source) => {
    const names = listed.get(entry) ?? [];
    expect(
      names.filter((n, i) => names.indexOf(n) !== i),
      'listed twice',
    ).toEqual([]);
    const exported = [...exportsOf(source).keys()];
    expect(exported.filter((n) => !names.includes(n)).sort(), 'exported but not in docs/api.md').toEqual([]);
    expect(names.filter((n) => !exported.includes(n)).sort(), 'in docs/api.md but not exported').toEqual([]);
  });

  it.each([...entries])('every export of %s has a doc comment', (_entry, source) => {
    const bare = [...exportsOf(source)].filter(([, doc]) => doc === '').map(([name]) => name);
    expect(bare, 'exports without a doc comment').toEqual([]);
  });

  it('`dtdr` exports at most 40 values on either platform: what an app ships; the bench, the demo world and local models are subpaths', () => {
    for (const entry of ['dtdr/node', 'dtdr/browser']) {
      const file = program.getSourceFile(join(ROOT, entries.get(entry)!));
      const values = checker.getExportsOfModule(checker.getSymbolAtLocation(file!)!).filter((symbol) => {
        const target = symbol.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(symbol) : symbol;
        return (target.flags & ts.SymbolFlags.Value) !== 0;
      });
      expect(values.length, entry).toBeLessThanOrEqual(40);
      expect(
        values
          .map((v) => v.name)
          .filter((n) => /^(evaluateMethods|demoDataset|DEMO_TOOLS|openAICompatibleModel)$/.test(n)),
      ).toEqual([]);
    }
  });

  it('the README points at the API page', () => {
    expect(readFileSync(join(ROOT, 'README.md'), 'utf8')).toContain('](docs/api.md)');
  });
});

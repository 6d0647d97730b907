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

  it.each([...entries])(
    'every named type %s hands out (what its functions and classes return, their parameters) is exported',
    (_entry, source) => {
      // A type `dtdr` itself exports counts for every entry: an app imports it from there.
      const main = [entries.get('dtdr/node')!, entries.get('dtdr/browser')!].flatMap((f) => [...exportsOf(f).keys()]);
      const exported = new Set([...exportsOf(source).keys(), ...main]);
      const missing = new Set<string>();
      const seen = new Set<ts.Type>();
      // The named types a type is made of: itself where it is an interface, class or alias, and its
      // type arguments, union and intersection members, array elements and promised values.
      const visit = (type: ts.Type, depth = 0): void => {
        if (seen.has(type) || depth > 3) return;
        seen.add(type);
        if (type.isUnionOrIntersection()) return type.types.forEach((t) => visit(t, depth));
        const alias = type.aliasSymbol;
        const symbol = alias ?? type.getSymbol();
        const declaration = symbol?.declarations?.[0];
        const own = declaration && !declaration.getSourceFile().fileName.includes('node_modules');
        if (own && symbol && /^[A-Z]/.test(symbol.name) && !exported.has(symbol.name)) {
          const kind = ts.SyntaxKind[declaration.kind];
          if (/InterfaceDeclaration|TypeAliasDeclaration|ClassDeclaration|EnumDeclaration/.test(kind))
            missing.add(`${symbol.name} (${declaration.getSourceFile().fileName.replace(/^.*\/src\//, 'src/')})`);
        }
        for (const arg of [...(type.aliasTypeArguments ?? []), ...checker.getTypeArguments(type as ts.TypeReference)])
          visit(arg, depth + 1);
        // An object type written out in place (`{ tools: McpTool[]; choice: StepChoice }`): what its fields hold.
        if (
          !alias &&
          (type as ts.ObjectType).objectFlags & ts.ObjectFlags.Anonymous &&
          !type.getCallSignatures().length
        )
          for (const field of type.getProperties()) visit(checker.getTypeOfSymbol(field), depth + 1);
      };
      const isPrivate = (decl: ts.Declaration | undefined) =>
        !!decl &&
        ts.canHaveModifiers(decl) &&
        (ts.getModifiers(decl) ?? []).some((m) => m.kind === ts.SyntaxKind.PrivateKeyword);
      // Constructors a class keeps private (Dtdr's: `Dtdr.train` and `Dtdr.load` make models) hand nothing out.
      const signatures = (type: ts.Type) => [
        ...type.getCallSignatures(),
        ...type.getConstructSignatures().filter((sig) => !isPrivate(sig.getDeclaration())),
      ];
      const visitSignature = (sig: ts.Signature) => {
        visit(sig.getReturnType());
        for (const p of sig.getParameters()) visit(checker.getTypeOfSymbol(p));
      };
      const file = program.getSourceFile(join(ROOT, source))!;
      for (const symbol of checker.getExportsOfModule(checker.getSymbolAtLocation(file)!)) {
        const target = symbol.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(symbol) : symbol;
        if (!(target.flags & (ts.SymbolFlags.Function | ts.SymbolFlags.Class))) continue;
        const type = checker.getTypeOfSymbol(target);
        signatures(type).forEach(visitSignature);
        if (target.flags & ts.SymbolFlags.Class) {
          // Its public members: methods' signatures and what properties and getters hold, instance and static.
          const instance = checker.getDeclaredTypeOfSymbol(target);
          for (const owner of [instance, type])
            for (const member of owner.getProperties()) {
              const decl = member.valueDeclaration;
              // Private members and those marked @internal (reached by tests, hidden from the API docs) hand nothing out.
              const internal = decl !== undefined && ts.getJSDocTags(decl).some((t) => t.tagName.text === 'internal');
              if (member.name.startsWith('#') || isPrivate(decl) || internal) continue;
              if (member.name === 'prototype') continue;
              const memberType = checker.getTypeOfSymbol(member);
              if (signatures(memberType).length) signatures(memberType).forEach(visitSignature);
              else visit(memberType);
            }
        }
      }
      expect([...missing].sort(), 'named types handed out but not exported').toEqual([]);
    },
  );

  it('the README points at the API page', () => {
    expect(readFileSync(join(ROOT, 'README.md'), 'utf8')).toContain('](docs/api.md)');
  });
});

/**
 * The repository's tooling layout as tests: tests never import from scripts/ (what both use lives
 * under test/), scripts/ holds only its job folders, and every npm script is documented in the one
 * table of CONTRIBUTING.md, with at most 15 of them.
 */
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from './helpers.js';

const SOURCE = /\.(ts|mts|js|mjs)$/;
const specifiers = (file: string) =>
  [...readFileSync(file, 'utf8').matchAll(/(?:\bfrom\s+|\bimport\s*\(\s*|\bimport\s+)['"`]([^'"`]+)['"`]/g)].map(
    (m) => m[1],
  );

describe('repository layout', () => {
  it('no test file imports from scripts/', () => {
    const test = join(ROOT, 'test');
    const files = (readdirSync(test, { recursive: true }) as string[])
      .map((f) => f.split('\\').join('/'))
      .filter((f) => SOURCE.test(f) && !f.startsWith('fixtures/'));
    expect(files.length).toBeGreaterThan(10);
    for (const f of files) {
      for (const s of specifiers(join(test, f))) expect(s, `test/${f} imports ${s}`).not.toMatch(/(^|\/)scripts\//);
    }
  });

  it('scripts/ holds only its job folders and the dispatcher', () => {
    const entries = readdirSync(join(ROOT, 'scripts')).sort();
    expect(entries).toEqual(['bench', 'build', 'check', 'experiments', 'run.mjs']);
  });

  it('at most 15 npm scripts, each in the table of CONTRIBUTING.md', () => {
    const { scripts } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
      scripts: Record<string, string>;
    };
    const contributing = readFileSync(join(ROOT, 'CONTRIBUTING.md'), 'utf8');
    const documented = new Set([...contributing.matchAll(/^\| `npm (?:run )?([\w:-]+)`/gm)].map((m) => m[1]));
    expect(Object.keys(scripts).length).toBeLessThanOrEqual(15);
    expect(documented.size).toBeLessThanOrEqual(15);
    for (const name of Object.keys(scripts)) {
      expect(documented.has(name), `npm script "${name}" is not in CONTRIBUTING.md's table`).toBe(true);
    }
  });

  it('every script that `npm run check` and `npm run experiment` run is documented in CONTRIBUTING.md', () => {
    const contributing = readFileSync(join(ROOT, 'CONTRIBUTING.md'), 'utf8');
    for (const [group, command] of [
      ['check', 'check'],
      ['experiments', 'experiment'],
    ]) {
      for (const f of readdirSync(join(ROOT, 'scripts', group)).filter((f) => SOURCE.test(f))) {
        const name = f.replace(SOURCE, '');
        expect(contributing, `scripts/${group}/${f} is not in CONTRIBUTING.md`).toContain(
          `npm run ${command} -- ${name}`,
        );
      }
    }
  });
});

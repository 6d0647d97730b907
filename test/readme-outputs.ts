/**
 * The printed outputs in README.md and docs/, generated from a run: each example is run here and
 * its output rewrites the block between `<!-- output:NAME -->` and `<!-- /output -->` wherever it
 * stands (README.md or a file under docs/). `npm run check -- readme-outputs` (scripts/check/readme-outputs.ts) writes them; `--check` only
 * compares (test/readme-outputs.test.ts does the same). Figures that vary run to run (seconds,
 * package sizes) are marked `-measured` and are what this script measured on the machine that ran
 * it; the check compares them with a tolerance.
 *
 * Blocks: `npm-start` (what `npm start` prints) and `npm-start-seconds-measured`
 * (docs/getting-started.md), `retrieve` (the CLI examples on the shipped demo model, docs/cli.md),
 * `library` (the README's quickstart, run as written with `dtdr` resolved to this checkout),
 * `your-data` (the README's "Your own data": its files written to an empty folder, its commands
 * run) and `package-measured` (npm pack figures, docs/dependencies.md; needs dist/).
 */
import { spawnSync } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

export const ROOT = fileURLToPath(new URL('..', import.meta.url));
const README = join(ROOT, 'README.md');

/** README.md and the Markdown files under docs/ (the generated API reference and site excluded). */
export function outputFiles(): string[] {
  const out = [README];
  const walk = (dir: string) => {
    for (const name of readdirSync(dir)) {
      const path = join(dir, name);
      if (statSync(path).isDirectory()) {
        if (name !== 'api' && name !== 'site') walk(path);
      } else if (name.endsWith('.md')) out.push(path);
    }
  };
  walk(join(ROOT, 'docs'));
  return out;
}

/** Every file's marked output blocks together: name → content. */
export function allBlocks(): Map<string, string> {
  const blocks = new Map<string, string>();
  for (const file of outputFiles()) for (const [k, v] of readmeBlocks(readFileSync(file, 'utf8'))) blocks.set(k, v);
  return blocks;
}

/** The files the README's "Your own data" writes: each code block after a `<!-- file:PATH` marker. */
export function readmeDataFiles(readme = readFileSync(README, 'utf8')): Map<string, string> {
  const files = new Map<string, string>();
  for (const m of readme.matchAll(/<!-- file:([\w./-]+)[^>]*-->\n```\w*\n([\s\S]*?)\n```/g))
    files.set(m[1], `${m[2]}\n`);
  return files;
}

/** The commands of a `<!-- commands:NAME -->` block, one a line. */
export function readmeCommands(name: string, readme = readFileSync(README, 'utf8')): string[] {
  const m = new RegExp(`<!-- commands:${name} -->\\n\`\`\`\\w*\\n([\\s\\S]*?)\\n\`\`\``).exec(readme);
  if (!m) throw new Error(`README.md has no commands:${name} block`);
  return m[1].split('\n').filter((l) => l.trim() && !l.startsWith('#'));
}

/** Splits a shell line into words, with "double quotes" kept together. */
export const shellWords = (line: string) => [...line.matchAll(/"([^"]*)"|(\S+)/g)].map((m) => m[1] ?? m[2]);

/** "Your own data", replayed from source: its files in an empty folder, its commands run there; what the last prints. */
export async function yourDataOutput(readme?: string): Promise<string> {
  const { trainCommand } = await import('../src/cli/train.js');
  const { retrieveCommand } = await import('../src/cli/retrieve.js');
  const dir = mkdtempSync(join(tmpdir(), 'dtdr-your-data-'));
  const cwd = process.cwd();
  const error = console.error;
  try {
    for (const [path, text] of readmeDataFiles(readme)) {
      if (!path.startsWith('my-app/')) continue;
      mkdirSync(dirname(join(dir, path)), { recursive: true });
      writeFileSync(join(dir, path), text);
    }
    process.chdir(dir);
    console.error = () => undefined; // training's progress lines
    let printed = '';
    for (const line of readmeCommands('your-data', readme)) {
      const [npx, bin, command, ...args] = shellWords(line);
      if (npx !== 'npx' || bin !== 'dtdr') throw new Error(`unexpected command in the README: ${line}`);
      const run = command === 'train' ? trainCommand : command === 'retrieve' ? retrieveCommand : undefined;
      if (!run) throw new Error(`unexpected dtdr command in the README: ${command}`);
      printed = await captured(() => run(args));
    }
    return fence(printed);
  } finally {
    console.error = error;
    process.chdir(cwd);
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Runs `fn` with console.log collected; returns the lines it printed. */
async function captured(fn: () => Promise<unknown>): Promise<string> {
  const lines: string[] = [];
  const log = console.log;
  console.log = (...args: unknown[]) => void lines.push(args.map(String).join(' '));
  try {
    await fn();
  } finally {
    console.log = log;
  }
  return lines.join('\n').replace(/\n+$/, '');
}

const fence = (text: string, lang = '') => `\`\`\`${lang}\n${text}\n\`\`\``;

/** Every command's --help, as `dtdr <command> --help` prints it. */
export async function cliHelpOutput(): Promise<string> {
  const help: [string, string][] = [
    ['demo', (await import('../src/cli/demo.js')).demoHelp],
    ['train', (await import('../src/cli/train.js')).trainHelp],
    ['retrieve', (await import('../src/cli/retrieve.js')).retrieveHelp],
    ['prompt', (await import('../src/cli/prompt.js')).promptHelp],
    ['eval', (await import('../src/cli/eval.js')).evalHelp],
    ['embed', (await import('../src/cli/embed.js')).embedHelp],
    ['gateway', (await import('../src/cli/gateway.js')).gatewayHelp],
  ];
  return fence(help.map(([name, text]) => `$ dtdr ${name} --help\n${text}`).join('\n\n'));
}

/** What `npm start` prints (`dtdr demo`, run here from source). */
export async function npmStartOutput(): Promise<string> {
  const { demoCommand } = await import('../src/cli/demo.js');
  return fence(`$ npm start\n${await captured(() => demoCommand([]))}`);
}

/** Wall-clock seconds of `npm start` itself (node bin/dtdr.js demo on dist/); undefined without dist/. */
export function npmStartSeconds(): number | undefined {
  if (!existsSync(join(ROOT, 'dist', 'node.js'))) return undefined;
  const started = performance.now();
  const r = spawnSync('npm', ['start', '--silent'], { cwd: ROOT, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`npm start failed: ${r.stderr}`);
  return (performance.now() - started) / 1000;
}

export const RETRIEVE_EXAMPLES = [
  ['--query', 'Send Priya the slides for the meeting', '--history', 'files_search'],
  ['--query', 'Send Priya the slides for the meeting', '--history', 'contacts_search,contacts_search,contacts_search'],
  ['--query', 'Email the invoice to Anna', '--history', 'files_search,contacts_search'],
];

/** The CLI retrieve examples on the shipped demo model, as `npx dtdr retrieve` prints them. */
export async function retrieveOutput(): Promise<string> {
  const { retrieveCommand } = await import('../src/cli/retrieve.js');
  const model = 'public/dtdr-demo.model.dtdr';
  const parts: string[] = [];
  for (const args of RETRIEVE_EXAMPLES) {
    const shown = args.map((a) => (a.startsWith('--') || /^[\w,]+$/.test(a) ? a : `"${a}"`)).join(' ');
    parts.push(
      `$ npx dtdr retrieve --model ${model} ${shown}\n${await captured(() => retrieveCommand(['--model', join(ROOT, model), ...args]))}`,
    );
  }
  return fence(parts.join('\n\n'));
}

/** The README's library quickstart (the ```ts block after `example:library`), as written. */
export function libraryExample(readme = readFileSync(README, 'utf8')): string {
  const marker = readme.indexOf('<!-- example:library');
  const start = readme.indexOf('```ts\n', marker);
  const end = readme.indexOf('\n```', start + 6);
  if (marker < 0 || start < 0 || end < 0) throw new Error('README.md has no example:library block');
  return readme.slice(start + 6, end + 1);
}

/** `dtdr` (as on Node) and each `dtdr/…` subpath, as this checkout's source file: what package.json exports point at. */
function sourceOf(specifier: string): string {
  const exports = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).exports as Record<string, unknown>;
  const target = exports[specifier === 'dtdr' ? './node' : `.${specifier.slice('dtdr'.length)}`] as
    { default?: string } | undefined;
  if (typeof target?.default !== 'string')
    throw new Error(`the README imports ${specifier}, which package.json does not export`);
  return pathToFileURL(join(ROOT, target.default.replace(/^\.\/dist\//, 'src/').replace(/\.js$/, '.ts'))).href;
}

/** Runs the quickstart with `dtdr` and its subpaths resolved to this checkout's source; its output. */
export async function libraryOutput(readme?: string): Promise<string> {
  const code = libraryExample(readme).replace(
    /from '(dtdr(?:\/[\w-]+)?)'/g,
    (_, specifier: string) => `from '${sourceOf(specifier)}'`,
  );
  const dir = mkdtempSync(join(tmpdir(), 'dtdr-readme-'));
  const file = join(dir, 'example.mts');
  writeFileSync(file, code);
  try {
    return fence(await captured(() => import(pathToFileURL(file).href)));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export interface PackFigures {
  packedMB: number;
  unpackedMB: number;
  files: number;
}

/** `npm pack --dry-run` figures of this checkout (dist/ must be built); undefined without dist/. */
export function packFigures(): PackFigures | undefined {
  if (!existsSync(join(ROOT, 'dist', 'node.js'))) return undefined;
  const r = spawnSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], { cwd: ROOT, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`npm pack --dry-run failed: ${r.stderr}`);
  const [pack] = JSON.parse(r.stdout) as { size: number; unpackedSize: number; entryCount: number }[];
  return { packedMB: pack.size / 1e6, unpackedMB: pack.unpackedSize / 1e6, files: pack.entryCount };
}

export const packText = (p: PackFigures) =>
  `${p.packedMB.toFixed(1)} MB packed (${p.unpackedMB.toFixed(1)} MB unpacked, ${p.files} files)`;

/** Every block, as the README should hold it (the package block only where dist/ is built). */
export async function generateOutputs(only?: readonly string[]): Promise<Map<string, string>> {
  const want = (name: string) => !only || only.includes(name);
  const out = new Map<string, string>();
  if (want('retrieve')) out.set('retrieve', await retrieveOutput());
  if (want('library')) out.set('library', await libraryOutput());
  if (want('your-data')) out.set('your-data', await yourDataOutput());
  if (want('cli-help')) out.set('cli-help', await cliHelpOutput());
  if (want('npm-start')) out.set('npm-start', await npmStartOutput());
  if (want('npm-start-seconds-measured')) {
    const seconds = npmStartSeconds();
    if (seconds !== undefined) out.set('npm-start-seconds-measured', String(Math.round(seconds)));
  }
  if (want('package-measured')) {
    const p = packFigures();
    if (p) out.set('package-measured', packText(p));
  }
  return out;
}

const BLOCK = /<!-- output:([\w-]+) -->([\s\S]*?)<!-- \/output -->/g;

/** The marked blocks of a README: name → content (a fenced block keeps its line breaks around it). */
export function readmeBlocks(readme: string): Map<string, string> {
  const blocks = new Map<string, string>();
  for (const m of readme.matchAll(BLOCK)) blocks.set(m[1], m[2].replace(/^\n/, '').replace(/\n$/, ''));
  return blocks;
}

/** The README with each generated block replaced (blocks it does not mark are left alone). */
export function rewriteReadme(readme: string, outputs: Map<string, string>): string {
  return readme.replace(BLOCK, (whole, name: string, body: string) => {
    const next = outputs.get(name);
    if (next === undefined) return whole;
    const multiline = body.startsWith('\n');
    return `<!-- output:${name} -->${multiline ? `\n${next}\n` : next}<!-- /output -->`;
  });
}

/** The demo's training time in its first line varies run to run: compared without it. */
export const withoutTimings = (text: string) => text.replace(/ in \d+(\.\d+)? s \(/g, ' in … s (');

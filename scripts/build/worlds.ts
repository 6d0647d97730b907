/**
 * Builds the tool worlds of data/worlds/ (the first-day evaluation's worlds beyond ../shared/data)
 * from git snapshots of public repositories, in dtdr's own dataset layout (data.jsonl +
 * tool_desc.json, read by `readDatasetDir`), each with SOURCE.md and the upstream LICENSE.
 *
 *   node --import tsx scripts/build/worlds.ts [--mirror /work/.mirror] [--out data/worlds] [--worlds metatool,nestful,api-bank,tau-retail]
 *
 * MIRROR/<owner>+<name>/repo is a bare clone of each source (e.g. `git clone --bare`); files are
 * read with `git show <commit>:<path>` at the pinned commit below, so a rebuild is byte-identical.
 * Upstream arguments are dropped (a plan keeps its request, calls and data links): retrieval needs
 * only those, and it keeps every world small.
 *
 *   metatool    HowieHwong/MetaTool (MIT): ToolE's 199 ChatGPT plugins; the 497 two-tool queries
 *               (two independent calls) and a seeded sample of its single-tool queries.
 *   nestful     IBM/NESTFUL (Apache-2.0): nested sequences of API calls from GLAIVE, SGD and
 *               RapidAPI; links come from the `$varN…$` references between calls.
 *   api-bank    AlibabaResearch/DAMO-ConvAI api-bank (Apache-2.0): the level-3 training dialogues, where
 *               each request needs tools found through a ToolSearcher: most tools serve one request.
 *   tau-retail  sierra-research/tau-bench (MIT): the retail domain's tasks (train, dev, test): the
 *               user's instruction and the sequence of tool actions that solve it.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { seededRandom, shuffleInPlace } from '../../src/core/base/random.js';
import { isValidToolName } from '../../src/core/base/limits.js';
import { datasetFromFiles } from '../../src/core/plans/dataset.js';

interface Source {
  repo: string;
  commit: string;
  license: string;
  licensePath: string;
}

const SOURCES = {
  metatool: {
    repo: 'HowieHwong/MetaTool',
    commit: '35e81bb7576826e980c80fed8f8c0a2b4a1e6fbb',
    license: 'MIT',
    licensePath: 'LICENSE',
  },
  nestful: {
    repo: 'IBM/NESTFUL',
    commit: '053cbde0446dddd31e8293f179085e1b39ab79b5',
    license: 'Apache-2.0',
    licensePath: 'LICENSE',
  },
  'api-bank': {
    repo: 'AlibabaResearch/DAMO-ConvAI',
    // The last commit holding api-bank/training-data/lv3-train.json (later ones removed the training data).
    commit: '1d76900822d9ecfcd6e9eb0ca64a073cb892b735',
    license: 'Apache-2.0',
    licensePath: 'api-bank/LICENSE',
  },
  'tau-retail': {
    repo: 'sierra-research/tau-bench',
    commit: '59a200c6d575d595120f1cb70fea53cef0632f6b',
    license: 'MIT',
    licensePath: 'LICENSE',
  },
} satisfies Record<string, Source>;

type WorldName = keyof typeof SOURCES;

/** How many of MetaTool's single-tool queries a world keeps (a seeded sample). */
const METATOOL_SINGLE = 1500;
const METATOOL_SEED = 46;
/** Largest data.jsonl + tool_desc.json a world may have. */
const MAX_WORLD_BYTES = 1_500_000;

interface OutPlan {
  id: string;
  user_request: string;
  task_nodes: { task: string }[];
  task_links: { source: string; target: string }[];
}
interface OutTool {
  id: string;
  desc: string;
}
interface Built {
  tools: OutTool[];
  plans: OutPlan[];
  paths: string[];
  conversion: string[];
}

let mirror = '/work/.mirror';

function show(source: Source, path: string): string {
  const dir = join(mirror, source.repo.replace('/', '+'), 'repo');
  return execFileSync('git', ['--git-dir', dir, 'show', `${source.commit}:${path}`], {
    encoding: 'utf8',
    maxBuffer: 1 << 28,
  });
}

function listFiles(source: Source, folder: string): string[] {
  const dir = join(mirror, source.repo.replace('/', '+'), 'repo');
  return execFileSync('git', ['--git-dir', dir, 'ls-tree', '--name-only', `${source.commit}:${folder}`], {
    encoding: 'utf8',
  })
    .split('\n')
    .filter((f) => f !== '')
    .sort();
}

/** A tool name under dtdr's rule: other characters become "_" (MetaTool's "PDF&URLTool"). */
function toolName(raw: string): string {
  const name = raw
    .trim()
    .replace(/[^\p{L}\p{N}_.:/ -]/gu, '_')
    .replace(/ {2,}/g, ' ');
  if (!isValidToolName(name)) throw new Error(`tool name "${raw}" cannot be made valid`);
  return name;
}

const chain = (tools: string[]) => tools.slice(1).map((target, i) => ({ source: tools[i], target }));
const clean = (text: string) => text.replace(/\s+/g, ' ').trim();

// ---------------------------------------------------------------- MetaTool
function buildMetaTool(source: Source): Built {
  const paths = [
    'dataset/plugin_des.json',
    'dataset/big_tool_des.json',
    'dataset/data/multi_tool_query_golden.json',
    'dataset/data/all_clean_data.csv',
  ];
  const plugins = JSON.parse(show(source, paths[0])) as Record<string, string>;
  const merged = JSON.parse(show(source, paths[1])) as Record<string, string>;
  const multi = JSON.parse(show(source, paths[2])) as { query: string; tool: string[] }[];
  const rows = parseCsv(show(source, paths[3])).slice(1);
  const names = [...new Set([...Object.keys(plugins), ...Object.keys(merged)])].sort();
  const tools = names.map((n) => ({ id: toolName(n), desc: clean(merged[n] ?? plugins[n]) }));
  // A query that appears with two different tools is ambiguous: it is dropped.
  const toolsOf = new Map<string, Set<string>>();
  for (const [q, t] of rows) {
    const key = clean(q);
    toolsOf.set(key, (toolsOf.get(key) ?? new Set()).add(t));
  }
  const multiQueries = new Set(multi.map((m) => clean(m.query)));
  const singles: { q: string; t: string }[] = [];
  const seen = new Set<string>();
  for (const [q, t] of rows) {
    const key = clean(q);
    if (seen.has(key) || toolsOf.get(key)!.size > 1 || multiQueries.has(key) || key === '') continue;
    seen.add(key);
    singles.push({ q: key, t });
  }
  const total = singles.length;
  const sample = shuffleInPlace(
    singles.map((_, i) => i),
    seededRandom(METATOOL_SEED),
  )
    .slice(0, METATOOL_SINGLE)
    .sort((a, b) => a - b)
    .map((i) => singles[i]);
  const plans: OutPlan[] = [];
  multi.forEach((m, i) =>
    plans.push({
      id: `multi-${i}`,
      user_request: clean(m.query),
      task_nodes: m.tool.map((t) => ({ task: toolName(t) })),
      task_links: [], // MetaTool gives the two tools no order: either may be called first.
    }),
  );
  for (const s of sample)
    plans.push({
      id: `single-${singles.indexOf(s)}`,
      user_request: s.q,
      task_nodes: [{ task: toolName(s.t) }],
      task_links: [],
    });
  return {
    tools,
    plans,
    paths,
    conversion: [
      `Tools: the ${names.length} tools of plugin_des.json (descriptions from big_tool_des.json for the merged tools, ` +
        'else plugin_des.json); "&" in a name becomes "_" (PDF&URLTool → PDF_URLTool).',
      `Plans: all ${multi.length} queries of multi_tool_query_golden.json, each two calls with no link (either may ` +
        `come first, so both are acceptable at the first step), then ${sample.length} of the ${total} distinct ` +
        `single-tool queries of all_clean_data.csv (a seeded sample, seed ${METATOOL_SEED}, kept in file order; ` +
        'a query listed with two different tools, or also in the two-tool file, is dropped).',
      "Note: MetaTool's queries are also in the training corpus of the bundled tool encoder models/dtdr-tool-100d " +
        '(scripts/build/tool-corpus.ts): with that encoder this world is not held out.',
    ],
  };
}

/** RFC 4180 CSV: quoted fields with "" escapes and newlines inside quotes. */
function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') {
        field += '"';
        i++;
      } else if (c === '"') quoted = false;
      else field += c;
    } else if (c === '"') quoted = true;
    else if (c === ',') {
      row.push(field);
      field = '';
    } else if (c === '\n' || c === '\r') {
      if (c === '\r' && text[i + 1] === '\n') i++;
      row.push(field);
      rows.push(row);
      row = [];
      field = '';
    } else field += c;
  }
  if (field !== '' || row.length > 0) rows.push([...row, field]);
  return rows.filter((r) => r.length === 2);
}

// ---------------------------------------------------------------- NESTFUL
function buildNestful(source: Source): Built {
  const parts = [
    { name: 'glaive', data: 'data/non-executable/non-executable-glaive-data.json' },
    { name: 'sgd', data: 'data/non-executable/non-executable-sgd-data.json' },
    { name: 'executable', data: 'data/executable/executable-data.json' },
  ];
  const specPath = (data: string) => data.replace('-data.json', '-spec.json');
  const paths = parts.flatMap((p) => [p.data, specPath(p.data)]);
  const tools = new Map<string, string>();
  const plans: OutPlan[] = [];
  let repeated = 0;
  const undescribed = new Set<string>();
  for (const part of parts) {
    const spec = JSON.parse(show(source, specPath(part.data))) as { name: string; description?: string }[];
    for (const s of spec) {
      const name = toolName(s.name);
      if (!tools.has(name)) tools.set(name, clean(s.description ?? ''));
    }
    const data = JSON.parse(show(source, part.data)) as {
      input: string;
      output: { name: string; arguments?: unknown; label?: string }[];
    }[];
    data.forEach((d, i) => {
      const calls = d.output.filter((c) => c.name !== 'var_result');
      const names = calls.map((c) => toolName(c.name));
      // A few GLAIVE samples call a tool its spec file does not list: it joins the tools, described
      // by its own name (dtdr refuses a tool with no description).
      for (const n of names)
        if (!tools.has(n)) {
          tools.set(n, nameAsDescription(n));
          undescribed.add(n);
        }
      let links: { source: string; target: string }[];
      if (new Set(names).size < names.length) {
        // A tool called twice: links between names would be ambiguous, so the plan is a chain.
        links = chain(names);
        repeated++;
      } else {
        const byLabel = new Map(calls.map((c, k) => [c.label, names[k]] as const));
        const set = new Set<string>();
        calls.forEach((c, k) => {
          for (const m of JSON.stringify(c.arguments ?? {}).matchAll(/\$(var\d+)/g)) {
            const from = byLabel.get(m[1]);
            if (from && from !== names[k]) set.add(`${from}\u0000${names[k]}`);
          }
        });
        links = [...set].map((s) => {
          const [from, to] = s.split('\u0000');
          return { source: from, target: to };
        });
      }
      plans.push({
        id: `${part.name}-${i}`,
        user_request: clean(d.input),
        task_nodes: names.map((task) => ({ task })),
        task_links: links,
      });
    });
  }
  return {
    tools: [...tools].map(([id, desc]) => ({ id, desc })),
    plans,
    paths,
    conversion: [
      `Tools: the union of the three spec files (name and description), and the ${undescribed.size} tools that ` +
        `GLAIVE samples call but its spec does not list, described by their own name in words ("create_task" → "Create task.": ${[...undescribed].sort().join(', ')}).`,
      'Plans: every sample of the three data files (GLAIVE, SGD, executable RapidAPI), in that order; the calls ' +
        "of `output` in order, less the final `var_result` pseudo-call; a link A → B wherever B's arguments " +
        `reference A's output label (\`$varN…$\`), so independent calls are unordered. The ${repeated} plans that ` +
        'call one tool twice are written as chains in the listed order (links between tool names would be ambiguous).',
    ],
  };
}

// ---------------------------------------------------------------- API-Bank level 3
/** A tool called but never described: described by its own name in words ("create_task" → "Create task."). */
const nameAsDescription = (name: string) =>
  name
    .replace(/_/g, ' ')
    .replace(/([a-z])([A-Z])/g, '$1 $2')
    .replace(/^./, (c) => c.toUpperCase()) + '.';

function buildApiBank(source: Source): Built {
  const path = 'api-bank/training-data/lv3-train.json';
  const samples = JSON.parse(show(source, path)) as { input: string; output: string }[];
  const described = new Map<string, string>();
  // Each sample is one step of a dialogue: the user's request, the calls so far and the next call.
  const requests = new Map<string, string[]>();
  for (const { input, output } of samples) {
    // ToolSearcher's answers describe the tools it found: {'name': 'X', 'description': '…', …} (Python repr).
    for (const m of input.matchAll(
      /\{'name': '([^']+)', 'description': (?:'((?:[^'\\]|\\.)*)'|"((?:[^"\\]|\\.)*)")/g,
    )) {
      const name = toolName(m[1]);
      if (!described.has(name)) described.set(name, clean((m[2] ?? m[3]).replace(/\\(.)/g, '$1')));
    }
    const user = /\nUser: (.*)\n/.exec(input)?.[1];
    if (!user) throw new Error(`${path}: a sample with no user request`);
    const calls = [...`${input}\n${output}`.matchAll(/API-Request: \[(\w+)\(/g)].map((m) => m[1]);
    const known = requests.get(user);
    if (!known || calls.length > known.length) requests.set(user, calls);
  }
  const tools = new Map(described);
  const undescribed = new Set<string>();
  const plans: OutPlan[] = [];
  let empty = 0;
  [...requests].forEach(([user, calls], i) => {
    const names = calls.filter((c) => c !== 'ToolSearcher').map(toolName);
    if (names.length === 0) {
      empty++;
      return;
    }
    for (const n of names)
      if (!tools.has(n)) {
        tools.set(n, nameAsDescription(n));
        undescribed.add(n);
      }
    plans.push({
      id: `lv3-${i}`,
      // The request without the sample's clock ("…TIME: 2034-04-15 10:00:00").
      user_request: clean(user.replace(/TIME: [\d-]+ [\d:]+$/, '')),
      task_nodes: names.map((task) => ({ task })),
      task_links: chain(names),
    });
  });
  return {
    tools: [...tools].map(([id, desc]) => ({ id, desc })).sort((a, b) => a.id.localeCompare(b.id)),
    plans,
    paths: [path],
    conversion: [
      `Tools: the ${described.size} tools that ToolSearcher's answers in the dialogues describe (name and ` +
        `description), and the ${undescribed.size} tools called but never described, described by their own name ` +
        `in words (${[...undescribed].sort().join(', ')}). ToolSearcher itself is not a tool here.`,
      `Plans: one per distinct user request (${requests.size}, in file order), from its longest sample: the ` +
        "API requests made, less ToolSearcher's, chained in order; the request's trailing clock (`TIME: …`) is " +
        `removed. ${empty} requests whose only calls are ToolSearcher's are dropped.`,
    ],
  };
}

// ---------------------------------------------------------------- tau-bench retail
/** The Python string literal starting at text[start] (single or double quotes, no prefixes). */
function pythonString(text: string, start: number): { value: string; end: number } {
  const quote = text[start];
  let value = '';
  let i = start + 1;
  for (; text[i] !== quote; i++) {
    if (i >= text.length) throw new Error('unterminated string');
    if (text[i] === '\\') {
      const next = text[++i];
      value += next === 'n' ? '\n' : next === 't' ? '\t' : next;
    } else value += text[i];
  }
  return { value, end: i + 1 };
}

/** The value of `key=` or `"key":` at `from`: one string literal, or adjacent literals in parentheses. */
function pythonStrings(text: string, from: number): string {
  let i = from;
  while (/\s/.test(text[i])) i++;
  const paren = text[i] === '(';
  if (paren) i++;
  let value = '';
  for (;;) {
    while (/\s/.test(text[i])) i++;
    if (text[i] !== '"' && text[i] !== "'") break;
    const s = pythonString(text, i);
    value += s.value;
    i = s.end;
    if (!paren) break;
  }
  return value;
}

function buildTauRetail(source: Source): Built {
  const toolDir = 'tau_bench/envs/retail/tools';
  const taskFiles = ['tasks_train.py', 'tasks_dev.py', 'tasks_test.py'].map((f) => `tau_bench/envs/retail/${f}`);
  const toolFiles = listFiles(source, toolDir)
    .filter((f) => f.endsWith('.py') && f !== '__init__.py')
    .map((f) => `${toolDir}/${f}`);
  const tools: OutTool[] = toolFiles.map((file) => {
    const text = show(source, file);
    const name = /"name":\s*"([^"]+)"/.exec(text)?.[1];
    const at = text.indexOf('"description":');
    if (!name || at < 0) throw new Error(`${file}: no name or description`);
    return { id: toolName(name), desc: clean(pythonStrings(text, at + '"description":'.length)) };
  });
  const known = new Set(tools.map((t) => t.id));
  const plans: OutPlan[] = [];
  let empty = 0;
  const counts: string[] = [];
  for (const file of taskFiles) {
    const text = show(source, file);
    const split = file.replace(/^.*tasks_(\w+)\.py$/, '$1');
    const blocks = text.split(/\n\s*Task\(/).slice(1);
    let kept = 0;
    blocks.forEach((block, i) => {
      const at = /\binstruction=/.exec(block);
      if (!at) throw new Error(`${file} task ${i}: no instruction`);
      const instruction = clean(pythonStrings(block, at.index + at[0].length));
      const actions = [...block.matchAll(/Action\(\s*name=["']([^"']+)["']/g)].map((m) => toolName(m[1]));
      for (const a of actions) if (!known.has(a)) throw new Error(`${file} task ${i}: unknown tool ${a}`);
      if (actions.length === 0) {
        empty++;
        return;
      }
      kept++;
      plans.push({
        id: `${split}-${i}`,
        user_request: instruction,
        task_nodes: actions.map((task) => ({ task })),
        task_links: chain(actions),
      });
    });
    counts.push(`${split} ${kept} of ${blocks.length}`);
  }
  return {
    tools,
    plans,
    paths: [...taskFiles, `${toolDir}/*.py`],
    conversion: [
      `Tools: the ${tools.length} tool files of the retail domain (name and description from each \`get_info()\`).`,
      "Plans: each Task of tasks_train.py, tasks_dev.py and tasks_test.py (in that order): the request is the task's " +
        "`instruction` (the simulated user's brief), the calls are its `actions` in order, chained (each action " +
        `follows the one before). Tasks kept: ${counts.join(', ')}; ${empty} tasks with no action are dropped.`,
      "Note: the train tasks are tau-bench's synthetic ones (templated instructions; actions list only the " +
        'state-changing calls), the dev/test tasks are hand-written (actions include the look-ups).',
    ],
  };
}

// ---------------------------------------------------------------- writing
function stats(plans: OutPlan[]) {
  const steps = plans.map((p) => p.task_nodes.length);
  const hist = new Map<number, number>();
  for (const s of steps) hist.set(s, (hist.get(s) ?? 0) + 1);
  return {
    plans: plans.length,
    mean: steps.reduce((a, b) => a + b, 0) / steps.length,
    min: Math.min(...steps),
    max: Math.max(...steps),
    multi: steps.filter((s) => s >= 2).length,
    hist: [...hist].sort((a, b) => a[0] - b[0]),
  };
}

function sourceMd(name: WorldName, source: Source, built: Built, bytes: number): string {
  const s = stats(built.plans);
  const used = new Set(built.plans.flatMap((p) => p.task_nodes.map((n) => n.task)));
  return [
    `# World \`${name}\``,
    '',
    'Generated by `node --import tsx scripts/build/worlds.ts`; do not edit by hand (a rebuild is byte-identical).',
    '',
    `- Source: https://github.com/${source.repo} at commit \`${source.commit}\``,
    `- Paths: ${built.paths.map((p) => `\`${p}\``).join(', ')}`,
    `- License: ${source.license} (upstream text in \`LICENSE\`)`,
    `- Layout: dtdr's dataset folder (\`data.jsonl\` one plan per line, \`tool_desc.json\`), read by \`readDatasetDir\`; ${bytes.toLocaleString('en')} bytes`,
    '',
    '## Conversion',
    '',
    ...built.conversion.map((c) => `- ${c}`),
    '- Upstream call arguments are not kept.',
    '',
    '## Counts',
    '',
    `- tools: ${built.tools.length} (${used.size} called by some plan)`,
    `- plans: ${s.plans}`,
    `- calls per plan: mean ${s.mean.toFixed(2)}, min ${s.min}, max ${s.max}; plans with ≥ 2 calls: ${s.multi}`,
    `- plans by calls: ${s.hist.map(([k, v]) => `${k}: ${v}`).join(', ')}`,
    '',
  ].join('\n');
}

function writeWorld(out: string, name: WorldName): void {
  const source = SOURCES[name];
  const build = {
    metatool: buildMetaTool,
    nestful: buildNestful,
    'api-bank': buildApiBank,
    'tau-retail': buildTauRetail,
  };
  const built = build[name](source);
  const data = built.plans.map((p) => JSON.stringify(p)).join('\n') + '\n';
  const toolDesc = `${JSON.stringify({ nodes: built.tools }, null, 2)}\n`;
  // The files must load as they will be read.
  const ds = datasetFromFiles({
    name,
    data: { text: data, file: 'data.jsonl' },
    toolDescriptions: { text: toolDesc, file: 'tool_desc.json' },
  });
  if (ds.plans.length !== built.plans.length || ds.tools.length !== built.tools.length)
    throw new Error(`${name}: the written files do not load back`);
  const bytes = Buffer.byteLength(data) + Buffer.byteLength(toolDesc);
  if (bytes > MAX_WORLD_BYTES) throw new Error(`${name}: ${bytes} bytes, over ${MAX_WORLD_BYTES}`);
  const dir = join(out, name);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'data.jsonl'), data);
  writeFileSync(join(dir, 'tool_desc.json'), toolDesc);
  writeFileSync(join(dir, 'LICENSE'), show(source, source.licensePath));
  writeFileSync(join(dir, 'SOURCE.md'), sourceMd(name, source, built, bytes));
  const s = stats(built.plans);
  console.log(
    `${name}: ${built.tools.length} tools, ${s.plans} plans, ${s.mean.toFixed(2)} calls per plan (${s.min}–${s.max}), ${bytes} bytes`,
  );
}

function main(): void {
  const { values } = parseArgs({
    options: {
      mirror: { type: 'string', default: '/work/.mirror' },
      out: { type: 'string', default: 'data/worlds' },
      worlds: { type: 'string', default: Object.keys(SOURCES).join(',') },
    },
  });
  mirror = resolve(values.mirror);
  for (const name of values.worlds.split(',')) {
    if (!(name in SOURCES)) throw new Error(`unknown world "${name}" (known: ${Object.keys(SOURCES).join(', ')})`);
    writeWorld(resolve(values.out), name as WorldName);
  }
}

main();

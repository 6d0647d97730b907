/**
 * Builds the (request, tool) training corpus for the tool-retrieval encoder from public tool-use
 * data, read from git snapshots of the source repositories (no network here: fetch them first,
 * e.g. with `git clone --bare`, into MIRROR/<owner>+<name>/repo).
 *
 *   node --import tsx scripts/build/tool-corpus.ts [--mirror /work/.mirror --eval ../shared/data --out .cache/tool-corpus]
 *                                                  [--without JoeYing1019/UltraTool]   (leave a source out)
 *
 * Sources (the commit each was read at is checked and recorded in OUT/card.json; see
 * models/dtdr-tool-100d.data-card.md):
 *   HowieHwong/MetaTool        dataset/data/all_clean_data.csv (ToolE single-tool queries),
 *                              dataset/data/multi_tool_query_golden.json, plugin_des.json, big_tool_des.json
 *   ShishirPatil/gorilla       berkeley-function-call-leaderboard/bfcl_eval/data/BFCL_v4_{simple_*,multiple,
 *                              parallel*,live_simple,live_multiple,live_parallel*}.json + possible_answer/
 *   JoeYing1019/UltraTool      data/English-dataset/test.json (the release's English set: question, plan, tools)
 *
 * Evaluation data is never trained on: every record whose request text (exact, and after
 * lower-casing and collapsing white space) equals a request of UltraTool's official test plans,
 * RestBench-TMDB, the Seal-Tools dev split in ../shared/data, or a sentence of
 * test/fixtures/paraphrases.json is dropped, and so is every near duplicate (word-set Jaccard
 * similarity ≥ 0.7 to one of them); the counts are written to the card.
 *
 * Output: OUT/corpus.jsonl — {"src", "q", "pos": [tool key], "group": [tool key]} where group is
 * the record's own candidate list (BFCL's functions, UltraTool's tool list) used for hard
 * negatives; OUT/tools.json — {key: text}, text as dtdr embeds a tool (toolText(name, desc)).
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { toolText } from '../../src/core/base/text.js';

const { values: args } = parseArgs({
  options: {
    mirror: { type: 'string', default: '/work/.mirror' },
    eval: { type: 'string', default: resolve(import.meta.dirname, '../../../shared/data') },
    out: { type: 'string', default: resolve(import.meta.dirname, '../../.cache/tool-corpus') },
    // Sources to leave out, comma-separated (e.g. one whose licence does not allow shipping what is learned from it).
    without: { type: 'string', default: '' },
  },
});

/** The commits the corpus was built from; a snapshot at another commit is reported, not refused. */
export const SOURCES = {
  'HowieHwong/MetaTool': { commit: '35e81bb7576826e980c80fed8f8c0a2b4a1e6fbb', license: 'MIT' },
  'ShishirPatil/gorilla': { commit: '6ea57973c7a6097fd7c5915698c54c17c5b1b6c8', license: 'Apache-2.0' },
  'JoeYing1019/UltraTool': {
    commit: '9f3793c3f9396b840631833ef76fe4f20c057c39',
    license: 'none stated in the repository (research release; used for research evaluation only)',
  },
} as const;
type Source = keyof typeof SOURCES;

function gitDir(repo: Source): string {
  return join(args.mirror, repo.replace('/', '+'), 'repo');
}
function show(repo: Source, path: string): string {
  return execFileSync('git', ['--git-dir', gitDir(repo), 'show', `${SOURCES[repo].commit}:${path}`], {
    maxBuffer: 1 << 28,
  }).toString('utf8');
}
function headCommit(repo: Source): string {
  return execFileSync('git', ['--git-dir', gitDir(repo), 'rev-parse', 'HEAD'])
    .toString()
    .trim();
}

const norm = (s: string) => s.toLowerCase().replace(/\s+/g, ' ').trim();

interface Rec {
  src: string;
  q: string;
  pos: string[];
  group?: string[];
}
const tools = new Map<string, string>();
function tool(src: string, name: string, desc: string): string {
  const key = `${src}:${name}`;
  if (!tools.has(key)) tools.set(key, toolText(name, (desc ?? '').trim()));
  return key;
}

function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let cell = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') {
        cell += '"';
        i++;
      } else if (c === '"') quoted = false;
      else cell += c;
    } else if (c === '"') quoted = true;
    else if (c === ',') {
      row.push(cell);
      cell = '';
    } else if (c === '\n' || c === '\r') {
      if (c === '\r' && text[i + 1] === '\n') i++;
      row.push(cell);
      rows.push(row);
      row = [];
      cell = '';
    } else cell += c;
  }
  if (cell || row.length) {
    row.push(cell);
    rows.push(row);
  }
  return rows;
}

function metaTool(): Rec[] {
  const repo = 'HowieHwong/MetaTool';
  const plugin = JSON.parse(show(repo, 'dataset/plugin_des.json')) as Record<string, string>;
  const merged = JSON.parse(show(repo, 'dataset/big_tool_des.json')) as Record<string, string>;
  const desc = (name: string) => merged[name] ?? plugin[name] ?? plugin[name.toLowerCase()];
  const out: Rec[] = [];
  let missing = 0;
  for (const [q, name] of parseCsv(show(repo, 'dataset/data/all_clean_data.csv')).slice(1)) {
    if (!q || !name) continue;
    const d = desc(name);
    if (d === undefined) {
      missing++;
      continue;
    }
    out.push({ src: 'metatool', q, pos: [tool('metatool', name, d)] });
  }
  for (const { query, tool: names } of JSON.parse(show(repo, 'dataset/data/multi_tool_query_golden.json')) as {
    query: string;
    tool: string[];
  }[]) {
    if (names.every((n) => desc(n) !== undefined))
      out.push({ src: 'metatool-multi', q: query, pos: names.map((n) => tool('metatool', n, desc(n))) });
  }
  if (missing) console.log(`  metatool: ${missing} queries name a tool with no description, skipped`);
  return out;
}

function bfcl(): Rec[] {
  const repo = 'ShishirPatil/gorilla';
  const dir = 'berkeley-function-call-leaderboard/bfcl_eval/data/';
  const files = [
    'simple_python',
    'simple_java',
    'simple_javascript',
    'multiple',
    'parallel',
    'parallel_multiple',
    'live_simple',
    'live_multiple',
    'live_parallel',
    'live_parallel_multiple',
  ];
  const out: Rec[] = [];
  for (const f of files) {
    const name = `BFCL_v4_${f}.json`;
    const answers = new Map<string, string[]>();
    for (const line of show(repo, `${dir}possible_answer/${name}`).split('\n').filter(Boolean)) {
      const a = JSON.parse(line) as { id: string; ground_truth: Record<string, unknown>[] };
      answers.set(
        a.id,
        a.ground_truth.flatMap((g) => Object.keys(g)),
      );
    }
    for (const line of show(repo, dir + name)
      .split('\n')
      .filter(Boolean)) {
      const r = JSON.parse(line) as {
        id: string;
        question: { role: string; content: string }[][];
        function: { name: string; description: string }[];
      };
      const user = r.question[0]?.filter((m) => m.role === 'user').map((m) => m.content) ?? [];
      const q = user[user.length - 1];
      const gt = answers.get(r.id);
      if (!q || !gt || gt.length === 0) continue;
      // Tool keys are per record set: BFCL reuses names across unrelated records.
      const src = `bfcl-${f}`;
      const group = r.function.map((fn) => tool(src, fn.name, fn.description));
      const pos = [...new Set(gt)].filter((n) => r.function.some((fn) => fn.name === n)).map((n) => `${src}:${n}`);
      if (pos.length) out.push({ src: 'bfcl', q, pos, group });
    }
  }
  return out;
}

function ultraTool(): Rec[] {
  const repo = 'JoeYing1019/UltraTool';
  const out: Rec[] = [];
  for (const line of show(repo, 'data/English-dataset/test.json').split('\n').filter(Boolean)) {
    const r = JSON.parse(line) as {
      question: string;
      plan: { tool: string }[];
      tools: { name: string; description: string }[];
    };
    if (!r.tools?.length) continue;
    const group = r.tools.map((t) => tool('ultratool', t.name, t.description));
    const used: string[] = [];
    for (const step of r.plan ?? []) {
      const m = /^\s*([A-Za-z_][\w.]*)\s*\(/.exec(step.tool ?? '');
      if (m && r.tools.some((t) => t.name === m[1]) && !used.includes(m[1])) used.push(m[1]);
    }
    if (used.length)
      out.push({ src: 'ultratool', q: r.question.trim(), pos: used.map((n) => `ultratool:${n}`), group });
  }
  return out;
}

const words = (s: string) => new Set(s.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []);
/** Word-set Jaccard similarity ≥ NEAR to an evaluation request counts as a near duplicate. */
const NEAR = 0.7;

function evalRequests(): { exact: Set<string>; normal: Set<string>; near: Set<string>[] } {
  const root = resolve(args.eval);
  const exact = new Set<string>();
  const add = (s: string) => exact.add(s) && exact.add(s.trim());
  const utTest = new Set(
    (
      JSON.parse(readFileSync(join(root, 'ultratool/split_ids.json'), 'utf8')) as { test_ids: { chain: string[] } }
    ).test_ids.chain.map(String),
  );
  for (const name of ['ultratool', 'restbench-tmdb', 'seal-tools']) {
    for (const line of readFileSync(join(root, name, 'data.jsonl'), 'utf8')
      .split('\n')
      .filter(Boolean)) {
      const p = JSON.parse(line) as { id: string | number; user_request: string };
      if (name === 'ultratool' && !utTest.has(String(p.id))) continue;
      add(p.user_request);
    }
  }
  const para = JSON.parse(
    readFileSync(resolve(import.meta.dirname, '../../test/fixtures/paraphrases.json'), 'utf8'),
  ) as { pairs: [string, string][] };
  for (const s of para.pairs.flat()) add(s);
  return { exact, normal: new Set([...exact].map(norm)), near: [...new Set([...exact].map(norm))].map(words) };
}

function main() {
  const started = Date.now();
  const without = args.without.split(',').filter(Boolean);
  for (const repo of without)
    if (!Object.hasOwn(SOURCES, repo))
      throw new Error(`--without ${repo}: not a source (${Object.keys(SOURCES).join(', ')})`);
  const used = (Object.keys(SOURCES) as Source[]).filter((repo) => !without.includes(repo));
  const card: Record<string, unknown> = { sources: {} };
  for (const repo of used) {
    if (!existsSync(gitDir(repo))) throw new Error(`no snapshot of ${repo} at ${gitDir(repo)}`);
    (card.sources as Record<string, unknown>)[repo] = { ...SOURCES[repo], snapshotHead: headCommit(repo) };
  }
  const readers: Record<Source, () => Rec[]> = {
    'HowieHwong/MetaTool': metaTool,
    'ShishirPatil/gorilla': bfcl,
    'JoeYing1019/UltraTool': ultraTool,
  };
  const all = used.flatMap((repo) => readers[repo]());
  const { exact, normal, near } = evalRequests();
  const isNear = (q: string) => {
    const a = words(q);
    return near.some((b) => {
      let both = 0;
      for (const w of a) if (b.has(w)) both++;
      return both / (a.size + b.size - both) >= NEAR;
    });
  };
  const removed: Record<string, { exact: number; normalised: number; nearDuplicate: number }> = {};
  const seen = new Set<string>();
  const kept: Rec[] = [];
  let duplicates = 0;
  for (const r of all) {
    const bucket = (removed[r.src] ??= { exact: 0, normalised: 0, nearDuplicate: 0 });
    if (exact.has(r.q) || exact.has(r.q.trim())) {
      bucket.exact++;
      continue;
    }
    if (normal.has(norm(r.q))) {
      bucket.normalised++;
      continue;
    }
    if (isNear(r.q)) {
      bucket.nearDuplicate++;
      continue;
    }
    const key = `${norm(r.q)}\u0000${r.pos.join(',')}`;
    if (seen.has(key)) {
      duplicates++;
      continue;
    }
    seen.add(key);
    kept.push(r);
  }
  const counts: Record<string, number> = {};
  for (const r of kept) counts[r.src] = (counts[r.src] ?? 0) + 1;
  Object.assign(card, {
    removedAsEvaluationText: removed,
    duplicatesDropped: duplicates,
    kept: counts,
    tools: tools.size,
  });
  const out = resolve(args.out);
  mkdirSync(out, { recursive: true });
  writeFileSync(join(out, 'corpus.jsonl'), kept.map((r) => JSON.stringify(r)).join('\n') + '\n');
  writeFileSync(join(out, 'tools.json'), JSON.stringify(Object.fromEntries(tools)));
  writeFileSync(join(out, 'card.json'), JSON.stringify(card, null, 2) + '\n');
  console.log(JSON.stringify(card, null, 2));
  console.log(
    `wrote ${kept.length} records, ${tools.size} tools to ${out} in ${((Date.now() - started) / 1000).toFixed(1)} s`,
  );
}

main();

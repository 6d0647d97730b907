/**
 * The app-scale world, seeded: `tools` tools (default 16,000) described with real
 * English words, Zipf-popular; `templates` workflow templates (default 2,000), each a chain of 1–5
 * calls of Zipf-drawn tools; `train` + `test` plans (default 20,000 + 2,000), each a template
 * with a request that samples words from its tools' descriptions. Not a quality benchmark — a cost one.
 *
 *   node --import tsx test/worlds/app-world.ts OUT_DIR [tools] [templates] [train] [test] [seed]
 * writes OUT_DIR/train and OUT_DIR/test, dataset folders for `dtdr eval --data OUT_DIR/test --train OUT_DIR/train`.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { seededRandom } from '../../src/core/base/random.js';
import type { Dataset, Plan, ToolSpec } from '../../src/core/base/types.js';
import { chainPlan } from '../../src/core/plans/plan.js';
import { cdfSampler } from './synthetic.js';

export interface AppWorldOptions {
  tools?: number;
  templates?: number;
  train?: number;
  test?: number;
  seed?: number;
}

export interface AppWorld {
  name: string;
  tools: ToolSpec[];
  train: Plan[];
  test: Plan[];
}

let vocabCache: string[] | undefined;
function vocabulary(): string[] {
  return (vocabCache ??= Object.keys(
    (
      JSON.parse(readFileSync(new URL('../../models/dtdr-glove-100d/tokenizer.json', import.meta.url), 'utf8')) as {
        model: { vocab: Record<string, number> };
      }
    ).model.vocab,
  )
    .slice(150, 12150)
    .filter((w) => /^[a-z]{3,}$/.test(w)));
}

/** A Zipf(s) sampler over 0 .. n-1 (index 0 the most popular). */
function zipf(n: number, s: number, random: () => number): () => number {
  const cdf = new Float64Array(n);
  let acc = 0;
  for (let i = 0; i < n; i++) cdf[i] = acc += 1 / (i + 1) ** s;
  for (let i = 0; i < n; i++) cdf[i] /= acc;
  return cdfSampler(cdf, random);
}

export function appWorld(options: AppWorldOptions = {}): AppWorld {
  const { tools = 16000, templates = 2000, train = 20000, test = 2000, seed = 0 } = options;
  const random = seededRandom(seed + 25);
  const vocab = vocabulary();
  const word = zipf(vocab.length, 0.9, random);
  // Tool popularity: Zipf over a seeded permutation, so popular tools are not simply the first names.
  const order = Array.from({ length: tools }, (_, i) => i);
  for (let i = tools - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [order[i], order[j]] = [order[j], order[i]];
  }
  const popular = zipf(tools, 1.0, random);
  const tool = () => order[popular()];
  const specs: ToolSpec[] = Array.from({ length: tools }, (_, i) => ({
    name: `tool_${i}`,
    description: Array.from({ length: 6 + Math.floor(random() * 5) }, () => vocab[word()]).join(' '),
  }));
  const words = specs.map((t) => t.description.split(' '));
  const flows = Array.from({ length: templates }, () => {
    const length = 1 + Math.floor(random() * 5);
    const calls: number[] = [];
    while (calls.length < length) {
      const t = tool();
      if (!calls.includes(t)) calls.push(t);
    }
    return calls;
  });
  const plan = (id: string) => {
    const calls = flows[Math.floor(random() * templates)];
    // The request: 2–4 words sampled from each called tool's description, in call order.
    const query = calls
      .map((c) =>
        Array.from(
          { length: 2 + Math.floor(random() * 3) },
          () => words[c][Math.floor(random() * words[c].length)],
        ).join(' '),
      )
      .join(' then ');
    return chainPlan(
      id,
      query,
      calls.map((c) => specs[c].name),
    );
  };
  return {
    name: `app-world-${tools}t-${templates}w`,
    tools: specs,
    train: Array.from({ length: train }, (_, p) => plan(`train-${p}`)),
    test: Array.from({ length: test }, (_, p) => plan(`test-${p}`)),
  };
}

/** The world as a Dataset (train plans then test plans; `testIds` marks the test plans). */
export function appWorldDataset(options: AppWorldOptions = {}): Dataset {
  const w = appWorld(options);
  return { name: w.name, tools: w.tools, plans: [...w.train, ...w.test], testIds: w.test.map((p) => p.id) };
}

/** Writes one dataset folder (TaskBench layout: data.jsonl + tool_desc.json). */
export function writeDatasetFolder(dir: string, tools: ToolSpec[], plans: Plan[]): void {
  mkdirSync(dir, { recursive: true });
  writeFileSync(
    join(dir, 'tool_desc.json'),
    JSON.stringify({ nodes: tools.map((t) => ({ id: t.name, desc: t.description })) }),
  );
  const lines = plans.map((p) =>
    JSON.stringify({
      id: p.id,
      user_request: p.query,
      task_nodes: p.nodes.map((n) => ({ task: n.tool })),
      task_links: p.edges.map(([a, b]) => ({ source: p.nodes[a].tool, target: p.nodes[b].tool })),
    }),
  );
  writeFileSync(join(dir, 'data.jsonl'), `${lines.join('\n')}\n`);
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const [out, tools, templates, train, test, seed] = process.argv.slice(2);
  if (!out) {
    console.error(
      'usage: node --import tsx test/worlds/app-world.ts OUT_DIR [tools] [templates] [train] [test] [seed]',
    );
    process.exit(2);
  }
  const n = (s: string | undefined) => (s === undefined ? undefined : Number(s));
  const w = appWorld({ tools: n(tools), templates: n(templates), train: n(train), test: n(test), seed: n(seed) });
  writeDatasetFolder(join(out, 'train'), w.tools, w.train);
  writeDatasetFolder(join(out, 'test'), w.tools, w.test);
  console.log(
    `${w.name}: ${w.tools.length} tools, ${w.train.length} train plans → ${join(out, 'train')}, ${w.test.length} test plans → ${join(out, 'test')}`,
  );
}

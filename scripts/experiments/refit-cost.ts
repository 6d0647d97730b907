/**
 * What a refit costs an app, and where: a tools-only model that has learned N runs refits on them
 * (learn's refit past REFIT_UP_TO, or any refit). For each N, on the calling thread (`refitInline`)
 * and on `refitWorker()`: the refit's wall time (from the learn call that starts it to `settle()`)
 * and the longest the calling thread's event loop stood still meanwhile (a 2 ms timer's largest
 * gap: what a UI or server would feel). The demo world's generated runs (27 tools) and UltraTool's
 * training plans (260 tools).
 *
 *   npm run experiment -- refit-cost [--sizes 1000,2000,4000,8000] [--data ../shared/data] [--json out.json]
 *                                    [--results docs/results.json]   (its table, rendered by scripts/check/docs-results.ts)
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { Dtdr } from '../../src/core/dtdr.js';
import { refitInline } from '../../src/core/model/refit-inline.js';
import type { Refitter } from '../../src/core/model/refit.js';
import type { Plan, ToolSpec } from '../../src/core/base/types.js';
import { DEMO_TOOLS, generateDemoPlans } from '../../src/demo/toolset.js';
import { loadEncoder } from '../../src/encoders/node.js';
import { refitWorker } from '../../src/workers/node.js';
import { loadWorld } from '../../test/worlds/app-life.js';
import '../../src/methods.js'; // every method, as the Node entry registers them

const { values } = parseArgs({
  options: {
    sizes: { type: 'string', default: '1000,2000,4000,8000' },
    data: { type: 'string', default: '../shared/data' },
    json: { type: 'string' },
    results: { type: 'string' },
  },
});
const encoder = await loadEncoder();
const sizes = values.sizes.split(',').map(Number);

/** Runs `work` while a 2 ms timer measures the event loop's longest stall; returns [wall ms, stall ms]. */
async function timed(work: () => Promise<void>): Promise<[number, number]> {
  let last = performance.now();
  let stall = 0;
  const timer = setInterval(() => {
    const now = performance.now();
    stall = Math.max(stall, now - last);
    last = now;
  }, 2);
  const t0 = performance.now();
  await work();
  const wall = performance.now() - t0;
  clearInterval(timer);
  return [wall, Math.max(stall, performance.now() - last)];
}

/**
 * A model that has learned `plans` minus the last third, then learns the rest: that learn starts
 * a refit on all. Returns [the learn call's ms, the refit's wall ms, the longest stall ms while waiting for it].
 */
async function refitCost(tools: ToolSpec[], plans: Plan[], refitter: Refitter): Promise<[number, number, number]> {
  const model = await Dtdr.train({ tools, encoder, refitter });
  const first = Math.floor(plans.length / 1.5);
  await model.learn(plans.slice(0, first));
  await model.settle();
  const t0 = performance.now();
  const learning = model.learn(plans.slice(first));
  const [, stall] = await timed(async () => {
    await learning;
    const learned = performance.now();
    await model.settle();
    learnMs = learned - t0;
  });
  return [learnMs, performance.now() - t0, stall];
}
let learnMs = 0;

const worlds: [string, ToolSpec[], Plan[]][] = [['demo', DEMO_TOOLS, generateDemoPlans(Math.max(...sizes), 3)]];
const ultratool = loadWorld('ultratool', values.data);
if (ultratool) worlds.push(['ultratool', ultratool.tools, ultratool.pool]);
else console.log(`ultratool: skipped (its data is not under ${values.data})`);

const worker = refitWorker();
interface Row {
  world: string;
  tools: number;
  n: number;
  inlineLearn: number;
  inlineWall: number;
  inlineStall: number;
  workerLearn: number;
  workerWall: number;
  workerStall: number;
}
const rows: Row[] = [];
console.log(
  'world         N | calling thread: learn call, refit wall, longest stall | refitWorker(): learn call, refit wall, longest stall',
);
for (const [name, tools, pool] of worlds) {
  for (const n of sizes) {
    if (n > pool.length) continue;
    const plans = pool.slice(0, n);
    const [inlineLearn, inlineWall, inlineStall] = await refitCost(tools, plans, refitInline());
    const [workerLearn, workerWall, workerStall] = await refitCost(tools, plans, worker);
    rows.push({
      world: name,
      tools: tools.length,
      n,
      inlineLearn,
      inlineWall,
      inlineStall,
      workerLearn,
      workerWall,
      workerStall,
    });
    const ms = (v: number) => `${v.toFixed(0)} ms`.padStart(8);
    console.log(
      `${name.padEnd(9)} ${String(n).padStart(5)} | ${ms(inlineLearn)} ${ms(inlineWall)} ${ms(inlineStall)} | ${ms(workerLearn)} ${ms(workerWall)} ${ms(workerStall)}`,
    );
  }
}
await worker.close();
if (values.json) writeFileSync(values.json, JSON.stringify(rows, null, 1));
if (values.results) {
  const results = JSON.parse(readFileSync(values.results, 'utf8')) as { tables: Record<string, unknown> };
  const ms = (v: number) => `${Math.round(v)} ms`;
  results.tables['refit-cost'] = {
    title:
      'A refit on N learned runs: the learn call that starts it (it folds a third of the runs in), the refit until settle(), and the longest stall of the calling thread meanwhile',
    command: 'npm run experiment -- refit-cost',
    date: new Date().toISOString().slice(0, 10),
    columns: [
      'world',
      'N',
      'calling thread: learn call',
      'refit',
      'longest stall',
      'refitWorker(): learn call',
      'refit',
      'longest stall',
    ],
    align: ['left', 'right', 'right', 'right', 'right', 'right', 'right', 'right'],
    rows: rows.map((r) => [
      `${r.world} (${r.tools} tools)`,
      String(r.n),
      ms(r.inlineLearn),
      ms(r.inlineWall),
      ms(r.inlineStall),
      ms(r.workerLearn),
      ms(r.workerWall),
      ms(r.workerStall),
    ]),
  };
  // The README's two figures: what learn waits for at 1,000 runs on the calling thread, and the worker's worst stall.
  const figures = (results as unknown as { figures: Record<string, unknown> }).figures;
  const date = new Date().toISOString().slice(0, 10);
  const at1000 = rows.find((r) => r.world === 'ultratool' && r.n === 1000) ?? rows.find((r) => r.n === 1000);
  if (at1000)
    figures['refit-wait'] = {
      value: `${(at1000.inlineWall / 1000).toFixed(1)} s`,
      command: 'npm run experiment -- refit-cost',
      date,
      what: `a refit on 1,000 learned runs of ${at1000.world} on the calling thread, which learn waits for`,
    };
  figures['refit-worker-stall'] = {
    value: `${Math.round(Math.max(...rows.map((r) => r.workerStall)))} ms`,
    command: 'npm run experiment -- refit-cost',
    date,
    what: "the calling thread's longest stall during any refit on refitWorker() (the learn call folding a third of the runs in included)",
  };
  writeFileSync(values.results, `${JSON.stringify(results, null, 1)}\n`);
}

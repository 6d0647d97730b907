/**
 * Calibration priors from public tool worlds, measured: for each calibration group of the default
 * method, the held-out conformal scores (probability of the best acceptable label) of models fitted
 * on few demonstrations. It prints, per world and group, how often that probability is below 0.1
 * and 0.5; `--out FILE` also writes 100 quantiles per group. These figures are why no priors ship:
 * at 10–200 demonstrations a step the model rates ≥ 0.5 after demonstrated calls has the needed
 * tool below 0.1 in 16% (demo world) to 30% (UltraTool) of held-out steps, so borrowed thresholds
 * would make such steps confident exactly where they are most often wrong (docs/decisions/).
 *
 * Worlds: UltraTool's training plans (its official test plans and the 500 plans `eval:app-life`
 * tests on are left out) and the generated demo plans (the compositional requests stay out).
 * RestBench-TMDB and Seal-Tools are never read: they stay held out for testing.
 * Per world: N = 10, 20, 30, 50, 100, 200 demonstrations, drawn at random (3 seeds) and skewed
 * (the pool's 3 most frequent first tools), each scored on 300 other plans of the world.
 *
 *   npm run experiment -- priors [--out FILE]
 */
import { writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { Dtdr } from '../../src/core/dtdr.js';
import { planSteps } from '../../src/core/plans/plan.js';
import { seededRandom, shuffleInPlace } from '../../src/core/base/random.js';
import type { Plan, ToolSpec } from '../../src/core/base/types.js';
import { demoDataset } from '../../src/demo/toolset.js';
import { readDatasetDir } from '../../src/data/node.js';
import { loadEncoder } from '../../src/encoders/node.js';
import { skewedPool } from '../../test/worlds/app-life.js';
import '../../src/methods.js'; // every method, as the Node entry registers them

const SIZES = [10, 20, 30, 50, 100, 200];
const SEEDS = 3;
const HELD_OUT = 300;
/** Quantiles kept per group. */
const QUANTILES = 100;

interface PriorWorld {
  name: string;
  tools: ToolSpec[];
  pool: Plan[];
}

function worlds(dataDir: string): PriorWorld[] {
  const demo = demoDataset();
  const ut = readDatasetDir(`${dataDir}/ultratool`);
  const official = new Set(ut.testIds ?? []);
  // The same shuffle as eval:app-life: its first 500 are that script's test plans.
  const train = shuffleInPlace(
    ut.plans.filter((p) => !official.has(p.id)),
    seededRandom(7919),
  ).slice(500);
  return [
    { name: 'demo', tools: demo.tools, pool: demo.plans },
    { name: 'ultratool', tools: ut.tools, pool: train },
  ];
}

async function collect(
  world: PriorWorld,
  encoder: Awaited<ReturnType<typeof loadEncoder>>,
): Promise<Record<string, number[]>> {
  const scores: Record<string, number[]> = {};
  const skewed = skewedPool(world.pool);
  const draws: Plan[][] = [];
  for (const n of SIZES) {
    for (let seed = 0; seed < SEEDS; seed++)
      draws.push(shuffleInPlace([...world.pool], seededRandom(5000 + seed * 97 + n)).slice(0, n));
    draws.push(skewed.slice(0, n));
  }
  for (const [d, plans] of draws.entries()) {
    const model = await Dtdr.train({ tools: world.tools, plans, encoder });
    const used = new Set(plans.map((p) => p.id));
    const held = shuffleInPlace(
      world.pool.filter((p) => !used.has(p.id)),
      seededRandom(9000 + d),
    ).slice(0, HELD_OUT);
    for (const plan of held) {
      for (const step of planSteps(plan)) {
        const r = await model.rank(step.query, step.history);
        if (!r.group || r.group === 'tools-only') continue;
        let best = 0;
        for (const t of step.acceptable) best = Math.max(best, r.probabilities[r.labels.indexOf(t)]);
        (scores[r.group] ??= []).push(best);
      }
    }
  }
  return scores;
}

function quantiles(list: number[], k: number): number[] {
  const sorted = [...list].sort((a, b) => a - b);
  return Array.from(
    { length: k },
    (_, i) => +sorted[Math.min(sorted.length - 1, Math.floor(((i + 0.5) / k) * sorted.length))].toFixed(4),
  );
}

async function main() {
  const { values } = parseArgs({
    options: { data: { type: 'string', default: '../shared/data' }, out: { type: 'string' } },
  });
  const encoder = await loadEncoder();
  const merged: Record<string, number[]> = {};
  for (const world of worlds(values.data)) {
    const scores = await collect(world, encoder);
    for (const [g, list] of Object.entries(scores)) {
      (merged[g] ??= []).push(...list);
      const miss = (t: number) => list.filter((s) => s < t).length / list.length;
      console.log(
        `${world.name.padEnd(9)} ${g.padEnd(15)} ${String(list.length).padStart(6)} steps; share with the best acceptable label < 0.1: ${miss(0.1).toFixed(3)}, < 0.5: ${miss(0.5).toFixed(3)}`,
      );
    }
  }
  const groups = Object.fromEntries(
    Object.entries(merged)
      .sort(([a], [b]) => a.localeCompare(b))
      .filter(([, list]) => list.length >= QUANTILES)
      .map(([g, list]) => [g, quantiles(list, QUANTILES)]),
  );
  if (!values.out) return;
  const text = JSON.stringify(groups);
  writeFileSync(values.out, text);
  console.log(`wrote ${values.out} (${text.length} bytes, ${Object.keys(groups).length} groups)`);
}

await main();

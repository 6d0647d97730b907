/**
 * The worlds of the first-day evaluation (scripts/experiments/app-life.ts and test/first-day.test.ts):
 * a world's tools, the pool its demonstrations are drawn from and its test plans, none of which is
 * ever trained on; and the skewed draw (only the few features people try first).
 */
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parsePlans } from '../../src/core/plans/dataset.js';
import { planSteps } from '../../src/core/plans/plan.js';
import { seededRandom, shuffleInPlace } from '../../src/core/base/random.js';
import type { Plan, ToolSpec } from '../../src/core/base/types.js';
import { scoreStep, type StepScore } from '../../src/core/base/metrics.js';
import type { Dtdr } from '../../src/core/dtdr.js';
import { readDatasetDir } from '../../src/data/node.js';
import { assignNearest, sphericalKMeans } from '../../src/core/retrieval/kmeans.js';
import { packRows } from '../../src/core/retrieval/kernels/rows.js';
import type { Encoder } from '../../src/core/base/encoder.js';
import { demoDataset } from '../../src/demo/toolset.js';

export interface World {
  name: string;
  tools: ToolSpec[];
  pool: Plan[];
  test: Plan[];
}

export function seededSplit(plans: Plan[], ratio: number, seed: number): { pool: Plan[]; test: Plan[] } {
  const shuffled = shuffleInPlace([...plans], seededRandom(seed + 7919));
  const n = Math.round(plans.length * ratio);
  return { test: shuffled.slice(0, n), pool: shuffled.slice(n) };
}

/** The worlds built into the repository by scripts/build/worlds.ts (data/worlds/<name>, each with SOURCE.md). */
export const REPO_WORLDS = ['metatool', 'nestful', 'api-bank', 'tau-retail'] as const;
/** Every world of the first-day evaluation, in its default order. */
export const ALL_WORLDS = ['demo', 'restbench', 'ultratool', 'seal', ...REPO_WORLDS] as const;

/** data/worlds/ of this repository. */
export const WORLDS_DIR = fileURLToPath(new URL('../../data/worlds/', import.meta.url));

export function loadWorld(name: string, dataDir: string, worldsDir = WORLDS_DIR): World | undefined {
  if ((REPO_WORLDS as readonly string[]).includes(name)) {
    const ds = readDatasetDir(`${worldsDir}/${name}`);
    return { name, tools: ds.tools, ...seededSplit(ds.plans, 0.3, 0) };
  }
  if (name === 'demo') {
    const demo = demoDataset();
    const test = parsePlans(readFileSync(new URL('../fixtures/demo-compositional.jsonl', import.meta.url), 'utf8'));
    return { name, tools: demo.tools, pool: demo.plans, test };
  }
  const folder = { restbench: 'restbench-tmdb', ultratool: 'ultratool', seal: 'seal-tools' }[name];
  if (!folder) throw new Error(`unknown world "${name}"`);
  const dir = `${dataDir}/${folder}`;
  if (!existsSync(dir)) {
    console.log(`${name}: ${dir} is absent, skipped`);
    return undefined;
  }
  const ds = readDatasetDir(dir);
  if (name === 'ultratool') {
    // The official test plans stay out; 500 training plans are the test here.
    const official = new Set(ds.testIds ?? []);
    const train = ds.plans.filter((p) => !official.has(p.id));
    const shuffled = shuffleInPlace([...train], seededRandom(7919));
    return { name, tools: ds.tools, test: shuffled.slice(0, 500), pool: shuffled.slice(500) };
  }
  return { name, tools: ds.tools, ...seededSplit(ds.plans, 0.3, 0) };
}

/** The worlds of a comma-separated list, each loaded; an unknown or absent one is refused by name. */
export function worldsNamed(list: string, dataDir: string, refuse: (message: string) => never): World[] {
  return list.split(',').map((name) => {
    if (!(ALL_WORLDS as readonly string[]).includes(name)) refuse(`unknown world "${name}" (${ALL_WORLDS.join(', ')})`);
    return loadWorld(name, dataDir) ?? refuse(`world "${name}" not found (data: ${dataDir})`);
  });
}

/** The pool's plans whose first tool is one of its `k` most frequent first tools, in pool order. */
export function skewedPool(pool: Plan[], k = 3): Plan[] {
  const counts = new Map<string, number>();
  for (const p of pool) {
    const first = planSteps(p)[0]?.acceptable[0];
    if (first) counts.set(first, (counts.get(first) ?? 0) + 1);
  }
  const top = new Set(
    [...counts]
      .sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))
      .slice(0, k)
      .map(([t]) => t),
  );
  return pool.filter((p) => top.has(planSteps(p)[0]?.acceptable[0] ?? ''));
}

/**
 * Clusters for the scenes draw of a pool of `n` plans: one per about 20 requests, at least 10. With
 * a fixed 10, three clusters of a large pool span as many tools as a random draw (MetaTool's 1,398
 * pool plans: 151 distinct first tools in 3 of 10 clusters), which is no skew.
 */
export const defaultSceneClusters = (n: number): number => Math.max(10, Math.round(n / 20));

/**
 * The "scenes" draw: an app's first users try a few features. The pool's requests are embedded and
 * clustered (spherical k-means with a fixed seed) into `clusters` clusters, by default one per
 * about 20 requests and at least 10 (`defaultSceneClusters`); the plans of `scenes` clusters,
 * chosen with the same seed among those holding at least two plans, come first in pool order, then
 * the rest of the pool in pool order (so the first N demonstrations are from a few scenes as long
 * as N stays within them). `inScene` tells whether a request's vector lies in a drawn scene (its
 * nearest centroid is a drawn cluster's).
 */
export async function scenesPool(
  pool: readonly Plan[],
  encoder: Pick<Encoder, 'embed' | 'dimension'>,
  options: { clusters?: number; scenes?: number; seed?: number } = {},
): Promise<{ plans: Plan[]; sceneCount: number; clusters: number; inScene: (vector: ArrayLike<number>) => boolean }> {
  const { clusters = defaultSceneClusters(pool.length), scenes = 3, seed = 0 } = options;
  if (pool.length === 0) return { plans: [], sceneCount: 0, clusters, inScene: () => false };
  const vectors = await encoder.embed(pool.map((p) => p.query));
  const dim = encoder.dimension;
  // Unit rows: sphericalKMeans assigns by dot product.
  const unit = vectors.map((v) => {
    const norm = Math.hypot(...v) || 1;
    return v.map((x) => x / norm);
  });
  const { assignment, k, centroids } = sphericalKMeans(packRows(unit, dim), pool.length, dim, clusters, { seed });
  const sizes = new Array<number>(k).fill(0);
  for (const a of assignment) sizes[a]++;
  const eligible = sizes.map((n, c) => (n >= 2 ? c : -1)).filter((c) => c >= 0);
  const candidates = eligible.length >= scenes ? eligible : sizes.map((_, c) => c).filter((c) => sizes[c] > 0);
  const chosen = new Set(shuffleInPlace([...candidates], seededRandom(seed + 4049)).slice(0, scenes));
  const first = pool.filter((_, i) => chosen.has(assignment[i]));
  const rest = pool.filter((_, i) => !chosen.has(assignment[i]));
  // A request is in a drawn scene when the centroid nearest it (by cosine) is a drawn cluster's.
  const inScene = (vector: ArrayLike<number>) =>
    chosen.has(assignNearest(Float32Array.from(vector), 1, dim, centroids, k)[0]);
  return { plans: [...first, ...rest], sceneCount: first.length, clusters: k, inScene };
}

/**
 * Every step of `test` as an app meets it: `retrieve` with the calls so far, scored on its candidate
 * set (covered, size, widened) and its ranking (MRR), with the top label's claimed probability.
 * `onStep` sees each retrieval beside its score (what else a caller reads of it: the set's claim, say).
 */
export async function scoreRetrievals(
  model: Dtdr,
  test: readonly Plan[],
  onStep?: (r: Awaited<ReturnType<Dtdr['retrieve']>>, score: StepScore) => void,
): Promise<StepScore[]> {
  const scores: StepScore[] = [];
  for (const plan of test) {
    for (const step of planSteps(plan)) {
      const r = await model.retrieve(step.query, step.history);
      const { order, labels, probabilities } = r.ranking;
      const tools = r.candidates.map((c) => c.tool);
      const score = scoreStep(order, labels, step.acceptable, tools, {
        confidence: probabilities[order[0]],
        widened: r.widened,
      });
      scores.push(score);
      onStep?.(r, score);
    }
  }
  return scores;
}

/**
 * The three first-day draws of a world's pool, each in the order its first N are taken: at random (a fixed
 * shuffle), first-tool skewed (skewedPool) and by scenes (scenesPool).
 */
export async function firstDayDraws(
  pool: readonly Plan[],
  encoder: Pick<Encoder, 'embed' | 'dimension'>,
): Promise<Record<'random' | 'skewed' | 'scenes', Plan[]>> {
  return {
    random: shuffleInPlace([...pool], seededRandom(1000)),
    skewed: skewedPool([...pool]),
    scenes: (await scenesPool(pool, encoder)).plans,
  };
}

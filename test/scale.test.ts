/**
 * Training at app scale: the seeded app-scale world and its dataset folders, k-means'
 * float32 screening (the same clusters as scoring every pair exactly), the sampled-softmax head,
 * and evaluation's scoring from a ranking's head (the same metrics as from the full order).
 * Small sizes only; no timing assertions.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { appWorld, writeDatasetFolder } from './worlds/app-world.js';
import { seededRandom } from '../src/core/base/random.js';
import { scoreStep } from '../src/core/base/metrics.js';
import { planSteps, sequenceKey } from '../src/core/plans/plan.js';
import { assignNearest, drawProportional, sphericalKMeans } from '../src/core/retrieval/kmeans.js';
import { dotAt } from '../src/core/retrieval/kernels/rows.js';
import { trainSampledHead } from '../src/core/retrieval/linear-head-sampled.js';
import { makeRanking } from '../src/core/retrieval/ranking.js';
import { readDatasetDir } from '../src/data/node.js';

describe('app-scale world', () => {
  const options = { tools: 300, templates: 40, train: 400, test: 50, seed: 3 };
  it('is seeded and has the app world shape: chains of 1–5 calls from the templates, requests from the tools descriptions', () => {
    const a = appWorld(options);
    const b = appWorld(options);
    expect(JSON.stringify(a)).toBe(JSON.stringify(b));
    expect(JSON.stringify(appWorld({ ...options, seed: 4 }))).not.toBe(JSON.stringify(a));
    expect(a.tools).toHaveLength(300);
    expect(a.train).toHaveLength(400);
    expect(a.test).toHaveLength(50);
    const sequences = new Set([...a.train, ...a.test].map(sequenceKey));
    expect(sequences.size).toBeLessThanOrEqual(40);
    const described = new Map(a.tools.map((t) => [t.name, new Set(t.description.split(' '))]));
    for (const plan of [...a.train, ...a.test]) {
      expect(plan.nodes.length).toBeGreaterThanOrEqual(1);
      expect(plan.nodes.length).toBeLessThanOrEqual(5);
      const words = new Set(plan.nodes.flatMap((n) => [...described.get(n.tool)!]));
      for (const w of plan.query.split(' ')) if (w !== 'then') expect(words.has(w)).toBe(true);
    }
  });

  it('writes dataset folders that read back as the same plans', () => {
    const w = appWorld(options);
    const dir = mkdtempSync(join(tmpdir(), 'dtdr-app-world-'));
    try {
      writeDatasetFolder(dir, w.tools, w.test);
      const back = readDatasetDir(dir);
      expect(back.tools.map((t) => [t.name, t.description])).toEqual(w.tools.map((t) => [t.name, t.description]));
      expect(back.plans.map((p) => [p.query, planSteps(p).map((s) => s.acceptable)])).toEqual(
        w.test.map((p) => [p.query, planSteps(p).map((s) => s.acceptable)]),
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

/** Spherical k-means scoring every point–cluster pair exactly (the code before the float32 screen). */
function referenceKMeans(data: Float32Array, n: number, dim: number, k: number, seed: number, maxIterations: number) {
  const random = seededRandom(seed + 17);
  const centroids = new Float32Array(k * dim);
  const assignment = new Uint32Array(n);
  const nearest = new Float64Array(n).fill(Infinity);
  let pick = Math.floor(random() * n);
  for (let c = 0; c < k; c++) {
    centroids.set(data.subarray(pick * dim, pick * dim + dim), c * dim);
    let total = 0;
    for (let i = 0; i < n; i++) {
      let d = 0;
      for (let j = 0; j < dim; j++) d += (data[i * dim + j] - centroids[c * dim + j]) ** 2;
      if (d < nearest[i]) nearest[i] = d;
      total += nearest[i];
    }
    if (total === 0) {
      pick = Math.floor(random() * n);
      continue;
    }
    pick = drawProportional(nearest, total, random);
  }
  const sums = new Float64Array(k * dim);
  for (let iteration = 0; iteration < maxIterations; iteration++) {
    let changed = 0;
    for (let i = 0; i < n; i++) {
      let best = 0;
      let bestDot = -Infinity;
      for (let c = 0; c < k; c++) {
        const dot = dotAt(centroids, c * dim, data, i * dim, dim);
        if (dot > bestDot) [bestDot, best] = [dot, c];
      }
      if (iteration === 0 || best !== assignment[i]) changed++;
      assignment[i] = best;
    }
    if (changed === 0 && iteration > 0) break;
    sums.fill(0);
    for (let i = 0; i < n; i++) for (let j = 0; j < dim; j++) sums[assignment[i] * dim + j] += data[i * dim + j];
    for (let c = 0; c < k; c++) {
      let norm = 0;
      for (let j = 0; j < dim; j++) norm += sums[c * dim + j] ** 2;
      norm = Math.sqrt(norm);
      if (norm === 0) continue;
      for (let j = 0; j < dim; j++) centroids[c * dim + j] = sums[c * dim + j] / norm;
    }
  }
  return { centroids, assignment };
}

describe('k-means float32 screening', () => {
  it('gives the same clusters as scoring every pair exactly', () => {
    for (const [n, dim, k, seed] of [
      [2500, 24, 100, 1],
      [1200, 100, 200, 2],
    ]) {
      const random = seededRandom(seed);
      const data = new Float32Array(n * dim);
      for (let i = 0; i < n; i++) {
        let norm = 0;
        for (let j = 0; j < dim; j++) norm += (data[i * dim + j] = random() - 0.5 + (i % 5 === j % 5 ? 0.4 : 0)) ** 2;
        for (let j = 0; j < dim; j++) data[i * dim + j] /= Math.sqrt(norm);
      }
      expect(n * k).toBeGreaterThanOrEqual(200_000); // the screened path
      const got = sphericalKMeans(data, n, dim, k, { seed, maxIterations: 8 });
      const want = referenceKMeans(data, n, dim, k, seed, 8);
      expect(Array.from(got.assignment)).toEqual(Array.from(want.assignment));
      expect(Array.from(got.centroids)).toEqual(Array.from(want.centroids));
    }
  });

  it('assigns every point to its nearest centroid (DTDR-G beyond 30,000 requests: centroids fitted on a sample)', () => {
    const [n, dim, k] = [3000, 24, 100];
    const random = seededRandom(4);
    const data = new Float32Array(n * dim);
    for (let i = 0; i < n; i++) {
      let norm = 0;
      for (let j = 0; j < dim; j++) norm += (data[i * dim + j] = random() - 0.5 + (i % 5 === j % 5 ? 0.4 : 0)) ** 2;
      for (let j = 0; j < dim; j++) data[i * dim + j] /= Math.sqrt(norm);
    }
    // Centroids from the first 1,000 points; every point assigned, through the screened path and not.
    const { centroids } = sphericalKMeans(data.subarray(0, 1000 * dim), 1000, dim, k, { seed: 4, maxIterations: 4 });
    const exact = (m: number) =>
      Array.from({ length: m }, (_, i) => {
        let [best, bestDot] = [0, -Infinity];
        for (let c = 0; c < k; c++) {
          const dot = dotAt(centroids, c * dim, data, i * dim, dim);
          if (dot > bestDot) [bestDot, best] = [dot, c];
        }
        return best;
      });
    expect(n * k).toBeGreaterThanOrEqual(200_000);
    expect(Array.from(assignNearest(data, n, dim, centroids, k))).toEqual(exact(n));
    expect(50 * k).toBeLessThan(200_000);
    expect(Array.from(assignNearest(data, 50, dim, centroids, k))).toEqual(exact(50));
  });
});

describe('sampled-softmax head', () => {
  it('learns a separable task, deterministically', () => {
    const random = seededRandom(5);
    const C = 400;
    const dim = 8;
    const centres = Array.from({ length: C }, () => Float32Array.from({ length: dim }, () => random() - 0.5));
    const dense: Float32Array[] = [];
    const targets: number[][] = [];
    const sparse: Uint32Array[] = [];
    for (let i = 0; i < 3000; i++) {
      const c = Math.floor(random() * 40); // 40 labels used, 400 in all
      dense.push(Float32Array.from(centres[c], (v) => v + (random() - 0.5) * 0.05));
      targets.push([c]);
      sparse.push(Uint32Array.of(c % 3));
    }
    const data = { dense, sparse, targets, sparseSize: 3, classes: C };
    const train = () => {
      const g = trainSampledHead(data, { epochs: 4, seed: 1 }, 16);
      let next = g.next();
      const losses: number[] = [];
      while (!next.done) {
        losses.push(next.value.loss);
        next = g.next();
      }
      return { head: next.value, losses };
    };
    const { head, losses } = train();
    expect(losses.at(-1)!).toBeLessThan(losses[0]);
    let right = 0;
    const out = new Float64Array(C);
    for (let i = 0; i < 300; i++) {
      head.logits(dense[i], sparse[i], out);
      let best = 0;
      for (let c = 1; c < C; c++) if (out[c] > out[best]) best = c;
      if (best === targets[i][0]) right++;
    }
    expect(right).toBeGreaterThan(270);
    expect(Array.from(train().head.weights)).toEqual(Array.from(head.weights));
    // The products' JS twin (engines without WebAssembly) trains the same head, bit for bit.
    const twin = trainSampledHead(data, { epochs: 4, seed: 1 }, 16, true);
    let step = twin.next();
    while (!step.done) step = twin.next();
    expect(Array.from(step.value.weights)).toEqual(Array.from(head.weights));
    expect(Array.from(step.value.sparseWeights)).toEqual(Array.from(head.sparseWeights));
  });
});

describe('scoring from a ranking head', () => {
  it('gives the same step scores as the full order', () => {
    const random = seededRandom(9);
    const labels = Array.from({ length: 500 }, (_, i) => `t${i}`);
    for (let trial = 0; trial < 50; trial++) {
      const p = new Float64Array(500).map(() => (random() < 0.3 ? 0.001 : random()));
      const ranking = makeRanking(labels, p);
      const acceptable = [labels[Math.floor(random() * 500)], labels[Math.floor(random() * 500)]];
      const prefix = ranking.top!(64);
      const full = ranking.order;
      const hit = Array.from(prefix).some((l) => acceptable.includes(labels[l]));
      if (hit) expect(scoreStep(prefix, labels, acceptable, [])).toEqual(scoreStep(full, labels, acceptable, []));
    }
  });
});

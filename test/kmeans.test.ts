import { describe, expect, it } from 'vitest';
import { euclideanKMeans, kmeansPlusPlus } from '../src/core/retrieval/kmeans.js';
import { seededRandom } from '../src/core/base/random.js';

// Two tight groups on a line, far apart: {0, 1, 2} and {10, 11, 12} (one dimension).
const points = Float32Array.of(0, 1, 2, 10, 11, 12);

describe("DTDR-C's Euclidean k-means", () => {
  it('finds the two groups and puts each centroid at its group mean (1 and 11)', () => {
    const { assignment, centroids, k } = euclideanKMeans(points, 6, 1, 2, { seed: 3 });
    expect(k).toBe(2);
    const first = assignment[0];
    expect(Array.from(assignment)).toEqual([first, first, first, 1 - first, 1 - first, 1 - first]);
    expect(centroids[first]).toBe(1);
    expect(centroids[1 - first]).toBe(11);
  });

  it('asks for more clusters than points: one per point', () => {
    const { k, centroids } = euclideanKMeans(Float32Array.of(5, 7), 2, 1, 4);
    expect(k).toBe(2);
    expect(Array.from(centroids).sort()).toEqual([5, 7]);
  });

  it('seeds k-means++ from the data, and repeats a point when fewer distinct points than clusters', () => {
    const seeds = kmeansPlusPlus(Float32Array.of(4, 4, 4), 3, 1, 2, seededRandom(1));
    expect(Array.from(seeds)).toEqual([4, 4]);
  });

  it('is deterministic for a seed', () => {
    const a = euclideanKMeans(points, 6, 1, 3, { seed: 9 });
    const b = euclideanKMeans(points, 6, 1, 3, { seed: 9 });
    expect(Array.from(a.assignment)).toEqual(Array.from(b.assignment));
  });
});

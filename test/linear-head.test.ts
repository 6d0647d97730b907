/**
 * The linear head's one-hot rows as CSR (`sparseSupport: 'targets'`): a history row holds weights
 * only for the labels its demonstrations used, ranks exactly like the same weights in a full
 * matrix, saves and loads, grows when learning online, and its per-step normaliser (kept base sum
 * plus corrections at the moved labels) equals the full log-sum-exp.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DtdrError } from '../src/core/base/errors.js';
import { LinearHead, type LinearHeadData } from '../src/core/retrieval/linear-head.js';
import { trainLinearHead } from '../src/core/retrieval/linear-head-training.js';

/** Runs a training generator to its head. */
function train(data: LinearHeadData, options: Parameters<typeof trainLinearHead>[1], init?: LinearHead): LinearHead {
  const generator = trainLinearHead(data, options, init);
  for (;;) {
    const next = generator.next();
    if (next.done) return next.value;
  }
}

// 2-d queries, 5 labels, 3 one-hot rows. Row 0 is active with targets {1} and {2}, row 1 with
// target {3} and a related label 4, row 2 never.
const data: LinearHeadData = {
  dense: [Float32Array.of(1, 0), Float32Array.of(0, 1), Float32Array.of(1, 1), Float32Array.of(0.5, -1)],
  sparse: [Uint32Array.of(0), Uint32Array.of(0), Uint32Array.of(1), Uint32Array.of()],
  targets: [[1], [2], [3], [0]],
  related: [[], [], [4], []],
  sparseSize: 3,
  classes: 5,
};

function logSumExp(v: ArrayLike<number>): number {
  let max = -Infinity;
  for (let i = 0; i < v.length; i++) max = Math.max(max, v[i]);
  let sum = 0;
  for (let i = 0; i < v.length; i++) sum += Math.exp(v[i] - max);
  return max + Math.log(sum);
}

describe('CSR one-hot rows', () => {
  it('hold exactly the labels of the examples where the row is active (targets and related), ascending', () => {
    const head = train(data, { epochs: 2, sparseSupport: 'targets' });
    expect(Array.from(head.support!.start)).toEqual([0, 2, 4, 4]);
    expect(Array.from(head.support!.cols)).toEqual([1, 2, 3, 4]);
    expect(head.sparseWeights.length).toBe(4);
  });

  it("'auto' keeps a full matrix while it is small", () => {
    const head = train(data, { epochs: 1, sparseSupport: 'auto' });
    expect(head.support).toBeUndefined();
    expect(head.sparseWeights.length).toBe(3 * 5);
  });

  it('rank exactly like the same weights in a full matrix (zeros elsewhere)', () => {
    const csr = train(data, { epochs: 3, sparseSupport: 'targets' });
    const full = new Float64Array(3 * 5);
    const { start, cols } = csr.support!;
    for (let r = 0; r < 3; r++)
      for (let j = start[r]; j < start[r + 1]; j++) full[r * 5 + cols[j]] = csr.sparseWeights[j];
    const dense = new LinearHead(csr.dim, csr.classes, csr.sparseSize, csr.mean, csr.std, csr.weights, full);
    for (const [q, rows] of [
      [[1, 0], [0]],
      [
        [0.2, 0.9],
        [0, 1],
      ],
      [[0, 1], []],
      [
        [3, -2],
        [2, 1],
      ],
    ] as [number[], number[]][]) {
      const a = Array.from(csr.logits(q, Uint32Array.from(rows), new Float64Array(5)));
      const b = Array.from(dense.logits(q, Uint32Array.from(rows), new Float64Array(5)));
      expect(a).toEqual(b);
      expect(csr.max).toBe(dense.max);
    }
  });

  it('survive a save and load, and a saved support that is not CSR is refused with the field named', () => {
    const head = train(data, { epochs: 2, sparseSupport: 'targets' });
    const state = JSON.parse(JSON.stringify(head.state()));
    const loaded = LinearHead.fromState(state);
    expect(loaded.state()).toEqual(head.state());
    const q = [0.3, 0.7];
    expect(Array.from(loaded.logits(q, Uint32Array.of(0, 1), new Float64Array(5)))).toEqual(
      Array.from(LinearHead.fromState(state).logits(q, Uint32Array.of(0, 1), new Float64Array(5))),
    );
    const bad = [
      { ...state, support: { ...state.support, cols: [2, 1, 3, 4] } },
      { ...state, support: { ...state.support, start: [0, 2, 4] } },
      { ...state, support: { ...state.support, cols: [1, 2, 3, 9] } },
      { ...state, sparseWeights: [1, 2, 3] },
    ];
    for (const s of bad) {
      let error: unknown;
      try {
        LinearHead.fromState(s);
      } catch (e) {
        error = e;
      }
      expect(error).toBeInstanceOf(DtdrError);
      expect((error as DtdrError).code).toBe('artifact');
      expect((error as DtdrError).field).toMatch(/^state\.head\.(support|sparseWeights)$/);
    }
  });

  it('grow when training continues on examples with new labels, keeping the trained values where they were', () => {
    const head = train(data, { epochs: 2, sparseSupport: 'targets' });
    const more: LinearHeadData = {
      ...data,
      dense: [Float32Array.of(1, 0.5)],
      sparse: [Uint32Array.of(0, 2)],
      targets: [[0]],
      related: [[]],
    };
    // No epoch: the values are carried over untouched, in their new places.
    const grown = train(more, { epochs: 0 }, head);
    expect(Array.from(grown.support!.start)).toEqual([0, 3, 5, 6]);
    expect(Array.from(grown.support!.cols)).toEqual([0, 1, 2, 3, 4, 0]);
    expect(Array.from(grown.sparseWeights)).toEqual([
      0,
      head.sparseWeights[0],
      head.sparseWeights[1],
      head.sparseWeights[2],
      head.sparseWeights[3],
      0,
    ]);
  });
});

describe("the head's normaliser, kept per request and corrected at the moved labels", () => {
  it('equals the full log-sum-exp on every step, whatever came before (300 random heads and step sequences)', () => {
    const small = fc.double({ min: -6, max: 6, noNaN: true });
    fc.assert(
      fc.property(
        fc.array(small, { minLength: 3 * 7, maxLength: 3 * 7 }),
        fc.array(small, { minLength: 9, maxLength: 9 }),
        fc.array(fc.tuple(fc.integer({ min: 0, max: 2 }), fc.subarray([0, 1, 2])), { minLength: 1, maxLength: 8 }),
        (weights, values, steps) => {
          // 2-d input, 7 labels; rows 0–2 hold 4, 3 and 2 labels.
          const support = { start: Uint32Array.of(0, 4, 7, 9), cols: Uint32Array.of(0, 2, 5, 6, 1, 2, 3, 4, 6) };
          const head = new LinearHead(
            2,
            7,
            3,
            Float64Array.of(0, 0),
            Float64Array.of(1, 1),
            Float64Array.from(weights),
            Float64Array.from(values),
            support,
          );
          const queries = [
            [1, 0],
            [0.5, -2],
            [-1, 1],
          ];
          const out = new Float64Array(7);
          for (const [query, rows] of steps) {
            head.logits(queries[query], Uint32Array.from(rows), out);
            const logZ = head.logNormaliser(out, (shift) => {
              let sum = 0;
              for (const v of out) sum += Math.exp(v - shift);
              return sum;
            });
            if (Math.abs(logZ - logSumExp(out)) > 1e-9) return false;
          }
          return true;
        },
      ),
      { numRuns: 300, seed: 5 },
    );
  });
});

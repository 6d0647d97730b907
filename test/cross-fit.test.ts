/**
 * DTDR-G's cross-fitting rounds in parallel: rounds run on worker threads, in-process
 * doubles, or this thread give the same model bit for bit; a worker that fails costs time, not
 * results.
 */
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  CrossFitter,
  foldAssignment,
  type CrossFitSetup,
  type FoldWorkers,
  type RoundOutput,
} from '../src/core/retrieval/default/cross-fit.js';
import { GateDataBuilder } from '../src/core/retrieval/default/gate.js';
import { GatedRetriever } from '../src/core/retrieval/default/index.js';
import { fitRetriever } from '../src/core/retrieval/fit-method.js';
import { installGatedTraining } from '../src/core/retrieval/default/training.js';
import { fitRetrieverWith, fitVectors, PARALLEL_FROM_PLANS } from '../src/core/retrieval/train.js';
import { type FitVectors } from '../src/core/retrieval/methods.js';
import type { Plan, ToolSpec } from '../src/core/base/types.js';
import { demoDataset } from '../src/demo/toolset.js';
import { loadEncoder } from '../src/encoders/node.js';
import { foldWorkers } from '../src/workers/node.js';
import { DtdrError } from '../src/core/base/errors.js';
import { runCli } from './helpers.js';

// GatedRetriever.fit and fitRetriever are synchronous: DTDR-G's training code installed up front.
installGatedTraining();

const fingerprint = (r: GatedRetriever) => createHash('sha256').update(JSON.stringify(r.state())).digest('hex');

/** Runs rounds in this thread as a worker would: the setup through a structured clone, outputs back the same way. */
function inProcessWorkers(options: { drop?: number[]; fail?: boolean } = {}): FoldWorkers & { ran: number[] } {
  const ran: number[] = [];
  return {
    threads: 1,
    ran,
    run(setup: CrossFitSetup, rounds: number) {
      let next = 0;
      const claim = () => next++;
      // The "worker" takes every other round before the caller starts (rounds 0, 2, 4, …).
      const fitter = new CrossFitter(structuredClone(setup));
      const outputs: RoundOutput[] = [];
      for (let round = 0; round < rounds; round += 2) {
        ran.push(round);
        if (!options.drop?.includes(round)) outputs.push(structuredClone(fitter.round(round)));
      }
      const taken = new Set(ran);
      return {
        claim: () => {
          let round = claim();
          while (taken.has(round)) round = claim();
          return round;
        },
        results: options.fail ? Promise.reject(new Error('worker died')) : Promise.resolve(outputs),
      };
    },
    close() {},
  };
}

describe('GateDataBuilder parts', () => {
  it('appending a builder’s parts is the same as adding its steps', () => {
    const direct = new GateDataBuilder(2, 3);
    const first = new GateDataBuilder(2, 3);
    const second = new GateDataBuilder(2, 3);
    const steps: [number[], number[]][] = [
      [
        [1, 0.5, 0.25],
        [4, 7],
      ],
      [[1, 0.1, 0.3], [2]],
      [
        [1, 0.9, 0.7],
        [0, 1, 5],
      ],
    ];
    steps.forEach(([context, labels], i) => {
      const target = i < 2 ? first : second;
      for (const b of [direct, target])
        b.add(
          context,
          labels,
          (s, f) => f * 10 + s + 0.1 * i,
          (f) => f % 2 === 1,
        );
    });
    first.append(second.parts());
    expect(first.build()).toEqual(direct.build());
    expect(first.steps).toBe(3);
  });
});

describe('DTDR-G fitted with parallel cross-fitting', () => {
  let tools: ToolSpec[];
  let plans: Plan[];
  let vectors: FitVectors;
  let sequential: GatedRetriever;
  beforeAll(async () => {
    const data = demoDataset();
    tools = data.tools;
    plans = data.plans.slice(0, 240);
    vectors = await fitVectors('dtdr-g', tools, plans, await loadEncoder(), 3);
    sequential = GatedRetriever.fit(tools, plans, vectors.queries!, vectors.tools!, {});
  }, 120_000);

  it('gives the same model, bit for bit, whichever thread ran each round', async () => {
    const workers = inProcessWorkers();
    const parallel = await GatedRetriever.fitParallel(tools, plans, vectors.queries!, vectors.tools!, workers, {});
    expect(workers.ran.length).toBeGreaterThan(0);
    expect(fingerprint(parallel)).toBe(fingerprint(sequential));
  });

  it('runs a round a worker did not return on the caller’s thread, and a failed worker changes nothing', async () => {
    const dropped = await GatedRetriever.fitParallel(
      tools,
      plans,
      vectors.queries!,
      vectors.tools!,
      inProcessWorkers({ drop: [0, 2] }),
      {},
    );
    const failed = await GatedRetriever.fitParallel(
      tools,
      plans,
      vectors.queries!,
      vectors.tools!,
      inProcessWorkers({ fail: true }),
      {},
    );
    expect(fingerprint(dropped)).toBe(fingerprint(sequential));
    expect(fingerprint(failed)).toBe(fingerprint(sequential));
  });

  it('a real worker thread (foldWorkers) returns the rounds this thread would compute', async () => {
    // The setup a fit hands its workers, caught by a double.
    let setup: CrossFitSetup | undefined;
    let rounds = 0;
    const spy: FoldWorkers = {
      threads: 1,
      run: (s, r) => ((setup = s), (rounds = r), { claim: () => r, results: Promise.resolve([]) }),
      close() {},
    };
    await GatedRetriever.fitParallel(tools, plans, vectors.queries!, vectors.tools!, spy, {});
    expect(rounds).toBeGreaterThan(1);
    const workers = foldWorkers({ threads: 1 });
    try {
      // Nobody else claims: the worker takes every round.
      const outputs = await workers.run(setup!, rounds).results;
      expect(outputs.map((o) => o.round).sort()).toEqual(Array.from({ length: rounds }, (_, i) => i));
      const here = new CrossFitter(setup!);
      for (const output of outputs) expect(output).toEqual(here.round(output.round));
      // Tools that carry functions (an adapter's execute) cannot be cloned: the worker gets their data.
      const withFunctions = { ...setup!, tools: setup!.tools.map((t) => ({ ...t, execute: () => 'ran' })) };
      const again = await workers.run(withFunctions, rounds).results;
      expect(again.map((o) => o.round).sort()).toEqual(outputs.map((o) => o.round).sort());
      for (const output of again) expect(output).toEqual(here.round(output.round));
    } finally {
      await workers.close();
    }
  }, 120_000);

  it('the built worker (dist, what the package runs) returns the same rounds', async () => {
    const built = new URL('../dist/workers/node.js', import.meta.url);
    if (!existsSync(built))
      return void console.warn('dist/ is not built (npm run build): the built worker is not checked here');
    let setup: CrossFitSetup | undefined;
    let rounds = 0;
    const spy: FoldWorkers = {
      threads: 1,
      run: (s, r) => ((setup = s), (rounds = r), { claim: () => r, results: Promise.resolve([]) }),
      close() {},
    };
    await GatedRetriever.fitParallel(tools, plans, vectors.queries!, vectors.tools!, spy, {});
    const { foldWorkers: builtWorkers } = (await import(built.href)) as { foldWorkers: typeof foldWorkers };
    const workers = builtWorkers({ threads: 1 });
    try {
      const outputs = await workers.run(setup!, rounds).results;
      expect(workers.errors).toEqual([]);
      expect(outputs.length).toBe(rounds);
      const here = new CrossFitter(setup!);
      for (const output of outputs) expect(output).toEqual(here.round(output.round));
    } finally {
      await workers.close();
    }
  }, 120_000);

  it('a worker that cannot help says why, and cancel ends a fit’s workers', async () => {
    let setup: CrossFitSetup | undefined;
    let rounds = 0;
    const spy: FoldWorkers = {
      threads: 1,
      run: (s, r) => ((setup = s), (rounds = r), { claim: () => r, results: Promise.resolve([]) }),
      close() {},
    };
    await GatedRetriever.fitParallel(tools, plans, vectors.queries!, vectors.tools!, spy, {});
    // A schema the structured clone refuses (a function inside it): no round from the worker, and the reason.
    const unclonable = { type: 'object', properties: {}, check: () => true } as unknown as ToolSpec['parameters'];
    const broken = foldWorkers({ threads: 1 });
    const none = await broken.run(
      { ...setup!, tools: setup!.tools.map((t, i) => (i === 0 ? { ...t, parameters: unclonable } : t)) },
      rounds,
    ).results;
    expect(none).toEqual([]);
    expect(broken.errors.join('\n')).toMatch(/cross-fitting worker failed/);
    // Cancelled at once: nothing left to claim, and the results settle.
    const workers = foldWorkers({ threads: 1 });
    const job = workers.run(setup!, rounds);
    job.cancel?.();
    expect(job.claim()).toBeGreaterThanOrEqual(rounds);
    expect((await job.results).length).toBeLessThanOrEqual(rounds);
    await workers.close();
  }, 120_000);

  it('fits each round on at most foldPlans training plans: a seeded sample, the same on every thread; a cap no round reaches changes nothing', async () => {
    const setupFor = async ({ foldPlans, folds }: { foldPlans?: number; folds?: number }) => {
      const options = { ...(folds ? { folds } : {}), ...(foldPlans ? { experimental: { foldPlans } } : {}) };
      let setup: CrossFitSetup | undefined;
      const spy: FoldWorkers = {
        threads: 1,
        run: (s, r) => ((setup = s), { claim: () => r, results: Promise.resolve([]) }),
        close() {},
      };
      await GatedRetriever.fitParallel(tools, plans, vectors.queries!, vectors.tools!, spy, options);
      return setup!;
    };
    const all = new CrossFitter(await setupFor({}));
    const capped = new CrossFitter(await setupFor({ foldPlans: 100, folds: 3 }));
    const cloned = new CrossFitter(structuredClone(capped.setup));
    let largest = 0;
    for (let round = 0; round < all.rounds; round++) {
      const every = all.trainingPlans(round);
      // Uncapped: every plan outside the held-out fold, in index order.
      expect(every.length).toBeGreaterThan(100);
      expect(every).toEqual([...every].sort((a, b) => a - b));
      largest = Math.max(largest, every.length);
      const sample = capped.trainingPlans(round);
      expect(sample.length).toBe(100);
      expect(sample).toEqual([...sample].sort((a, b) => a - b));
      expect(sample.every((i) => every.includes(i))).toBe(true);
      expect(cloned.trainingPlans(round)).toEqual(sample);
    }
    // A cap at the largest round's training set: the model of no cap, bit for bit.
    expect(largest).toBeLessThan(plans.length);
    const atLargest = GatedRetriever.fit(tools, plans, vectors.queries!, vectors.tools!, {
      experimental: { foldPlans: largest },
    });
    expect(fingerprint(atLargest)).toBe(fingerprint(sequential));
    // Below it the rounds (and the settings' fit) see fewer plans: another gate, and the same on worker threads.
    const few = GatedRetriever.fit(tools, plans, vectors.queries!, vectors.tools!, {
      experimental: { foldPlans: 100 },
    });
    expect(fingerprint(few)).not.toBe(fingerprint(sequential));
    const fewParallel = await GatedRetriever.fitParallel(
      tools,
      plans,
      vectors.queries!,
      vectors.tools!,
      inProcessWorkers(),
      { experimental: { foldPlans: 100 } },
    );
    expect(fingerprint(fewParallel)).toBe(fingerprint(few));
    expect(() =>
      GatedRetriever.fit(tools, plans, vectors.queries!, vectors.tools!, { experimental: { foldPlans: 0 } }),
    ).toThrow(DtdrError);
  }, 120_000);

  it('scores held-out steps over every label where wholeSoftmaxUpTo allows, over each step’s pool below it', async () => {
    const setupFor = async (wholeSoftmaxUpTo?: number) => {
      let setup: CrossFitSetup | undefined;
      const spy: FoldWorkers = {
        threads: 1,
        run: (s, r) => ((setup = s), { claim: () => r, results: Promise.resolve([]) }),
        close() {},
      };
      const options = wholeSoftmaxUpTo === undefined ? {} : { experimental: { wholeSoftmaxUpTo } };
      await GatedRetriever.fitParallel(tools, plans, vectors.queries!, vectors.tools!, spy, options);
      return setup!;
    };
    const labels = tools.length + 1;
    const widths = (setup: CrossFitSetup) => {
      const { offsets } = new CrossFitter(setup).round(0).gate;
      return Array.from(offsets.subarray(1), (end, i) => end - offsets[i]);
    };
    // The pool: the needed labels, END and each signal's top 12, fewer than every label on most steps.
    const pooled = widths(await setupFor());
    expect(pooled.filter((w) => w < labels).length).toBeGreaterThan(pooled.length / 2);
    expect(widths(await setupFor(labels - 1))).toEqual(pooled);
    const whole = widths(await setupFor(labels));
    expect(whole.length).toBe(pooled.length);
    expect(whole.every((w) => w === labels)).toBe(true);
    expect(() =>
      GatedRetriever.fit(tools, plans, vectors.queries!, vectors.tools!, { experimental: { wholeSoftmaxUpTo: -1 } }),
    ).toThrow(DtdrError);
  }, 120_000);

  it('cross-fits with two folds from 2 × foldPlans demonstrations on (each round still trains on foldPlans plans), three below, as many as asked', async () => {
    const setupFor = async ({ foldPlans, folds }: { foldPlans?: number; folds?: number }) => {
      const options = { ...(folds ? { folds } : {}), ...(foldPlans ? { experimental: { foldPlans } } : {}) };
      let setup: CrossFitSetup | undefined;
      const spy: FoldWorkers = {
        threads: 1,
        run: (s, r) => ((setup = s), { claim: () => r, results: Promise.resolve([]) }),
        close() {},
      };
      await GatedRetriever.fitParallel(tools, plans, vectors.queries!, vectors.tools!, spy, options);
      return setup!;
    };
    expect(plans.length).toBe(240);
    const two = new CrossFitter(await setupFor({ foldPlans: 120 }));
    expect(two.setup.folds).toBe(2);
    for (let round = 0; round < two.rounds; round++) {
      // The other fold's plans, capped at 120 (a fold by sequence holds whole sequences: about half the plans).
      const foldOf = foldAssignment(plans, two.setup.schemes[Math.floor(round / 2)], 2, two.setup.seed);
      const outside = plans.filter((_, i) => foldOf[i] !== round % 2).length;
      expect(outside).toBeGreaterThan(100);
      expect(two.trainingPlans(round).length).toBe(Math.min(120, outside));
    }
    expect((await setupFor({ foldPlans: 121 })).folds).toBe(3);
    expect((await setupFor({ foldPlans: 120, folds: 3 })).folds).toBe(3);
    expect((await setupFor({})).folds).toBe(3);
  }, 120_000);

  it('below 40 demonstrations the gate also learns from leave-one-plan-out rounds; l, K and the conformal thresholds come from the usual folds as before', async () => {
    const few = plans.slice(0, 12);
    const queries = vectors.queries!.slice(0, 12);
    let setup: CrossFitSetup | undefined;
    const spy: FoldWorkers = {
      threads: 1,
      run: (s, r) => ((setup = s), { claim: () => r, results: Promise.resolve([]) }),
      close() {},
    };
    const model = await GatedRetriever.fitParallel(tools, few, queries, vectors.tools!, spy, {});
    // One round per plan (each trains on the 11 others), then the usual three folds by plan (and by sequence where
    // the thresholds come from it).
    expect(setup!.folds).toBe(12);
    expect(setup!.thresholdFolds).toBe(3);
    expect(setup!.schemes.slice(0, 2)).toEqual(['plan', 'plan']);
    const fitter = new CrossFitter(setup!);
    expect(fitter.rounds).toBe(12 + 3 * (setup!.schemes.length - 1));
    for (let round = 0; round < 12; round++) expect(fitter.trainingPlans(round).length).toBe(11);
    for (let round = 12; round < 15; round++) expect(fitter.trainingPlans(round).length).toBe(8);
    expect(model.diagnostics!.folds).toBe(12);
    // The same model whichever thread ran each round.
    const sequentialFew = GatedRetriever.fit(tools, few, queries, vectors.tools!, {});
    expect(fingerprint(sequentialFew)).toBe(fingerprint(model));
    expect(
      fingerprint(await GatedRetriever.fitParallel(tools, few, queries, vectors.tools!, inProcessWorkers(), {})),
    ).toBe(fingerprint(model));
    // Three folds asked for: no leave-one-out rounds. l, K, the held-out scores and thresholds are the same; the gate
    // differs.
    const threeFolds = GatedRetriever.fit(tools, few, queries, vectors.tools!, { folds: 3 });
    const [a, b] = [model.state(), threeFolds.state()];
    expect(threeFolds.diagnostics!.folds).toBe(3);
    expect([a.historyLength, a.evidence?.centroids.length]).toEqual([b.historyLength, b.evidence?.centroids.length]);
    expect(a.calibration).toEqual(b.calibration);
    expect(a.groups).toEqual(b.groups);
    expect(a.thresholds).toEqual(b.thresholds);
    expect(a.theta).not.toEqual(b.theta);
    // From 40 demonstrations, three folds as before.
    let at40: CrossFitSetup | undefined;
    const spy40: FoldWorkers = {
      ...spy,
      run: (s, r) => ((at40 = s), { claim: () => r, results: Promise.resolve([]) }),
    };
    await GatedRetriever.fitParallel(
      tools,
      plans.slice(0, 40),
      vectors.queries!.slice(0, 40),
      vectors.tools!,
      spy40,
      {},
    );
    expect(at40!.folds).toBe(3);
    expect(new CrossFitter(at40!).rounds).toBe(3 * at40!.schemes.length);
  }, 120_000);

  it('the rounds per plan are capped by the labels (a round costs about its labels): 11 folds at 1,000 more tools, none at 4,000', async () => {
    const few = plans.slice(0, 12);
    const queries = vectors.queries!.slice(0, 12);
    const encoder = await loadEncoder();
    const foldsWith = async (extra: number) => {
      const more = Array.from({ length: extra }, (_, i) => ({
        name: `extra_tool_${i}`,
        description: `Extra tool number ${i} for the scale check`,
      }));
      const moreVectors = await encoder.embed(more.map((t) => `${t.name}: ${t.description}`));
      let setup: CrossFitSetup | undefined;
      const spy: FoldWorkers = {
        threads: 1,
        run: (s, r) => ((setup = s), { claim: () => r, results: Promise.resolve([]) }),
        close() {},
      };
      await GatedRetriever.fitParallel([...tools, ...more], few, queries, [...vectors.tools!, ...moreVectors], spy, {});
      return [setup!.folds, new CrossFitter(setup!).rounds];
    };
    // 27 + 1,000 tools and END: ⌊12,000 / 1,028⌋ = 11 folds by plan, then the usual three.
    const [folds1000, rounds1000] = await foldsWith(1000);
    expect(folds1000).toBe(11);
    expect(rounds1000).toBeGreaterThanOrEqual(11 + 3);
    // 27 + 4,000 tools: three folds, exactly as without the extra rounds.
    expect((await foldsWith(4000))[0]).toBe(3);
  }, 120_000);

  it('fitRetrieverWith uses workers only for dtdr-g from PARALLEL_FROM_PLANS demonstrations', async () => {
    const workers = inProcessWorkers();
    const small = await fitRetrieverWith('dtdr-g', tools, plans, vectors, { workers });
    expect(plans.length).toBeLessThan(PARALLEL_FROM_PLANS);
    expect(workers.ran).toEqual([]); // too few demonstrations: this thread alone
    expect(fingerprint(small as GatedRetriever)).toBe(
      fingerprint(fitRetriever('dtdr-g', tools, plans, vectors) as GatedRetriever),
    );
    await expect(
      fitRetrieverWith(
        'dtdr-g',
        tools,
        [{ id: 'x', query: 'q', nodes: [{ tool: 'nope' }], links: [] } as unknown as Plan],
        vectors,
        { workers },
      ),
    ).rejects.toThrow(/not in the tool set/);
  });

  it('foldWorkers checks its thread count', () => {
    expect(() => foldWorkers({ threads: -1 })).toThrow(DtdrError);
    expect(() => foldWorkers({ threads: 1.5 })).toThrow(/whole number/);
    expect(foldWorkers({ threads: 0 }).threads).toBe(0);
  });

  it('the CLI rejects a bad --threads with a usage error', () => {
    const r = runCli(['train', '--demo', '--out', '/tmp/dtdr-threads.dtdr', '--threads', 'two']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/--threads must be an integer/);
  });
});

/**
 * The living model (issue 44): `learn`, `forget` and refits keep a model that answers, whatever
 * the runs, the refitter or the timing. Each test fails on ea5d34c.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Encoder } from '../src/core/base/encoder.js';
import { Dtdr } from '../src/core/dtdr.js';
import { refitInline, type Refitter } from '../src/core/model/refit.js';
import { chainPlan } from '../src/core/plans/plan.js';
import { DEMO_TOOLS } from '../src/demo/toolset.js';
import { loadEncoder } from '../src/encoders/node.js';
import { refitWorker } from '../src/workers/node.js';

let encoder: Encoder;
const worker = refitWorker();
beforeAll(async () => {
  encoder = await loadEncoder();
});
afterAll(() => worker.close());

const RUN = chainPlan('run-1', 'Text Sam that I am running late', ['contacts_search', 'sms_send']);

describe('learn() of one run', () => {
  const refitters: [string, () => Refitter | undefined][] = [
    ['no refitter', () => undefined],
    ['refitInline()', () => refitInline()],
    ['refitWorker()', () => worker],
  ];
  it.each(refitters)('on a tools-only model with %s: the run is learned', async (_, refitter) => {
    const model = await Dtdr.train({ tools: DEMO_TOOLS, encoder, refitter: refitter() });
    await model.learn([RUN]);
    expect(model.learnedCount).toBe(1);
    expect(model.refitErrors).toEqual([]);
    const r = await model.retrieve(RUN.query, ['contacts_search']);
    expect(r.candidates.map((c) => c.tool)).toContain('sms_send');
  });

  it('a learn that fails records nothing: the run is not counted, saved, or stored twice by a retry', async () => {
    let broken = false;
    const flaky: Encoder = {
      ...encoder,
      embed: (texts) => (broken ? Promise.reject(new Error('the encoder is gone')) : encoder.embed(texts)),
    };
    for (const plans of [[], [RUN]]) {
      const model = await Dtdr.train({ tools: DEMO_TOOLS, plans, encoder: flaky });
      broken = true;
      await expect(model.learn([chainPlan('run-2', 'Call mum', ['phone_call'])])).rejects.toThrow(/encoder is gone/);
      expect(model.learnedCount).toBe(0);
      expect(model.toJSON().learning).toBeUndefined();
      broken = false;
      await model.learn([chainPlan('run-2', 'Call mum', ['phone_call'])]);
      expect(model.learnedCount).toBe(1);
    }
  });
});

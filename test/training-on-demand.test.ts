/**
 * DTDR-G's training code loads on demand (retrieval/load-training.ts): a browser app that loads a
 * model and retrieves never downloads it. This file imports the core as the browser entry does (not
 * `dtdr/node`, which installs it up front), so the code is not there until something loads it.
 */
import { describe, expect, it } from 'vitest';
import { DtdrError } from '../src/core/base/errors.js';
import { Dtdr } from '../src/core/dtdr.js';
import { trainingInstalled } from '../src/core/retrieval/default/trainable.js';
import { loadEncoder } from '../src/encoders/node.js';
import { chainPlan } from '../src/core/plans/plan.js';
import { readModelFile } from '../src/storage/file.js';
import { ROOT } from './helpers.js';

describe('training code on demand', () => {
  it('a loaded model ranks without it; retriever.learn says to load it; Dtdr.loadTraining does', async () => {
    const encoder = await loadEncoder();
    const model = Dtdr.load(readModelFile(`${ROOT}/public/dtdr-demo.model.dtdr`), encoder);
    const step = await model.retrieve('text Sam where I am');
    expect(step.candidates.map((c) => c.tool)).toContain('contacts_search');
    expect(trainingInstalled()).toBe(false);
    const plan = chainPlan('by-hand', 'text Sam where I am', ['contacts_search', 'sms_send']);
    const [vector] = await encoder.embed([plan.query]);
    const learn = () => model.retriever.learn!({ plans: [plan], queryVectors: [vector] });
    expect(learn).toThrow(DtdrError);
    expect(learn).toThrow(/Dtdr\.loadTraining\(\)/);
    expect(trainingInstalled()).toBe(false); // nothing was loaded by the failed call, nor by loading the model
    await Dtdr.loadTraining();
    expect(trainingInstalled()).toBe(true);
    expect(learn).not.toThrow();
  });
});

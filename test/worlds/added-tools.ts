/**
 * The world of the added-tool check at scale, shared by test/added-tools-scale.test.ts
 * and `npm run check -- added-tools-scale`: DTDR-G trained on the demo plans without eight demo tools,
 * and a model grown to `size` tools by adding those eight with seeded synthetic fillers
 * (test/worlds/synthetic.ts: descriptions of frequent English words, never demonstrated).
 */
import type { Encoder } from '../../src/core/base/encoder.js';
import { Dtdr } from '../../src/core/dtdr.js';
import { planTools } from '../../src/core/plans/plan.js';
import { DEMO_TOOLS, generateDemoPlans } from '../../src/demo/toolset.js';
import { syntheticDataset } from './synthetic.js';

/** The demo tools left out of training and added afterwards. */
export const ADDED_AT_SCALE = [
  'location_current',
  'translate_text',
  'restaurant_book',
  'photos_search',
  'weather_forecast',
  'music_play',
  'timer_set',
  'currency_convert',
];

/** DTDR-G trained without the added tools, saved (load it once per size). */
export async function trainWithoutAdded(encoder: Encoder): Promise<unknown> {
  const plans = generateDemoPlans(600, 1).filter((p) => !planTools(p).some((t) => ADDED_AT_SCALE.includes(t)));
  return (
    await Dtdr.train({ tools: DEMO_TOOLS.filter((t) => !ADDED_AT_SCALE.includes(t.name)), plans, encoder, seed: 0 })
  ).toJSON();
}

/** The saved model with the added tools and seeded fillers, `size` tools in all. */
export async function grownTo(saved: unknown, encoder: Encoder, size: number): Promise<Dtdr> {
  const model = Dtdr.load(saved, encoder);
  const fillers = syntheticDataset(size - DEMO_TOOLS.length, 0, 7).tools.map((t) => ({
    ...t,
    name: `extra_${t.name}`,
  }));
  await model.addTools([...fillers, ...DEMO_TOOLS.filter((t) => ADDED_AT_SCALE.includes(t.name))]);
  return model;
}

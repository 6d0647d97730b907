/**
 * A small app's first day: the 10-tool recipe app of test/fixtures/recipe-app.json (26 demonstrations, 45 requests
 * of its own, held out), every step of each request retrieved as the app would: DTDR-G as shipped, DTDR-G keeping
 * its whole sets (`cutHalfSets: false`), tools alone, and DTDR-C. Mean set, coverage, confident steps (and those of
 * half the labels or more), top-1 accuracy and its calibration error (10 bins), and what cut sets claim.
 *
 *   npm run experiment -- small-app [--encoder DIR] [--results docs/results.json]
 *   npm run experiment -- small-app --fixture test/fixtures/home-app.json   (another app of the same shape, printed only)
 *
 * With --encoder (a model folder), the table is written as small-app-<its id> and the figures are left as they are.
 */
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { Dtdr } from '../../src/core/dtdr.js';
import { END, type Plan, type ToolSpec } from '../../src/core/base/types.js';
import { expectedCalibrationError } from '../../src/core/base/metrics.js';
import type { SelectOptions } from '../../src/core/selection/select.js';
import { encoderByName } from '../../test/worlds/encoders.js';
import { printTable, refuser, variantRun, writeResultsTable } from '../bench/results.js';
import '../../src/methods.js'; // every method, as the Node entry registers them

const { values } = parseArgs({
  options: { results: { type: 'string' }, encoder: { type: 'string' }, fixture: { type: 'string' } },
});
// The tables and figures name the recipe app: another fixture's run is printed, not recorded.
if (values.fixture && values.results)
  refuser('small-app')('--results records the recipe app only: drop --fixture or --results');
const fixturePath = values.fixture ?? new URL('../../test/fixtures/recipe-app.json', import.meta.url);
const fixture = JSON.parse(readFileSync(fixturePath, 'utf8')) as {
  tools: ToolSpec[];
  demonstrations: Plan[];
  requests: { query: string; plan: string[] }[];
};
const encoder = await encoderByName(values.encoder);
const labels = fixture.tools.length + 1;

async function measure(model: Dtdr, options?: SelectOptions) {
  let [steps, covered, size, confident, confidentHalf, claimed, cut] = [0, 0, 0, 0, 0, 0, 0];
  const top: number[] = [];
  const correct: number[] = [];
  for (const r of fixture.requests) {
    const plan = [...r.plan, END];
    for (let i = 0; i < plan.length; i++) {
      const res = await model.retrieve(r.query, plan.slice(0, i), options);
      steps++;
      size += res.candidates.length;
      covered += +res.candidates.some((c) => c.tool === plan[i]);
      if (res.confident)
        [confident, confidentHalf] = [confident + 1, confidentHalf + +(res.candidates.length * 2 >= labels)];
      if (res.reason?.includes('cut from')) [cut, claimed] = [cut + 1, claimed + (res.target ?? 0)];
      const best = res.ranking.order[0];
      top.push(res.ranking.probabilities[best]);
      correct.push(+(res.ranking.labels[best] === plan[i]));
    }
  }
  return {
    steps,
    setSize: size / steps,
    coverage: covered / steps,
    confident,
    confidentHalf,
    top1: correct.reduce((a, b) => a + b, 0) / steps,
    ece: expectedCalibrationError(top, correct),
    cut,
    claimed: cut ? claimed / cut : undefined,
  };
}

const trained = await Dtdr.train({ tools: fixture.tools, plans: fixture.demonstrations, encoder });
const rows: [string, Awaited<ReturnType<typeof measure>>][] = [
  ['DTDR-G (default)', await measure(trained)],
  ['DTDR-G, cutHalfSets: false', await measure(trained, { cutHalfSets: false })],
  ['tools alone', await measure(await Dtdr.train({ tools: fixture.tools, encoder }))],
  [
    'DTDR-C',
    await measure(await Dtdr.train({ method: 'dtdr-c', tools: fixture.tools, plans: fixture.demonstrations, encoder })),
  ],
];
const table = rows.map(([name, m]) => [
  name,
  `${m.setSize.toFixed(2)} of ${labels}`,
  m.coverage.toFixed(3),
  `${m.confident} (${m.confidentHalf})`,
  m.top1.toFixed(3),
  m.ece.toFixed(3),
  m.claimed === undefined ? '–' : `${m.cut} · ${(m.claimed * 100).toFixed(0)}%`,
]);
const columns = [
  'method',
  'mean set (labels)',
  'coverage',
  'confident steps (of half the labels or more)',
  'top-1',
  'top-1 ECE',
  'cut sets · held-out coverage they claim',
];
printTable(columns, table);

if (values.results) {
  const [shipped, whole] = [rows[0][1], rows[1][1]];
  const other = values.encoder !== undefined;
  const run = variantRun(
    'npm run experiment -- small-app',
    other ? { option: '--encoder', value: values.encoder!, id: encoder.id } : undefined,
  );
  writeResultsTable(
    values.results,
    `small-app${run.suffix}`,
    {
      title:
        `A 10-tool recipe app with 26 demonstrations, on its ${shipped.steps} held-out request steps` +
        (other ? `, with the encoder ${encoder.id}` : ''),
      command: run.command,
      columns,
      align: ['left', 'right', 'right', 'right', 'right', 'right', 'right'],
      rows: table,
    },
    other
      ? {}
      : {
          'small-app-set': {
            value: `${shipped.setSize.toFixed(2)} of its ${labels} labels at coverage ${shipped.coverage.toFixed(3)}`,
            what: "the recipe app's mean set and coverage on its own requests",
          },
          'small-app-whole': {
            value: `${whole.setSize.toFixed(2)} at ${whole.coverage.toFixed(3)}`,
            what: 'the same with cutHalfSets: false',
          },
          'small-app-claim': {
            value: `${((shipped.claimed ?? 0) * 100).toFixed(0)}%`,
            what: "the held-out coverage the recipe app's cut sets claim",
          },
          'small-app-ece': { value: shipped.ece.toFixed(3), what: "the recipe app's top-1 calibration error" },
        },
  );
}

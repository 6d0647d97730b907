/**
 * The added-tool check at scale (test/added-tools-scale.test.ts asserts it): DTDR-G is
 * trained on the demo plans without eight demo tools, which are then added with `addTools`
 * together with seeded synthetic fillers (test/worlds/synthetic.ts) up to each tool-set size, and each
 * is asked for with its requests. Prints every miss, then per size: requests whose tool is in the
 * candidate set, mean set size, misses called confident, and the mean retrieve time.
 *
 *   npm run check -- added-tools-scale [SIZES=2000,16000] [BATCH=requests|heldOut|dev]
 *
 * `dev` is test/fixtures/added-tool-dev-requests.json (written to choose on); `requests` (the
 * test's batch) and `heldOut` are test/fixtures/added-tool-requests.json's.
 */
import { readFileSync } from 'node:fs';
import { loadEncoder } from '../../src/encoders/node.js';
import { ADDED_AT_SCALE, grownTo, trainWithoutAdded } from '../../test/worlds/added-tools.js';

const sizes = (process.argv[2] ?? '2000,16000').split(',').map(Number);
const batch = process.argv[3] ?? 'requests';
const fixture = (name: string) =>
  JSON.parse(readFileSync(new URL(`../../test/fixtures/${name}`, import.meta.url), 'utf8'));
const requests: Record<string, string[]> | undefined =
  batch === 'dev' ? fixture('added-tool-dev-requests.json').requests : fixture('added-tool-requests.json')[batch];
if (!requests) throw new Error(`no batch "${batch}" (requests, heldOut or dev)`);
const encoder = await loadEncoder();
const saved = await trainWithoutAdded(encoder);
for (const size of sizes) {
  const model = await grownTo(saved, encoder, size);
  let asked = 0;
  let inSet = 0;
  let setSizes = 0;
  let confidentMisses = 0;
  let ms = 0;
  for (const name of ADDED_AT_SCALE) {
    for (const request of requests[name] ?? []) {
      const start = performance.now();
      const r = await model.retrieve(request);
      ms += performance.now() - start;
      const hit = r.candidates.some((c) => c.tool === name);
      asked++;
      setSizes += r.candidates.length;
      if (hit) inSet++;
      else {
        if (!r.widened) confidentMisses++;
        console.log(
          `MISS${r.widened ? '' : ' CONFIDENT'} ${name}: "${request}" → ${r.candidates.map((c) => c.tool).join(', ')}`,
        );
      }
    }
  }
  console.log(
    `${size} tools, ${batch}: ${inSet}/${asked} in set, mean |F_t| ${(setSizes / asked).toFixed(2)}, confident misses ${confidentMisses}, retrieve ${((1000 * ms) / asked).toFixed(0)} µs`,
  );
}

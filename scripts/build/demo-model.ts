/**
 * node --import tsx scripts/build/demo-model.ts — trains the default method (DTDR-G) on the built-in demo tool set (3,000 generated
 * demonstrations, seed 0) with the bundled encoder and writes public/dtdr-demo.model.dtdr, the
 * model the CLI examples of docs/cli.md use. A test retrains it and checks the shipped file still matches.
 */
import { Dtdr } from '../../src/core/dtdr.js';
import { demoDataset } from '../../src/demo/toolset.js';
import { loadEncoder } from '../../src/encoders/node.js';
import { writeModelFile } from '../../src/storage/file.js';
import '../../src/methods.js'; // every method, as the Node entry registers them

async function main() {
  const dataset = demoDataset();
  const model = await Dtdr.train({
    tools: dataset.tools,
    plans: dataset.plans,
    encoder: await loadEncoder(),
    dataset: dataset.name,
  });
  const artifact = { ...model.toJSON(), createdAt: '1970-01-01T00:00:00.000Z' }; // reproducible bytes
  writeModelFile(new URL('../../public/dtdr-demo.model.dtdr', import.meta.url).pathname, artifact);
  console.log('wrote public/dtdr-demo.model.dtdr');
}

await main();

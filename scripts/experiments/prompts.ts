/**
 * npm run experiment -- prompts [--data DIR --method dtdr-c|dtdr-l|dtdr-h --format hermes]
 *
 * On a dataset's test split: mean prompt length per ICL strategy in Qwen3 tokens (constant /
 * variable / total, as the paper's Figure 4), and the coverage of F_t against its mean size for
 * several thresholds α. Default data: ../shared/data/ultratool (official split).
 */
import { parseArgs } from 'node:util';
import { Dtdr } from '../../src/core/dtdr.js';
import { splitDataset } from '../../src/core/evaluation/evaluate.js';
import { studyPrompts } from '../../src/core/evaluation/prompt-study.js';
import type { PromptFormat, Strategy } from '../../src/core/prompts/build.js';
import { readDatasetDir } from '../../src/data/node.js';
import { loadEncoder } from '../../src/encoders/node.js';
import { loadQwen3TokenCounter } from '../../src/tokens/qwen3.js';
import '../../src/methods.js'; // every method, as the Node entry registers them

const { values } = parseArgs({
  options: {
    data: { type: 'string', default: new URL('../../../shared/data/ultratool', import.meta.url).pathname },
    method: { type: 'string', default: 'dtdr-c' },
    format: { type: 'string', default: 'hermes' },
  },
});

async function main() {
  const dataset = readDatasetDir(values.data);
  const split = splitDataset(dataset);
  const model = await Dtdr.train({
    method: values.method as never,
    tools: dataset.tools,
    plans: split.train,
    encoder: await loadEncoder(),
  });
  const strategies: Strategy[] = ['none', 'raw-demos', 'soft', 'soft-weighted', 'hard', 'hard-weighted'];
  const study = await studyPrompts(model, dataset.tools, split.test, await loadQwen3TokenCounter(), {
    strategies,
    format: values.format as PromptFormat,
    alphas: [0.05, 0.1, 0.2, 0.3, 0.5],
    demonstrations: split.train,
  });
  console.log(
    `${dataset.name} · ${split.description} · ${values.method} · ${values.format} · ${study.steps} test steps\n`,
  );
  console.log('| strategy | constant | variable | total | total vs none |\n|---|---:|---:|---:|---:|');
  const none = study.tokens.none!.total;
  for (const s of strategies) {
    const t = study.tokens[s]!;
    console.log(
      `| ${s} | ${t.constant.toFixed(0)} | ${t.variable.toFixed(0)} | ${t.total.toFixed(0)} | ${((100 * t.total) / none).toFixed(1)}% |`,
    );
  }
  console.log('\n| α | coverage | mean \\|F_t\\| | widened steps |\n|---:|---:|---:|---:|');
  for (const t of study.thresholds)
    console.log(
      `| ${t.alpha} | ${t.coverage.toFixed(3)} | ${t.setSize.toFixed(2)} | ${(100 * t.widenedShare).toFixed(1)}% |`,
    );
}

await main();

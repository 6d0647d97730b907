import { Dtdr } from '../core/dtdr.js';
import { END } from '../core/base/types.js';
import { DEMO_QUERIES, demoDataset } from '../demo/toolset.js';
import { loadEncoder } from '../encoders/node.js';
import { intOption, parseCommandArgs } from './args.js';
import { ProgressBar } from './progress.js';
import { fmt, parseMethod } from './shared.js';
import { DEFAULT_METHOD } from '../core/retrieval/train.js';
import { describeBackoff } from './retrieve.js';

export const demoHelp = `dtdr demo [--method dtdr-g] [--query "…"]… [--max-steps 6]

The main job on the embedded default: trains a retriever on dtdr's own on-device assistant tool set
(27 tools, 3000 generated demonstrations) with the bundled offline encoder, then walks example
queries step by step, printing the candidate set with its probabilities and why it is as wide as
it is, and following the top candidate as a model that trusts the ranking would.`;

export async function demoCommand(argv: string[]): Promise<void> {
  const { values } = parseCommandArgs('demo', argv, {
    method: { type: 'string' },
    query: { type: 'string', multiple: true },
    'max-steps': { type: 'string' },
  });
  const maxSteps = intOption(values['max-steps'] as string | undefined, 'max-steps', 6, 1);
  const dataset = demoDataset();
  const encoder = await loadEncoder();
  const bar = new ProgressBar();
  const started = Date.now();
  const model = await Dtdr.train({
    method: parseMethod((values.method as string | undefined) ?? DEFAULT_METHOD),
    tools: dataset.tools,
    plans: dataset.plans,
    encoder,
    dataset: dataset.name,
    onProgress: (p) => bar.update(p.phase, p.fraction),
  });
  bar.done();
  console.log(`dtdr demo · ${model.method} trained on ${dataset.plans.length} demonstrations over ${dataset.tools.length} tools in ${((Date.now() - started) / 1000).toFixed(1)} s (encoder ${encoder.id})\n`);
  const queries = (values.query as string[] | undefined) ?? DEMO_QUERIES;
  for (const query of queries) {
    console.log(`» ${query}`);
    const history: string[] = [];
    for (let step = 0; step < maxSteps; step++) {
      const r = await model.retrieve(query, history);
      const shown = r.candidates.map((c) => `${c.tool} ${fmt(c.probability, 2)}`).join(', ');
      const context = r.backoff ? ` · ${describeBackoff(r.backoff)}` : '';
      const sure = r.target !== undefined && !r.widened ? ' · confident' : '';
      console.log(`  step ${step + 1}: ${shown}${context}${sure}${r.widened ? ` · widened (${r.reason})` : ''}`);
      const next = r.candidates[0]?.tool;
      if (!next || next === END) break;
      history.push(next);
    }
    console.log(`  plan: ${history.join(' → ') || '(none)'} → ${END}\n`);
  }
  await encoder.dispose?.();
}

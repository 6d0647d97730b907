import { Dtdr } from '../core/dtdr.js';
import { END } from '../core/base/types.js';
import { DEMO_SHOWCASE, demoDataset } from '../demo/toolset.js';
import { chainPlan, sequenceKey } from '../core/plans/plan.js';
import { loadEncoder } from '../encoders/node.js';
import { intOption, parseCommandArgs } from './args.js';
import { ProgressBar } from './progress.js';
import { fmt, parseMethod } from './shared.js';
import { DEFAULT_METHOD } from '../core/retrieval/methods.js';
import { describeBackoff } from './retrieve.js';
import { skimReason } from '../core/prompts/reason.js';

export const demoHelp = `dtdr demo [--method dtdr-g] [--query "…"]… [--max-steps 6] [--why]

The main job on the embedded default: trains a retriever on dtdr's own on-device assistant tool set
(27 tools, 3000 generated demonstrations) with the bundled offline encoder, then walks example
queries step by step, printing the candidate set with its probabilities and why it is as wide as
it is. The built-in requests walk the plan each needs (as a model that picks the right tool from
the set would) and mark whether that tool was in the set; those marked "a new combination" combine
familiar steps in a sequence no demonstration has. A --query request follows the top candidate instead.
An unsure step shows the first cause of its reason and how many more there are; --why prints them all.`;

export async function demoCommand(argv: string[]): Promise<void> {
  const { values } = parseCommandArgs('demo', argv, {
    method: { type: 'string' },
    query: { type: 'string', multiple: true },
    'max-steps': { type: 'string' },
    why: { type: 'boolean' },
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
  console.log(
    `dtdr demo · ${model.method} trained on ${dataset.plans.length} demonstrations over ` +
      `${dataset.tools.length} tools in ${((Date.now() - started) / 1000).toFixed(1)} s ` +
      `(encoder ${encoder.id})\n`,
  );
  const asked = values.query as string[] | undefined;
  const walks = asked ? asked.map((query) => ({ query, plan: undefined })) : DEMO_SHOWCASE;
  const demonstrated = new Set(dataset.plans.map(sequenceKey));
  let held = 0;
  let needed = 0;
  for (const { query, plan } of walks) {
    const novel = plan && !demonstrated.has(sequenceKey(chainPlan('showcase', query, [...plan])));
    console.log(`» ${query}${novel ? '   (a new combination: no demonstration has this sequence)' : ''}`);
    const history: string[] = [];
    for (let step = 0; step < maxSteps; step++) {
      const r = await model.retrieve(query, history);
      const shown = r.candidates.map((c) => `${c.tool} ${fmt(c.probability, 2)}`).join(', ');
      const context = r.backoff ? ` · ${describeBackoff(r.backoff)}` : '';
      const sure = r.target !== undefined && !r.widened ? ' · confident' : '';
      const need = plan ? (plan[step] ?? END) : undefined;
      const inSet = need !== undefined && r.candidates.some((c) => c.tool === need);
      if (need !== undefined) {
        needed++;
        if (inSet) held++;
      }
      const mark =
        need === undefined
          ? ''
          : inSet
            ? ` · needs ${need}: in the set`
            : ` · needs ${need}: NOT in the set${r.widened ? '' : ' (confidently wrong)'}`;
      const why = r.reason === undefined ? '' : values.why ? ` (${r.reason})` : `: ${skimReason(r.reason)}`;
      console.log(`  step ${step + 1}: ${shown}${context}${sure}${r.widened ? ` · widened${why}` : ''}${mark}`);
      const next = need ?? r.candidates[0]?.tool;
      if (!next || next === END) break;
      history.push(next);
    }
    console.log(
      `  plan: ${history.join(' → ') || '(none)'} → ` +
        `${END}${plan ? ' (the plan it needs)' : ' (following the top candidate)'}\n`,
    );
  }
  if (needed > 0) console.log(`the needed tool was in the set at ${held} of ${needed} steps`);
  await encoder.dispose?.();
}

import { Dtdr } from '../core/dtdr.js';
import { DtdrError } from '../core/errors.js';
import { END } from '../core/types.js';
import { readModelFile } from '../storage/file.js';
import { intOption, numberOption, parseCommandArgs } from './args.js';
import { encoderOptions, fmt, loadCliEncoder } from './shared.js';

export const retrieveHelp = `dtdr retrieve --model FILE --query "…" [--history a,b] [--top 5] [--alpha 0.1] [--json]

Ranks every tool and END for the next step of a plan. Prints the top candidates with their
probabilities, the thresholded set F_t, and whether the retriever backed off or widened the set.`;

export async function loadModelForCli(path: string, values: Record<string, unknown>): Promise<Dtdr> {
  const json = readModelFile(path);
  const encoderId = (json as { encoder?: { id?: string } | null })?.encoder?.id;
  const encoder = encoderId || values.encoder ? await loadCliEncoder(values, encoderId) : undefined;
  return Dtdr.load(json, encoder, path);
}

export function parseHistory(value: string | undefined, model: Dtdr): string[] {
  const history = value ? value.split(',').map((s) => s.trim()).filter(Boolean) : [];
  const known = new Set(model.tools.map((t) => t.name));
  const unknown = history.filter((t) => !known.has(t));
  if (unknown.length > 0) {
    throw new DtdrError('usage', `--history names tools the model does not know: ${unknown.join(', ')}`, { hint: `known tools include ${[...known].slice(0, 8).join(', ')}…` });
  }
  return history;
}

export async function retrieveCommand(argv: string[]): Promise<void> {
  const { values } = parseCommandArgs('retrieve', argv, {
    model: { type: 'string' },
    query: { type: 'string' },
    history: { type: 'string' },
    top: { type: 'string' },
    alpha: { type: 'string' },
    json: { type: 'boolean' },
    ...encoderOptions,
  });
  if (!values.model) throw new DtdrError('usage', 'retrieve: --model FILE is required');
  if (!values.query || !(values.query as string).trim()) throw new DtdrError('usage', 'retrieve: --query "…" is required');
  const top = intOption(values.top as string | undefined, 'top', 5, 1);
  const alpha = numberOption(values.alpha as string | undefined, 'alpha', 0.1, 0, 1);
  const model = await loadModelForCli(values.model as string, values);
  const history = parseHistory(values.history as string | undefined, model);
  const result = await model.retrieve(values.query as string, history, { alpha });
  const ranked = Array.from(result.ranking.order.subarray(0, top), (i) => ({ tool: result.ranking.labels[i], probability: result.ranking.probabilities[i] }));
  if (values.json) {
    console.log(JSON.stringify({ method: model.method, query: values.query, history, ranked, candidates: result.candidates, widened: result.widened, reason: result.reason ?? null, confident: result.confident, backoff: result.backoff ?? null }, null, 2));
    return;
  }
  console.log(`${model.method} · query: ${values.query}`);
  console.log(`history: ${history.length ? history.join(' → ') : '(none)'}`);
  ranked.forEach((c, i) => console.log(`${String(i + 1).padStart(3)}. ${c.tool === END ? `${END} (plan complete)` : c.tool}  ${fmt(c.probability)}`));
  if (result.backoff) {
    const b = result.backoff;
    console.log(`back-off: ${b.scope} statistics, ${b.historyUsed}/${b.historyWanted} history tools matched, support ${b.support}`);
  }
  console.log(`F_t (${result.candidates.length}${result.widened ? `, widened: ${result.reason}` : ''}): ${result.candidates.map((c) => c.tool).join(', ')}`);
}

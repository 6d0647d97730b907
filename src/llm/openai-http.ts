/**
 * A LocalModel over an OpenAI-compatible chat endpoint: llama.cpp's server, Ollama, LM Studio,
 * vLLM. OpenAI-format prompts send the tools natively; Hermes and ReAct prompts send text and
 * read the text answer.
 */
import type { GenerateRequest, LocalModel } from '../core/agent/agent.js';
import { DtdrError } from '../core/base/errors.js';

/** Options of {@link openAICompatibleModel}: the server's base URL, the model, and sampling settings. */
export interface OpenAICompatibleOptions {
  /** e.g. http://127.0.0.1:8080/v1 (llama.cpp) or http://127.0.0.1:11434/v1 (Ollama). */
  baseUrl: string;
  model: string;
  apiKey?: string;
  /** Default 0: tool selection should be deterministic. */
  temperature?: number;
  maxTokens?: number;
  /** The fetch to use (default: the global one). */
  fetch?: typeof fetch;
}

/** A local model behind an OpenAI-compatible server (llama.cpp, Ollama, LM Studio). */
export function openAICompatibleModel(options: OpenAICompatibleOptions): LocalModel {
  const doFetch = options.fetch ?? fetch;
  return {
    async generate(request: GenerateRequest) {
      const body = {
        model: options.model,
        messages: request.messages,
        temperature: options.temperature ?? 0,
        max_tokens: options.maxTokens ?? 512,
        ...(request.tools ? { tools: request.tools, tool_choice: 'auto' } : {}),
      };
      let response: Response;
      try {
        response = await doFetch(`${options.baseUrl.replace(/\/+$/, '')}/chat/completions`, {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            ...(options.apiKey ? { authorization: `Bearer ${options.apiKey}` } : {}),
          },
          body: JSON.stringify(body),
        });
      } catch (cause) {
        throw new DtdrError(
          'options',
          `cannot reach ${options.baseUrl}: ${cause instanceof Error ? cause.message : String(cause)}`,
          { hint: 'is the local model server running?', cause },
        );
      }
      if (!response.ok)
        throw new DtdrError(
          'options',
          `${options.baseUrl} answered HTTP ${response.status}: ${(await response.text()).slice(0, 200)}`,
        );
      const json = (await response.json()) as {
        choices?: { message?: { content?: string | null; tool_calls?: unknown[] } }[];
      };
      const message = json.choices?.[0]?.message;
      if (!message) throw new DtdrError('options', `${options.baseUrl} returned no choices`);
      return request.format === 'openai' ? message : (message.content ?? '');
    },
  };
}

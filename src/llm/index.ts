/**
 * Local models for dtdr's `Agent`: a server with an OpenAI-compatible API (llama.cpp, Ollama, LM
 * Studio), transformers.js in-process, WebLLM's constrained answers, and a scripted model for an
 * app's tests and demos. The `LocalModel` interface they implement is in `dtdr`.
 *
 * @module dtdr/llm
 */
export { ScriptedModel } from '../core/agent/agent.js';
export { openAICompatibleModel, type OpenAICompatibleOptions } from './openai-http.js';
export { transformersModel, type TransformersModelOptions } from './transformers.js';
export { parseWebllmAnswer, webllmResponseFormat, type WebllmResponseFormat } from './webllm.js';

/**
 * A LocalModel running in-process with transformers.js: WebGPU in browsers, CPU in Node. The
 * model's own chat template renders the messages (and, for OpenAI-format prompts, the tools), so
 * a Qwen3 model sees exactly the format it was trained on. Needs the model's weights: a hub id
 * with remote models allowed, or a local folder.
 */
import type { AutoModelForCausalLM, AutoTokenizer } from '@huggingface/transformers';
import type { GenerateRequest, LocalModel } from '../core/agent.js';
import { DtdrError } from '../core/errors.js';
import { importOptional } from '../encoders/hub.js';

export interface TransformersModelOptions {
  /** e.g. onnx-community/Qwen3-0.6B-ONNX, or a local folder. */
  model: string;
  device?: 'webgpu' | 'wasm' | 'cpu';
  dtype?: 'q4' | 'q4f16' | 'q8' | 'fp16' | 'fp32';
  allowRemoteModels?: boolean;
  maxNewTokens?: number;
  /** The `@huggingface/transformers` module (optional peer): Node imports it itself; bundled apps pass `await import('@huggingface/transformers')`. */
  transformers?: object;
}

export async function transformersModel(options: TransformersModelOptions): Promise<LocalModel> {
  // An optional peer dependency: loaded only when a local LLM is asked for.
  const { AutoTokenizer, AutoModelForCausalLM, env } = await importOptional<typeof import('@huggingface/transformers')>('@huggingface/transformers', 'a transformers.js language model', options.transformers);
  env.allowRemoteModels = options.allowRemoteModels ?? false;
  let tokenizer: Awaited<ReturnType<typeof AutoTokenizer.from_pretrained>>;
  let model: Awaited<ReturnType<typeof AutoModelForCausalLM.from_pretrained>>;
  try {
    tokenizer = await AutoTokenizer.from_pretrained(options.model, { local_files_only: !env.allowRemoteModels });
    model = await AutoModelForCausalLM.from_pretrained(options.model, { device: options.device ?? 'cpu', dtype: options.dtype ?? 'q4', local_files_only: !env.allowRemoteModels });
  } catch (cause) {
    throw new DtdrError('options', `cannot load language model "${options.model}": ${cause instanceof Error ? cause.message.split('\n')[0] : String(cause)}`, { hint: 'give a local model folder, or allow remote models', cause });
  }
  return {
    async generate(request: GenerateRequest) {
      const prompt = tokenizer.apply_chat_template(request.messages as never, { tools: request.tools as never, add_generation_prompt: true, tokenize: false }) as string;
      const inputs = tokenizer(prompt);
      const output = (await model.generate({ ...inputs, max_new_tokens: options.maxNewTokens ?? 256, do_sample: false })) as { dims: number[]; tolist(): number[][] };
      const ids = output.tolist()[0].slice((inputs.input_ids as { dims: number[] }).dims[1]);
      return tokenizer.decode(ids, { skip_special_tokens: true });
    },
  };
}

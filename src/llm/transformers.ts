/**
 * A LocalModel running in-process with transformers.js: WebGPU in browsers, CPU in Node. The
 * model's own chat template renders the messages (and, for OpenAI-format prompts, the tools), so
 * a Qwen3 model sees exactly the format it was trained on. Needs the model's weights: a hub id
 * with remote models allowed, or a local folder.
 */
import type { GenerateRequest, LocalModel } from '../core/agent/agent.js';
import { DtdrError } from '../core/base/errors.js';
import { importOptional } from '../encoders/hub.js';
import { AnswerTrie, allowedAnswers } from '../core/prompts/constrain.js';

/**
 * Options of {@link transformersModel}: the model, transformers.js itself, the device, and whether the mask applies.
 */
export interface TransformersModelOptions {
  /** e.g. onnx-community/Qwen3-0.6B-ONNX, or a local folder. */
  model: string;
  device?: 'webgpu' | 'wasm' | 'cpu';
  dtype?: 'q4' | 'q4f16' | 'q8' | 'fp16' | 'fp32';
  allowRemoteModels?: boolean;
  maxNewTokens?: number;
  /**
   * Logit-level hard mask (default true): while the model writes its answer, only tokens that
   * continue an allowed call (or END) can be produced, so every answer names an allowed tool.
   */
  hardMask?: boolean;
  /**
   * Browsers: where transformers.js's ONNX Runtime files are served (a folder URL, or {mjs, wasm}
   * URLs). Without it transformers.js fetches them from a CDN; serve them to stay offline.
   */
  wasmPaths?: string | { mjs: string; wasm: string };
  /**
   * The `@huggingface/transformers` module (optional peer): Node imports it itself; bundled apps pass `await
   * import('@huggingface/transformers')`.
   */
  transformers?: object;
}

/**
 * A causal LM run in-process by transformers.js (an optional peer), with a hard logit mask over the allowed answers by
 * default.
 */
export async function transformersModel(options: TransformersModelOptions): Promise<LocalModel> {
  // An optional peer dependency: loaded only when a local LLM is asked for.
  const { AutoTokenizer, AutoModelForCausalLM, LogitsProcessor, env } = await importOptional<
    typeof import('@huggingface/transformers')
  >('@huggingface/transformers', 'a transformers.js language model', options.transformers);
  env.allowRemoteModels = options.allowRemoteModels ?? false;
  const wasm = env.backends?.onnx?.wasm as { wasmPaths?: unknown } | undefined;
  if (options.wasmPaths !== undefined && wasm) wasm.wasmPaths = options.wasmPaths;
  let tokenizer: Awaited<ReturnType<typeof AutoTokenizer.from_pretrained>>;
  let model: Awaited<ReturnType<typeof AutoModelForCausalLM.from_pretrained>>;
  try {
    tokenizer = await AutoTokenizer.from_pretrained(options.model, { local_files_only: !env.allowRemoteModels });
    model = await AutoModelForCausalLM.from_pretrained(options.model, {
      device: options.device ?? 'cpu',
      dtype: options.dtype ?? 'q4',
      local_files_only: !env.allowRemoteModels,
    });
  } catch (cause) {
    throw new DtdrError(
      'options',
      `cannot load language model "${options.model}": ` +
        `${cause instanceof Error ? cause.message.split('\n')[0] : String(cause)}`,
      { hint: 'give a local model folder, or allow remote models', cause },
    );
  }
  return {
    async generate(request: GenerateRequest) {
      const prompt = tokenizer.apply_chat_template(request.messages, {
        tools: request.tools as never,
        add_generation_prompt: true,
        tokenize: false,
      });
      const inputs = tokenizer(prompt);
      const promptLength = (inputs.input_ids as { dims: number[] }).dims[1];
      const masks =
        options.hardMask === false
          ? []
          : [
              hardMask(
                LogitsProcessor,
                request,
                promptLength,
                (text) => tokenizer.encode(text, { add_special_tokens: false }),
                eosTokenIds(model, tokenizer),
              ),
            ];
      const output = (await model.generate({
        ...inputs,
        max_new_tokens: options.maxNewTokens ?? 256,
        do_sample: false,
        ...(masks.length ? { logits_processor: masks as never } : {}),
      })) as { dims: number[]; tolist(): number[][] };
      const ids = output.tolist()[0].slice((inputs.input_ids as { dims: number[] }).dims[1]);
      return tokenizer.decode(ids, { skip_special_tokens: true });
    },
  };
}

/** End-of-sequence ids the model stops at (from its generation config, else the tokenizer). */
function eosTokenIds(model: unknown, tokenizer: unknown): number[] {
  const fromConfig = model as {
    generation_config?: { eos_token_id?: number | number[] };
    config?: { eos_token_id?: number | number[] };
  };
  const id =
    fromConfig.generation_config?.eos_token_id ??
    fromConfig.config?.eos_token_id ??
    (tokenizer as { eos_token_id?: number }).eos_token_id;
  return (Array.isArray(id) ? id : id === undefined ? [] : [id]).map(Number);
}

/**
 * A transformers.js LogitsProcessor (subclassed from the loaded module's own class) that keeps
 * the generated tokens inside the step's allowed answers: every other logit becomes -Infinity.
 */
function hardMask(
  Base: typeof import('@huggingface/transformers').LogitsProcessor,
  request: GenerateRequest,
  promptLength: number,
  encode: (text: string) => number[],
  eos: number[],
) {
  const trie = new AnswerTrie(
    allowedAnswers(request.format, request.stage, request.allowed).map((a) => ({
      tokens: encode(a.text),
      open: a.open,
    })),
  );
  class HardMask extends Base {
    override _call(inputIds: bigint[][], logits: import('@huggingface/transformers').Tensor) {
      const [batch, vocab] = logits.dims;
      const data = logits.data as Float32Array;
      for (let b = 0; b < batch; b++) {
        const generated = inputIds[b].slice(promptLength).map(Number);
        const next = trie.next(generated);
        if (next.free) continue;
        const keep = new Set(next.tokens);
        if (next.complete || next.dead) for (const e of eos) keep.add(e);
        const row = data.subarray(b * vocab, (b + 1) * vocab);
        for (let t = 0; t < vocab; t++) if (!keep.has(t)) row[t] = -Infinity;
      }
      return logits;
    }
  }
  return new HardMask();
}

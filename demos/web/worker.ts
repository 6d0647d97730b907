/**
 * Training off the main thread: the page posts tools, demonstrations and a method; the worker
 * embeds them with its own copy of the page's encoder (ONNX Runtime Web, WASM), trains, reports
 * progress as it goes, and posts back the model's binary artifact (transferred, not copied).
 */
import {
  Dtdr,
  DtdrError,
  loadEncoder,
  type Encoder,
  type MethodName,
  type Plan,
  type ToolSpec,
} from '../../src/index.js';
// The playground offers the paper's methods too: an app that ships only DTDR-G leaves this out.
import '../../src/methods.js';

export interface TrainRequest {
  tools: ToolSpec[];
  plans: Plan[];
  method: MethodName;
  dataset: string;
  /** The page's `?encoder=` folder, as an absolute URL; absent: the bundled encoder. */
  encoder?: string;
}

export type TrainMessage =
  | { type: 'progress'; phase: string; fraction: number }
  | { type: 'done'; model: Uint8Array; seconds: number }
  | { type: 'error'; message: string; hint?: string };

let encoder: Promise<Encoder> | undefined;
const post = (message: TrainMessage, transfer: Transferable[] = []) =>
  (self as unknown as Worker).postMessage(message, transfer);

self.onmessage = async (event: MessageEvent<TrainRequest>) => {
  const { tools, plans, method, dataset, encoder: folder } = event.data;
  const started = performance.now();
  try {
    post({ type: 'progress', phase: 'loading the encoder', fraction: 0 });
    encoder ??= loadEncoder({ model: folder });
    const model = await Dtdr.train({
      method,
      tools,
      plans,
      encoder: await encoder,
      dataset,
      onProgress: (p) => post({ type: 'progress', phase: p.phase, fraction: p.fraction }),
    });
    const bytes = model.toBinary();
    post({ type: 'done', model: bytes, seconds: (performance.now() - started) / 1000 }, [bytes.buffer]);
  } catch (error) {
    post({
      type: 'error',
      message: error instanceof Error ? error.message : String(error),
      hint: error instanceof DtdrError ? error.hint : undefined,
    });
  }
};

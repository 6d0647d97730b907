/**
 * URLs of the earlier default encoder's files (`dtdr-glove-100d`), still shipped so that models trained on it load
 * after an upgrade. A module of its own, imported only when that encoder is asked for: a bundler emits the files as
 * assets of a lazy chunk, and an app on the default never downloads them.
 */
export const GLOVE_FILES: Record<string, URL> = {
  'config.json': new URL('../../models/dtdr-glove-100d/config.json', import.meta.url),
  'tokenizer.json': new URL('../../models/dtdr-glove-100d/tokenizer.json', import.meta.url),
  'tokenizer_config.json': new URL('../../models/dtdr-glove-100d/tokenizer_config.json', import.meta.url),
  'onnx/model_quantized.onnx': new URL('../../models/dtdr-glove-100d/onnx/model_quantized.onnx', import.meta.url),
  'manifest.json': new URL('../../models/dtdr-glove-100d/manifest.json', import.meta.url),
};

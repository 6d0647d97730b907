// Everything here runs in any JavaScript runtime; the two entry points add their platform's I/O.
export { DtdrError, type DtdrErrorCode, type DtdrErrorDetails } from './core/errors.js';
export { LruCache, withEmbeddingCache, type Encoder } from './core/encoder.js';
export { BUNDLED_ENCODER_ID, type EncoderDevice, type EncoderDtype, type EncoderOptions } from './encoders/transformers.js';

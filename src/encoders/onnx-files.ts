/**
 * Reading an encoder's model folder: its JSON files, the weight file for a dtype, and the fingerprint
 * recorded in trained models. Apart from onnx.ts, which runs the model: none of this needs ONNX Runtime.
 */
import { sha256 } from '@noble/hashes/sha2';
import { bytesToHex, utf8ToBytes } from '@noble/hashes/utils';
import { DtdrError } from '../core/base/errors.js';

/** Which weight file of an encoder folder to load (by quantisation). */
export type EncoderDtype = 'auto' | 'fp32' | 'fp16' | 'q8' | 'int8' | 'uint8' | 'q4' | 'bnb4' | 'q4f16';

/** Reads the files of one model folder, wherever it lives (disk, URL, app bundle). */
export interface ModelFiles {
  /** Where the folder is, for messages (a path or URL). */
  readonly location: string;
  /** A file of the model folder as text. */
  text(name: string): Promise<string>;
  /** A file of the model folder as bytes. */
  bytes(name: string): Promise<Uint8Array>;
  /** Whether a file exists (used to find the weight file); may be approximate for URLs. */
  has?(name: string): Promise<boolean>;
}

const DTYPE_SUFFIX: Record<Exclude<EncoderDtype, 'auto'>, string> = {
  fp32: '',
  fp16: '_fp16',
  q8: '_quantized',
  int8: '_int8',
  uint8: '_uint8',
  q4: '_q4',
  bnb4: '_bnb4',
  q4f16: '_q4f16',
};

/** A model folder's JSON file as an object, or a DtdrError naming the file. */
export function parseJson(text: string, name: string, location: string): Record<string, unknown> {
  try {
    const value = JSON.parse(text.charCodeAt(0) === 0xfeff ? text.slice(1) : text) as unknown;
    if (value && typeof value === 'object' && !Array.isArray(value)) return value as Record<string, unknown>;
  } catch {
    // reported below
  }
  throw new DtdrError('encoder', `${name} is not a JSON object`, {
    file: `${location}/${name}`,
    hint: 'restore the file from the model folder you copied',
  });
}

/** Reads one file of the folder; a failure becomes a DtdrError that says what an encoder folder holds. */
export async function readOrExplain<T>(
  files: ModelFiles,
  name: string,
  read: (name: string) => Promise<T>,
): Promise<T> {
  try {
    return await read(name);
  } catch (cause) {
    if (DtdrError.isInstance(cause)) throw cause;
    throw new DtdrError(
      'encoder',
      `cannot read ${name} of the encoder at ${files.location}: ` +
        `${cause instanceof Error ? cause.message.split('\n')[0] : String(cause)}`,
      {
        hint: 'an encoder folder holds config.json, tokenizer.json, tokenizer_config.json and onnx/model*.onnx',
        cause,
      },
    );
  }
}

/** The weight file for the dtype asked (or the folder's configured one, then fp32, then q8), or a DtdrError. */
export async function pickWeightFile(
  files: ModelFiles,
  config: Record<string, unknown>,
  options: { dtype?: EncoderDtype },
): Promise<string> {
  const configured = (config['transformers.js_config'] as { dtype?: unknown } | undefined)?.dtype;
  const wanted =
    options.dtype && options.dtype !== 'auto'
      ? options.dtype
      : typeof configured === 'string' && configured in DTYPE_SUFFIX
        ? (configured as keyof typeof DTYPE_SUFFIX)
        : 'fp32';
  const candidates =
    options.dtype && options.dtype !== 'auto' ? [wanted] : [...new Set([wanted, 'fp32', 'q8'] as const)];
  let weightFile: string | undefined;
  for (const dtype of candidates) {
    const name = `onnx/model${DTYPE_SUFFIX[dtype]}.onnx`;
    if (!files.has || (await files.has(name))) {
      weightFile = name;
      break;
    }
  }
  if (!weightFile) {
    throw new DtdrError('encoder', `no weight file for dtype ${candidates.join(' or ')} in ${files.location}/onnx`, {
      hint: `add onnx/model${DTYPE_SUFFIX[wanted]}.onnx, or pass the dtype of a file that is there`,
    });
  }
  return weightFile;
}

/**
 * SHA-256 over the SHA-256s of the weight file and tokenizer.json. A folder whose manifest.json
 * lists them (the bundled encoder's does) is trusted for them, so loading does not hash megabytes
 * of weights on every start; any other folder is hashed.
 */
export async function encoderFingerprint(
  files: ModelFiles,
  weightFile: string,
  weights: Uint8Array,
  tokenizerText: string,
): Promise<string> {
  let listed: Record<string, unknown> = {};
  if (files.has && (await files.has('manifest.json'))) {
    try {
      const manifest = JSON.parse(await files.text('manifest.json')) as { sha256?: Record<string, unknown> };
      if (manifest.sha256 && typeof manifest.sha256 === 'object') listed = manifest.sha256;
    } catch {
      // an unreadable manifest only costs the hashing below
    }
  }
  const sha = (name: string, bytes: () => Uint8Array) =>
    typeof listed[name] === 'string' ? listed[name] : bytesToHex(sha256(bytes()));
  return bytesToHex(
    sha256(utf8ToBytes(`${sha(weightFile, () => weights)}:${sha('tokenizer.json', () => utf8ToBytes(tokenizerText))}`)),
  );
}

/** Reading text files strictly (Node only): bytes that are not UTF-8 are an error, not U+FFFD. */
import { readFileSync } from 'node:fs';
import { DtdrError, type DtdrErrorCode } from '../core/base/errors.js';

/**
 * Decodes UTF-8 strictly. A byte sequence that is not UTF-8 (a Latin-1 or UTF-16 file, a
 * truncated download) throws a DtdrError naming the file and the 1-based line it is on, instead
 * of turning silently into U+FFFD and then into wrong tool names or requests. A byte-order mark
 * is kept, as `readFileSync(path, 'utf8')` keeps it: the parsers skip it.
 */
export function decodeUtf8(bytes: Uint8Array, file: string, code: DtdrErrorCode = 'data'): string {
  try {
    return new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(bytes);
  } catch {
    throw new DtdrError(code, 'the file is not valid UTF-8', {
      file,
      line: firstBadLine(bytes),
      hint: 'save it as UTF-8 (e.g. `iconv -f latin1 -t utf-8`)',
    });
  }
}

/** The 1-based line of the first invalid byte sequence (a newline byte is never inside a UTF-8 character). */
function firstBadLine(bytes: Uint8Array): number | undefined {
  const decoder = new TextDecoder('utf-8', { fatal: true });
  let start = 0;
  for (let line = 1; start <= bytes.length; line++) {
    let end = bytes.indexOf(10, start);
    if (end < 0) end = bytes.length;
    try {
      decoder.decode(bytes.subarray(start, end));
    } catch {
      return line;
    }
    start = end + 1;
  }
  return undefined;
}

/** Reads a text file that must be UTF-8 (see decodeUtf8). */
export function readUtf8File(path: string | number, file = String(path), code: DtdrErrorCode = 'data'): string {
  return decodeUtf8(readFileSync(path), file, code);
}

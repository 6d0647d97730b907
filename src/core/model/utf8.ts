/**
 * UTF-8 without TextEncoder/TextDecoder, which some engines the core runs in lack (QuickJS;
 * older Hermes). Used for hashing and the binary header only, so plain loops are fast enough.
 */
export function utf8Encode(text: string): Uint8Array {
  const out: number[] = [];
  for (const ch of text) {
    const c = ch.codePointAt(0)!;
    if (c < 0x80) out.push(c);
    else if (c < 0x800) out.push(0xc0 | (c >> 6), 0x80 | (c & 63));
    else if (c < 0x10000) out.push(0xe0 | (c >> 12), 0x80 | ((c >> 6) & 63), 0x80 | (c & 63));
    else out.push(0xf0 | (c >> 18), 0x80 | ((c >> 12) & 63), 0x80 | ((c >> 6) & 63), 0x80 | (c & 63));
  }
  return Uint8Array.from(out);
}

/**
 * Strict decoding: malformed input throws (the caller turns it into a DtdrError). Linear: TextDecoder where the engine
 * has one, else a loop that joins code units in chunks.
 */
export function utf8Decode(bytes: Uint8Array): string {
  const Decoder = (globalThis as { TextDecoder?: typeof TextDecoder }).TextDecoder;
  if (Decoder) {
    try {
      return new Decoder('utf-8', { fatal: true }).decode(bytes);
    } catch {
      throw new Error('invalid UTF-8');
    }
  }
  const parts: string[] = [];
  const units: number[] = [];
  for (let i = 0; i < bytes.length;) {
    const b = bytes[i];
    let c: number;
    let n: number;
    if (b < 0x80) [c, n] = [b, 1];
    else if (b >> 5 === 6) [c, n] = [b & 31, 2];
    else if (b >> 4 === 14) [c, n] = [b & 15, 3];
    else if (b >> 3 === 30) [c, n] = [b & 7, 4];
    else throw new Error(`invalid UTF-8 at byte ${i}`);
    if (i + n > bytes.length) throw new Error('truncated UTF-8');
    for (let k = 1; k < n; k++) {
      if (bytes[i + k] >> 6 !== 2) throw new Error(`invalid UTF-8 at byte ${i + k}`);
      c = (c << 6) | (bytes[i + k] & 63);
    }
    if (c > 0x10ffff) throw new Error(`invalid UTF-8 at byte ${i}`);
    if (c < 0x10000) units.push(c);
    else units.push(0xd800 + ((c - 0x10000) >> 10), 0xdc00 + ((c - 0x10000) & 1023));
    if (units.length >= 8192) parts.push(String.fromCharCode(...units.splice(0)));
    i += n;
  }
  parts.push(String.fromCharCode(...units));
  return parts.join('');
}

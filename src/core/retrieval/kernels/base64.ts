/**
 * Base64 to bytes, by hand: the kernel's bytes ship as base64, and `atob` is missing on some of
 * the engines dtdr runs on (Hermes before 0.74). Whitespace and padding are skipped; any other
 * character outside the alphabet throws (the text is generated, so that is a broken build).
 */
const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';

export function decodeBase64(text: string): Uint8Array<ArrayBuffer> {
  const digits = new Int8Array(128).fill(-1);
  for (let i = 0; i < ALPHABET.length; i++) digits[ALPHABET.charCodeAt(i)] = i;
  const out = new Uint8Array(Math.floor((text.replace(/[^A-Za-z0-9+/]/g, '').length * 3) / 4));
  let [bits, held, n] = [0, 0, 0];
  for (let i = 0; i < text.length; i++) {
    const d = digits[text.charCodeAt(i)] ?? -1;
    if (d < 0) {
      if (/[\s=]/.test(text[i])) continue;
      throw new Error(`not base64: ${JSON.stringify(text[i])} at ${i}`);
    }
    bits = (bits << 6) | d;
    held += 6;
    if (held >= 8) {
      held -= 8;
      out[n++] = (bits >> held) & 0xff;
    }
  }
  return out;
}

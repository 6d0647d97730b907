/**
 * Cosine similarity for the encoder tests, Node and browser pages alike (no imports). The empty
 * text embeds to the zero vector: two zero vectors are the same vector (1), one is like nothing (0).
 */
export function cosine(a: ArrayLike<number>, b: ArrayLike<number>): number {
  let dot = 0;
  let na = 0;
  let nb = 0;
  for (let i = 0; i < a.length; i++) {
    dot += a[i] * b[i];
    na += a[i] * a[i];
    nb += b[i] * b[i];
  }
  if (na === 0 && nb === 0) return 1;
  return na === 0 || nb === 0 ? 0 : dot / Math.sqrt(na * nb);
}

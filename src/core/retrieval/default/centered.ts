/**
 * Description match without hubs, for tools added after training (new tools keep their
 * voice at any tool-set size). Mean word-vector embeddings share a common direction, so a tool
 * whose description is made of frequent words is close to every request: among thousands of
 * tools such "hubs" crowd an added tool out of its own request's best matches. Subtracting the
 * tool set's mean vector from both sides first (centring) removes that direction. The centred
 * tool vectors are not rescaled to unit length: for unit-norm embeddings the score then ranks
 * tools as cos(request, tool) − tool · mean, so a tool near the tool set's centre (a hub) pays
 * for it, as in CSLS. Rescaling gave that back: among 16,000 tools of random frequent words it
 * put the asked-for added tool in the best 6 for 21 of the 40 development requests
 * (test/fixtures/added-tool-dev-requests.json), unscaled for 28. Used only to decide which added
 * tools join a set; rankings are unchanged.
 */
export class CenteredMatch {
  private readonly vectors: Float32Array;
  private readonly mean: Float64Array;
  private readonly centered: Float64Array;
  readonly scores: Float32Array;
  private query: Float32Array | undefined;

  constructor(
    toolVectors: Float32Array,
    private readonly tools: number,
    private readonly dim: number,
  ) {
    const mean = (this.mean = new Float64Array(dim));
    for (let f = 0; f < tools; f++) for (let d = 0; d < dim; d++) mean[d] += toolVectors[f * dim + d] / tools;
    const vectors = (this.vectors = new Float32Array(tools * dim));
    for (let f = 0; f < tools; f++)
      for (let d = 0; d < dim; d++) vectors[f * dim + d] = toolVectors[f * dim + d] - mean[d];
    this.centered = new Float64Array(dim);
    this.scores = new Float32Array(tools);
  }

  /** Per tool, the dot product of the centred request and the centred description (kept for the same request). */
  score(q: Float32Array): Float32Array {
    if (this.query && this.query.length === q.length && this.query.every((v, d) => v === q[d])) return this.scores;
    this.query = Float32Array.from(q);
    const { dim, centered, vectors, scores } = this;
    for (let d = 0; d < dim; d++) centered[d] = q[d] - this.mean[d];
    for (let f = 0; f < this.tools; f++) {
      let s = 0;
      for (let d = 0; d < dim; d++) s += centered[d] * vectors[f * dim + d];
      scores[f] = s;
    }
    return scores;
  }
}

/**
 * Bundled by test/quickjs.test.ts with esbuild and evaluated inside QuickJS (a stand-in for the
 * Hermes and JavaScriptCore engines of React Native): loads a saved model with the pure core and
 * retrieves with precomputed vectors, no Node, DOM or ONNX Runtime present.
 */
import { Dtdr } from '../../src/core/dtdr.js';
import type { Encoder } from '../../src/core/base/encoder.js';

interface Request {
  query: string;
  history: string[];
}

(globalThis as Record<string, unknown>).dtdrRetrieveAll = (
  artifactText: string,
  vectorsText: string,
  requestsText: string,
): void => {
  const vectors = new Map<string, number[]>(Object.entries(JSON.parse(vectorsText) as Record<string, number[]>));
  const artifact = JSON.parse(artifactText) as { encoder: { id: string; dimension: number } };
  // The encoder's work was done elsewhere (on the phone's ONNX runtime, or ahead of time).
  const precomputed: Encoder = {
    id: artifact.encoder.id,
    dimension: artifact.encoder.dimension,
    async embed(texts) {
      return texts.map((t) => {
        const v = vectors.get(t);
        if (!v) throw new Error(`no precomputed vector for "${t}"`);
        return Float32Array.from(v);
      });
    },
  };
  const run = async () => {
    const model = Dtdr.load(artifact, precomputed, 'quickjs');
    const out = [];
    for (const r of JSON.parse(requestsText) as Request[]) {
      const retrieval = await model.retrieve(r.query, r.history);
      out.push(retrieval.candidates.map((c) => [c.tool, c.probability]));
    }
    return out;
  };
  run().then(
    (out) => ((globalThis as Record<string, unknown>).dtdrResult = JSON.stringify(out)),
    (e: unknown) => ((globalThis as Record<string, unknown>).dtdrResult = JSON.stringify({ error: String(e) })),
  );
};

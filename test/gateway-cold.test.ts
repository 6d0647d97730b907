/**
 * find_tools before the gateway has learned anything (src/gateway/words.ts): where dtdr is unsure
 * from the descriptions alone, the tools come best first by the mean of dtdr's score and the
 * request's BM25 score, each scaled to [0, 1]; anywhere else dtdr's set, then its ranking. Hand-
 * checked on three tools, then on real data against the gateway's peers (skipped, with a message,
 * when ../shared/data is absent).
 */
import { describe, expect, it } from 'vitest';
import { END, type Plan, type ToolSpec } from '../src/core/base/types.js';
import { Dtdr } from '../src/core/dtdr.js';
import { splitDataset } from '../src/core/evaluation/evaluate.js';
import { planSteps } from '../src/core/plans/plan.js';
import { makeRanking } from '../src/core/retrieval/ranking.js';
import type { Peer } from '../src/core/retrieval/types.js';
import type { Retrieval } from '../src/core/selection/retrieval.js';
import { aiSdkPeer } from '../src/cli/peers/aisdk.js';
import { oramaPeer } from '../src/cli/peers/orama.js';
import { readDatasetDir } from '../src/data/node.js';
import { loadEncoder } from '../src/encoders/node.js';
import { stepTools, WordRanking } from '../src/gateway/words.js';
import { hasSharedData, SHARED_DATA } from './helpers.js';

const tools: ToolSpec[] = [
  { name: 'email_send', description: 'Send an email' },
  { name: 'calendar_read', description: 'Read the calendar' },
  { name: 'flight_book', description: 'Book a ticket' },
];
const labels = [...tools.map((t) => t.name), END];
// dtdr's probabilities: scaled over the three tools (0.1 … 0.55) they are 1, 0.444, 0.
const meaning = makeRanking(labels, Float64Array.from([0.55, 0.3, 0.1, 0.05]));

function retrieval(group: string, confident: boolean): Retrieval {
  const ranking = { ...meaning, group, confident, order: meaning.order, top: undefined };
  return { candidates: [{ tool: 'email_send', probability: 0.55 }], widened: !confident, confident, ranking };
}

describe('find_tools from the descriptions alone: meaning and words', () => {
  const words = new WordRanking(labels, tools);

  it('averages the two scaled scores: "book a flight" lifts flight_book, the only tool with its words, level with the best by meaning', () => {
    // BM25 scaled: flight_book 1 (name and description), the others 0 → means 0.5, 0.222, 0.5; END 0
    const fused = words.fuse(meaning, 'book a flight');
    expect([...fused].map((x) => +x.toFixed(3))).toEqual([0.5, 0.222, 0.5, 0]);
  });

  it('with no word in common keeps dtdr’s order (half its scaled scores)', () => {
    expect([...words.fuse(meaning, 'what is the weather')].map((x) => +x.toFixed(3))).toEqual([0.5, 0.222, 0, 0]);
  });

  it('an unsure tools-only step takes the fused order; the set stays dtdr’s', () => {
    const got = stepTools(
      retrieval('tools-only', false),
      2,
      () => true,
      (r) => words.fuse(r, 'book a flight'),
    );
    expect(got).toEqual({ names: ['email_send', 'flight_book'], set: ['email_send'], fromWords: true });
  });

  it('a confident step, or one answered from demonstrations, keeps dtdr’s set, then its ranking', () => {
    const fuse = (r: typeof meaning) => words.fuse(r, 'book a flight');
    for (const [group, confident] of [
      ['tools-only', true],
      ['seen/few/low', false],
    ] as const) {
      const got = stepTools(retrieval(group, confident), 2, () => true, fuse);
      expect(got).toEqual({ names: ['email_send', 'calendar_read'], set: ['email_send'], fromWords: false });
    }
  });

  it('with no fusion given (an encoder the fusion was not chosen for), an unsure tools-only step keeps dtdr’s order', () => {
    const got = stepTools(retrieval('tools-only', false), 2, () => true, undefined);
    expect(got).toEqual({ names: ['email_send', 'calendar_read'], set: ['email_send'], fromWords: false });
  });

  it('never offers a tool that is down, nor END', () => {
    const got = stepTools(
      retrieval('tools-only', false),
      3,
      (t) => t !== 'flight_book',
      (r) => words.fuse(r, 'book a flight'),
    );
    expect(got.names).toEqual(['email_send', 'calendar_read']);
  });
});

/** Top-5 recall over the tool steps, as the gateway experiment counts it (peers see the request only). */
async function recall(pick: (plan: Plan, history: string[]) => Promise<string[]>, plans: Plan[]): Promise<number> {
  let [hit, steps] = [0, 0];
  for (const plan of plans)
    for (const step of planSteps(plan)) {
      if (step.acceptable[0] === END) continue;
      steps++;
      const top = await pick(plan, step.history);
      if (step.acceptable.some((a) => top.includes(a))) hit++;
    }
  return hit / steps;
}

describe.skipIf(!hasSharedData)('a gateway that has learned nothing, on real data (test plans)', () => {
  for (const world of ['restbench-tmdb', 'ultratool']) {
    it(`${world}: find_tools' top 5 hold a needed tool at least as often as Orama BM25's and the AI SDK toolSearch's, and more often than dtdr's ranking alone`, async () => {
      const dataset = readDatasetDir(`${SHARED_DATA}/${world}`);
      const { test } = splitDataset(dataset);
      const model = await Dtdr.train({ tools: dataset.tools, plans: [], encoder: await loadEncoder() });
      let words: WordRanking | undefined;
      const found = (fused: boolean) => async (plan: Plan, history: string[]) => {
        const r = await model.retrieve(plan.query, history);
        if (words?.labels !== r.ranking.labels) words = new WordRanking(r.ranking.labels, model.tools);
        const fuse = fused ? (k: typeof r.ranking) => words!.fuse(k, plan.query) : () => new Float64Array(0);
        const unfused = fused ? r : { ...r, ranking: { ...r.ranking, group: 'none' } };
        return stepTools(unfused, 5, () => true, fuse).names;
      };
      const gateway = await recall(found(true), test);
      const alone = await recall(found(false), test);
      const peers: Record<string, number> = {};
      for (const peer of [oramaPeer('orama-bm25', 'fulltext'), aiSdkPeer()] as Peer[]) {
        const ranker = await peer.fit(dataset.tools);
        peers[peer.name] = await recall(async (plan) => {
          const ranking = await ranker.rank({ query: plan.query, history: [] });
          return [...ranking.order]
            .map((i) => ranking.labels[i])
            .filter((l) => l !== END)
            .slice(0, 5);
        }, test);
      }
      console.log(
        `${world}: find_tools from the descriptions ${gateway.toFixed(3)}, dtdr alone ${alone.toFixed(3)}`,
        peers,
      );
      for (const p of Object.values(peers)) expect(gateway).toBeGreaterThanOrEqual(p);
      expect(gateway).toBeGreaterThan(alone);
    }, 120_000);
  }
});

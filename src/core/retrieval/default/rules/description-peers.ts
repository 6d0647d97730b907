/**
 * The description-peers rule: where a tool no demonstration used matches the request by
 * description about as well as the best-described tool (at least DESCRIPTION_PEER of its
 * probability), up to two such tools join the set: the ranking's demonstrations cannot tell the
 * request is not for them. While fewer than DEMONSTRATED_TOOLS of the tools have demonstrations,
 * the demonstrations cover a slice of the app (a few features' runs) and the step is not confident
 * on their strength. Once most tools have them, a tool without any is a rarely needed one: the
 * learned top tool stays the better bet, the peer only widens the confident set (on UltraTool's
 * random draws of 300 runs, confident steps went from 32% to 45% of steps, their misses from 3.0%
 * to 2.8%; skewed draws, below the share, are unchanged: decision 0007).
 */
import { DEMONSTRATED_TOOLS, FIRST_DAY_RULE, type StepRule, type StepView } from '../rule.js';

/** An undemonstrated tool whose description probability is at least this share of the best tool's is a peer. */
export const DESCRIPTION_PEER = 0.5;
/** Peers offered at most, best first. */
const OFFERED = 2;

export const descriptionPeersRule: StepRule<object> = {
  name: 'description-peers',
  ...FIRST_DAY_RULE,
  check(_state, v) {
    if (!v.undemonstrated || v.best === v.side.end) return null;
    const peers = descriptionPeers(v);
    if (peers.length === 0) return null;
    const names = peers.map((f) => `"${v.side.labels[f]}"`).join(' and ');
    const many = peers.length > 1;
    return {
      tools: peers,
      unsure: v.demonstratedShare < DEMONSTRATED_TOOLS,
      because: [
        `${names} ${many ? 'match' : 'matches'} the request by description as well as the best-described tool and ` +
          `${many ? 'have' : 'has'} no demonstrations yet`,
      ],
    };
  },
};

function descriptionPeers(v: StepView): number[] {
  const pT = v.descriptions();
  const L = v.side.labels.length;
  let best = 0;
  for (let f = 0; f < L; f++) if (f !== v.side.end && !v.unavailable?.has(f)) best = Math.max(best, pT[f]);
  const peers: number[] = [];
  for (let f = 0; f < L; f++) {
    if (f !== v.side.end && v.counts[f] < 1 && !v.unavailable?.has(f) && pT[f] >= DESCRIPTION_PEER * best)
      peers.push(f);
  }
  return peers.sort((a, b) => pT[b] - pT[a] || a - b).slice(0, OFFERED);
}

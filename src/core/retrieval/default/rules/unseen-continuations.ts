/**
 * The unseen-continuations rule, while a model has few demonstrations (< FEW_RUNS) or they cover
 * under DEMONSTRATED_TOOLS of the tools (rule.ts): where the descriptions rank some
 * tool above the confident top tool and no demonstration ever called that tool after these calls
 * (the pooled graph's floor), the step is not confident and the best such tool joins the set. A few
 * features' runs leave whole steps unseen (the first runs of an app that writes files never modify
 * one), however many they are: 586 runs of UltraTool's three most common first tools demonstrate 18%
 * of its tools, and were confidently wrong on 22 steps ("cancel my flight" → `flight_search`), 3
 * with the rule. Thousands of runs over most of the tools that never continue with a tool outweigh
 * its description, so the rule stops there (decision 0007).
 */
import { FLOOR_GRAPH, GG } from '../layout.js';
import { DEMONSTRATED_TOOLS, FIRST_DAY_RULE, type StepRule, type StepView } from '../rule.js';

/** Below this many demonstrations the rule speaks. */
export const FEW_RUNS = 100;
/** Tools offered at most, best first. */
const OFFERED = 1;

export const unseenContinuationsRule: StepRule<object> = {
  name: 'unseen-continuations',
  ...FIRST_DAY_RULE,
  check(_state, v) {
    if (!v.confident || v.best === v.side.end) return null;
    if (v.demonstrations() >= FEW_RUNS && v.demonstratedShare >= DEMONSTRATED_TOOLS) return null;
    const peers = unseenPreferred(v);
    if (peers.length === 0) return null;
    const names = peers.map((f) => `"${v.side.labels[f]}"`).join(' and ');
    const them = peers.length > 1 ? 'them' : 'it';
    return {
      tools: peers,
      because: [
        `the descriptions rank ${names} above "${v.side.labels[v.best]}", and no demonstration calls ${them} after ` +
          `these calls`,
      ],
    };
  },
};

function unseenPreferred(v: StepView): number[] {
  const pT = v.descriptions();
  const x = v.workspace.x;
  const L = v.side.labels.length;
  const floor = Math.fround(Math.log(FLOOR_GRAPH));
  const peers: number[] = [];
  for (let f = 0; f < L; f++) {
    if (f === v.best || f === v.side.end || v.unavailable?.has(f)) continue;
    if (pT[f] >= pT[v.best] && x[GG * L + f] <= floor) peers.push(f);
  }
  return peers.sort((a, b) => pT[b] - pT[a] || a - b).slice(0, OFFERED);
}

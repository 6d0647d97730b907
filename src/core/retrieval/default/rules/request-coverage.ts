/**
 * The request-coverage rule: a confident "the plan is done" while a request word that no call so
 * far and no set member explains, and some tool explains strongly (the word–tool alignment,
 * coverage.ts), is not confident; that tool joins the set. It has no state of its own: the
 * alignment is shared with the other word rules, and a model fitted before it has none (silent).
 */
import { unexplained } from '../coverage.js';
import type { StepRule } from '../rule.js';

/** The probability from which a label counts as in the set where the set has no conformal threshold. */
export const SET_FLOOR = 0.1;

export const requestCoverageRule: StepRule<true> = {
  name: 'request-coverage',
  fit: () => true,
  load: () => true,
  save() {},
  check(_, v) {
    if (!v.confident || v.best !== v.side.end || !v.coverage) return null;
    const strong = v.strongWords();
    if (strong.length === 0) return null;
    const floor = v.threshold > 0 ? v.threshold : SET_FLOOR;
    const p = v.probabilities;
    const inSet = (a: number) => p[a] >= floor || v.history.includes(a) || v.include.includes(a);
    const found = unexplained(v.coverage, strong, inSet, v.usable);
    if (found.length === 0) return null;
    const why = (u: { tool: number; word: string }) =>
      `no call so far and no tool in the set explains "${u.word}" in the request, which "${v.side.labels[u.tool]}" ` +
      `does`;
    return { tools: found.map((u) => u.tool), because: found.map(why) };
  },
};

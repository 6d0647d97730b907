/**
 * The request-coverage rule: a confident "the plan is done" while a request word that no call so
 * far and no set member explains, and some tool explains strongly (the word–tool alignment,
 * coverage.ts), is not confident; that tool joins the set. Its reason names only what was counted.
 * It has no state of its own: the alignment is the model's, and a model fitted before it has none
 * (silent).
 */
import { unexplained, type Unexplained } from '../coverage.js';
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
    const why = (u: Unexplained) => {
      const tool = `"${v.side.labels[u.tool]}"`;
      // Only what was counted: the demonstrations that say the word and call the tool, or the tool's description.
      const evidence =
        u.said === undefined
          ? `which ${tool} explains`
          : u.said > 0
            ? `and of the ${u.said} demonstrations whose request says it, ${u.calls} call ${tool}`
            : `as the description of ${tool} does`;
      return `the request says "${u.word}", ${evidence}, a tool not called so far nor in the set`;
    };
    return { tools: found.map((u) => u.tool), because: found.map(why) };
  },
};

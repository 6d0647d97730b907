/**
 * The novel-request rule: a request unlike the demonstrations' (its conformal novelty p-value,
 * novelty.ts, below NOVEL_P) is never confident. No held-out step measured requests like it, and
 * demonstrations from a few features say nothing of the others. It adds no tool: the ranking
 * already gave a never-demonstrated tool all of its description's share for such a request.
 */
import { NOVEL_P } from '../novelty.js';
import { FIRST_DAY_RULE, type StepRule } from '../rule.js';

export const novelRequestRule: StepRule<object> = {
  name: 'novel-request',
  ...FIRST_DAY_RULE,
  check(_state, v) {
    if (v.novelty >= NOVEL_P) return null;
    const share = Math.round(NOVEL_P * 100);
    return {
      tools: [],
      because: [
        // Said of the sample the p-value is measured on (NOVELTY_SAMPLE requests): a request among
        // the demonstrations but not in the sample can be as far from it.
        `the request is farther from the demonstration requests kept to judge novelty than ${100 - share}% ` +
          'of them are from each other',
      ],
    };
  },
};

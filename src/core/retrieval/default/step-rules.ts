/**
 * DTDR-G's step rules, in the order `rank` runs them (rule.ts: the interface). A rule is one file
 * under `rules/` and one line here; its state is fitted, learned, saved and loaded through the
 * interface, so nothing else changes.
 */
import type { StepRule } from './rule.js';
import { addedToolsRule } from './rules/added-tools.js';
import { descriptionPeersRule } from './rules/description-peers.js';
import { novelRequestRule } from './rules/novel-request.js';
import { unseenContinuationsRule } from './rules/unseen-continuations.js';
import { newCombinationsRule } from './rules/new-combinations.js';
import { requestCoverageRule } from './rules/request-coverage.js';
import { sequenceWordsRule } from './rules/sequence-words.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- each rule has a state type of its own
export const STEP_RULES: StepRule<any>[] = [
  novelRequestRule,
  addedToolsRule,
  descriptionPeersRule,
  unseenContinuationsRule,
  requestCoverageRule,
  newCombinationsRule,
  sequenceWordsRule,
];

/** The shipped rules' names, in order (ExperimentalGatedSettings.withoutRules names some of them). */
export const STEP_RULE_NAMES: readonly string[] = STEP_RULES.map((r) => r.name);

/** Each rule's state by name (a rule without one is silent). */
export type RuleStates = Record<string, unknown>;

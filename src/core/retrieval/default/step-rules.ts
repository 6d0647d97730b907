/**
 * DTDR-G's step rules, in the order `rank` runs them (rule.ts: the interface). A rule is one file
 * under `rules/` and one line here; its state is fitted, learned, saved and loaded through the
 * interface, so nothing else changes.
 *
 * Four rules (novel-request, description-peers, unseen-continuations, sequence-words) paid on no
 * world they were not designed on when left out one at a time (`npm run experiment --
 * rule-ablation`, docs/first-day.md) and were deleted; models saved with their state load without
 * it. What two of them did together on skewed runs, a confidence condition does (retriever.ts,
 * DEMONSTRATED_TOOLS). new-combinations pays only on the demo set, the one world whose test
 * requests recombine scenarios; elsewhere it speaks only where its held-out precision switches it on.
 */
import type { StepRule } from './rule.js';
import { addedToolsRule } from './rules/added-tools.js';
import { newCombinationsRule } from './rules/new-combinations.js';
import { requestCoverageRule } from './rules/request-coverage.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- each rule has a state type of its own
export const STEP_RULES: StepRule<any>[] = [addedToolsRule, requestCoverageRule, newCombinationsRule];

/** The shipped rules' names, in order (ExperimentalGatedSettings.withoutRules names some of them). */
export const STEP_RULE_NAMES: readonly string[] = STEP_RULES.map((r) => r.name);

/** Each rule's state by name (a rule without one is silent). */
export type RuleStates = Record<string, unknown>;

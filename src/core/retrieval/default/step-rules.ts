/**
 * DTDR-G's step rules, in the order `rank` runs them (rule.ts: the interface). A rule is one file
 * under `rules/` and one line here; its state is fitted, learned, saved and loaded through the
 * interface, so nothing else changes.
 *
 * Only rules that pay on worlds they were not designed on stay (`npm run experiment --
 * rule-ablation`, docs/first-day.md): five others (novel-request, description-peers,
 * unseen-continuations, new-combinations, sequence-words) paid on none and were deleted; models
 * saved with their state load without it.
 */
import type { StepRule } from './rule.js';
import { addedToolsRule } from './rules/added-tools.js';
import { requestCoverageRule } from './rules/request-coverage.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- each rule has a state type of its own
export const STEP_RULES: StepRule<any>[] = [addedToolsRule, requestCoverageRule];

/** The shipped rules' names, in order (ExperimentalGatedSettings.withoutRules names some of them). */
export const STEP_RULE_NAMES: readonly string[] = STEP_RULES.map((r) => r.name);

/** Each rule's state by name (a rule without one is silent). */
export type RuleStates = Record<string, unknown>;

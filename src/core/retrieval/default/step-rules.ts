/**
 * DTDR-G's step rules, in the order `rank` runs them (rule.ts: the interface). A rule is one file
 * under `rules/` and one line here; its state is fitted, learned, saved and loaded through the
 * interface, so nothing else changes.
 *
 * Four rules (novel-request, description-peers, unseen-continuations, sequence-words) paid on no
 * world they were not designed on when left out one at a time (`npm run experiment --
 * rule-ablation`, docs/first-day.md) and were deleted; models saved with their state load without
 * it. What two of them did together on skewed runs, a confidence condition does (calibrate-step.ts,
 * DEMONSTRATED_TOOLS). new-combinations pays only on the demo set, the one world whose test
 * requests recombine scenarios; elsewhere it speaks only where its held-out precision switches it on.
 */
import type { StepRule, StepView } from './rule.js';
import { addedToolsRule } from './rules/added-tools.js';
import { newCombinationsRule } from './rules/new-combinations.js';
import { requestCoverageRule } from './rules/request-coverage.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- each rule has a state type of its own
export const STEP_RULES: StepRule<any>[] = [addedToolsRule, requestCoverageRule, newCombinationsRule];

/** The shipped rules' names, in order (ExperimentalGatedSettings.withoutRules names some of them). */
export const STEP_RULE_NAMES: readonly string[] = STEP_RULES.map((r) => r.name);

/** Each rule's state by name (a rule without one is silent). */
export type RuleStates = Record<string, unknown>;

/** What the step rules decided: the set's named labels, their reasons, whether the step stays confident. */
export interface RuleOutcome {
  include: number[];
  because: string[];
  confident: boolean;
}

/**
 * Runs `rules` in order on the step `view` (whose set holds `given` so far): each may make the
 * step unsure and name tools for the set. The tools of the rules listed `last` (the added tools
 * the request matches by description) come after the others': where the set has too little room
 * for all, the first stay.
 */
export function runStepRules(
  rules: readonly StepRule<unknown>[],
  states: RuleStates,
  view: StepView,
  given: number[],
): RuleOutcome {
  // The lists are made when a rule finds something (most steps: none does); the view's `include` is copied
  // before its first addition.
  let first: number[] | undefined;
  let after: number[] | undefined;
  let because: string[] | undefined;
  let later: string[] | undefined;
  let named: number[] | undefined;
  for (const rule of rules) {
    const state = states[rule.name];
    if (state === undefined) continue;
    const found = rule.check(state, view);
    if (!found) continue;
    if (found.unsure !== false) view.confident = false;
    for (const f of found.tools) {
      if (view.include.includes(f)) continue;
      if (!named) view.include = named = [...given];
      named.push(f);
      if (rule.last) (after ??= []).push(f);
      else (first ??= []).push(f);
    }
    if (rule.last) (later ??= []).push(...found.because);
    else (because ??= []).push(...found.because);
  }
  const include = first || after ? [...given, ...(first ?? []), ...(after ?? [])] : given;
  return { include, because: [...(because ?? []), ...(later ?? [])], confident: view.confident };
}

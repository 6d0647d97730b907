import type { Dtdr } from '../dtdr.js';
import { planSteps } from '../plans/plan.js';
import { buildSelectionPrompt, type PromptFormat, type Strategy } from '../prompts/build.js';
import type { Ranking } from '../retrieval/types.js';
import { selectCandidates, type SelectOptions } from '../selection/select.js';
import { promptTokens, type PromptTokens, type TokenCounter } from '../prompts/tokens.js';
import type { Plan, PlanStep, ToolSpec } from '../base/types.js';

/** Prompt lengths per strategy over a set of steps. */
export interface PromptStudy {
  steps: number;
  /** Mean Qwen3 tokens per step and strategy. */
  tokens: Partial<Record<Strategy, PromptTokens>>;
  /** Coverage of F*_t by F_t against mean |F_t|, per threshold α. */
  thresholds: { alpha: number; coverage: number; setSize: number; widenedShare: number }[];
}

/**
 * Walks every test step with the ground-truth history, ranks once, and measures (a) the prompt
 * length of each strategy in real tokens and (b) the coverage / set-size trade-off of α.
 */
export async function studyPrompts(
  model: Dtdr,
  tools: ToolSpec[],
  test: Plan[],
  counter: TokenCounter,
  options: {
    strategies: Strategy[];
    format?: PromptFormat;
    alphas: number[];
    demonstrations?: Plan[];
    select?: SelectOptions;
  },
): Promise<PromptStudy> {
  const steps = test.flatMap((p) => planSteps(p));
  const rankings: Ranking[] = [];
  for (const s of steps) rankings.push(await model.rank(s.query, s.history));
  const tokens = measurePromptTokens(steps, rankings, tools, counter, options);
  const thresholds = options.alphas.map((alpha) => {
    let covered = 0,
      size = 0,
      widened = 0;
    steps.forEach((s, i) => {
      const set = selectCandidates(rankings[i], { ...options.select, alpha });
      const ok = new Set(s.acceptable);
      if (set.candidates.some((c) => ok.has(c.tool))) covered++;
      size += set.candidates.length;
      if (set.widened) widened++;
    });
    return {
      alpha,
      coverage: covered / steps.length,
      setSize: size / steps.length,
      widenedShare: widened / steps.length,
    };
  });
  return { steps: steps.length, tokens, thresholds };
}

/** Mean prompt tokens per step and strategy, for steps already ranked. */
export function measurePromptTokens(
  steps: readonly PlanStep[],
  rankings: readonly Ranking[],
  tools: ToolSpec[],
  counter: TokenCounter,
  options: { strategies: Strategy[]; format?: PromptFormat; demonstrations?: Plan[]; select?: SelectOptions },
): Partial<Record<Strategy, PromptTokens>> {
  const memo = new Map<string, number>();
  const tokens: Partial<Record<Strategy, PromptTokens>> = {};
  for (const strategy of options.strategies) {
    const sum = { constant: 0, variable: 0, total: 0 };
    steps.forEach((s, i) => {
      const set = selectCandidates(rankings[i], options.select);
      const prompt = buildSelectionPrompt({
        query: s.query,
        history: s.history,
        tools,
        strategy,
        format: options.format ?? 'hermes',
        candidates: set.candidates,
        widened: set.widened,
        reason: set.reason,
        demonstrations: options.demonstrations,
      });
      const t = promptTokens(prompt, counter, memo);
      sum.constant += t.constant;
      sum.variable += t.variable;
      sum.total += t.total;
    });
    tokens[strategy] = {
      constant: sum.constant / steps.length,
      variable: sum.variable / steps.length,
      total: sum.total / steps.length,
    };
  }
  return tokens;
}

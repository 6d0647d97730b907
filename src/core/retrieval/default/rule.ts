/**
 * A step rule of DTDR-G: a check, after the gate has ranked a step, that can make the step unsure
 * and add tools to its candidate set, with the reason. Each rule lives in one file under `rules/`
 * and is listed once in `step-rules.ts`; `rank` runs them in that order. A rule owns what it fits,
 * learns and saves, and the thresholds it needs.
 */
import type { Plan } from '../../base/types.js';
import type { CenteredMatch } from './centered.js';
import type { CoverageModel } from './coverage.js';
import type { ToolSide } from './tool-side.js';

/** A model file's DTDR-G state as rules read and write it (`GatedState` in state.ts). */
export type SavedState = { [key: string]: unknown };

/** What a rule fits on: the demonstrations, their tools' label indices and the word–tool alignment. */
export interface RuleFitInput {
  plans: readonly Plan[];
  toolIndex: Map<string, number>;
  /** Labels: tools and END (the last). */
  labels: number;
  /** The request-coverage alignment (coverage.ts), fitted on every demonstration. */
  coverage: CoverageModel;
  /** Each plan's request words under `coverage`. */
  words: readonly Uint32Array[];
}

/** Held-out steps of the fit (cross-fitted: their evidence never saw them), for rules with thresholds from them. */
export interface RuleHeldOut {
  /**
   * Per held-out step: the needed tool's best rank by description (embedding or lexical) as if undemonstrated; 0: none.
   */
  descriptionRanks: readonly number[];
  /** The coverage target the sets are calibrated for. */
  target: number;
}

/** One step as the rules see it: the ranking so far, and what the earlier rules decided. */
export interface StepView {
  side: ToolSide;
  /** The request's text and vector. */
  query: string;
  queryVector: Float32Array;
  /** The label on top (END: `side.end`). */
  best: number;
  /** Label indices of the calls so far. */
  history: readonly number[];
  probabilities: ArrayLike<number>;
  /** The set's conformal threshold (0: widened by probability mass). */
  threshold: number;
  /** Whether the step is confident so far (its group, and every rule before). */
  confident: boolean;
  /** Tools the rules before added to the set. */
  include: readonly number[];
  unavailable: ReadonlySet<number> | undefined;
  /** Demonstrated steps per label. */
  counts: ArrayLike<number>;
  /** Tools added after training (label indices). */
  addedTools: readonly number[];
  /** The alignment with rows for the added tools; absent in models fitted before it. */
  coverage: CoverageModel | undefined;
  /** The request's word ids under `coverage` (worked out once per request). */
  requestWords(): Uint32Array;
  /** The request words request coverage can ever name (worked out once per request). */
  strongWords(): Uint32Array;
  /** The description match centred on the tool set's mean (centered.ts), built on first use. */
  centered(): CenteredMatch;
  /** This step's description match of every label, by embedding or BM25, less what the calls so far served. */
  descriptionMatch(by: 'embedding' | 'lexical'): Float32Array;
  /** Whether label `a` could join the set (positive probability, available). */
  usable: (a: number) => boolean;
  /** The descriptions' probabilities of this step (shrinkage.ts), worked out on first use. */
  descriptions(): Float64Array;
}

/** What a rule found: tools for the set and why the step is not confident. */
export interface RuleFinding {
  tools: readonly number[];
  because: readonly string[];
  /** Whether the step stops being confident (default true). */
  unsure?: boolean;
}

export interface StepRule<S = unknown> {
  readonly name: string;
  /**
   * Where true, the rule's tools and reasons come after every other rule's, though it runs where
   * it is listed: where the set has too little room for all, the ones the other rules name stay.
   */
  readonly last?: boolean;
  /** The rule's state from the demonstrations; undefined: the rule stays silent. */
  fit(input: RuleFitInput): S | undefined;
  /** Thresholds from the fit's held-out steps, once they are scored. */
  calibrate?(state: S, heldOut: RuleHeldOut): void;
  /** New demonstrations in, without a refit. */
  learn?(state: S, plans: readonly Plan[], toolIndex: Map<string, number>, coverage: CoverageModel | undefined): void;
  /** Throws a DtdrError('artifact') for anything in the saved state the rule could not have written. */
  validate?(saved: SavedState, labels: number): void;
  /** The state from a checked file; undefined where the file has none (the rule stays silent). */
  load(saved: SavedState): S | undefined;
  /** Writes the state into the file's state. */
  save(state: S, into: SavedState): void;
  /** Widens the saved state for `added` tools inserted before END (label `T` on moves by `added`). */
  withTools?(saved: SavedState, T: number, added: number): void;
  /** The rule at one step: what it found, or null. */
  check(state: S, step: StepView): RuleFinding | null;
}

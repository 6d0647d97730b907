/**
 * DTDR-G's `calibrate` stage: the calibration group that answers for a step (tools-only, the two
 * pools of older files, or the fine groups), with its threshold, whether it is confident, the rules
 * it runs, and the reason an unsure step is unsure. Apart from the retriever, which only ranks.
 */
import type { StepRule } from './rule.js';
import type { GatedParts } from './state.js';
import type { Workspace } from './workspace.js';
import { rarity } from './evidence.js';
import {
  confidentGroup,
  groupKey,
  mayBeConfident,
  stepGroup,
  stepThreshold,
  type CalibrationGroup,
  type SliceAtFit,
} from './groups.js';
import { C_MATCH, C_SUPPORT, KNOWN_HISTORY } from './layout.js';
import { STEP_RULES } from './step-rules.js';
import { addedToolsRule } from './rules/added-tools.js';

/**
 * The share of the tools (END aside) the demonstrations must call for a step to be confident: below it they are a
 * slice of the app (decision 0007 chose it for the rules this replaces, on UltraTool's skewed runs).
 */
export const DEMONSTRATED_TOOLS = 0.5;

/** Why a request unlike the demonstrations' is ranked as with tools alone. */
export const NOVEL_CAUSE =
  'the request is unlike every demonstration: ranked by tool descriptions alone, as with no demonstrations';

/** A step as `score` leaves it (and `weigh` reweighs it). */
export interface ScoredStep {
  probabilities: Float64Array;
  /** The label on top, and its probability. */
  best: number;
  top: number;
  /** Whether some demonstration has the last calls in a row (workspace.ts). */
  known: boolean;
  /** Label indices of the calls so far, and the request's vector. */
  history: number[];
  query: Float32Array;
}

/** The calibration group that answers for a step (`calibrate`). */
export interface StepCalibration {
  /** The group's key (absent for models fitted before the fine groups). */
  group?: string;
  confident: boolean;
  threshold: number;
  /** Labels always in the set (END, with tools alone). */
  include: number[];
  /** The step rules the group runs. */
  rules: readonly StepRule<unknown>[];
  /** What else the set needs (CandidateSet's describedOnly, coverageBySize, firstDay, noClaim). */
  set: { describedOnly?: Uint32Array; coverageBySize?: readonly number[]; firstDay?: true; noClaim?: true };
  /** Why an unsure step is unsure, given the rules' reasons. */
  cause(rules: string[]): string;
}

/** What calibrating a step reads of the retriever: its parts, and the workspace that scored the step. */
export interface StepModel {
  parts: GatedParts;
  /** The workspace now (learning may replace it). */
  workspace(): Workspace;
}

/**
 * The calibration group that answers for the step: its threshold, whether it is confident, the rules it runs, the
 * labels always in its set and how it explains an unsure step.
 */
export function calibrateStep(
  m: StepModel,
  step: ScoredStep,
  novel: boolean,
  history: readonly string[],
): StepCalibration {
  const ev = m.parts.evidence;
  const cal = m.parts.calibration;
  if (!ev || novel)
    // Tools alone, or a request unlike every demonstration: the tools-only group. Descriptions say nothing of when
    // a plan is done (with tools alone END ranks in the bottom tenth of UltraTool's END steps): END is always
    // offered. A tool added after training still joins where the request asks for it (without the added-tools
    // rule here, 25 of 40 new tools' requests at 16,000 tools had it in their set, against 30).
    return {
      group: 'tools-only',
      confident: false,
      threshold: ev ? 0 : cal.thresholds.pools.unsure,
      include: [m.parts.side.end],
      rules: novel ? [addedToolsRule] : [],
      set: {},
      cause: (why) => (novel ? [NOVEL_CAUSE, ...why].join('; ') : unsureCause(m, step.top, history)),
    };
  if (!cal.groups) {
    // A model fitted before the fine groups: the two pools.
    const confident = step.top >= m.parts.confidentAbove && step.known;
    const threshold = cal.thresholds.pools[confident ? 'confident' : 'unsure'];
    const cause = () => unsureCause(m, step.top, history);
    return { confident, threshold, include: [], rules: [], set: {}, cause };
  }
  // `unseen`: tools no demonstration calls (never, or added since), ranked by their description alone.
  const { counts, unseen } = rarity(ev, m.parts.side.labels.length);
  if (Number.isNaN(step.probabilities[0])) step.best = 0;
  const group = stepGroup(step.known, counts[step.best], step.top >= m.parts.confidentAbove);
  // Held-out steps of demonstrations that call under half the tools (a few features' runs) do not speak for the
  // app's other requests: such a model is never confident (UltraTool, its 586 runs of its three most common first
  // tools, 18% of its tools: 12% of the confident steps missed).
  const end = m.parts.side.end;
  const shown = end - unseen.length; // `unseen` lists tools only (END is never called)
  // A slice when fitted stays one until the next fit, or until the runs learned since are as many as the fit's: before,
  // the slice's held-out steps are most of the groups' scores (UltraTool's 290 random runs, a slice, then 10 more
  // folded in: 35 of 349 confident steps missed).
  const fitted = cal.sliceAtFit && cal.sliceAtFit.learned < cal.sliceAtFit.runs ? cal.sliceAtFit : undefined;
  const slice = isSlice(shown, end) || fitted !== undefined;
  // A request's first step while the model can call no step confident (a first day: no group has the held-out steps
  // for it, or the runs are a slice): its set also offers the request's later tools. A slice's sets are sized by
  // held-out steps that do not count: its first sets held 0.685 of the plans' tools where the tools alone's held
  // 0.933 (the demo world's 300 skewed runs). Seal-Tools' full training set is a slice: its mean set doubles (2.84 →
  // 5.66 tools) for 0.017 of coverage.
  const firstDay = history.length === 0 && (slice || !mayBeConfident(cal));
  return {
    group: groupKey(group),
    confident: confidentGroup(cal, group) && !slice,
    threshold: stepThreshold(cal.thresholds, group),
    include: [],
    rules: STEP_RULES,
    set: {
      ...(unseen.length ? { describedOnly: unseen } : {}),
      ...(cal.bySize ? { coverageBySize: cal.bySize } : {}),
      ...(firstDay ? { firstDay: true as const } : {}),
      // What a slice's held-out sets held is not what other requests' sets hold (claim-coverage: up to 0.18 short).
      ...(slice ? { noClaim: true as const } : {}),
    },
    // The slice's cause is worded only when a reason is asked for, not on every step.
    cause: (why) =>
      groupCause(
        m,
        group,
        step.top,
        history,
        counts[step.best],
        slice ? [...why, sliceCause(shown, end, fitted)] : why,
      ),
  };
}

/** Whether demonstrations calling `called` of `tools` tools are a slice of the app. */
export const isSlice = (called: number, tools: number): boolean => called < DEMONSTRATED_TOOLS * tools;

/** Why a slice's steps are never confident and claim no coverage (`fitted`: a slice when fitted, no longer one). */
const sliceCause = (shown: number, tools: number, fitted?: SliceAtFit) =>
  isSlice(shown, tools) || !fitted
    ? `the demonstrations call ${shown} of the ${tools} tools: their held-out steps do not speak for other requests`
    : `the demonstrations of the last fit called ${fitted.called} of the ${fitted.tools} tools: its held-out steps ` +
      `do not speak for other requests (the ${fitted.learned} runs learned since count from the next fit, or once ` +
      `they are as many as its ${fitted.runs})`;

/** Why a step is unsure under group calibration: the rules' reasons first. */
function groupCause(
  m: StepModel,
  group: CalibrationGroup,
  top: number,
  history: readonly string[],
  count: number,
  rules: string[],
): string {
  const why: string[] = [...rules];
  if (count < 1) why.push('the top tool has no demonstrations');
  else if (group.support === 'few') why.push(`the top tool has few demonstrations (${Math.round(count)})`);
  const base = unsureCause(m, top, history);
  if (base) why.push(base);
  const scores = m.parts.calibration.groups?.[groupKey(group)]?.length ?? 0;
  if (why.length === 0) why.push(`too few held-out steps like this one (${scores}) to be sure`);
  return why.join('; ');
}

/** Why a step is unsure, from what its signals could and could not find. */
function unsureCause(m: StepModel, top: number, history: readonly string[]): string {
  if (!m.parts.evidence) return 'no demonstrations: ranked by tool descriptions alone';
  const { context: c, known } = m.workspace();
  const why: string[] = [];
  if (top < m.parts.confidentAbove)
    why.push(`the top tool has calibrated probability ${top.toFixed(2)} < ${m.parts.confidentAbove}`);
  if (!known) {
    const recent = history.slice(-KNOWN_HISTORY);
    why.push(
      recent.length > 0
        ? `no demonstration has the calls ${recent.join(' → ')} in a row`
        : 'no demonstration starts a plan like this',
    );
  } else if (c[C_MATCH] < 0.5) why.push('the demonstrations nearest this request never had this history');
  if (c[C_SUPPORT] < Math.log1p(2) / Math.log(101)) why.push('few demonstrations are like this request');
  return why.join('; ');
}

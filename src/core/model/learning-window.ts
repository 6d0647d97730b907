/**
 * A saved model's learning window (`artifact.learning`): the learned runs `forget` can take out
 * (and a tools-only model refits on), the state forget replays them onto, less the parts equal to
 * the live state's (`same`), whether older learned runs were folded into that state
 * (`folded`: no refit can see them again), and how many of the learned runs the live state was
 * last refitted on (`fitted`: the next refit comes after as much growth from there).
 */
import { DtdrError } from '../base/errors.js';
import { DAMAGED_MODEL_HINT } from '../base/validate.js';
import type { Encoder } from '../base/encoder.js';
import type { Plan } from '../base/types.js';
import { copyPlan, readPlan } from '../plans/input.js';
import { loadRetriever, type ModelArtifact } from './artifact.js';
import { withShared, withoutShared } from './shared-state.js';

/**
 * The newest demonstrations handed to `learn` that `forget` can take out again (a model that
 * refits in the background keeps up to REFIT_IN_BACKGROUND_UP_TO). Older ones are folded into the
 * saved state forget starts from (down to half this), as training plans are: a year of learning
 * keeps the model's size and each call's cost bounded.
 */
export const MAX_FORGETTABLE = 1000;

export interface LearningWindow {
  learned: Plan[];
  before: ModelArtifact;
  folded: boolean;
  /** The learned runs the next refit counts growth from: the last refit's, or a failed one's (absent: all of them). */
  fitted?: number;
}

/** Reads and checks `a.learning` (undefined when the model has none), naming the field that is wrong. */
export function readLearningWindow(
  a: ModelArtifact,
  encoder: Encoder | undefined,
  source: string | undefined,
): LearningWindow | undefined {
  const learning = (
    a as { learning?: { plans?: unknown; before?: unknown; same?: unknown; folded?: unknown; fitted?: unknown } }
  ).learning;
  if (learning === undefined) return undefined;
  const fail = (field: string, message: string): never => {
    throw new DtdrError('artifact', message, {
      file: source,
      field,
      hint: DAMAGED_MODEL_HINT,
    });
  };
  if (!learning || !Array.isArray(learning.plans) || !learning.before)
    throw new DtdrError('artifact', 'learning must hold {plans, before}', { file: source, field: 'learning' });
  const learned = learning.plans.map((p, i) => readPlan(p, `learning.plans[${i}]`, source));
  if (learning.folded !== undefined && learning.folded !== true)
    fail('learning.folded', 'must be true when present (older learned runs were folded in)');
  const fitted = learning.fitted;
  if (
    fitted !== undefined &&
    !(Number.isInteger(fitted) && (fitted as number) >= 0 && (fitted as number) <= learned.length)
  )
    fail(
      'learning.fitted',
      `must be a whole number from 0 to the ${learned.length} learned runs, got ${JSON.stringify(fitted)}`,
    );
  const names = new Set(a.tools.map((t) => t.name));
  learned.forEach((p, i) =>
    p.nodes.forEach(
      (n, k) =>
        names.has(n.tool) ||
        fail(
          `learning.plans[${i}].nodes[${k}].tool`,
          `names no tool the model was trained or extended with: "${n.tool}"`,
        ),
    ),
  );
  const before = loadRetriever(withShared(learning.before, a, learning.same, source), { encoder, source }).artifact;
  // The state forget replays from is the live model before its learned runs: the same method and
  // tools. Another would come live at the next forget (a tool the app never saw, say).
  if (before.method !== a.method)
    fail('learning.before.method', `must be the model's method "${a.method}", got ${JSON.stringify(before.method)}`);
  const [had, has] = [before.tools.map((t) => t.name), a.tools.map((t) => t.name)];
  if (had.length !== has.length || had.some((n, i) => n !== has[i]))
    fail(
      'learning.before.tools',
      `must name the model's tools in order (${has.length}), got ${had.length}: ` +
        `${JSON.stringify(had.find((n, i) => n !== has[i]) ?? '')} differs`,
    );
  return {
    learned,
    before,
    folded: learning.folded === true,
    ...(fitted === undefined ? {} : { fitted: fitted as number }),
  };
}

/** The window as saved beside the live state `live`: the parts of `before` equal to the live state's written once. */
export function saveLearningWindow(
  window: LearningWindow,
  live: ModelArtifact,
): NonNullable<ModelArtifact['learning']> {
  const { before, same } = withoutShared(window.before, live);
  return {
    plans: window.learned.map(copyPlan),
    before,
    ...(same.length > 0 ? { same } : {}),
    ...(window.folded ? { folded: true as const } : {}),
    ...(window.fitted === undefined || window.fitted === window.learned.length ? {} : { fitted: window.fitted }),
  };
}

/** What `forget` takes out: the plans with these ids, or those the predicate picks (anything else is refused). */
export function forgetMatch(which: readonly string[] | ((plan: Plan) => boolean)): (plan: Plan) => boolean {
  if (typeof which === 'function') return which;
  if (!Array.isArray(which)) throw new DtdrError('options', 'forget takes plan ids or a predicate', { field: 'which' });
  const ids = new Set(which);
  return (plan) => ids.has(plan.id);
}

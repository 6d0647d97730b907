/**
 * Plans as the library accepts them from callers and saved models: full plans or the chain
 * shorthand {id?, query, tools}, checked for shape and size, copied so a caller's later edits
 * cannot change a model, and checked against the model's tools before learning.
 */
import { checkPlanSizes } from '../base/checks.js';
import { DtdrError } from '../base/errors.js';
import type { Plan } from '../base/types.js';
import { chainPlan } from './plan.js';

/** A deep copy of a plan. */
export function copyPlan(p: Plan): Plan {
  return {
    id: p.id,
    query: p.query,
    nodes: p.nodes.map((n) => ({ ...n })),
    edges: p.edges.map(([a, b]) => [a, b] as [number, number]),
    order: [...p.order],
  };
}

/** Plans to learn: well-formed, calling tools the retriever knows. */
export function checkPlans(
  plans: Plan[],
  known: string[],
  addedByMixing: string[],
  removed: readonly string[] = [],
): void {
  const names = new Set(known);
  const mixed = new Set(addedByMixing);
  checkPlanSizes(plans);
  const gone = new Set(removed);
  plans.forEach((p, i) => {
    for (const [k, n] of p.nodes.entries()) {
      if (gone.has(n.tool)) {
        throw new DtdrError(
          'options',
          `plan ${JSON.stringify(p.id)} calls "${n.tool}", which was removed from the model`,
          { field: `plans[${i}].nodes[${k}].tool`, hint: 'add the tool back first (addTools), or leave the plan out' },
        );
      }
      if (!names.has(n.tool)) {
        throw new DtdrError(
          'options',
          mixed.has(n.tool)
            ? `"${n.tool}" was added after training to a method that mixes added tools in by ` +
                `description; it cannot learn from plans that call it`
            : `plan ${JSON.stringify(p.id)} calls "${n.tool}", which is not one of the model's tools`,
          {
            field: `plans[${i}].nodes[${k}].tool`,
            hint: mixed.has(n.tool)
              ? 'retrain with the tool, or use dtdr-g, which extends itself natively'
              : 'add the tool first (addTools), or fix the plan',
          },
        );
      }
    }
  });
}

/** A demonstration given as a chain of calls: what `chainPlan(id, query, tools)` builds. */
export interface ChainPlanInput {
  /** Default: `plan-<index>`. */
  id?: string;
  query: string;
  /** The tools called, in order. */
  tools: string[];
}

/**
 * Plans passed to `train` or `learn`, checked and copied: each a `Plan` ({id, query, nodes,
 * edges, order}) or a chain `{id?, query, tools}` (built with chainPlan).
 */
export function readPlans(plans: unknown, code: 'options'): Plan[] {
  if (!Array.isArray(plans))
    throw new DtdrError(code, 'plans must be an array of plans', {
      field: 'plans',
      hint: 'build plans with chainPlan(id, query, tools) or planFromRecord',
    });
  return plans.map((p, i) => {
    const c = p as Partial<ChainPlanInput> & { nodes?: unknown };
    if (c && typeof c === 'object' && c.nodes === undefined && c.tools !== undefined) {
      const field = `plans[${i}]`;
      const hint = 'give {id?, query, tools: ["tool_a", "tool_b"]}, or build the plan with chainPlan(id, query, tools)';
      if (c.id !== undefined && typeof c.id !== 'string')
        throw new DtdrError(code, 'a plan id must be a string', { field: `${field}.id`, hint });
      if (typeof c.query !== 'string')
        throw new DtdrError(code, 'a plan needs its request as a string query', { field: `${field}.query`, hint });
      if (!Array.isArray(c.tools) || c.tools.length === 0 || c.tools.some((t) => typeof t !== 'string' || t === ''))
        throw new DtdrError(code, "a plan's tools must be a non-empty array of tool names", {
          field: `${field}.tools`,
          hint,
        });
      return readPlan(chainPlan(c.id ?? `plan-${i}`, c.query, [...c.tools]), field);
    }
    return readPlan(p, `plans[${i}]`);
  });
}

/** A stored or passed plan, checked for shape. */
export function readPlan(p: unknown, field: string, file?: string): Plan {
  const plan = p as Plan;
  const ok =
    plan &&
    typeof plan === 'object' &&
    typeof plan.id === 'string' &&
    typeof plan.query === 'string' &&
    Array.isArray(plan.nodes) &&
    plan.nodes.length > 0 &&
    plan.nodes.every((n) => n && typeof n.tool === 'string') &&
    Array.isArray(plan.edges) &&
    plan.edges.every(
      (e) =>
        Array.isArray(e) && e.length === 2 && e.every((x) => Number.isInteger(x) && x >= 0 && x < plan.nodes.length),
    ) &&
    Array.isArray(plan.order) &&
    plan.order.length === plan.nodes.length &&
    [...plan.order].sort((a, b) => a - b).every((x, i) => x === i);
  if (!ok)
    throw new DtdrError(
      file ? 'artifact' : 'options',
      'not a plan: expected {id, query, nodes: [{tool}], edges: [[from, to]], order}',
      { file, field, hint: 'build plans with chainPlan(id, query, tools) or planFromRecord' },
    );
  return copyPlan(plan);
}

/**
 * Input checks for the public API: what a caller passes is checked before any work starts, and
 * anything wrong is a DtdrError naming the field and what to do — never a silent wrong answer or
 * a raw TypeError from deep inside.
 */
import { DtdrError } from './errors.js';
import {
  checkNesting,
  checkToolName,
  formatCount,
  MAX_NESTING,
  MAX_DESCRIPTION_CHARS,
  MAX_PLAN_LINKS,
  MAX_PLAN_STEPS,
  MAX_QUERY_CHARS,
} from './limits.js';
import { END, type ToolSpec } from './types.js';

/**
 * Tools: an array of {name, description} with unique names other than END, each following the tool-name rule
 * (limits.ts).
 */
export function checkTools(tools: unknown, field = 'tools'): asserts tools is ToolSpec[] {
  if (!Array.isArray(tools))
    throw new DtdrError('options', `${field} must be an array of {name, description}, got ${describe(tools)}`, {
      field,
    });
  const seen = new Set<string>();
  tools.forEach((t, i) => {
    const where = `${field}[${i}]`;
    if (!t || typeof t !== 'object')
      throw new DtdrError('options', `a tool must be an object {name, description}, got ${describe(t)}`, {
        field: where,
      });
    const { name, description } = t as { name?: unknown; description?: unknown };
    if (typeof name !== 'string' || name.trim() === '')
      throw new DtdrError('options', 'a tool needs a non-empty string name', { field: `${where}.name` });
    if (name === END)
      throw new DtdrError('options', `"${END}" is reserved for the end of a plan and cannot name a tool`, {
        field: `${where}.name`,
        hint: 'rename the tool',
      });
    checkToolName(name, { field: `${where}.name` });
    if (seen.has(name))
      throw new DtdrError('options', `duplicate tool name "${name}"`, {
        field: `${where}.name`,
        hint: 'tool names must be unique: merge or rename the duplicates',
      });
    if (description !== undefined && typeof description !== 'string')
      throw new DtdrError('options', `the description of "${name}" must be a string`, {
        field: `${where}.description`,
      });
    checkDescriptionLength(description, `${where}.description`);
    const { parameters, returns } = t as { parameters?: unknown; returns?: unknown };
    checkNesting(parameters, MAX_NESTING, {
      what: `the parameters schema of "${name}"`,
      code: 'options',
      field: `${where}.parameters`,
    });
    checkNesting(returns, MAX_NESTING, {
      what: `the returns schema of "${name}"`,
      code: 'options',
      field: `${where}.returns`,
    });
    seen.add(name);
  });
}

/**
 * Every tool has a description. A method that ranks by descriptions (and every method on a tool it
 * has no demonstration of) knows an undescribed tool by its name alone, which is almost always a
 * mistake in the tool list rather than a choice: `allowUndescribed` says it is one.
 */
export function checkToolsDescribed(tools: readonly ToolSpec[], field = 'tools'): void {
  const undescribed = tools.flatMap((t, i) => (t.description?.trim() ? [] : [{ name: t.name, i }]));
  if (undescribed.length === 0) return;
  const many = undescribed.length > 1;
  const named = undescribed.slice(0, 5).map((u) => u.name);
  if (undescribed.length > 5) named.push('…');
  throw new DtdrError(
    'options',
    `${formatCount(undescribed.length)} tool${many ? 's have' : ' has'} no description: ${named.join(', ')}`,
    {
      field: `${field}[${undescribed[0].i}].description`,
      hint: 'give each tool a description saying what it does, or pass allowUndescribed: true to rank it by name alone',
    },
  );
}

export { MAX_QUERY_CHARS } from './limits.js';

/** A tool description: at most MAX_DESCRIPTION_CHARS characters. */
function checkDescriptionLength(description: string | undefined, field: string): void {
  if (description !== undefined && description.length > MAX_DESCRIPTION_CHARS) {
    throw new DtdrError(
      'options',
      `the description is ${formatCount(description.length)} characters long; at most ` +
        `${formatCount(MAX_DESCRIPTION_CHARS)} are accepted`,
      { field, hint: 'describe what the tool does in a few sentences' },
    );
  }
}

/**
 * Plans handed to the library (Dtdr.train, learn): each request at most MAX_QUERY_CHARS
 * characters, each plan at most MAX_PLAN_STEPS steps and MAX_PLAN_LINKS links — the bounds data
 * files have. Checked before any work starts; entries that are not plans are left to the shape check.
 */
export function checkPlanSizes(plans: unknown, field = 'plans'): void {
  if (!Array.isArray(plans)) return;
  plans.forEach((p, i) => {
    const { query, nodes, edges, tools } = (p ?? {}) as {
      query?: unknown;
      nodes?: unknown;
      edges?: unknown;
      tools?: unknown;
    };
    if (typeof query === 'string' && query.length > MAX_QUERY_CHARS) {
      throw new DtdrError(
        'options',
        `the request is ${formatCount(query.length)} characters long; at most ` +
          `${formatCount(MAX_QUERY_CHARS)} are accepted`,
        {
          field: `${field}[${i}].query`,
          hint: "a demonstration's request is what a user asked: summarise long inputs first",
        },
      );
    }
    if (Array.isArray(nodes) && nodes.length > MAX_PLAN_STEPS) {
      throw new DtdrError(
        'options',
        `the plan has ${formatCount(nodes.length)} steps; at most ${formatCount(MAX_PLAN_STEPS)} are accepted`,
        { field: `${field}[${i}].nodes`, hint: 'split the demonstration into shorter plans' },
      );
    }
    // A chain plan {query, tools} (chainPlan's shorthand) has one step per tool.
    if (Array.isArray(tools) && tools.length > MAX_PLAN_STEPS) {
      throw new DtdrError(
        'options',
        `the plan has ${formatCount(tools.length)} steps; at most ${formatCount(MAX_PLAN_STEPS)} are accepted`,
        { field: `${field}[${i}].tools`, hint: 'split the demonstration into shorter plans' },
      );
    }
    if (Array.isArray(edges) && edges.length > MAX_PLAN_LINKS) {
      throw new DtdrError(
        'options',
        `the plan has ${formatCount(edges.length)} links; at most ${formatCount(MAX_PLAN_LINKS)} are accepted`,
        { field: `${field}[${i}].edges`, hint: 'links are the data dependencies between its steps: list each once' },
      );
    }
  });
}

/**
 * A request: a non-blank string of at most MAX_QUERY_CHARS characters (a blank one throws DtdrError 'options', as the
 * CLI refuses it).
 */
export function checkQuery(query: unknown): asserts query is string {
  if (typeof query !== 'string')
    throw new DtdrError('options', `the query must be a string, got ${describe(query)}`, { field: 'query' });
  if (!query.trim())
    throw new DtdrError('options', 'the query must not be empty', {
      field: 'query',
      hint: "pass the user's request; a blank message has no next tool",
    });
  if (query.length > MAX_QUERY_CHARS) {
    throw new DtdrError(
      'options',
      `the query is ${formatCount(query.length)} characters long; at most ${formatCount(MAX_QUERY_CHARS)} are accepted`,
      { field: 'query', hint: "pass the user's request, not a document: summarise long inputs first" },
    );
  }
}

/** The calls made so far: an array of names of tools the model knows (END ends a plan, so it cannot be history). */
export function checkHistory(history: unknown, known: ReadonlySet<string>): asserts history is string[] {
  if (!Array.isArray(history)) {
    throw new DtdrError('options', `the history must be an array of tool names, got ${describe(history)}`, {
      field: 'history',
      hint:
        typeof history === 'string'
          ? `pass [${JSON.stringify(history)}], or history.split(',')`
          : 'pass the names of the tools called so far, oldest first',
    });
  }
  history.forEach((h, i) => {
    if (typeof h !== 'string')
      throw new DtdrError('options', `history entries must be tool names (strings), got ${describe(h)}`, {
        field: `history[${i}]`,
      });
    if (!known.has(h)) {
      throw new DtdrError(
        'options',
        h === END
          ? `"${END}" cannot be in the history: a plan ends there`
          : `the history names "${h}", which is not one of the model's tools`,
        {
          field: `history[${i}]`,
          hint: h === END ? 'drop it' : suggestion(h, known),
        },
      );
    }
  });
}

/** A number option within [min, max] (and an integer when asked). */
export function checkNumber(value: unknown, field: string, min: number, max: number, integer = false): void {
  if (value === undefined) return;
  if (
    typeof value !== 'number' ||
    Number.isNaN(value) ||
    value < min ||
    value > max ||
    (integer && !Number.isInteger(value))
  ) {
    throw new DtdrError(
      'options',
      `${field} must be ${integer ? 'an integer' : 'a number'} in [${min}, ${max}], got ${describe(value)}`,
      { field },
    );
  }
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'string')
    return `the string ${JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value)}`;
  if (typeof value === 'object') return 'an object';
  return `${typeof value} ${String(value)}`;
}

/** "did you mean …" by edit distance, for misspelled tool names. */
function suggestion(name: string, known: ReadonlySet<string>): string {
  const close = closestToolName(name, known);
  return close ? `did you mean "${close}"?` : 'use the names of the tools the model was trained or extended with';
}

/** The known tool name nearest to `name` by edit distance, when it is close enough to be a typo. */
export function closestToolName(name: string, known: Iterable<string>): string | undefined {
  let best = '';
  let bestDistance = Infinity;
  for (const k of known) {
    const d = editDistance(name.toLowerCase(), k.toLowerCase());
    if (d < bestDistance) {
      bestDistance = d;
      best = k;
    }
  }
  return best && bestDistance <= Math.max(2, Math.floor(name.length / 3)) ? best : undefined;
}

function editDistance(a: string, b: string): number {
  if (Math.abs(a.length - b.length) > 8) return Infinity;
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const cur = [i];
    for (let j = 1; j <= b.length; j++)
      cur[j] = Math.min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1));
    prev = cur;
  }
  return prev[b.length];
}

import { DtdrError, type DtdrErrorDetails } from '../base/errors.js';
import { END, type Plan, type PlanNode, type PlanStep } from '../base/types.js';
import { formatCount, MAX_PLAN_LINKS, MAX_PLAN_STEPS, MAX_QUERY_CHARS } from '../base/limits.js';

/**
 * Resolves name-level links to node instances. For a link s→t, the target is the earliest
 * instance of t not yet linked from s and the source the nearest instance of s listed before it,
 * so repeated tools (A, B, A with A→B, B→A) chain instead of forming a cycle. When every instance
 * of t already has a link from each instance of s before it, the first unlinked pair (s listed
 * first, then t) is taken; when there is none, the link is a duplicate and adds nothing.
 *
 * Work is linear in links × nodes at worst: an edge i→j can only come from a link of i's tool to
 * j's tool, so each (source tool, target tool) pair keeps cursors that only move forward.
 */
function resolveEdges(
  nodes: PlanNode[],
  links: { source: string; target: string }[],
  where: DtdrErrorDetails,
): [number, number][] {
  const n = nodes.length;
  const instances = new Map<string, number[]>();
  nodes.forEach((node, i) => {
    const list = instances.get(node.tool);
    if (list) list.push(i);
    else instances.set(node.tool, [i]);
  });
  interface Grid {
    sources: number[];
    targets: number[];
    /** targets[t] for t < next all have a link from every source listed before them. */
    next: number;
    /** How many sources listed before targets[t] link to it. */
    linkedBefore: Int32Array;
    /** Fallback cursor over (sources[a], targets[b]) in that order; pairs before it are taken. */
    a: number;
    b: number;
  }
  const grids = new Map<string, Map<string, Grid>>();
  const seen = new Set<number>();
  const edges: [number, number][] = [];
  links.forEach((link, k) => {
    const sources = instances.get(link.source);
    const targets = instances.get(link.target);
    if (!sources || !targets) {
      const missing = !sources ? link.source : link.target;
      throw new DtdrError(
        'data',
        `link ${link.source} → ${link.target} names "${missing}", which is not a node of this plan`,
        {
          ...where,
          field: `task_links[${k}]`,
          hint: 'every link source and target must be the task of one of the task_nodes',
        },
      );
    }
    let bySource = grids.get(link.source);
    if (!bySource) grids.set(link.source, (bySource = new Map<string, Grid>()));
    let grid = bySource.get(link.target);
    if (!grid)
      bySource.set(
        link.target,
        (grid = { sources, targets, next: 0, linkedBefore: new Int32Array(targets.length), a: 0, b: 0 }),
      );
    let pick: [number, number] | undefined;
    // The earliest target with a source before it not yet linked to it; the nearest such source.
    for (; grid.next < targets.length && !pick;) {
      const j = targets[grid.next];
      const before = countBelow(sources, j);
      if (grid.linkedBefore[grid.next] === before) {
        grid.next++;
        continue;
      }
      for (let m = before - 1; m >= 0; m--) {
        if (!seen.has(sources[m] * n + j)) {
          pick = [sources[m], j];
          grid.linkedBefore[grid.next]++;
          break;
        }
      }
    }
    if (!pick) {
      // Only pairs with the source after the target are left (or none).
      for (; grid.a < sources.length && !pick;) {
        const i = sources[grid.a];
        const j = targets[grid.b];
        if (j !== i && !seen.has(i * n + j)) pick = [i, j];
        else if (++grid.b === targets.length) {
          grid.b = 0;
          grid.a++;
        }
      }
    }
    if (!pick) return; // a duplicate link adds nothing
    seen.add(pick[0] * n + pick[1]);
    edges.push(pick);
  });
  return edges;
}

/** How many of the ascending `sorted` are below `x`. */
export function countBelow(sorted: readonly number[], x: number): number {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (sorted[mid] < x) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** Kahn's algorithm, always taking the ready node listed first; throws on a cycle. */
function topologicalOrder(nodes: PlanNode[], edges: [number, number][], where: DtdrErrorDetails): number[] {
  const indegree = new Array<number>(nodes.length).fill(0);
  const next: number[][] = nodes.map(() => []);
  for (const [s, t] of edges) {
    indegree[t]++;
    next[s].push(t);
  }
  const order: number[] = [];
  const done = new Array<boolean>(nodes.length).fill(false);
  while (order.length < nodes.length) {
    const ready = indegree.findIndex((d, i) => d === 0 && !done[i]);
    if (ready < 0) {
      const stuck = nodes.flatMap((n, i) => (done[i] ? [] : [n.tool]));
      throw new DtdrError('data', `task_links form a cycle among ${stuck.join(', ')}`, {
        ...where,
        field: 'task_links',
        hint: 'links are data dependencies and must form a DAG',
      });
    }
    done[ready] = true;
    order.push(ready);
    for (const t of next[ready]) indegree[t]--;
  }
  return order;
}

/** One record of the TaskBench layout (a line of `data.jsonl`) as read, before `planFromRecord` checks it. */
export interface RawPlan {
  id?: unknown;
  user_request?: unknown;
  task_nodes?: unknown;
  task_links?: unknown;
}

/** Validates one TaskBench-layout record and builds its DAG; `where` names the file and line. */
export function planFromRecord(record: RawPlan, where: DtdrErrorDetails = {}): Plan {
  const fail = (field: string, message: string, hint?: string): never => {
    throw new DtdrError('data', message, { ...where, field, hint });
  };
  if (typeof record !== 'object' || record === null || Array.isArray(record)) fail('', 'a plan must be a JSON object');
  // The short form, a chain: {"query": "…", "tools": ["a", "b"]} (either field says so, and the other is checked).
  const short = record as { query?: unknown; tools?: unknown; id?: unknown };
  const chain = short.query !== undefined || short.tools !== undefined;
  if (record.user_request === undefined && record.task_nodes === undefined && chain) {
    if (typeof short.query !== 'string' || short.query.trim() === '')
      fail('query', 'missing or empty query', "each plan needs the user's request as a non-empty string");
    checkRequestLength(short.query as string, 'query', fail);
    if (!Array.isArray(short.tools) || short.tools.length === 0)
      fail(
        'tools',
        'tools must be a non-empty array of tool names',
        'e.g. {"query": "…", "tools": ["search", "send"]}',
      );
    checkStepCount((short.tools as unknown[]).length, 'tools', fail);
    (short.tools as unknown[]).forEach((t, i) => {
      if (typeof t !== 'string' || t === '') fail(`tools[${i}]`, 'each tool must be a non-empty string');
      if (t === END) fail(`tools[${i}]`, `"${END}" is reserved for the end of a plan and cannot be a tool name`);
    });
    return chainPlan(
      short.id === undefined ? String(where.line ?? '') : String(short.id),
      (short.query as string).trim(),
      short.tools as string[],
    );
  }
  const query = record.user_request;
  if (typeof query !== 'string' || query.trim() === '')
    fail('user_request', 'missing or empty user_request', "each plan needs the user's request as a non-empty string");
  checkRequestLength(query as string, 'user_request', fail);
  if (!Array.isArray(record.task_nodes) || record.task_nodes.length === 0) {
    fail(
      'task_nodes',
      'empty plan: task_nodes must be a non-empty array',
      'a demonstration needs at least one tool call',
    );
  }
  checkStepCount((record.task_nodes as unknown[]).length, 'task_nodes', fail);
  if (Array.isArray(record.task_links) && record.task_links.length > MAX_PLAN_LINKS) {
    fail(
      'task_links',
      `the plan has ${formatCount(record.task_links.length)} links; at most ` +
        `${formatCount(MAX_PLAN_LINKS)} are accepted`,
      'links are the data dependencies between its steps: list each once',
    );
  }
  const nodes: PlanNode[] = (record.task_nodes as unknown[]).map((n, i) => {
    const task = (n as { task?: unknown })?.task;
    if (typeof task !== 'string' || task === '')
      fail(`task_nodes[${i}].task`, 'each node needs a "task" naming the tool');
    if (task === END)
      fail(`task_nodes[${i}].task`, `"${END}" is reserved for the end of a plan and cannot be a tool name`);
    const args = (n as { arguments?: unknown }).arguments;
    return args === undefined ? { tool: task as string } : { tool: task as string, arguments: args };
  });
  const rawLinks = record.task_links ?? [];
  if (!Array.isArray(rawLinks)) fail('task_links', 'task_links must be an array of {source, target}');
  const links = (rawLinks as unknown[]).map((l, k) => {
    const { source, target } = (l ?? {}) as { source?: unknown; target?: unknown };
    if (typeof source !== 'string' || typeof target !== 'string')
      fail(`task_links[${k}]`, 'a link needs string "source" and "target"');
    return { source: source as string, target: target as string };
  });
  const edges = resolveEdges(nodes, links, where);
  const order = topologicalOrder(nodes, edges, where);
  const id = record.id === undefined ? String(where.line ?? '') : String(record.id);
  return { id, query: (query as string).trim(), nodes, edges, order };
}

type Fail = (field: string, message: string, hint?: string) => never;

/** A plan's request: at most MAX_QUERY_CHARS characters, like a query. */
function checkRequestLength(query: string, field: string, fail: Fail): void {
  if (query.length > MAX_QUERY_CHARS) {
    fail(
      field,
      `the request is ${formatCount(query.length)} characters long; at most ` +
        `${formatCount(MAX_QUERY_CHARS)} are accepted`,
      "a demonstration's request is what a user asked: summarise long inputs first",
    );
  }
}

/** A plan: at most MAX_PLAN_STEPS tool calls. */
function checkStepCount(steps: number, field: string, fail: Fail): void {
  if (steps > MAX_PLAN_STEPS) {
    fail(
      field,
      `the plan has ${formatCount(steps)} steps; at most ${formatCount(MAX_PLAN_STEPS)} are accepted`,
      'split the demonstration into shorter plans',
    );
  }
}

/** Builds a plan from a plain sequence of tool names (a chain). */
export function chainPlan(id: string, query: string, tools: string[]): Plan {
  return planFromRecord({
    id,
    user_request: query,
    task_nodes: tools.map((task) => ({ task })),
    task_links: tools.slice(1).map((target, i) => ({ source: tools[i], target })),
  });
}

/**
 * Walks a plan with the ground-truth history: step t has the first t tools of the topological
 * order as history and the DAG frontier as acceptable set; one last step accepts only END.
 */
export function planSteps(plan: Plan, order: readonly number[] = plan.order): PlanStep[] {
  const preds: number[][] = plan.nodes.map(() => []);
  for (const [s, t] of plan.edges) preds[t].push(s);
  const called = new Array<boolean>(plan.nodes.length).fill(false);
  const steps: PlanStep[] = [];
  const history: string[] = [];
  for (let t = 0; t <= order.length; t++) {
    const frontier = new Set<string>();
    plan.nodes.forEach((node, i) => {
      if (!called[i] && preds[i].every((p) => called[p])) frontier.add(node.tool);
    });
    steps.push({
      planId: plan.id,
      query: plan.query,
      history: [...history],
      acceptable: t === order.length ? [END] : [...frontier],
    });
    if (t < order.length) {
      const i = order[t];
      called[i] = true;
      history.push(plan.nodes[i].tool);
    }
  }
  return steps;
}

/** Tool names of a plan in execution order. */
export function planTools(plan: Plan): string[] {
  return plan.order.map((i) => plan.nodes[i].tool);
}

/** The tool sequence of a plan, as a key: plans with the same key repeat the same sequence of calls. */
export function sequenceKey(plan: Plan): string {
  return planTools(plan).join('\u0000');
}

/**
 * Every execution order the DAG allows (its linear extensions), the plan's own order first, at
 * most `limit` of them. An agent may run independent calls in any order, so the dependency
 * graphs learn from all of them instead of only the order the demonstration happened to list.
 */
export function planOrders(plan: Plan, limit = 24): number[][] {
  const n = plan.nodes.length;
  const preds: number[][] = plan.nodes.map(() => []);
  for (const [s, t] of plan.edges) preds[t].push(s);
  const orders: number[][] = [[...plan.order]];
  const seen = new Set([plan.order.join(',')]);
  const done = new Array<boolean>(n).fill(false);
  const current: number[] = [];
  const extend = (): void => {
    if (orders.length >= limit) return;
    if (current.length === n) {
      const key = current.join(',');
      if (!seen.has(key)) {
        seen.add(key);
        orders.push([...current]);
      }
      return;
    }
    for (let i = 0; i < n && orders.length < limit; i++) {
      if (done[i] || !preds[i].every((p) => done[p])) continue;
      // Two instances of one tool are interchangeable: only take the first ready one.
      if (
        plan.nodes.some((m, j) => j < i && !done[j] && m.tool === plan.nodes[i].tool && preds[j].every((p) => done[p]))
      )
        continue;
      done[i] = true;
      current.push(i);
      extend();
      current.pop();
      done[i] = false;
    }
  };
  extend();
  return orders;
}

import { DtdrError, type DtdrErrorDetails } from '../base/errors.js';
import { END, type Plan, type PlanNode, type PlanStep } from '../base/types.js';

/**
 * Resolves name-level links to node instances. For a link s→t, the target is the earliest
 * instance of t not yet linked from s and the source the nearest instance of s listed before it,
 * so repeated tools (A, B, A with A→B, B→A) chain instead of forming a cycle.
 */
function resolveEdges(nodes: PlanNode[], links: { source: string; target: string }[], where: DtdrErrorDetails): [number, number][] {
  const edges: [number, number][] = [];
  const seen = new Set<string>();
  links.forEach((link, k) => {
    const sources = nodes.flatMap((n, i) => (n.tool === link.source ? [i] : []));
    const targets = nodes.flatMap((n, i) => (n.tool === link.target ? [i] : []));
    if (sources.length === 0 || targets.length === 0) {
      const missing = sources.length === 0 ? link.source : link.target;
      throw new DtdrError('data', `link ${link.source} → ${link.target} names "${missing}", which is not a node of this plan`, {
        ...where,
        field: `task_links[${k}]`,
        hint: 'every link source and target must be the task of one of the task_nodes',
      });
    }
    let pick: [number, number] | undefined;
    for (const j of targets) {
      const before = sources.filter((i) => i < j && !seen.has(`${i}>${j}`));
      if (before.length > 0) {
        pick = [before[before.length - 1], j];
        break;
      }
    }
    pick ??= sources.flatMap((i) => targets.filter((j) => j !== i && !seen.has(`${i}>${j}`)).map((j) => [i, j] as [number, number]))[0];
    if (!pick) return; // a duplicate link adds nothing
    seen.add(`${pick[0]}>${pick[1]}`);
    edges.push(pick);
  });
  return edges;
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
  // The short form, a chain: {"query": "…", "tools": ["a", "b"]}.
  const short = record as { query?: unknown; tools?: unknown; id?: unknown };
  if (record.user_request === undefined && record.task_nodes === undefined && short.query !== undefined) {
    if (typeof short.query !== 'string' || short.query.trim() === '') fail('query', 'missing or empty query', 'each plan needs the user\'s request as a non-empty string');
    if (!Array.isArray(short.tools) || short.tools.length === 0) fail('tools', 'tools must be a non-empty array of tool names', 'e.g. {"query": "…", "tools": ["search", "send"]}');
    (short.tools as unknown[]).forEach((t, i) => {
      if (typeof t !== 'string' || t === '') fail(`tools[${i}]`, 'each tool must be a non-empty string');
      if (t === END) fail(`tools[${i}]`, `"${END}" is reserved for the end of a plan and cannot be a tool name`);
    });
    return chainPlan(short.id === undefined ? String(where.line ?? '') : String(short.id), (short.query as string).trim(), short.tools as string[]);
  }
  const query = record.user_request;
  if (typeof query !== 'string' || query.trim() === '') fail('user_request', 'missing or empty user_request', 'each plan needs the user\'s request as a non-empty string');
  if (!Array.isArray(record.task_nodes) || record.task_nodes.length === 0) {
    fail('task_nodes', 'empty plan: task_nodes must be a non-empty array', 'a demonstration needs at least one tool call');
  }
  const nodes: PlanNode[] = (record.task_nodes as unknown[]).map((n, i) => {
    const task = (n as { task?: unknown })?.task;
    if (typeof task !== 'string' || task === '') fail(`task_nodes[${i}].task`, 'each node needs a "task" naming the tool');
    if (task === END) fail(`task_nodes[${i}].task`, `"${END}" is reserved for the end of a plan and cannot be a tool name`);
    const args = (n as { arguments?: unknown }).arguments;
    return args === undefined ? { tool: task as string } : { tool: task as string, arguments: args };
  });
  const rawLinks = record.task_links ?? [];
  if (!Array.isArray(rawLinks)) fail('task_links', 'task_links must be an array of {source, target}');
  const links = (rawLinks as unknown[]).map((l, k) => {
    const { source, target } = (l ?? {}) as { source?: unknown; target?: unknown };
    if (typeof source !== 'string' || typeof target !== 'string') fail(`task_links[${k}]`, 'a link needs string "source" and "target"');
    return { source: source as string, target: target as string };
  });
  const edges = resolveEdges(nodes, links, where);
  const order = topologicalOrder(nodes, edges, where);
  const id = record.id === undefined ? String(where.line ?? '') : String(record.id);
  return { id, query: (query as string).trim(), nodes, edges, order };
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
    steps.push({ planId: plan.id, query: plan.query, history: [...history], acceptable: t === order.length ? [END] : [...frontier] });
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
      if (plan.nodes.some((m, j) => j < i && !done[j] && m.tool === plan.nodes[i].tool && preds[j].every((p) => done[p]))) continue;
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

import { closestToolName } from '../base/checks.js';
import { DtdrError } from '../base/errors.js';
import { checkToolName, formatCount, MAX_DESCRIPTION_CHARS } from '../base/limits.js';
import { planFromRecord } from './plan.js';
import { toolsFromOpenAI } from './tools.js';
import { END, type Dataset, type Plan, type ToolSpec } from '../base/types.js';

/**
 * Parses JSON with the file name in the error; `line` when the text is one line of a JSONL file. In a whole
 * JSON file the error names the line and column of the position the parser stopped at, where it says one.
 */
export function parseJson(text: string, file: string, line?: number): unknown {
  try {
    return JSON.parse(text);
  } catch (cause) {
    const reason = cause instanceof Error ? cause.message : String(cause);
    if (line !== undefined)
      throw new DtdrError('data', `malformed JSON (${reason})`, { file, line, hint: 'fix or remove that line', cause });
    const at = /at position (\d+)/.exec(reason);
    const before = at ? text.slice(0, Number(at[1])).split('\n') : undefined;
    throw new DtdrError('data', `malformed JSON (${reason}${before ? `, column ${before.at(-1)!.length + 1}` : ''})`, {
      file,
      ...(before ? { line: before.length } : {}),
      hint: before ? 'fix the JSON on that line' : 'fix the JSON',
      cause,
    });
  }
}

/** Parses data.jsonl text: one plan per non-blank line (a UTF-8 byte-order mark is ignored). */
export function parsePlans(text: string, file = 'data.jsonl', options: { allowEmpty?: boolean } = {}): Plan[] {
  return parsePlanLines(text, file, options).map((p) => p.plan);
}

/** parsePlans, with the 1-based line each plan is on. */
function parsePlanLines(text: string, file: string, options: { allowEmpty?: boolean }): { plan: Plan; line: number }[] {
  const plans: { plan: Plan; line: number }[] = [];
  const ids = new Set<string>();
  text
    .replace(/^\uFEFF/, '')
    .split('\n')
    .forEach((raw, index) => {
      if (raw.trim() === '') return;
      const line = index + 1;
      const plan = planFromRecord(parseJson(raw, file, line) as never, { file, line });
      if (ids.has(plan.id))
        throw new DtdrError('data', `duplicate plan id "${plan.id}"`, {
          file,
          line,
          field: 'id',
          hint: 'plan ids must be unique',
        });
      ids.add(plan.id);
      plans.push({ plan, line });
    });
  if (plans.length === 0 && !options.allowEmpty)
    throw new DtdrError('data', 'no plans found', { file, hint: 'data.jsonl needs one JSON plan per line' });
  return plans;
}

/** A description from a tool file: at most MAX_DESCRIPTION_CHARS characters. */
function checkDescriptionLength(description: string, file: string, field: string): void {
  if (description.length > MAX_DESCRIPTION_CHARS) {
    throw new DtdrError(
      'data',
      `the description is ${formatCount(description.length)} characters long; at most ` +
        `${formatCount(MAX_DESCRIPTION_CHARS)} are accepted`,
      { file, field, hint: 'describe what the tool does in a few sentences' },
    );
  }
}

/** Parses tool_desc.json: {"nodes": [{"id", "desc"}]}; also accepts a bare array of them. */
export function parseToolDescriptions(text: string, file = 'tool_desc.json'): ToolSpec[] {
  if (text.replace(/^\uFEFF/, '').trim() === '')
    throw new DtdrError('data', 'the file is empty', {
      file,
      hint: 'tool_desc.json needs {"nodes": [{"id": …, "desc": …}]}',
    });
  const json = parseJson(text.replace(/^\uFEFF/, ''), file) as { nodes?: unknown } | unknown[];
  const nodes = Array.isArray(json) ? json : (json as { nodes?: unknown } | null)?.nodes;
  if (!Array.isArray(nodes))
    throw new DtdrError('data', 'expected {"nodes": [{"id": …, "desc": …}]}', { file, field: 'nodes' });
  const seen = new Set<string>();
  return nodes.map((n, i) => {
    const { id, desc } = (n ?? {}) as { id?: unknown; desc?: unknown };
    if (typeof id !== 'string' || id === '')
      throw new DtdrError('data', 'a tool needs a string "id"', { file, field: `nodes[${i}].id` });
    if (id === END)
      throw new DtdrError('data', `"${END}" is reserved for the end of a plan`, { file, field: `nodes[${i}].id` });
    checkToolName(id, { code: 'data', file, field: `nodes[${i}].id` });
    if (seen.has(id)) throw new DtdrError('data', `duplicate tool "${id}"`, { file, field: `nodes[${i}].id` });
    seen.add(id);
    if (typeof desc === 'string') checkDescriptionLength(desc, file, `nodes[${i}].desc`);
    return { name: id, description: typeof desc === 'string' ? desc : '' };
  });
}

/**
 * Parses a tool list in any of the forms apps have at hand: OpenAI tools
 * (`[{"type": "function", "function": {name, description, parameters}}]`, or the bare function
 * objects), an MCP `tools/list` result (`{"tools": [{name, description, inputSchema}]}`), or
 * dtdr's tool_desc.json (`{"nodes": [{id, desc}]}`).
 */
export function parseToolList(text: string, file = 'tools.json'): ToolSpec[] {
  const clean = text.replace(/^\uFEFF/, '');
  if (clean.trim() === '')
    throw new DtdrError('data', 'the tool list is empty', {
      file,
      hint: 'paste OpenAI tools JSON, an MCP tools/list result, or tool_desc.json',
    });
  const json = parseJson(clean, file);
  if (json && typeof json === 'object' && !Array.isArray(json) && 'nodes' in json)
    return parseToolDescriptions(clean, file);
  const list = Array.isArray(json)
    ? json
    : ((json as { tools?: unknown } | null)?.tools ?? (json as { result?: { tools?: unknown } } | null)?.result?.tools);
  if (!Array.isArray(list)) {
    throw new DtdrError('data', 'expected a list of tools', {
      file,
      hint:
        'OpenAI tools ([{"type": "function", "function": {…}}]), an MCP tools/list result ' +
        '({"tools": […]}), or tool_desc.json ({"nodes": […]})',
    });
  }
  if (list.length === 0) throw new DtdrError('data', 'the tool list is empty', { file, field: 'tools' });
  // MCP tools carry their argument schema as inputSchema: read them as OpenAI functions.
  const asOpenAI = list.map((item: unknown) => {
    const t = (item ?? {}) as Record<string, unknown>;
    return t.function === undefined && t.inputSchema !== undefined
      ? { name: t.name, description: t.description, parameters: t.inputSchema }
      : item;
  });
  const tools = toolsFromOpenAI(asOpenAI, file);
  const seen = new Set<string>();
  return tools.map((tool, i) => {
    if (tool.name === END)
      throw new DtdrError('data', `"${END}" is reserved for the end of a plan`, { file, field: `[${i}].name` });
    if (seen.has(tool.name))
      throw new DtdrError('data', `duplicate tool "${tool.name}"`, { file, field: `[${i}].name` });
    seen.add(tool.name);
    if (tool.description) checkDescriptionLength(tool.description, file, `[${i}].description`);
    const returns = (list[i] as { outputSchema?: unknown } | null)?.outputSchema;
    return returns && typeof returns === 'object' ? { ...tool, returns: returns as ToolSpec['returns'] } : tool;
  });
}

/** Parses split_ids.json: {"test_ids": {"<type>": [ids…]}} or {"test_ids": [ids…]}. */
export function parseSplitIds(text: string, file = 'split_ids.json'): string[] {
  const json = parseJson(text, file) as { test_ids?: unknown };
  const ids = json?.test_ids;
  const lists = Array.isArray(ids) ? [ids] : ids && typeof ids === 'object' ? Object.values(ids) : undefined;
  if (!lists || !lists.every(Array.isArray))
    throw new DtdrError('data', 'expected {"test_ids": {"chain": [ids…]}}', { file, field: 'test_ids' });
  return (lists as unknown[][]).flat().map(String);
}

/** The contents of a dataset folder's files, for {@link datasetFromFiles}. */
export interface DatasetFiles {
  name: string;
  /** Demonstrations; absent or empty for a tools-only start (then toolDescriptions is required). */
  data?: { text: string; file: string };
  toolDescriptions?: { text: string; file: string };
  splitIds?: { text: string; file: string };
}

/**
 * Builds a dataset from the TaskBench layout's file contents. Without tool_desc.json the tool set
 * is every tool the plans use, with empty descriptions; a plan that uses a tool missing from
 * tool_desc.json is an error naming it.
 */
export function datasetFromFiles(files: DatasetFiles): Dataset {
  if (!files.data && !files.toolDescriptions)
    throw new DtdrError('data', 'neither demonstrations nor tool descriptions given', {
      hint: 'give data.jsonl, tool_desc.json, or both',
    });
  // With tool descriptions, no demonstrations is a valid start: retrieval from descriptions alone.
  const planLines = files.data
    ? parsePlanLines(files.data.text, files.data.file, { allowEmpty: !!files.toolDescriptions })
    : [];
  const plans = planLines.map((p) => p.plan);
  let tools: ToolSpec[];
  if (files.toolDescriptions) {
    tools = parseToolDescriptions(files.toolDescriptions.text, files.toolDescriptions.file);
    if (tools.length === 0)
      throw new DtdrError('data', 'no tools described', {
        file: files.toolDescriptions.file,
        field: 'nodes',
        hint: 'list at least one {"id": …, "desc": …}',
      });
    const known = new Set(tools.map((t) => t.name));
    for (const { plan, line } of planLines) {
      const unknown = plan.nodes.findIndex((n) => !known.has(n.tool));
      if (unknown >= 0) {
        const close = closestToolName(plan.nodes[unknown].tool, known);
        throw new DtdrError(
          'data',
          `plan "${plan.id}" calls "${plan.nodes[unknown].tool}", which ` +
            `${files.toolDescriptions.file} does not describe`,
          {
            file: files.data!.file,
            line,
            hint: close
              ? `did you mean "${close}"? Fix its name in the plan, or add the tool to the tool descriptions`
              : 'add the tool to the tool descriptions or fix its name in the plan',
          },
        );
      }
    }
  } else {
    const names = [...new Set(plans.flatMap((p) => p.nodes.map((n) => n.tool)))];
    // No tool_desc.json: the plans name the tools, so their names meet the rule here, with the file.
    for (const plan of plans)
      for (const n of plan.nodes)
        checkToolName(n.tool, { code: 'data', file: files.data!.file, field: `plan "${plan.id}"` });
    tools = names.map((name) => ({ name, description: '' }));
  }
  const testIds = files.splitIds ? parseSplitIds(files.splitIds.text, files.splitIds.file) : undefined;
  if (testIds) {
    const known = new Set(plans.map((p) => p.id));
    const missing = testIds.filter((id) => !known.has(id));
    if (missing.length > 0) {
      throw new DtdrError(
        'data',
        `${missing.length} test ids are not plans of ${files.data?.file ?? 'data.jsonl'} (first: "${missing[0]}")`,
        { file: files.splitIds!.file },
      );
    }
  }
  return { name: files.name, tools, plans, ...(testIds ? { testIds } : {}) };
}

import { DtdrError } from '../base/errors.js';
import { checkToolName } from '../base/limits.js';
import type { JsonSchema, ToolSpec } from '../base/types.js';

/** An OpenAI-style function tool, as chat APIs and chat templates take them. */
export interface OpenAITool {
  type: 'function';
  function: { name: string; description: string; parameters?: JsonSchema };
}

/** A tool as an OpenAI `tools` entry. */
export function toOpenAITool(tool: ToolSpec, withParameters = true): OpenAITool {
  return {
    type: 'function',
    function: {
      name: tool.name,
      description: tool.description,
      ...(withParameters && tool.parameters ? { parameters: tool.parameters } : {}),
    },
  };
}

/** Accepts a user's OpenAI-style tool list (`{type:'function', function:{…}}` or bare `{name, …}`). */
export function toolsFromOpenAI(list: unknown, source = 'tools'): ToolSpec[] {
  if (!Array.isArray(list)) throw new DtdrError('data', 'expected an array of tools', { file: source });
  return list.map((entry: unknown, i) => {
    const f = (entry as { function?: unknown })?.function ?? entry;
    const { name, description, parameters } = (f ?? {}) as {
      name?: unknown;
      description?: unknown;
      parameters?: unknown;
    };
    checkToolName(name, { code: 'data', file: source, field: `[${i}].function.name` });
    if (
      parameters !== undefined &&
      (typeof parameters !== 'object' || parameters === null || Array.isArray(parameters))
    ) {
      throw new DtdrError('data', 'parameters must be a JSON Schema object', {
        file: source,
        field: `[${i}].function.parameters`,
      });
    }
    return {
      name,
      description: typeof description === 'string' ? description : '',
      ...(parameters ? { parameters: parameters as JsonSchema } : {}),
    };
  });
}

const SEAL_TYPES: Record<string, string> = {
  str: 'string',
  string: 'string',
  int: 'integer',
  integer: 'integer',
  float: 'number',
  number: 'number',
  bool: 'boolean',
  boolean: 'boolean',
  list: 'array',
  array: 'array',
  dict: 'object',
  object: 'object',
};

/** Converts one Seal-Tools tool.jsonl record to a ToolSpec with a JSON Schema for its arguments. */
export function sealToolToSpec(record: unknown, where: { file?: string; line?: number } = {}): ToolSpec {
  const r = record as {
    api_name?: unknown;
    api_description?: unknown;
    parameters?: unknown;
    required?: unknown;
    responses?: unknown;
  };
  if (typeof r?.api_name !== 'string')
    throw new DtdrError('data', 'a Seal-Tools record needs "api_name"', { ...where, field: 'api_name' });
  checkToolName(r.api_name, { code: 'data', ...where, field: 'api_name' });
  const properties: Record<string, JsonSchema> = {};
  for (const [name, spec] of Object.entries(
    (r.parameters ?? {}) as Record<string, { type?: string; description?: string }>,
  )) {
    const type = SEAL_TYPES[String(spec?.type ?? '').toLowerCase()];
    properties[name] = { ...(type ? { type } : {}), ...(spec?.description ? { description: spec.description } : {}) };
  }
  const required = Array.isArray(r.required)
    ? r.required.filter((x): x is string => typeof x === 'string' && x in properties)
    : [];
  const returned: Record<string, JsonSchema> = {};
  if (r.responses && typeof r.responses === 'object' && !Array.isArray(r.responses)) {
    for (const [name, spec] of Object.entries(r.responses as Record<string, { type?: string; description?: string }>)) {
      const type = SEAL_TYPES[String(spec?.type ?? '').toLowerCase()];
      returned[name] = { ...(type ? { type } : {}), ...(spec?.description ? { description: spec.description } : {}) };
    }
  }
  return {
    name: r.api_name,
    description: typeof r.api_description === 'string' ? r.api_description : '',
    parameters: { type: 'object', properties, required },
    ...(Object.keys(returned).length > 0 ? { returns: { type: 'object', properties: returned } } : {}),
  };
}

/** Reads a TaskBench-layout folder from disk (Node only); the parsing itself lives in core. */
import { existsSync, statSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import { datasetFromFiles, parseJson } from '../core/plans/dataset.js';
import { sealToolToSpec } from '../core/plans/tools.js';
import { DtdrError } from '../core/base/errors.js';
import type { Dataset, ToolSpec } from '../core/base/types.js';
import { readUtf8File } from './utf8.js';

/**
 * Reads DIR/data.jsonl, DIR/tool_desc.json and DIR/split_ids.json (optional). Either of the first
 * two may be missing: without tool_desc.json the tools are those the plans call; without
 * data.jsonl (or with an empty one) the dataset is the tools alone, which dtdr-g can train on.
 */
export function readDatasetDir(dir: string): Dataset {
  const root = resolve(dir);
  if (!existsSync(root) || !statSync(root).isDirectory()) {
    const what = existsSync(root) ? 'is a file, not a folder' : 'does not exist';
    throw new DtdrError('data', `dataset folder "${dir}" ${what}`, {
      hint: 'give a folder holding data.jsonl (and tool_desc.json)',
    });
  }
  const file = (name: string) => {
    const path = join(root, name);
    return existsSync(path) ? { text: readUtf8File(path), file: path } : undefined;
  };
  const data = file('data.jsonl');
  const toolDescriptions = file('tool_desc.json');
  if (!data && !toolDescriptions) {
    throw new DtdrError('data', `neither data.jsonl nor tool_desc.json in "${dir}"`, {
      hint:
        'the TaskBench layout has one plan per line in data.jsonl and the tools in tool_desc.json ' +
        '(tools alone are enough to start)',
    });
  }
  const dataset = datasetFromFiles({
    name: basename(root),
    ...(data ? { data } : {}),
    ...(toolDescriptions ? { toolDescriptions } : {}),
    splitIds: file('split_ids.json'),
  });
  // Seal-Tools ships typed parameters in tool.jsonl: attach them as JSON Schemas.
  const specs = file('tool.jsonl');
  if (specs) {
    const byName = new Map<string, ToolSpec>();
    specs.text.split('\n').forEach((line, i) => {
      if (line.trim() === '') return;
      const spec = sealToolToSpec(parseJson(line, specs.file, i + 1), { file: specs.file, line: i + 1 });
      byName.set(spec.name, spec);
    });
    dataset.tools = dataset.tools.map((t) => {
      const spec = byName.get(t.name);
      return spec
        ? {
            ...t,
            ...(spec.parameters ? { parameters: spec.parameters } : {}),
            ...(spec.returns ? { returns: spec.returns } : {}),
          }
        : t;
    });
  }
  return dataset;
}

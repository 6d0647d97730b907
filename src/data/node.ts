/** Reads a TaskBench-layout folder from disk (Node only); the parsing itself lives in core. */
import { existsSync, readFileSync, statSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import { datasetFromFiles, parseJson } from '../core/dataset.js';
import { sealToolToSpec } from '../core/prompt/tools.js';
import { DtdrError } from '../core/errors.js';
import type { Dataset, ToolSpec } from '../core/types.js';

/** Reads DIR/data.jsonl, DIR/tool_desc.json (optional) and DIR/split_ids.json (optional). */
export function readDatasetDir(dir: string): Dataset {
  const root = resolve(dir);
  if (!existsSync(root) || !statSync(root).isDirectory()) {
    throw new DtdrError('data', `dataset folder "${dir}" does not exist`, { hint: 'give a folder holding data.jsonl (and tool_desc.json)' });
  }
  const file = (name: string) => {
    const path = join(root, name);
    return existsSync(path) ? { text: readFileSync(path, 'utf8'), file: path } : undefined;
  };
  const data = file('data.jsonl');
  if (!data) throw new DtdrError('data', `no data.jsonl in "${dir}"`, { hint: 'the TaskBench layout has one plan per line in data.jsonl' });
  const dataset = datasetFromFiles({ name: basename(root), data, toolDescriptions: file('tool_desc.json'), splitIds: file('split_ids.json') });
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
      return spec ? { ...t, ...(spec.parameters ? { parameters: spec.parameters } : {}), ...(spec.returns ? { returns: spec.returns } : {}) } : t;
    });
  }
  return dataset;
}

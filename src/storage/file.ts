/** Models as JSON files (Node). */
import { readFileSync, writeFileSync, existsSync, mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import type { ModelArtifact } from '../core/artifact.js';
import { DtdrError } from '../core/errors.js';

export function writeModelFile(path: string, artifact: ModelArtifact): void {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, JSON.stringify(artifact));
}

/** Reads a model file; a missing or non-JSON file is a DtdrError naming it. */
export function readModelFile(path: string): unknown {
  if (!existsSync(path)) throw new DtdrError('artifact', `model file "${path}" does not exist`, { hint: 'train one with `dtdr train --out FILE`' });
  const text = readFileSync(path, 'utf8');
  try {
    return JSON.parse(text);
  } catch (cause) {
    throw new DtdrError('artifact', 'not valid JSON', { file: path, hint: 'the file is damaged or not a dtdr model; retrain it', cause });
  }
}

import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { Encoder } from '../core/base/encoder.js';
import type { Dataset } from '../core/base/types.js';
import { DtdrError } from '../core/base/errors.js';
import { isMethod, isPeer, METHODS, PEERS } from '../core/retrieval/methods.js';
import type { EvalMethodName, MethodName } from '../core/retrieval/types.js';
import { loadEncoder } from '../encoders/node.js';
import { foldWorkers, type NodeFoldWorkers } from '../workers/node.js';
import { intOption } from './args.js';

export const encoderOptions = {
  encoder: { type: 'string' },
  'allow-remote': { type: 'boolean' },
} as const;

export function loadCliEncoder(values: Record<string, unknown>, fallbackId?: string): Promise<Encoder> {
  return loadEncoder({
    model: (values.encoder as string | undefined) ?? fallbackId,
    allowRemoteModels: values['allow-remote'] === true,
  });
}

/** One method name from a flag; an unknown one is a usage error listing the methods. */
export function parseMethod(value: string, flag = '--method'): MethodName {
  if (!isMethod(value))
    throw new DtdrError('usage', `${flag}: unknown method "${value}"`, { hint: `one of: ${METHODS.join(', ')}` });
  return value;
}

export function parseMethods(value: string | undefined, all: readonly MethodName[]): MethodName[];
export function parseMethods(
  value: string | undefined,
  all: readonly MethodName[],
  options: { peers: true },
): EvalMethodName[];
/** Method names from --methods; with `peers`, the peers dtdr eval compares with are accepted too. */
export function parseMethods(
  value: string | undefined,
  all: readonly MethodName[],
  options: { peers?: boolean } = {},
): EvalMethodName[] {
  if (value === undefined) return [...all];
  const names = value
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  if (names.length === 0) throw new DtdrError('usage', '--methods needs at least one method');
  return names.map((n) => {
    if (options.peers && isPeer(n)) return n;
    if (!isMethod(n))
      throw new DtdrError('usage', `--methods: unknown method "${n}"`, {
        hint: `one of: ${[...METHODS, ...(options.peers ? PEERS : [])].join(', ')}`,
      });
    return n;
  });
}

export function fmt(x: number, digits = 3): string {
  return x.toFixed(digits);
}

/**
 * `dtdr train` and `dtdr eval` refuse to train on tools known by name only — a folder with no
 * tool_desc.json, or tools whose "desc" is missing or empty — unless --allow-undescribed is given.
 */
export function checkDescribed(dir: string, dataset: Pick<Dataset, 'tools'>, allowUndescribed: boolean): void {
  if (allowUndescribed) return;
  if (!existsSync(join(dir, 'tool_desc.json'))) {
    throw new DtdrError('data', `no tool_desc.json in "${dir}": dtdr would know the tools by name only`, {
      hint:
        'add tool_desc.json ({"nodes": [{"id": …, "desc": …}]}), or pass --allow-undescribed to ' +
        'train from the names the plans call',
    });
  }
  const undescribed = dataset.tools.filter((t) => !t.description?.trim());
  if (undescribed.length > 0) {
    throw new DtdrError(
      'data',
      `${undescribed.length} tool${undescribed.length > 1 ? 's have' : ' has'} no description: ${undescribed
        .slice(0, 5)
        .map((t) => t.name)
        .join(', ')}${undescribed.length > 5 ? ', …' : ''}`,
      {
        file: join(dir, 'tool_desc.json'),
        hint: 'give each tool a "desc" saying what it does, or pass --allow-undescribed',
      },
    );
  }
}

/**
 * `--threads N` (default: foldWorkers' own) for DTDR-G's cross-fitting; `report` prints why a worker did not help, once
 * each.
 */
export function cliFoldWorkers(values: Record<string, unknown>): NodeFoldWorkers & { report(): void } {
  const workers = foldWorkers(
    values.threads === undefined ? {} : { threads: intOption(values.threads as string, 'threads', 0, 0) },
  );
  return Object.assign(workers, {
    report: () => new Set(workers.errors).forEach((why) => console.error(`dtdr: ${why}`)),
  });
}

/** The training flags `dtdr train` and `dtdr eval` share (--history-length, --clusters, --epochs), with the target. */
export function trainingFlags(values: Record<string, unknown>, target: number) {
  return {
    historyLength:
      values['history-length'] === undefined
        ? undefined
        : intOption(values['history-length'] as string, 'history-length', 3, 1),
    gated: { target },
    clusters: values.clusters === undefined ? undefined : intOption(values.clusters as string, 'clusters', 1, 1),
    head: { epochs: intOption(values.epochs as string | undefined, 'epochs', 8, 1) },
  };
}

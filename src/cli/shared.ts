import type { Encoder } from '../core/base/encoder.js';
import { DtdrError } from '../core/base/errors.js';
import { isMethod, METHODS } from '../core/retrieval/train.js';
import type { MethodName } from '../core/retrieval/types.js';
import { loadEncoder } from '../encoders/node.js';

export const encoderOptions = {
  encoder: { type: 'string' },
  'allow-remote': { type: 'boolean' },
} as const;

export function loadCliEncoder(values: Record<string, unknown>, fallbackId?: string): Promise<Encoder> {
  return loadEncoder({ model: (values.encoder as string | undefined) ?? fallbackId, allowRemoteModels: values['allow-remote'] === true });
}

/** One method name from a flag; an unknown one is a usage error listing the methods. */
export function parseMethod(value: string, flag = '--method'): MethodName {
  if (!isMethod(value)) throw new DtdrError('usage', `${flag}: unknown method "${value}"`, { hint: `one of: ${METHODS.join(', ')}` });
  return value;
}

export function parseMethods(value: string | undefined, all: readonly MethodName[]): MethodName[] {
  if (value === undefined) return [...all];
  const names = value.split(',').map((s) => s.trim()).filter(Boolean);
  if (names.length === 0) throw new DtdrError('usage', '--methods needs at least one method');
  return names.map((n) => parseMethod(n, '--methods'));
}

export function fmt(x: number, digits = 3): string {
  return x.toFixed(digits);
}

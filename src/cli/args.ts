import { parseArgs, type ParseArgsConfig } from 'node:util';
import { closestToolName } from '../core/base/checks.js';
import { DtdrError } from '../core/base/errors.js';

type Options = NonNullable<ParseArgsConfig['options']>;

/** parseArgs in strict mode, with its errors turned into one-line usage errors. */
export function parseCommandArgs<T extends Options>(
  command: string,
  argv: string[],
  options: T,
): { values: Record<string, string | boolean | undefined> } {
  try {
    return parseArgs({ args: argv, options, strict: true, allowPositionals: false });
  } catch (error) {
    const message =
      error instanceof Error
        ? error.message.split('\n')[0].replace(/\. To specify a positional.*$/, '')
        : String(error);
    // An option's value that starts with a dash (`--threads -1`) reads as another option to parseArgs.
    const ambiguous = /^Option '(--[^']+)' argument is ambiguous/.exec(message)?.[1];
    if (ambiguous !== undefined) {
      const value = argv[argv.indexOf(ambiguous) + 1];
      throw new DtdrError('usage', `${command}: ${ambiguous} needs a value, and "${value}" reads as an option`, {
        hint: `give a value starting with a dash as ${ambiguous}=${value}`,
      });
    }
    const unknown = /^Unknown option '--([^'=]+)'/.exec(message)?.[1];
    const close = unknown === undefined ? undefined : closestToolName(unknown, Object.keys(options));
    throw new DtdrError('usage', `${command}: ${message}${close ? `; did you mean --${close}?` : ''}`, {
      hint: `run \`dtdr ${command} --help\``,
    });
  }
}

export function intOption(value: string | undefined, name: string, fallback: number, min = 0): number {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!Number.isInteger(n) || n < min)
    throw new DtdrError('usage', `--${name} must be an integer ≥ ${min}, got "${value}"`);
  return n;
}

export function numberOption(
  value: string | undefined,
  name: string,
  fallback: number,
  min: number,
  max: number,
): number {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!Number.isFinite(n) || n < min || n > max)
    throw new DtdrError('usage', `--${name} must be a number in [${min}, ${max}], got "${value}"`);
  return n;
}

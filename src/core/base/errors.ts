/**
 * dtdr's one error family. Every error the library throws on purpose is a DtdrError with a
 * stable `code` and, where it helps, the file/line/field at fault, so callers can branch on
 * `DtdrError.isInstance(e) && e.code === 'data'` and the CLI can print one line.
 */
export type DtdrErrorCode =
  | 'data' // a dataset or demonstration file is malformed
  | 'artifact' // a saved model cannot be read: wrong version, wrong encoder, corrupt state
  | 'encoder' // the sentence encoder cannot be loaded or used
  | 'options' // an option value is out of range or of the wrong kind
  | 'tool-call' // a model's answer cannot be parsed or validated
  | 'usage'; // the CLI was called wrongly

const MARKER = Symbol.for('dtdr.error');

/** Where a {@link DtdrError} happened and what to do about it. */
export interface DtdrErrorDetails {
  /** File, URL or artifact name the problem is in. */
  file?: string;
  /** 1-based line number within `file`. */
  line?: number;
  /** Field or option name, dotted for nested ones (`task_links[2].target`). */
  field?: string;
  /** What a user can do about it. */
  hint?: string;
  cause?: unknown;
}

/**
 * The one error dtdr throws on purpose, with a stable `code` and, where it helps, the file, line and field at fault and
 * a hint.
 */
export class DtdrError extends Error {
  readonly [MARKER] = true;
  readonly code: DtdrErrorCode;
  readonly file?: string;
  readonly line?: number;
  readonly field?: string;
  readonly hint?: string;

  constructor(code: DtdrErrorCode, message: string, details: DtdrErrorDetails = {}) {
    const where = [details.file, details.line !== undefined ? `line ${details.line}` : undefined, details.field]
      .filter(Boolean)
      .join(', ');
    const full = `${where ? `${where}: ` : ''}${message}${details.hint ? ` — ${details.hint}` : ''}`;
    super(full, details.cause !== undefined ? { cause: details.cause } : undefined);
    this.name = 'DtdrError';
    this.code = code;
    this.file = details.file;
    this.line = details.line;
    this.field = details.field;
    this.hint = details.hint;
  }

  /** True for any DtdrError, also one from another copy of the package. */
  static isInstance(error: unknown): error is DtdrError {
    return typeof error === 'object' && error !== null && (error as Record<symbol, unknown>)[MARKER] === true;
  }
}

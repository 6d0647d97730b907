/** Model files (Node): the binary v2 container, or JSON text for `.json` paths; written atomically. */
import { decodeUtf8 } from '../data/utf8.js';
import { randomBytes } from 'node:crypto';
import {
  appendFileSync,
  closeSync,
  constants,
  existsSync,
  fsyncSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import type { EmbeddingStore } from '../core/base/encoder.js';
import { basename, dirname, join } from 'node:path';
import type { ModelArtifact } from '../core/model/artifact.js';
import { DtdrError } from '../core/base/errors.js';
import { measureJson, MAX_MODEL_NESTING } from '../core/base/limits.js';
import { decodeBinaryModel, decodeBudget, encodeBinaryModel, isBinaryModel } from '../core/model/binary.js';

/**
 * Writes a file atomically and durably: a temporary file beside the target, written and fsynced,
 * then a rename and an fsync of the folder, so a crash or power cut mid-write leaves the previous
 * file intact and a finished save survives. Temporary files a killed writer left behind are removed
 * first. `what` names the file in the error ("the model").
 *
 * The temporary file's name ends in 64 random bits and it is created exclusively, never followed
 * through a link (openExclusive): a symlink planted at a temporary name (say, pointing at the
 * user's other files) cannot redirect the write, and the name cannot be guessed to plant one.
 */
export function writeFileAtomically(path: string, data: string | Uint8Array, what: string): void {
  checkWritablePath(path, `${what}'s path`, 'a file name');
  try {
    mkdirSync(dirname(path), { recursive: true });
  } catch (cause) {
    throw new DtdrError(
      'artifact',
      `cannot make the folder for ${what}: ${cause instanceof Error ? cause.message : String(cause)}`,
      { file: path, cause },
    );
  }
  removeStaleTemporaries(path);
  const temporary = `${path}.${process.pid}.${Date.now()}.${randomBytes(8).toString('hex')}.tmp`;
  try {
    const fd = openExclusive(temporary);
    try {
      writeFileSync(fd, data);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(temporary, path);
    syncFolder(dirname(path));
  } catch (cause) {
    rmSync(temporary, { force: true });
    throw new DtdrError('artifact', `cannot write ${what}: ${cause instanceof Error ? cause.message : String(cause)}`, {
      file: path,
      cause,
    });
  }
}

/**
 * Opens a new file for writing: created here or not at all (O_EXCL: an existing file or link at
 * `path`, even a dangling one, is an error) and never through a symbolic link (O_NOFOLLOW, where
 * the OS has it).
 */
export function openExclusive(path: string): number {
  return openSync(path, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | (constants.O_NOFOLLOW ?? 0), 0o644);
}

/**
 * Makes a rename in `folder` durable; where folders cannot be opened for it (Windows), the rename is as durable as the
 * OS makes it.
 */
function syncFolder(folder: string): void {
  let fd: number | undefined;
  try {
    fd = openSync(folder, 'r');
    fsyncSync(fd);
  } catch {
    // not supported here
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/** Whether process `pid` is running (signal 0 checks without sending anything). */
function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Removes `<path>.<pid>.<ms>[.<random>].tmp` files whose writer is gone (killed mid-save): another process's
 * save in progress is left alone. Failing to remove one is not an error.
 */
export function removeStaleTemporaries(path: string): void {
  const name = basename(path);
  let entries: string[];
  try {
    entries = readdirSync(dirname(path));
  } catch {
    return;
  }
  for (const entry of entries) {
    if (!entry.startsWith(`${name}.`) || !entry.endsWith('.tmp')) continue;
    const match = /^\.(\d+)\.(\d+)(?:\.[0-9a-f]{16})?\.tmp$/.exec(entry.slice(name.length));
    if (!match) continue;
    const pid = Number(match[1]);
    // Our own pid (a container restarts with the same one): stale when written before this process started.
    const stale = pid === process.pid ? Number(match[2]) < Date.now() - process.uptime() * 1000 : !isRunning(pid);
    if (!stale) continue;
    rmSync(join(dirname(path), entry), { force: true });
  }
}

/** Writes a model: `.json` as readable text (v2 JSON); anything else (e.g. `.dtdr`) as the compact binary container. */
export function writeModelFile(path: string, artifact: ModelArtifact): void {
  writeFileAtomically(
    path,
    path.toLowerCase().endsWith('.json') ? JSON.stringify(artifact) : encodeBinaryModel(artifact),
    'the model',
  );
}

/** Checks that a model can be written at `path` (not a folder, not under a file), before any long training starts. */
export function checkModelPath(path: string): void {
  checkWritablePath(path, '--out', 'a file name, e.g. model.json');
}

/**
 * Refuses a path a file cannot be written at: a folder, or a path under a file (the folders a save would make
 * start at the nearest part of the path that exists, which must be a folder). `name` says what gave the path
 * (an option, or what is written); `example` is the hint's kind of path.
 */
export function checkWritablePath(path: string, name: string, example: string): void {
  if (existsSync(path) && statSync(path).isDirectory())
    throw new DtdrError('usage', `${name} "${path}" is a folder`, { hint: `give ${example}` });
  let folder = dirname(path);
  while (!existsSync(folder) && dirname(folder) !== folder) folder = dirname(folder);
  if (existsSync(folder) && !statSync(folder).isDirectory())
    throw new DtdrError('usage', `${name} "${path}" lies under "${folder}", which is a file, not a folder`, {
      hint: `give ${example} in a folder`,
    });
}

/** Reads a model file; a missing, non-file or non-JSON one is a DtdrError naming it. */
export function readModelFile(path: string): unknown {
  if (!existsSync(path))
    throw new DtdrError('artifact', `model file "${path}" does not exist`, {
      hint: 'train one with `dtdr train --out FILE`',
    });
  if (statSync(path).isDirectory())
    throw new DtdrError('artifact', `model file "${path}" is a folder`, {
      hint: 'give the model file (e.g. model.dtdr), not its folder',
    });
  removeStaleTemporaries(path);
  const bytes = readFileSync(path);
  if (isBinaryModel(bytes)) return decodeBinaryModel(bytes, path);
  const measured = measureJson(bytes, MAX_MODEL_NESTING);
  if (measured.tooDeep)
    throw new DtdrError('artifact', `the model nests deeper than ${MAX_MODEL_NESTING} levels`, {
      file: path,
      hint: 'the file is damaged or not a dtdr model; retrain it',
    });
  // The same bound as a binary model's: counted from the bytes, before JSON.parse spends the memory.
  if (measured.decodedBytes > decodeBudget(bytes.length))
    throw new DtdrError(
      'artifact',
      `the model decodes to more memory than a file of ${bytes.length} bytes can hold (its arrays and objects)`,
      { file: path, hint: 'the file is damaged or not a dtdr model; retrain it' },
    );
  const text = decodeUtf8(bytes, path, 'artifact');
  try {
    return JSON.parse(text);
  } catch (cause) {
    throw new DtdrError('artifact', 'not valid JSON', {
      file: path,
      hint: 'the file is damaged or not a dtdr model; retrain it',
      cause,
    });
  }
}

/**
 * Embeddings in a file (one JSON line per text: key and base64 float32 vector), for
 * withPersistentCache. Read once when opened; new vectors are appended. A damaged line (e.g. a
 * crash mid-append) is skipped and its text embedded again.
 */
export function fileEmbeddingStore(path: string): EmbeddingStore {
  const vectors = new Map<string, Float32Array>();
  if (existsSync(path)) {
    for (const line of readFileSync(path, 'utf8').split('\n')) {
      if (!line) continue;
      try {
        const { k, v } = JSON.parse(line) as { k: string; v: string };
        const bytes = Buffer.from(v, 'base64');
        vectors.set(k, new Float32Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength)));
      } catch {
        // skipped: re-embedded on demand
      }
    }
  } else {
    mkdirSync(dirname(path), { recursive: true });
  }
  return {
    async get(keys) {
      return keys.map((k) => vectors.get(k));
    },
    async set(entries) {
      const lines = entries.map(([k, v]) => {
        vectors.set(k, v);
        return JSON.stringify({ k, v: Buffer.from(v.buffer, v.byteOffset, v.byteLength).toString('base64') });
      });
      if (lines.length > 0) appendFileSync(path, `${lines.join('\n')}\n`);
    },
  };
}

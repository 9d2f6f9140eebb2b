import { closeSync, constants, fsyncSync, openSync, renameSync, rmSync, statSync, writeSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { EngramError } from './errors.js';

/**
 * Writes a file so that a reader (or a crash) sees either the old content or the new, never a mix: the text goes to a
 * temporary file in the same folder, is flushed to disk (fsync), renamed over the target (atomic on POSIX), and the
 * folder is flushed so the rename itself survives a power cut. An existing file keeps its mode unless one is given.
 * Used for every file Engram writes outside SQLite that a person or an agent reads (context files, exports).
 */
export function writeFileAtomic(path: string, data: string | Uint8Array, options: { mode?: number } = {}): void {
  writeFileAtomicWith(path, (write) => write(data), options);
}

/** {@link writeFileAtomic} for content produced in pieces (an export of a large store): `produce` calls `write`. */
export function writeFileAtomicWith<T>(path: string, produce: (write: (data: string | Uint8Array) => void) => T, options: { mode?: number } = {}): T {
  const temporary = join(dirname(path), `.${basename(path)}.${process.pid}.${process.getBuiltinModule('node:crypto').randomBytes(4).toString('hex')}.tmp`);
  let mode = options.mode;
  if (mode === undefined) {
    try {
      mode = statSync(path).mode & 0o7777;
    } catch {
      mode = 0o644;
    }
  }
  let result: T;
  try {
    const fd = openSync(temporary, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL, mode);
    try {
      result = produce((data) => {
        const bytes = typeof data === 'string' ? Buffer.from(data, 'utf8') : data;
        let written = 0;
        while (written < bytes.length) written += writeSync(fd, bytes, written, bytes.length - written);
      });
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(temporary, path);
  } catch (error) {
    rmSync(temporary, { force: true });
    if (error instanceof EngramError) throw error;
    throw new EngramError('IO', `could not write ${path}: ${(error as Error).message}`, { cause: error });
  }
  syncFolder(dirname(path));
  return result;
}

/** Flushes a folder's entries (a rename) to disk; some filesystems refuse to open a folder, which is harmless. */
export function syncFolder(folder: string): void {
  let fd: number | undefined;
  try {
    fd = openSync(folder, 'r');
    fsyncSync(fd);
  } catch {
    // Not supported here (some platforms and filesystems): the rename is still atomic, only its durability differs.
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

import { closeSync, fsyncSync, openSync, renameSync, rmSync, statSync, writeSync, mkdirSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { EngramError } from '../../core/index.js';

/**
 * Writes a file so that a reader (or a crash) sees either the old or the new content, never a mix: a temp file in
 * the same folder, fsync, rename over the target, fsync the folder. The target's mode is kept.
 */
export function writeFileAtomic(path: string, text: string): void {
  const dir = dirname(path);
  const temporary = join(dir, `.${basename(path)}.${process.pid}.${Date.now().toString(36)}.tmp`);
  let mode = 0o644;
  try {
    mode = statSync(path).mode & 0o777;
  } catch {
    // New file.
  }
  try {
    mkdirSync(dir, { recursive: true });
    const fd = openSync(temporary, 'w', mode);
    try {
      writeSync(fd, text);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(temporary, path);
    try {
      const dirFd = openSync(dir, 'r');
      try {
        fsyncSync(dirFd);
      } finally {
        closeSync(dirFd);
      }
    } catch {
      // Some file systems refuse to fsync a folder; the rename itself is still atomic.
    }
  } catch (error) {
    rmSync(temporary, { force: true });
    throw new EngramError('IO', `cannot write ${path}: ${(error as Error).message}`, { cause: error });
  }
}

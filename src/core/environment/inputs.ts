import { closeSync, openSync, opendirSync, readSync, statSync, type Dirent, type Stats } from 'node:fs';

/**
 * A path's identity for cache validation: kind, inode, size and modification time, or `absent`. A changed file gets
 * a new mtime (and usually size); a file replaced by rename gets a new inode; a folder's mtime changes when an entry
 * is added, removed or renamed in it.
 */
export type Stamp = string;

/** Stats a path without throwing: undefined when it is absent or cannot be stat'ed. */
export function statPath(path: string): Stats | undefined {
  try {
    return statSync(path, { throwIfNoEntry: false });
  } catch {
    return undefined;
  }
}

/** The stamp of one stat result. */
export function stampOf(stats: Stats | undefined): Stamp {
  if (!stats) return 'absent';
  const kind = stats.isDirectory() ? 'd' : stats.isFile() ? 'f' : 'o';
  return `${kind}:${stats.ino}:${stats.size}:${stats.mtimeMs}`;
}

/** The current stamp of a path. */
export const currentStamp = (path: string): Stamp => stampOf(statPath(path));

/** Text read from a file, possibly only its first `maxBytes`. */
export interface ReadText {
  text: string;
  /** The file's size on disk. */
  size: number;
  /** True when the file is larger than the cap and only its start was read. */
  truncated: boolean;
}

/**
 * Every file-system read detection makes goes through one of these, so the cache knows exactly which paths the
 * result depends on. Each path is stat'ed (and stamped) *before* it is read: a file that changes after the stat gets
 * a new stamp, so a stale result can never be cached under a fresh stamp. Problems become `errors`, never throws.
 */
export class InputLog {
  /** path → stamp, in the order the paths were first consulted. */
  readonly stamps = new Map<string, Stamp>();
  readonly errors: string[] = [];
  /** The newest mtime among the inputs, for the cache's racy-write check. */
  newestMtimeMs = 0;

  /** Stats and stamps a path (the first stamp of a path wins). */
  stat(path: string): Stats | undefined {
    const stats = statPath(path);
    if (!this.stamps.has(path)) {
      this.stamps.set(path, stampOf(stats));
      if (stats && stats.mtimeMs > this.newestMtimeMs) this.newestMtimeMs = stats.mtimeMs;
    }
    return stats;
  }

  /** Reads a regular file as UTF-8, at most `maxBytes` of it. Undefined when absent, not a file or unreadable. */
  readText(path: string, maxBytes: number): ReadText | undefined {
    const stats = this.stat(path);
    if (!stats?.isFile()) return undefined;
    const length = Math.min(stats.size, maxBytes);
    let fd: number | undefined;
    try {
      fd = openSync(path, 'r');
      const buffer = Buffer.allocUnsafe(length);
      let filled = 0;
      while (filled < length) {
        const read = readSync(fd, buffer, filled, length - filled, filled);
        if (read === 0) break;
        filled += read;
      }
      return { text: buffer.toString('utf8', 0, filled), size: stats.size, truncated: stats.size > maxBytes };
    } catch (error) {
      this.errors.push(`cannot read ${path}: ${describe(error)}`);
      return undefined;
    } finally {
      if (fd !== undefined) closeSync(fd);
    }
  }

  /**
   * Lists a folder's entries, stopping after `maxEntries` so a folder of a million files costs no more than a small
   * one. Undefined when the path is absent or not a folder.
   */
  list(path: string, maxEntries: number): Dirent[] | undefined {
    const stats = this.stat(path);
    if (!stats?.isDirectory()) return undefined;
    const entries: Dirent[] = [];
    try {
      const dir = opendirSync(path);
      try {
        for (let entry = dir.readSync(); entry !== null; entry = dir.readSync()) {
          if (entries.length === maxEntries) {
            this.errors.push(`${path} has more than ${maxEntries} entries; only the first ${maxEntries} were checked`);
            break;
          }
          entries.push(entry);
        }
      } finally {
        dir.closeSync();
      }
    } catch (error) {
      this.errors.push(`cannot list ${path}: ${describe(error)}`);
    }
    return entries;
  }
}

/** A short reason for a file-system error: its code when it has one. */
export function describe(error: unknown): string {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  return code ?? (error instanceof Error ? error.message : String(error));
}

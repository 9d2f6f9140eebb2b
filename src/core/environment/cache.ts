// SHA-256 in JavaScript (@noble/hashes), not node:crypto: a hook that falls back hashes here on every event, and
// loading node:crypto (with the streams it pulls) cost it ~7 ms; the digests are the same.
import { sha256 } from '@noble/hashes/sha2.js';
import { bytesToHex, utf8ToBytes } from '@noble/hashes/utils.js';
import { mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { currentStamp, describe, type Stamp } from './inputs.js';
import type { CachedEnvironment, EnvironmentAgent } from './types.js';

/** Bumped when the file layout or the meaning of a cached result changes. */
const CACHE_VERSION = 1;
/**
 * Inputs modified this recently are "racy": some file systems keep mtimes in whole seconds (HFS+, ext3, FAT: two),
 * and Linux stamps with a clock that ticks every few ms, so a second change inside one tick could keep the stamp.
 * A result that read such an input is returned but not cached (git's "racily clean" rule).
 */
const RACY_WINDOW_MS = 2000;
/** Folders one long-running process remembers; the oldest is forgotten first. */
const MEMORY_ENTRIES = 64;

/** One cached detection: who it is for, what it depended on, and the result. */
interface CacheEntry {
  version: number;
  cwd: string;
  agent: EnvironmentAgent;
  /** Hash of everything besides files that shapes the result: rules, built-in tables, agent config locations. */
  context: string;
  /** Every path detection consulted, with its stamp at the time. */
  stamps: Array<[string, Stamp]>;
  result: CachedEnvironment;
}

/** Where a hit came from. */
export type CacheSource = 'memory' | 'disk';

const memory = new Map<string, CacheEntry>();
/** When each entry in memory last had its inputs found unchanged (Date.now ms); none yet: it is looked at. */
const verifiedAt = new Map<string, number>();

const keys = new Map<string, string>();

/** The cache file name for a folder and agent: the first 16 hex digits of a SHA-256 (remembered per process). */
export function cacheKey(cwd: string, agent: EnvironmentAgent): string {
  const id = `${cwd}\0${agent}`;
  let key = keys.get(id);
  if (key === undefined) {
    key = sha256Hex(id).slice(0, 16);
    if (keys.size >= MEMORY_ENTRIES * 4) keys.clear();
    keys.set(id, key);
  }
  return key;
}

/** Hashes the non-file inputs of a detection; a different value makes every cached entry miss. */
export function contextHash(parts: unknown): string {
  return sha256Hex(JSON.stringify(parts)).slice(0, 32);
}

/** SHA-256 of a string's UTF-8 bytes, in hex (what node:crypto's `createHash('sha256')…digest('hex')` gives). */
export function sha256Hex(text: string): string {
  return bytesToHex(sha256(utf8ToBytes(text)));
}

/** True when every stamped input is unchanged. */
const stampsHold = (stamps: CacheEntry['stamps']): boolean => stamps.every(([path, stamp]) => currentStamp(path) === stamp);

const matches = (entry: CacheEntry, cwd: string, agent: EnvironmentAgent, context: string): boolean =>
  entry.version === CACHE_VERSION && entry.cwd === cwd && entry.agent === agent && entry.context === context;

/** A plausible entry from disk; anything else (torn write, older layout, hand edits) is a miss. */
function isEntry(value: unknown): value is CacheEntry {
  const entry = value as Partial<CacheEntry> | null;
  const result = entry?.result as Partial<CachedEnvironment> | undefined;
  return (
    typeof entry === 'object' &&
    entry !== null &&
    Array.isArray(entry.stamps) &&
    entry.stamps.every((pair) => Array.isArray(pair) && typeof pair[0] === 'string' && typeof pair[1] === 'string') &&
    typeof result === 'object' &&
    result !== null &&
    ['remotes', 'mcpServers', 'tags', 'errors'].every((field) => Array.isArray(result[field as keyof CachedEnvironment])) &&
    typeof result.reasons === 'object' &&
    result.reasons !== null &&
    typeof result.os === 'string' &&
    typeof result.cwd === 'string'
  );
}

function remember(key: string, entry: CacheEntry): void {
  memory.delete(key);
  verifiedAt.delete(key);
  memory.set(key, entry);
  if (memory.size > MEMORY_ENTRIES) {
    const oldest = memory.keys().next().value as string;
    memory.delete(oldest);
    verifiedAt.delete(oldest);
  }
}

/**
 * The cached result for a folder when all its inputs are unchanged: from this process's memory first (no file
 * read), else from `<cacheDir>/<key>.json`. A missing, torn or stale file is a miss, silently.
 */
export function lookup(
  cacheDir: string,
  cwd: string,
  agent: EnvironmentAgent,
  context: string,
  trust: { recheckAfterMs?: number | undefined; now?: (() => number) | undefined } = {},
): { result: CachedEnvironment; source: CacheSource } | undefined {
  const key = cacheKey(cwd, agent);
  const known = memory.get(key);
  if (known && matches(known, cwd, agent, context)) {
    const now = (trust.now ?? Date.now)();
    const verified = verifiedAt.get(key);
    // Within the window the inputs were found unchanged less than recheckAfterMs ago: no stat at all.
    if (trust.recheckAfterMs && verified !== undefined && now - verified < trust.recheckAfterMs) return { result: known.result, source: 'memory' };
    if (stampsHold(known.stamps)) {
      verifiedAt.set(key, now);
      return { result: known.result, source: 'memory' };
    }
    verifiedAt.delete(key);
  }
  let entry: unknown;
  try {
    entry = JSON.parse(readFileSync(join(cacheDir, `${key}.json`), 'utf8'));
  } catch {
    return undefined;
  }
  if (!isEntry(entry) || !matches(entry, cwd, agent, context) || !stampsHold(entry.stamps)) return undefined;
  remember(key, entry);
  return { result: entry.result, source: 'disk' };
}

/** What `save` did: `racy` = not cached because an input changed too recently to trust its stamp. */
export type SaveOutcome = { saved: true } | { saved: false; reason: 'racy' } | { saved: false; reason: 'error'; error: string };

/**
 * Caches a result in memory and on disk (temp file + rename, so readers never see half a file; 0600 in a 0700
 * folder, since it names the user's folders and MCP servers).
 */
export function save(
  cacheDir: string,
  entry: { cwd: string; agent: EnvironmentAgent; context: string; stamps: Map<string, Stamp>; result: CachedEnvironment },
  timing: { startedAtMs: number; newestMtimeMs: number },
): SaveOutcome {
  if (timing.newestMtimeMs > timing.startedAtMs - RACY_WINDOW_MS) return { saved: false, reason: 'racy' };
  const key = cacheKey(entry.cwd, entry.agent);
  const cached: CacheEntry = {
    version: CACHE_VERSION,
    cwd: entry.cwd,
    agent: entry.agent,
    context: entry.context,
    stamps: [...entry.stamps],
    result: entry.result,
  };
  remember(key, cached);
  const file = join(cacheDir, `${key}.json`);
  const temp = `${file}.${process.pid}.${process.getBuiltinModule('node:crypto').randomBytes(4).toString('hex')}.tmp`;
  try {
    mkdirSync(cacheDir, { recursive: true, mode: 0o700 });
    writeFileSync(temp, JSON.stringify(cached), { mode: 0o600 });
    renameSync(temp, file);
    return { saved: true };
  } catch (error) {
    try {
      rmSync(temp, { force: true });
    } catch {
      // The folder itself is unusable (a file in its place): there is no temp file to remove.
    }
    return { saved: false, reason: 'error', error: `cannot write the environment cache ${file}: ${describe(error)}` };
  }
}

/** Forgets every result this process remembers (tests; the files on disk stay). */
export function clearMemory(): void {
  memory.clear();
  verifiedAt.clear();
}

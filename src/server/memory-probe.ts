/**
 * The server's memory, measured for the soak (bench/soak.mjs): with `$ENGRAM_MEMORY_PROBE_MS` set, one JSON line of
 * `process.memoryUsage()` (plus the kernel's split of the RSS into anonymous and file-backed pages) is appended to
 * `logs/memory.jsonl` that often, and SIGUSR2 writes a V8 heap snapshot to `logs/`. Off unless the variable is set: a
 * user's server neither writes the lines nor listens for the signal.
 * @module
 */
import { appendFileSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { getHeapSpaceStatistics, writeHeapSnapshot } from 'node:v8';

/** One sample; sizes in KiB. */
export interface MemorySample {
  t: string;
  pid: number;
  rss_kb: number;
  heap_used_kb: number;
  heap_total_kb: number;
  external_kb: number;
  array_buffers_kb: number;
  /** Anonymous pages (V8's heap, malloc's arenas, native caches) and file-backed ones (code, mmap'd files). */
  rss_anon_kb: number | null;
  rss_file_kb: number | null;
  /** V8's spaces (new_space, old_space, code_space, large_object_space, …): [committed, used] KiB. */
  spaces: Record<string, [number, number]>;
}

const kb = (bytes: number): number => Math.round(bytes / 1024);

/** The current figures of this process. */
export function memorySample(): MemorySample {
  const usage = process.memoryUsage();
  let status = '';
  try {
    status = readFileSync('/proc/self/status', 'utf8');
  } catch {
    // Not Linux: the kernel's split is unknown.
  }
  const field = (name: string): number | null => {
    const match = new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(status);
    return match ? Number(match[1]) : null;
  };
  return {
    t: new Date().toISOString(),
    pid: process.pid,
    rss_kb: kb(usage.rss),
    heap_used_kb: kb(usage.heapUsed),
    heap_total_kb: kb(usage.heapTotal),
    external_kb: kb(usage.external),
    array_buffers_kb: kb(usage.arrayBuffers),
    rss_anon_kb: field('RssAnon'),
    rss_file_kb: field('RssFile'),
    spaces: Object.fromEntries(getHeapSpaceStatistics().map((space) => [space.space_name, [kb(space.space_size), kb(space.space_used_size)]])),
  };
}

/**
 * Starts the probe: a sample every `everyMs` into `logsDir/memory.jsonl`, a heap snapshot on SIGUSR2. Returns a
 * function that stops it. The timer does not keep the process alive.
 */
export function startMemoryProbe(logsDir: string, everyMs: number, onError: (error: unknown) => void): () => void {
  const file = join(logsDir, 'memory.jsonl');
  const sample = (): void => {
    try {
      appendFileSync(file, `${JSON.stringify(memorySample())}\n`, { mode: 0o600 });
    } catch (error) {
      onError(error);
    }
  };
  const snapshot = (): void => {
    try {
      writeHeapSnapshot(join(logsDir, `heap-${process.pid}-${Date.now()}.heapsnapshot`));
    } catch (error) {
      onError(error);
    }
    sample();
  };
  sample();
  const timer = setInterval(sample, everyMs);
  timer.unref();
  process.on('SIGUSR2', snapshot);
  return () => {
    clearInterval(timer);
    process.off('SIGUSR2', snapshot);
  };
}

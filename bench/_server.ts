/**
 * The warm server as the benches run it: dist/server.mjs in the foreground on a home (no embedder, an ephemeral HTTP
 * port), its URL once it prints it, and its resident memory read from /proc.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { readFileSync } from 'node:fs';

export interface BenchServer {
  child: ChildProcessWithoutNullStreams;
  /** The HTTP API's base URL. */
  url: string;
  /** Stops it and waits for the process to exit. */
  stop(): Promise<void>;
}

/** Starts `script` on `home` and resolves once its HTTP API is listening. */
export async function startBenchServer(script: string, home: string): Promise<BenchServer> {
  const child = spawn(process.execPath, [script, '--foreground'], {
    env: { ...process.env, HOME: home, ENGRAM_HOME: home, ENGRAM_EMBEDDER: 'none', ENGRAM_PORT: '0' },
    stdio: ['ignore', 'pipe', 'ignore'],
  }) as unknown as ChildProcessWithoutNullStreams;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  const stop = async (): Promise<void> => {
    child.kill('SIGTERM');
    await exited;
  };
  try {
    const url = await new Promise<string>((resolve, reject) => {
      let out = '';
      child.stdout.on('data', (chunk: Buffer) => {
        out += chunk.toString();
        const line = out.split('\n').find((l) => l.includes('"url"'));
        if (line) resolve((JSON.parse(line) as { url: string }).url);
      });
      child.once('exit', (code) => reject(new Error(`server exited with ${code}: ${out}`)));
    });
    return { child, url, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

/** Resident and peak resident memory of a process, in MB (Linux). */
export function rssOf(pid: number): { rss_mb: number; peak_rss_mb: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (name: string): number => Number(new RegExp(`^${name}:\\s+(\\d+)`, 'm').exec(status)?.[1] ?? 0);
  return { rss_mb: Math.round(kb('VmRSS') / 1024), peak_rss_mb: Math.round(kb('VmHWM') / 1024) };
}

/**
 * `engram demo` as `./install.sh` runs it: the real CLI replays fixtures/demo through the real hook binaries in a
 * throwaway home. Pins what the demo shows and that it leaves nothing behind (no home, no server process).
 */
import { existsSync, rmSync } from 'node:fs';
import { dirname } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { DemoReport } from '../../src/services/index.js';
import { engramProcess, tempDir } from '../_helpers.js';

describe('engram demo', () => {
  it('replays the session through the warm server, shows what each hook injected, and cleans up', () => {
    const home = tempDir();
    const run = engramProcess(['demo'], { home, env: { ENGRAM_EMBEDDER: 'none' } });
    expect(run.status, run.stderr).toBe(0);
    const report = JSON.parse(run.stdout) as DemoReport;
    expect(report.steps.map((step) => step.exit_code)).toEqual(Array(report.steps.length).fill(0));
    const byEvent = (event: string) => report.steps.filter((step) => step.event === event);
    const [start] = byEvent('SessionStart');
    expect(start?.injected.map((item) => item.id)).toContain(1); // the pinned rule
    expect(start?.injected.map((item) => item.line).join(' ')).not.toMatch(/invoices|pnpm/); // other projects'
    expect(byEvent('UserPromptSubmit')[0]?.injected.map((item) => item.id)).toContain(2); // refunds, on demand
    expect(byEvent('UserPromptSubmit')[1]?.injected).toEqual([]); // "ok thanks, go ahead"
    expect(byEvent('PostToolUseFailure')[0]?.injected.map((item) => item.id)).toEqual([3]); // Postgres on 5432
    const ids = report.steps.flatMap((step) => step.injected.map((item) => item.id));
    expect(new Set(ids).size).toBe(ids.length); // never the same engram twice
    expect(report.steps.slice(1).every((step) => step.answered_by === 'server')).toBe(true);
    // As the agent runs them: the registered command, whose shell front hands the warm server each event without Node.
    expect(report.steps.slice(1).map((step) => step.front)).toEqual(Array(report.steps.length - 1).fill('sh'));
    expect(existsSync(report.home)).toBe(false);
    expect(existsSync(report.project)).toBe(false);
    // The user's own home was never touched.
    expect(existsSync(`${home}/engram.db`)).toBe(false);
  }, 120_000);

  it('--pretty prints one line per hook with its time, path and what it injected; --keep keeps the folder', () => {
    const home = tempDir();
    const run = engramProcess(['demo', '--pretty', '--keep'], { home, env: { ENGRAM_EMBEDDER: 'none' } });
    expect(run.status, run.stderr).toBe(0);
    expect(run.stdout).toMatch(/^\s+\d+ ms {2}in-process SessionStart\s+startup$/m);
    expect(run.stdout).toMatch(/→ injected EG#1, /);
    expect(run.stdout).toMatch(/^\s+\d+ ms {2}server {5}PreToolUse\s+Bash npx vitest run/m);
    expect(run.stdout).toContain('hooks answered by the warm server: 12');
    const kept = /\(kept; home (\S+)\)/.exec(run.stdout)?.[1] as string;
    try {
      expect(existsSync(`${kept}/engram.db`)).toBe(true);
      // The server was stopped: it removed its self-description on the way out.
      expect(existsSync(`${kept}/run/server.json`)).toBe(false);
    } finally {
      rmSync(dirname(kept), { recursive: true, force: true });
    }
  }, 120_000);
});

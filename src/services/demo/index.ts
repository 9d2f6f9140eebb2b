import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import * as z from 'zod';
import { hookCommand } from '../../../scripts/hook-registry.mjs';
import { EngramError, formatIssues, openStore } from '../../core/index.js';
import { importEngrams } from '../transfer/index.js';

/** One line of fixtures/demo/session.jsonl: a hook event and its event-specific fields. */
const DemoEventSchema = z.strictObject({
  event: z.string().min(1),
  entry: z.string().regex(/^[a-z-]+$/),
  input: z.record(z.string(), z.unknown()),
});

/** What one replayed hook did. */
export interface DemoStep {
  event: string;
  /** The prompt, tool call or source, shortened. */
  detail: string;
  /** Which path answered (`server` or `in-process`), from the hook log. */
  answered_by: string | null;
  /** `sh` when the shell front handed the event to the server without starting Node (hooks/run.sh), else null. */
  front: string | null;
  /** Whole-process wall time of the hook, as the agent waits for it. */
  ms: number;
  exit_code: number | null;
  injected: Array<{ id: number; line: string }>;
  /** Characters of context the agent received. */
  context_chars: number;
}

/** What `engram demo` shows. */
export interface DemoReport {
  home: string;
  project: string;
  engrams: number;
  steps: DemoStep[];
  server: { model: string | null; warm_ms: number | null } | null;
  kept: boolean;
}

const short = (text: string, max = 70): string => {
  const flat = text.replace(/<[^>]+>[\s\S]*?<\/[^>]+>/g, ' ').replace(/\s+/g, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
};

function detailOf(event: string, input: Record<string, unknown>): string {
  if (typeof input.prompt === 'string') return `"${short(input.prompt)}"`;
  if (typeof input.source === 'string') return input.source;
  if (typeof input.reason === 'string') return input.reason;
  if (typeof input.tool_name === 'string') {
    const tool = (input.tool_input ?? {}) as Record<string, unknown>;
    const target = tool.command ?? tool.file_path ?? tool.pattern ?? '';
    return short(`${input.tool_name} ${String(target)}`);
  }
  return event;
}

function runHook(
  root: string,
  entry: string,
  stdin: string,
  env: NodeJS.ProcessEnv,
): Promise<{ code: number | null; stdout: string; ms: number }> {
  return new Promise((resolve) => {
    const started = performance.now();
    // What the agent runs: the registered command line through `sh -c` (the shell front, which hands the event to the
    // warm server without starting Node); the Node launcher itself when the folder cannot be quoted in a command.
    const child = /["$`\\]/.test(root)
      ? spawn(process.execPath, [join(root, 'hooks', 'run.cjs'), entry, '--agent', 'claude'], { env, stdio: ['pipe', 'pipe', 'ignore'] })
      : spawn('sh', ['-c', hookCommand(root, entry, 'claude')], { env, stdio: ['pipe', 'pipe', 'ignore'] });
    let stdout = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.on('error', () => resolve({ code: null, stdout, ms: performance.now() - started }));
    child.on('close', (code) => resolve({ code, stdout, ms: performance.now() - started }));
    child.stdin.on('error', () => {});
    child.stdin.end(stdin);
  });
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Lines of a JSON-lines log, or []. */
/**
 * The hook log's `hook done` line for the call just made: the warm server writes it right after answering, so it can
 * land a moment after the hook process exits (up to 2 s is waited for it under load).
 */
async function loggedDone(file: string, before: number, event: string): Promise<Record<string, unknown> | undefined> {
  const started = Date.now();
  for (;;) {
    const line = logLines(file).slice(before).find((entry) => entry.msg === 'hook done' && entry.event === event);
    if (line || Date.now() - started > 2_000) return line;
    await sleep(20);
  }
}

function logLines(file: string): Array<Record<string, unknown>> {
  try {
    return readFileSync(file, 'utf8').trim().split('\n').filter(Boolean).map((line) => JSON.parse(line) as Record<string, unknown>);
  } catch {
    return [];
  }
}

/**
 * `engram demo`: replays a realistic Claude Code session (fixtures/demo/session.jsonl) through the real hook
 * binaries of this install, against a throwaway home seeded with example engrams (fixtures/demo/engrams.jsonl), and
 * reports what each hook injected, which path answered and how long the agent waited. The first hook starts the
 * background server; the demo waits for it to warm up, as a user's next hook would find it. Nothing of the user's
 * (home, store, agent settings) is read or written; the throwaway home is removed unless `keep`.
 */
export async function runDemo(options: { installRoot: string; keep?: boolean; env?: NodeJS.ProcessEnv }): Promise<DemoReport> {
  const fixtures = join(options.installRoot, 'fixtures', 'demo');
  let events: Array<z.infer<typeof DemoEventSchema>>;
  let engramLines: string[];
  try {
    engramLines = readFileSync(join(fixtures, 'engrams.jsonl'), 'utf8').split('\n').filter((line) => line.trim());
    events = readFileSync(join(fixtures, 'session.jsonl'), 'utf8')
      .split('\n')
      .filter((line) => line.trim())
      .map((line, index) => {
        const parsed = DemoEventSchema.safeParse(JSON.parse(line));
        if (!parsed.success) throw new Error(`session.jsonl line ${index + 1}: ${formatIssues(parsed.error)}`);
        return parsed.data;
      });
  } catch (error) {
    throw new EngramError('NOT_FOUND', `the demo fixtures in ${fixtures} are missing or invalid: ${(error as Error).message}`);
  }

  const base = mkdtempSync(join(tmpdir(), 'engram-demo-'));
  const home = join(base, 'home');
  const project = join(base, 'shop');
  mkdirSync(home, { recursive: true, mode: 0o700 });
  mkdirSync(join(project, '.git'), { recursive: true });
  mkdirSync(join(project, 'src', 'payments'), { recursive: true });
  writeFileSync(join(project, 'package.json'), `${JSON.stringify({ name: 'shop', dependencies: { express: '4.21.0' }, devDependencies: { vitest: '4.1.12', typescript: '5.9.3' } })}\n`);
  writeFileSync(join(project, 'tsconfig.json'), '{}\n');
  writeFileSync(join(project, 'src', 'payments', 'refunds.ts'), 'export {};\n');
  const env: NodeJS.ProcessEnv = { ...(options.env ?? process.env), ENGRAM_HOME: home, CLAUDE_PROJECT_DIR: project };
  delete env.ENGRAM_SERVER;
  delete env.ENGRAM_SERVER_IDLE_MS;
  const serverLog = join(home, 'logs', 'server.log');
  const hooksLog = join(home, 'logs', 'hooks.log');

  try {
    const store = openStore({ path: join(home, 'engram.db') });
    const imported = importEngrams(store, engramLines);
    store.close();

    const sessionId = randomUUID();
    const transcript = join(base, '.claude', 'projects', '-demo-shop', `${sessionId}.jsonl`);
    const steps: DemoStep[] = [];
    let warmMs: number | null = null;
    for (const [index, step] of events.entries()) {
      const input = JSON.parse(JSON.stringify(step.input).replaceAll('{cwd}', project)) as Record<string, unknown>;
      const payload = { session_id: sessionId, transcript_path: transcript, cwd: project, hook_event_name: step.event, ...input };
      const before = logLines(hooksLog).length;
      const result = await runHook(options.installRoot, step.entry, `${JSON.stringify(payload)}\n`, env);
      const logged = await loggedDone(hooksLog, before, step.event);
      let context = '';
      try {
        context = result.stdout ? String(JSON.parse(result.stdout).hookSpecificOutput?.additionalContext ?? '') : '';
      } catch {
        context = '';
      }
      steps.push({
        event: step.event,
        detail: detailOf(step.event, input),
        answered_by: typeof logged?.path === 'string' ? logged.path : null,
        front: typeof logged?.front === 'string' ? logged.front : null,
        ms: Math.round(result.ms),
        exit_code: result.code,
        injected: [...context.matchAll(/^- EG#(\d+) (.*)$/gm)].map((match) => ({ id: Number(match[1]), line: short(match[2] ?? '', 110) })),
        context_chars: context.length,
      });
      if (index === 0) {
        // The first hook started the server; wait for it as the next real hook would find it.
        const started = Date.now();
        while (Date.now() - started < 30_000 && !logLines(serverLog).some((line) => line.msg === 'server warm')) await sleep(50);
        const warm = logLines(serverLog).find((line) => line.msg === 'server warm');
        warmMs = typeof warm?.ms === 'number' ? warm.ms : null;
      }
    }
    // The session-end job runs in the server after the hook exited; give it a moment, then stop the server.
    const deadline = Date.now() + 5_000;
    while (Date.now() < deadline && !logLines(serverLog).some((line) => line.msg === 'job done')) await sleep(50);
    const warm = logLines(serverLog).find((line) => line.msg === 'server warm');
    return {
      home,
      project,
      engrams: imported.created,
      steps,
      server: warm ? { model: typeof warm.model === 'string' ? warm.model : null, warm_ms: warmMs } : null,
      kept: options.keep ?? false,
    };
  } finally {
    await stopDemoServer(home);
    if (!options.keep) rmSync(base, { recursive: true, force: true });
  }
}

/** Stops the throwaway home's server (SIGTERM) and waits for it, so the demo leaves no process behind. */
async function stopDemoServer(home: string): Promise<void> {
  let pid: number;
  try {
    pid = (JSON.parse(readFileSync(join(home, 'run', 'server.json'), 'utf8')) as { pid: number }).pid;
    process.kill(pid, 'SIGTERM');
  } catch {
    return;
  }
  const deadline = Date.now() + 10_000;
  while (Date.now() < deadline) {
    try {
      process.kill(pid, 0);
    } catch {
      return;
    }
    await sleep(50);
  }
}

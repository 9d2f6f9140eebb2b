/**
 * `engram docs …`, `engram run` and `engram fold` as a user runs them: the real bin/engram in a real temporary git
 * repository, with a scripted fold command (test/e2e/_fold-agent.mjs, run through the LLM client's command mode like
 * `claude -p`) that edits the docs as each test's plan says — a good edit, a schema break fixed on retry, a
 * truncation, a crash mid-dispatch followed by a restart, a hang, an oversized edit — plus two competing servers, the
 * watcher and session history, and bad config, missing and non-UTF-8 docs.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { openState, getDispatch, recentDispatches, pendingItems } from '../../src/services/knowledge/state.js';
import { alive } from '../_helpers.js';
import { engramProcess, ROOT, tempDir } from '../_helpers.js';

const FOLD_AGENT = join(ROOT, 'test', 'e2e', '_fold-agent.mjs');
const HAND_WRITTEN = '# Shop\n\nHand-written notes the briefing must never touch.\n\n## Other section\n- keep me\n';

interface Project {
  root: string;
  home: string;
  plan: string;
  engram(args: string[], extra?: Record<string, string>): { status: number | null; stdout: string; stderr: string; json: any };
  git(...args: string[]): string;
  calls(): Array<{ attempt: number; action: string; prompt: string; cwd: string; child: string | null }>;
  doc(name: string): string;
  env: Record<string, string>;
}

const running: ChildProcess[] = [];
afterEach(() => {
  for (const child of running.splice(0)) if (child.exitCode === null) child.kill('SIGKILL');
});

/** A repository with one commit and opted-in knowledge docs whose fold command is the scripted agent. */
function project(steps: Array<Record<string, unknown>>, configEdits: (yaml: string) => string = (yaml) => yaml): Project {
  const root = join(tempDir('engram-kn-'), 'shop');
  const home = tempDir('engram-kn-home-');
  mkdirSync(join(root, 'src'), { recursive: true });
  const git = (...args: string[]) => execFileSync('git', ['-c', 'user.email=t@t', '-c', 'user.name=t', ...args], { cwd: root, encoding: 'utf8' });
  git('init', '-q');
  writeFileSync(join(root, 'src', 'retry.ts'), 'export const retry = () => 1;\n');
  writeFileSync(join(root, 'CLAUDE.md'), HAND_WRITTEN);
  git('add', '-A');
  git('commit', '-qm', 'first');
  const plan = join(home, 'plan.json');
  writeFileSync(plan, JSON.stringify({ steps }));
  const env = { CLAUDE_CONFIG_DIR: join(home, '.claude'), CODEX_HOME: join(home, '.codex'), ENGRAM_EMBEDDER: 'none' };
  const engram = (args: string[], extra: Record<string, string> = {}) => {
    const result = engramProcess(args, { home, cwd: root, env: { ...env, ...extra } });
    let json: any;
    try {
      json = JSON.parse(result.stdout);
    } catch {
      json = undefined;
    }
    return { status: result.status, stdout: result.stdout, stderr: result.stderr, json };
  };
  const init = engram(['docs', 'init']);
  expect(init.status, init.stderr).toBe(0);
  const configFile = join(root, '.engram', 'config.yaml');
  const yaml = readFileSync(configFile, 'utf8').replace(/^ {2}command: .*$/m, `  command: [${JSON.stringify(process.execPath)}, ${JSON.stringify(FOLD_AGENT)}, ${JSON.stringify(plan)}]`);
  writeFileSync(configFile, configEdits(yaml));
  return {
    root,
    home,
    plan,
    engram,
    git,
    env,
    calls: () => (existsSync(`${plan}.log`) ? readFileSync(`${plan}.log`, 'utf8').split('\n').filter(Boolean).map((line) => JSON.parse(line)) : []),
    doc: (name) => readFileSync(join(root, 'docs', 'decisions', name), 'utf8'),
  };
}

/** Seeds the docs through `engram docs init --from-today` (the plan's first step is the seed's edit). */
function seeded(p: Project): void {
  const result = p.engram(['docs', 'init', '--from-today']);
  expect(result.status, result.stderr).toBe(0);
  expect(result.json.seed.state).toBe('committed');
}

function commitFile(p: Project, path: string, text: string, message: string): void {
  mkdirSync(join(p.root, path, '..'), { recursive: true });
  writeFileSync(join(p.root, path), text);
  p.git('add', '-A');
  p.git('commit', '-qm', message);
}

const withState = <T>(root: string, fn: (state: ReturnType<typeof openState>) => T): T => {
  const state = openState(root);
  try {
    return fn(state);
  } finally {
    state.close();
  }
};

/** Dispatch as soon as something is buffered (the long-running tests do not wait five minutes). */
const settleNow = (yaml: string) => yaml.replace('settle_seconds: 300', 'settle_seconds: 0');

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function waitFor<T>(what: string, fn: () => T | undefined | null | false, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = fn();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(100);
  }
}

/** Starts a long-running `engram run`, collecting its JSON event lines. */
function startRun(p: Project, args: string[] = []): { child: ChildProcess; events: any[]; stderr: () => string; exited: Promise<number | null> } {
  const child = spawn(process.execPath, [join(ROOT, 'bin', 'engram'), 'run', '--interval', '0.2', ...args], {
    cwd: p.root,
    env: { ...process.env, HOME: p.home, ENGRAM_HOME: p.home, ...p.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  running.push(child);
  const events: any[] = [];
  let buffer = '';
  let stderr = '';
  child.stdout!.on('data', (chunk) => {
    buffer += chunk;
    let newline: number;
    while ((newline = buffer.indexOf('\n')) >= 0) {
      events.push(JSON.parse(buffer.slice(0, newline)));
      buffer = buffer.slice(newline + 1);
    }
  });
  child.stderr!.on('data', (chunk) => (stderr += chunk));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return { child, events, stderr: () => stderr, exited };
}

describe('engram run with a scripted fold agent', () => {
  it('seeds from today, folds a new commit, updates the briefing and touches nothing else in CLAUDE.md', () => {
    const p = project([{ do: 'good', name: 'retry_helper', phase: 'Seed' }, { do: 'good', name: 'backoff', code: 'src/backoff.ts', phase: 'Backoff' }]);
    seeded(p);
    expect(p.doc('concept_registry.md')).toContain('## C001: retry_helper (ACTIVE)');
    commitFile(p, 'src/backoff.ts', 'export const backoff = 2;\n', 'add exponential backoff');
    const run = p.engram(['run', '--once']);
    expect(run.status, run.stderr).toBe(0);
    const events = run.stdout.trim().split('\n').map((line) => JSON.parse(line));
    expect(events.map((event) => event.type === 'dispatch' ? `dispatch:${event.state}` : event.type)).toEqual([
      'started', 'poll', 'dispatch:dispatched', 'dispatch:agent', 'dispatch:validated', 'dispatch:committed', 'stopped',
    ]);
    // The new concept took the next id, reserved for the chunk and written into its input file.
    expect(p.doc('concept_registry.md')).toContain('## C002: backoff (ACTIVE)\n- **Code:** `src/backoff.ts`');
    const chunk = readFileSync(join(p.root, '.engram', 'fold', 'chunk_002_input.md'), 'utf8');
    expect(chunk).toContain('## New ID assignments for this chunk\n\n- C002: (new concept');
    expect(chunk).toContain('### Commit');
    expect(chunk).toContain('add exponential backoff');
    expect(chunk).toContain('+export const backoff = 2;');
    const calls = p.calls();
    expect(calls.map((call) => call.cwd)).toEqual([p.root, p.root]);
    expect(calls[1]!.prompt).toContain('Read the file .engram/fold/chunk_002_input.md');
    expect(calls[1]!.child).toBe('1'); // Engram's hooks in a real agent's session stay silent
    // The briefing: regenerated between the markers, everything around it byte for byte as written.
    const claude = readFileSync(join(p.root, 'CLAUDE.md'), 'utf8');
    expect(claude.startsWith(`${HAND_WRITTEN}\n## Project Knowledge Briefing\n<!-- engram:briefing:begin`)).toBe(true);
    expect(claude).toContain('after chunk 2');
    expect(claude).toContain('- C002 backoff — `src/backoff.ts`');
    expect(claude.endsWith('<!-- engram:briefing:end -->\n')).toBe(true);
    // State and chunk inputs are local; the docs and the config are what gets committed.
    const ignored = p.git('check-ignore', '.engram/knowledge.db', '.engram/knowledge.db-wal', '.engram/fold/chunk_002_input.md', '.engram-cache/x').trim().split('\n');
    expect(ignored).toHaveLength(4);
    expect(() => p.git('check-ignore', '.engram/config.yaml')).toThrow();
    expect(() => p.git('check-ignore', '.engram/tapes/x.jsonl.zst')).toThrow();
    const status = p.engram(['docs', 'status']);
    expect(status.json).toMatchObject({ buffer: { items: 0 }, ids: { next: { C: 'C003' } }, needs_review: [] });
    expect(status.json.dispatches.map((d: any) => [d.id, d.kind, d.state])).toEqual([[2, 'fold', 'committed'], [1, 'seed', 'committed']]);
    expect(p.engram(['docs', 'lint']).json).toMatchObject({ ok: true, violations: [] });
    // A second run with nothing new dispatches nothing and leaves the docs alone.
    const idle = p.engram(['run', '--once']);
    expect(idle.stdout).toContain('"reason":"empty"');
    expect(p.calls()).toHaveLength(2);
  });

  it('sends a schema-breaking edit back with the violation and its fix, and commits the corrected docs', () => {
    const p = project([{ do: 'good' }, { do: 'break', name: 'cache' }, { do: 'fix', code: 'src/cache.ts' }]);
    seeded(p);
    commitFile(p, 'src/cache.ts', 'export const cache = new Map();\n', 'add a cache');
    const run = p.engram(['run', '--once']);
    expect(run.status, run.stderr).toBe(0);
    const calls = p.calls();
    expect(calls.map((call) => call.action)).toEqual(['good', 'break', 'fix']);
    expect(calls[2]!.prompt).toContain('chunk 2, retry 1]');
    const retry = readFileSync(join(p.root, '.engram', 'fold', 'chunk_002_retry_1.md'), 'utf8');
    expect(retry).toMatch(/docs\/decisions\/concept_registry\.md:\d+ \[missing-field\] C002 \(ACTIVE\) has no Code: — fix: add the required field/);
    expect(p.doc('concept_registry.md')).toContain('## C002: cache (ACTIVE)\n- **Code:** `src/cache.ts`');
    withState(p.root, (state) => expect(getDispatch(state, 2)).toMatchObject({ state: 'committed', retries: 1 }));
  });

  it('catches a truncating edit, restores on retry, and restores the docs itself when the agent keeps truncating', () => {
    const p = project([{ do: 'good' }, { do: 'truncate' }, { do: 'restore', name: 'after_restore' }]);
    seeded(p);
    commitFile(p, 'src/a.ts', 'export const a = 1;\n', 'a');
    expect(p.engram(['run', '--once']).status).toBe(0);
    expect(readFileSync(join(p.root, '.engram', 'fold', 'chunk_002_retry_1.md'), 'utf8')).toContain('[entry-removed] C001 was in concept_registry.md before this chunk and is gone');
    expect(p.doc('concept_registry.md')).toMatch(/## C001: retry_helper \(ACTIVE\)[\s\S]*## C002: after_restore \(ACTIVE\)/);

    const q = project([{ do: 'good' }, { do: 'truncate' }]);
    seeded(q);
    const before = q.doc('concept_registry.md');
    commitFile(q, 'src/b.ts', 'export const b = 1;\n', 'b');
    const run = q.engram(['run', '--once']);
    expect(run.status).toBe(0);
    expect(q.calls().map((call) => call.action)).toEqual(['good', 'truncate', 'truncate', 'truncate']);
    expect(q.doc('concept_registry.md')).toBe(before);
    expect(readFileSync(join(q.root, '.engram', 'fold', 'chunk_002', 'failed', 'concepts.md'), 'utf8')).toBe('# Concept Registry\n');
    withState(q.root, (state) => {
      expect(getDispatch(state, 2)).toMatchObject({ state: 'failed', retries: 2 });
      expect(getDispatch(state, 2)!.error).toContain('entry-removed'.length ? 'violation(s) after 2 retries' : '');
    });
    expect(q.engram(['docs', 'lint']).json.ok).toBe(true);
  });

  it('recovers from a crash mid-dispatch: the orphaned agent is stopped, its edit linted and committed', { timeout: 60_000 }, async () => {
    const marker = join(tempDir(), 'agent.pid');
    const p = project([{ do: 'good' }, { do: 'crash', name: 'half_done', marker }, { do: 'good', name: 'never_needed' }], settleNow);
    seeded(p);
    commitFile(p, 'src/crash.ts', 'export const c = 1;\n', 'c');
    const server = startRun(p);
    const agentPid = Number(await waitFor('the agent to start', () => existsSync(marker) && readFileSync(marker, 'utf8')));
    server.child.kill('SIGKILL');
    await server.exited;
    expect(alive(agentPid)).toBe(true); // the agent runs in its own process group and outlived the server
    withState(p.root, (state) => expect(getDispatch(state, 2)).toMatchObject({ state: 'dispatched', agent_pid: agentPid }));
    expect(existsSync(join(p.root, '.engram', 'run.lock'))).toBe(true); // left by the killed server, taken over below

    const restart = p.engram(['run', '--once']);
    expect(restart.status, restart.stderr).toBe(0);
    expect(alive(agentPid)).toBe(false);
    expect(p.calls().map((call) => call.action)).toEqual(['good', 'crash']); // no re-dispatch: the edit was there
    expect(p.doc('concept_registry.md')).toContain('## C002: half_done (ACTIVE)');
    withState(p.root, (state) => expect(getDispatch(state, 2)).toMatchObject({ state: 'committed', agent_pid: null }));
    expect(readFileSync(join(p.root, 'CLAUDE.md'), 'utf8')).toContain('C002 half_done');
  });

  it('re-dispatches after a crash that came before the agent edited anything', { timeout: 60_000 }, async () => {
    const marker = join(tempDir(), 'agent.pid');
    const p = project([{ do: 'good' }, { do: 'hang', marker }, { do: 'good', name: 'second_try' }], settleNow);
    seeded(p);
    commitFile(p, 'src/d.ts', 'export const d = 1;\n', 'd');
    const server = startRun(p);
    await waitFor('the agent to start', () => existsSync(marker));
    server.child.kill('SIGKILL');
    await server.exited;
    expect(p.engram(['run', '--once']).status).toBe(0);
    expect(p.calls().map((call) => call.action)).toEqual(['good', 'hang', 'good']);
    expect(p.doc('concept_registry.md')).toContain('## C002: second_try (ACTIVE)');
  });

  it('kills a fold command that hangs at fold.timeout_minutes, keeps the docs and the buffer, and backs off', () => {
    const p = project([{ do: 'good' }, { do: 'hang' }], (yaml) => yaml.replace('timeout_minutes: 30', 'timeout_minutes: 0.02'));
    seeded(p);
    const docs = p.doc('concept_registry.md');
    commitFile(p, 'src/e.ts', 'export const e = 1;\n', 'e');
    const run = p.engram(['run', '--once']);
    expect(run.status).toBe(0);
    const failed = run.stdout.split('\n').filter(Boolean).map((line) => JSON.parse(line)).find((event) => event.state === 'failed');
    expect(failed.error).toMatch(/did not finish within 1200 ms \(llm\.timeout_ms\); killed/);
    expect(p.doc('concept_registry.md')).toBe(docs);
    const status = p.engram(['docs', 'status']).json;
    expect(status.buffer.items).toBe(1); // the commit waits for the next dispatch
    expect(status.backoff_until).not.toBeNull();
    expect(status.dispatches[0]).toMatchObject({ id: 2, state: 'failed' });
    expect(p.engram(['run', '--once']).stdout).toContain('"state":"dispatched"'); // --once tries again despite the backoff
  });

  it('holds an edit over twice the expected growth for a person; accept commits it, reject restores', () => {
    const p = project([{ do: 'good' }, { do: 'huge', name: 'bloated' }, { do: 'huge', name: 'bloated_again' }]);
    seeded(p);
    commitFile(p, 'src/f.ts', 'export const f = 1;\n', 'f');
    expect(p.engram(['run', '--once']).stdout).toContain('"state":"held"');
    expect(p.engram(['docs', 'status']).json.needs_review).toEqual([2]);
    commitFile(p, 'src/g.ts', 'export const g = 1;\n', 'g');
    expect(p.engram(['run', '--once']).stdout).toContain('"reason":"held"'); // paused while a chunk waits
    const accepted = p.engram(['docs', 'accept', '2']);
    expect(accepted.json).toMatchObject({ id: 2, state: 'committed' });
    expect(readFileSync(join(p.root, 'CLAUDE.md'), 'utf8')).toContain('C002 bloated');

    const before = p.doc('concept_registry.md');
    expect(p.engram(['run', '--once']).stdout).toContain('"state":"held"');
    expect(p.engram(['docs', 'reject', '3', '--requeue']).json).toMatchObject({ id: 3, state: 'discarded' });
    expect(p.doc('concept_registry.md')).toBe(before);
    expect(p.engram(['docs', 'status']).json.buffer.items).toBe(1);
  });

  it('lets one server write: a second engram run refuses while the first holds the lock', async () => {
    const p = project([{ do: 'good' }, { do: 'good', name: 'only_once' }], settleNow);
    seeded(p);
    const first = startRun(p);
    await waitFor('the first server to start', () => first.events.find((event) => event.type === 'started'));
    const second = p.engram(['run', '--once']);
    expect(second.status).toBe(4);
    expect(JSON.parse(second.stderr).error).toMatchObject({ code: 'STORE_LOCKED' });
    expect(JSON.parse(second.stderr).error.message).toContain(`pid ${first.child.pid}`);
    expect(p.engram(['fold', '--from', '2020-01-01']).status).toBe(4);
    // The first one folds a commit made while it runs.
    commitFile(p, 'src/h.ts', 'export const h = 1;\n', 'h');
    await waitFor('the commit to be folded', () => first.events.find((event) => event.type === 'dispatch' && event.state === 'committed'));
    first.child.kill('SIGTERM');
    expect(await first.exited).toBe(0);
    expect(first.events.at(-1)).toMatchObject({ type: 'stopped', dispatches: 1 });
    expect(existsSync(join(p.root, '.engram', 'run.lock'))).toBe(false);
    withState(p.root, (state) => expect(recentDispatches(state, 10).map((d) => d.reserved.filter((id) => id.startsWith('C'))[0])).toEqual(['C002', 'C001']));
  });

  it('buffers doc-folder changes from the watcher and this project\'s sessions, never the fold agent\'s own', async () => {
    const p = project([{ do: 'good' }], (yaml) => yaml.replace('docs: []', 'docs: [notes/]'));
    mkdirSync(join(p.root, 'notes'));
    seeded(p);
    const projects = join(p.env.CLAUDE_CONFIG_DIR!, 'projects');
    const line = (record: object) => `${JSON.stringify(record)}\n`;
    const transcript = (folder: string, name: string, cwd: string, prompt: string) => {
      mkdirSync(join(projects, folder), { recursive: true });
      writeFileSync(
        join(projects, folder, name),
        line({ type: 'user', cwd, sessionId: name, timestamp: '2026-11-20T10:00:00Z', message: { role: 'user', content: prompt } }) +
          line({ type: 'assistant', cwd, sessionId: name, timestamp: '2026-11-20T10:00:05Z', message: { id: 'm1', role: 'assistant', content: [{ type: 'text', text: 'Done: the deploy script now checks the index first.' }] } }),
      );
    };
    const encoded = p.root.replace(/[^A-Za-z0-9]/g, '-');
    const server = startRun(p);
    await waitFor('the server to start', () => server.events.find((event) => event.type === 'started'));
    transcript(encoded, 'mine.jsonl', join(p.root, 'src'), 'please make the deploy script check the index before migrating');
    transcript(encoded, 'fold.jsonl', p.root, '[engram-fold chunk 9] Read the file .engram/fold/chunk_009_input.md …');
    transcript('-elsewhere', 'other.jsonl', '/elsewhere', 'unrelated project work');
    writeFileSync(join(p.root, 'notes', 'deploy.md'), '# Deploy\n\nAlways check the index first.\n');
    const items = await waitFor('the note and the session to be buffered', () => {
      const pending = withState(p.root, (state) => pendingItems(state)).filter((item) => item.chars > 0);
      return pending.length >= 2 && pending;
    });
    server.child.kill('SIGTERM');
    expect(await server.exited).toBe(0);
    expect(items.map((item) => [item.source, item.source === 'session' ? item.path!.split('/').pop() : item.ref]).sort()).toEqual([
      ['doc', 'notes/deploy.md'],
      ['session', 'mine.jsonl'],
    ]);
    const session = items.find((item) => item.source === 'session')!;
    expect(session.detail.prompts).toEqual(['please make the deploy script check the index before migrating']);
  });
});

describe('engram docs errors', () => {
  it('names the file, line and key of a bad config, and leaves the state alone', () => {
    const p = project([{ do: 'good' }]);
    seeded(p);
    const configFile = join(p.root, '.engram', 'config.yaml');
    writeFileSync(configFile, readFileSync(configFile, 'utf8').replace('max_chunk_chars: 200000', 'max_chunk_chars: -5'));
    for (const args of [['docs', 'lint'], ['run', '--once'], ['docs', 'status']]) {
      const result = p.engram(args);
      expect(result.status).toBe(2);
      expect(JSON.parse(result.stderr).error.code).toBe('CONFIG_INVALID');
      expect(JSON.parse(result.stderr).error.message).toMatch(/config\.yaml:\d+:3: budget\.max_chunk_chars: Too small/);
    }
    expect(p.calls()).toHaveLength(1);
  });

  it('reports a missing doc and a doc that is not UTF-8 as violations with their line', () => {
    const p = project([{ do: 'good' }]);
    seeded(p);
    execFileSync('rm', [join(p.root, 'docs', 'decisions', 'timeline.md')]);
    writeFileSync(join(p.root, 'docs', 'decisions', 'workflow_registry.md'), Buffer.concat([Buffer.from('# Workflows\n\nline two\nbad '), Buffer.from([0xff, 0xfe]), Buffer.from('\n')]));
    const lint = p.engram(['docs', 'lint']);
    expect(lint.status).toBe(1);
    expect(lint.json.violations.map((v: any) => [v.rule, v.file, v.line])).toEqual([
      ['doc-not-utf8', 'docs/decisions/workflow_registry.md', 4],
      ['doc-missing', 'docs/decisions/timeline.md', 1],
    ]);
    expect(lint.json.violations[0].hint).toBe('save the file as UTF-8');
  });

  it('refuses to seed over docs that already hold entries, and outside a git repository', () => {
    const p = project([{ do: 'good' }]);
    seeded(p);
    const again = p.engram(['docs', 'init', '--from-today']);
    expect(again.status).toBe(2);
    expect(JSON.parse(again.stderr).error.message).toContain("engram docs init --adopt");
    const outside = engramProcess(['docs', 'init', '--from-today'], { home: p.home, cwd: tempDir() });
    expect(outside.status).toBe(2);
    expect(outside.stderr).toContain('not inside a git repository');
  });
});

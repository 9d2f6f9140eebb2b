/**
 * Every hook event through the in-process path (the fallback when the server does not answer), against a real
 * store: what each event injects, records and refuses. The same handlers serve the warm server (test/e2e/server).
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openStore, type Store } from '../../src/core/index.js';
import { runInProcess } from '../../src/hooks/inprocess.js';
import type { HookEventName } from '../../src/hooks/contract.js';
import { addEngram } from '../../src/services/index.js';
import { claudeProjectFolderName } from '../../src/services/tape/index.js';
import { processEnv, processesOf, ROOT, SHARED, tempDir, until } from '../_helpers.js';

interface Home {
  home: string;
  cwd: string;
  /** A fresh connection; the caller closes it. */
  open(): Store;
  run(event: HookEventName, payload: Record<string, unknown>, agent?: 'claude' | 'codex'): Promise<any>;
}

/** A home with a project repository `shop` and a store seeded with a few engrams. */
function setup(config?: unknown): Home {
  const home = tempDir();
  const cwd = join(tempDir(), 'shop');
  mkdirSync(join(cwd, '.git'), { recursive: true });
  if (config) writeFileSync(join(home, 'config.json'), JSON.stringify(config));
  const open = () => openStore({ path: join(home, 'engram.db') });
  const store = open();
  const add = (draft: Parameters<typeof addEngram>[1]) => addEngram(store, draft);
  add({ text: 'Never force-push to main; use git push --force-with-lease on your own feature branch.', category: 'tooling/git', tags: ['git'], pinned: true });
  add({ text: 'Refunds in the shop go through RefundService.issue(), never by updating payments rows directly.', category: 'payments', project: 'shop', scope: 'project' });
  add({ text: 'The shop test suite needs Postgres on port 5432: when npm test fails with ECONNREFUSED, start it with docker compose up -d db.', category: 'testing', project: 'shop', scope: 'project' });
  add({ text: 'In the billing repo, invoices are immutable once sent.', category: 'billing', project: 'billing', scope: 'project' });
  add({ text: 'Use pnpm, not npm, in the mobile app repository.', category: 'tooling', project: 'mobile', scope: 'project', pinned: true });
  store.close();
  return {
    home,
    cwd,
    open,
    async run(event, payload, agent = 'claude') {
      const stdout = await runInProcess(
        {
          event,
          stdin: JSON.stringify({ session_id: 'sess-1', transcript_path: '/tmp/t.jsonl', cwd, hook_event_name: event, ...payload }),
          agentFlag: agent,
          envHints: { codex: agent === 'codex', claude: agent === 'claude' },
        },
        { reason: 'server-off', installRoot: ROOT, env: processEnv({ HOME: home, ENGRAM_HOME: home, ENGRAM_SERVER: 'off' }) },
      );
      return stdout === '' ? null : JSON.parse(stdout);
    },
  };
}

const context = (output: any): string => output?.hookSpecificOutput?.additionalContext ?? '';

describe('SessionStart', () => {
  it('injects pinned engrams and the project’s, never other projects’, as one marked block with ids', async () => {
    const h = setup();
    const output = await h.run('SessionStart', { source: 'startup' });
    expect(Object.keys(output)).toEqual(['hookSpecificOutput']);
    expect(Object.keys(output.hookSpecificOutput)).toEqual(['hookEventName', 'additionalContext']);
    expect(output.hookSpecificOutput.hookEventName).toBe('SessionStart');
    const text = context(output);
    expect(text.startsWith('[ENGRAM]')).toBe(true);
    expect(text.endsWith('[/ENGRAM]')).toBe(true);
    expect(text).toContain('EG#1 [tooling/git] Never force-push');
    expect(text).toContain('EG#2 [payments]');
    expect(text).toContain('EG#3 [testing]');
    expect(text).not.toContain('invoices');
    expect(text).not.toContain('pnpm'); // pinned, but another project's
  });

  it('stays within the configured budget and names what it left out', async () => {
    const h = setup({ hooks: { session_start_chars: 300 } });
    const text = context(await h.run('SessionStart', { source: 'startup' }));
    expect(text.length).toBeLessThanOrEqual(300);
    expect(text).toMatch(/more not shown for space: EG#\d/);
  });

  it('does not repeat itself on resume, but re-injects after a compaction', async () => {
    const h = setup();
    expect(context(await h.run('SessionStart', { source: 'startup' }))).toContain('EG#1');
    expect(await h.run('SessionStart', { source: 'resume' })).toBeNull();
    expect(context(await h.run('SessionStart', { source: 'compact' }))).toContain('EG#1');
    const store = h.open();
    expect(store.activity.shown('sess-1').find((row) => row.engram_id === 1)).toMatchObject({ times: 2, context_epoch: 1 });
    store.close();
  });

  it('shows a system pin made for a tag subset only where those tags are', async () => {
    const h = setup();
    const store = h.open();
    const { engram } = addEngram(store, { text: 'React components use the design-system Button, never a raw button.', category: 'frontend' });
    store.write(() => store.engrams.update(engram.id, { pinned: true, auto_pinned: true, prerequisites: { tags: ['react'] } }));
    store.close();
    expect(context(await h.run('SessionStart', { source: 'startup' }))).not.toContain('design-system Button');
    writeFileSync(join(h.cwd, 'package.json'), JSON.stringify({ dependencies: { react: '19.0.0' } }));
    const other = await h.run('SessionStart', { source: 'startup', session_id: 'sess-2' });
    expect(context(other)).toContain('design-system Button');
  });

  it('skips a pinned engram whose prerequisites do not hold here', async () => {
    const h = setup();
    const store = h.open();
    addEngram(store, { text: 'On macOS use gsed for in-place edits.', category: 'tooling', pinned: true, prerequisites: { os: ['darwin'] } });
    store.close();
    const text = context(await h.run('SessionStart', { source: 'startup' }));
    expect(text).not.toContain('gsed');
  });
});

describe('UserPromptSubmit', () => {
  it('injects at most 3 relevant engrams, records the prompt and what was shown', async () => {
    const h = setup();
    const output = await h.run('UserPromptSubmit', { prompt: 'how do I issue refunds for a payment?', prompt_id: 'p1' });
    const text = context(output);
    expect(output.hookSpecificOutput.hookEventName).toBe('UserPromptSubmit');
    expect(text).toContain('EG#2');
    expect((text.match(/^- EG#/gm) ?? []).length).toBeLessThanOrEqual(3);
    const store = h.open();
    expect(store.sessions.prompts('sess-1').map((p) => p.content)).toEqual(['how do I issue refunds for a payment?']);
    expect(store.activity.shown('sess-1')).toEqual([
      // bm25_rank: where BM25 ranked it, kept so the learning loop's verdicts can weigh each list (recall reliability.ts).
      expect.objectContaining({ engram_id: 2, event: 'UserPromptSubmit', query: 'how do I issue refunds for a payment?', answered_by: 'in-process', rank: 1, bm25_rank: 1 }),
    ]);
    const audit = store.db.prepare('SELECT repo, transcript_path FROM session_audit WHERE session_id = ?').get('sess-1');
    expect(audit).toEqual({ repo: 'shop', transcript_path: '/tmp/t.jsonl' });
    store.close();
  });

  it('strips IDE noise before searching', async () => {
    const h = setup();
    // Without the markup removed, this is a prompt about refunds and payments, which EG#2 answers.
    const opened = '<ide_opened_file>The user opened src/refunds.ts: refunds for payments</ide_opened_file>';
    expect(await h.run('UserPromptSubmit', { prompt: `${opened} ok thanks` })).toBeNull();
    expect(context(await h.run('UserPromptSubmit', { prompt: 'refunds for payments: ok thanks' }))).toContain('EG#2');
  });

  it('abstains when nothing is good enough, and never shows an engram twice in a session', async () => {
    const h = setup();
    expect(await h.run('UserPromptSubmit', { prompt: 'what is the capital of France?' })).toBeNull();
    expect(context(await h.run('UserPromptSubmit', { prompt: 'refunds for payments again' }))).toContain('EG#2');
    expect(await h.run('UserPromptSubmit', { prompt: 'how are refunds for payments issued?' })).toBeNull();
  });

  it('answers Codex with the same two fields and nothing else', async () => {
    const h = setup();
    const output = await h.run('UserPromptSubmit', { prompt: 'issue refunds for a payment', turn_id: 't1', model: 'gpt-5.5' }, 'codex');
    expect(output).toEqual({ hookSpecificOutput: { hookEventName: 'UserPromptSubmit', additionalContext: expect.stringContaining('EG#2') } });
    const store = h.open();
    expect(store.sessions.get('sess-1')?.agent).toBe('codex');
    store.close();
  });
});

describe('tool events', () => {
  it('PreToolUse searches with the tool and its target, at most 2, relative paths', async () => {
    const h = setup();
    const output = await h.run('PreToolUse', {
      tool_name: 'Edit',
      tool_input: { file_path: join(h.cwd, 'src/refunds/refund-service.ts'), old_string: 'a', new_string: 'b' },
      tool_use_id: 'toolu_1',
    });
    expect(output.hookSpecificOutput.hookEventName).toBe('PreToolUse');
    expect(context(output)).toContain('EG#2');
    expect(Object.keys(output.hookSpecificOutput)).toEqual(['hookEventName', 'additionalContext']);
  });

  it('PreToolUse stays silent when two memories tie on the words of the call (no clear keyword winner)', async () => {
    const h = setup();
    const store = h.open();
    addEngram(store, { text: 'Coverage thresholds are per package; raising the global one made unrelated PRs fail.', category: 'testing' });
    addEngram(store, { text: 'CI reads the Node version from .nvmrc; bump it there and in package.json engines together.', category: 'ci' });
    store.close();
    // `Read package.json` searches `package`: both lessons hold it once and score alike, so either is a coin toss.
    expect(await h.run('PreToolUse', { tool_name: 'Read', tool_input: { file_path: join(h.cwd, 'package.json') }, tool_use_id: 'toolu_9' })).toBeNull();
    // A call whose words one memory holds clearly still injects it.
    expect(context(await h.run('PreToolUse', { tool_name: 'Read', tool_input: { file_path: join(h.cwd, 'coverage-thresholds.md') }, tool_use_id: 'toolu_10' }))).toContain('Coverage thresholds');
  });

  it('accepts old and new tool names and Codex patches', async () => {
    const h = setup();
    const task = await h.run('PreToolUse', { tool_name: 'Task', tool_input: { description: 'check docker compose db for npm test', prompt: 'x' } });
    expect(context(task)).toContain('EG#3');
    const patch = '*** Begin Patch\n*** Update File: src/refunds/RefundService.ts\n@@\n-a\n+b\n*** End Patch\n';
    const codex = await h.run('PreToolUse', { tool_name: 'apply_patch', tool_input: { command: patch }, turn_id: 't' }, 'codex');
    expect(context(codex)).toContain('EG#2');
  });

  it('PostToolUse records the call and prints nothing; a failure injects what is known about it', async () => {
    const h = setup();
    const post = { tool_name: 'Bash', tool_input: { command: 'ls src' }, tool_use_id: 'toolu_2', tool_response: { stdout: 'a' }, duration_ms: 12 };
    expect(await h.run('PostToolUse', post)).toBeNull();
    const failure = await h.run('PostToolUseFailure', {
      tool_name: 'Bash',
      tool_input: { command: 'npm test' },
      tool_use_id: 'toolu_3',
      error: 'Exit code 1\nError: connect ECONNREFUSED 127.0.0.1:5432 (postgres)',
    });
    expect(failure.hookSpecificOutput.hookEventName).toBe('PostToolUseFailure');
    expect(context(failure)).toContain('EG#3');
    const store = h.open();
    expect(store.activity.toolEvents('sess-1').map((e) => [e.tool_use_id, e.tool_name, e.target, e.ok])).toEqual([
      ['toolu_2', 'Bash', 'ls src', true],
      ['toolu_3', 'Bash', 'npm test', false],
    ]);
    store.close();
  });
});

describe('Stop and SessionEnd', () => {
  it('Stop counts a turn once by its prompt_id, even when the same Stop arrives twice', async () => {
    const h = setup();
    const stop = (promptId: string) => h.run('Stop', { stop_hook_active: false, last_assistant_message: 'done', prompt_id: promptId });
    expect(await stop('prompt-1')).toBeNull();
    expect(await stop('prompt-1')).toBeNull(); // handled by the server and by a hook that gave up waiting for it
    expect(await stop('prompt-2')).toBeNull();
    const store = h.open();
    try {
      expect(store.sessions.get('sess-1')?.turns).toBe(2);
    } finally {
      store.close();
    }
  });

  it('print nothing; SessionEnd queues the session’s background work, which a one-off drain runs in the hook’s own home and environment', async () => {
    const h = setup();
    // A session of the same project that the hooks never saw, in Claude Code's folder under the hook's HOME: the
    // session-end job records it (catch-up), which it can only do if the drain runs with the hook's HOME.
    const missed = 'f62cb199-5524-4dac-8011-3b74b972172a';
    const folder = join(h.home, '.claude', 'projects', claudeProjectFolderName(h.cwd));
    mkdirSync(folder, { recursive: true });
    const fixture = readFileSync(join(SHARED, 'fixtures', 'transcripts', 'claude-code-2.1.197__scripted-session.jsonl'), 'utf8');
    writeFileSync(join(folder, `${missed}.jsonl`), fixture.replaceAll('/home/user/proj', h.cwd));
    expect(await h.run('Stop', { stop_hook_active: false, last_assistant_message: 'done' })).toBeNull();
    expect(await h.run('SessionEnd', { reason: 'other' })).toBeNull();
    const store = h.open();
    try {
      expect(store.sessions.get('sess-1')).toMatchObject({ turns: 1, end_reason: 'other' });
      expect(store.jobs.get('session-end', 'sess-1')).toMatchObject({ kind: 'session-end', payload: { transcript_path: '/tmp/t.jsonl', agent: 'claude' } });
      // The server is off, so a detached `server.mjs --drain` runs the jobs, then exits: no process outlives the test.
      await until(() => store.jobs.get('session-end', missed)?.status === 'done', 'the drain to run the jobs', 30_000);
      expect(store.jobs.get('session-end', 'sess-1')?.status).toBe('done');
      expect(store.sessions.get(missed)).toMatchObject({ start_source: 'caught-up' });
      await until(() => processesOf(h.home).length === 0, 'the drain to exit', 15_000);
    } finally {
      store.close();
    }
    expect(readFileSync(join(h.home, 'logs', 'hooks.log'), 'utf8')).toContain('"path":"in-process"');
    expect(readFileSync(join(h.home, 'logs', 'server.log'), 'utf8')).toContain('"drained jobs"');
  });
});

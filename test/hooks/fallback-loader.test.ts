/**
 * What a hook that answers in-process loads (dist/hooks/inprocess.cjs through src/hooks/fallback-loader.ts): the
 * bundle with its V8 code cache, and from outside it only what cannot be bundled. Runs the built hooks (npm run build).
 */
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { hookProcess, ROOT, seed, tempDir } from '../_helpers.js';

/** Records, at exit, the files this process required and the Node built-ins it loaded. */
function probe(dir: string): { script: string; out: string } {
  const out = join(dir, 'loaded.json');
  const script = join(dir, 'probe.cjs');
  writeFileSync(
    script,
    `process.on('exit', () => require('node:fs').writeFileSync(${JSON.stringify(out)}, JSON.stringify({
      files: Object.keys(require.cache),
      builtins: process.moduleLoadList.filter((m) => m.startsWith('NativeModule ')).map((m) => m.slice(13)),
    })));\n`,
  );
  return { script, out };
}

const PROMPT = {
  session_id: 'sess-fallback-loads',
  transcript_path: '/home/u/.claude/projects/-p/sess-fallback-loads.jsonl',
  cwd: '/tmp',
  hook_event_name: 'UserPromptSubmit',
  prompt: 'how do we run the database migrations before the integration tests',
};

describe('a hook answering in-process (server off)', () => {
  it('loads better-sqlite3 from its own bundle (only the native binary from node_modules), and neither node:child_process nor node:crypto', async () => {
    const home = tempDir();
    seed(home, [{ text: 'Run the database migrations before the integration tests: npm run db:migrate, then npm test.', category: 'testing' }]);
    const { script, out } = probe(tempDir());
    const answers: string[] = [];
    for (let i = 0; i < 2; i++) {
      const result = await hookProcess('user-prompt-submit', JSON.stringify({ ...PROMPT, session_id: `${PROMPT.session_id}-${i}` }), {
        home,
        env: { NODE_OPTIONS: `--require ${script}` },
      });
      expect(result).toMatchObject({ code: 0, stderr: '' });
      answers.push(result.stdout);
    }
    // The same answer from the cold run (no code cache) and the warm one (code cache hit).
    expect(answers[0]).toContain('npm run db:migrate');
    expect(answers[1]).toBe(answers[0]);
    const log = readFileSync(join(home, 'logs', 'hooks.log'), 'utf8').trim().split('\n').map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(log.filter((line) => line.msg === 'hook done').map((line) => [line.path, line.code_cache])).toEqual([
      ['in-process', 'miss'],
      ['in-process', 'hit'],
    ]);
    expect(readdirSync(join(home, 'cache', 'code')).filter((name) => name.startsWith('inprocess-'))).toHaveLength(1);

    const loaded = JSON.parse(readFileSync(out, 'utf8')) as { files: string[]; builtins: string[] };
    const fromNodeModules = loaded.files.filter((file) => file.includes(`${join('node_modules')}/`)).map((file) => file.slice(file.lastIndexOf('node_modules/')));
    expect(fromNodeModules).toEqual(['node_modules/better-sqlite3/build/Release/better_sqlite3.node']);
    expect(loaded.files).toContain(join(ROOT, 'dist', 'hooks', 'fast.cjs'));
    // Spawning is for starting a server; with the server switched off nothing is spawned, so nothing loads it.
    expect(loaded.builtins).not.toContain('child_process');
    expect(loaded.builtins).not.toContain('net');
    // The prompt was recorded with a uid SQLite made (core/store/sessions.ts), so nothing loaded node:crypto either.
    expect(loaded.builtins).not.toContain('crypto');
  });

  it('hashes without node:crypto: SessionStart and PreToolUse load neither it nor the streams it pulls', async () => {
    const home = tempDir();
    seed(home, [{ text: 'Pinned: the release branch is cut on Thursdays; never merge to it by hand.', category: 'process', pinned: true }]);
    const project = tempDir();
    const { script, out } = probe(tempDir());
    const calls: Array<[string, Record<string, unknown>]> = [
      ['session-start', { session_id: 'sess-fb-hash', transcript_path: '/tmp/t.jsonl', cwd: project, hook_event_name: 'SessionStart', source: 'startup' }],
      ['pre-tool-use', { session_id: 'sess-fb-hash', transcript_path: '/tmp/t.jsonl', cwd: project, hook_event_name: 'PreToolUse', tool_name: 'Bash', tool_input: { command: 'git merge release' } }],
    ];
    for (const [entry, payload] of calls) {
      const result = await hookProcess(entry, JSON.stringify(payload), { home, env: { NODE_OPTIONS: `--require ${script}` } });
      expect(result).toMatchObject({ code: 0, stderr: '' });
      if (entry === 'session-start') expect(result.stdout).toContain('release branch is cut on Thursdays');
      const loaded = JSON.parse(readFileSync(out, 'utf8')) as { builtins: string[] };
      expect(loaded.builtins).not.toContain('crypto');
      expect(loaded.builtins).not.toContain('stream');
    }
    // Both answered in-process (their environment detection keyed by SHA-256: core/environment/cache.ts).
    const log = readFileSync(join(home, 'logs', 'hooks.log'), 'utf8').trim().split('\n').map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(log.filter((line) => line.msg === 'hook done').map((line) => line.path)).toEqual(['in-process', 'in-process']);
  });
});

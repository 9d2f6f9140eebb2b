/**
 * SessionStart and the L0 briefing, through the in-process hook path against a real store: the briefing of the
 * repository is injected, within the SessionStart budget, for an agent that does not load the file it lives in —
 * and not for one that does (Claude Code reads CLAUDE.md, Codex reads AGENTS.md), nor where there are no docs.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runInProcess } from '../../../src/hooks/inprocess.js';
import { BRIEFING_BEGIN, BRIEFING_END } from '../../../src/services/knowledge/briefing.js';
import { ROOT, tempDir } from '../../_helpers.js';

const BRIEFING = ['_Generated 2026-11-25 after chunk 3._', '', '**Do not build on** (dead, refuted, superseded):', '- E001 74% win rate — refuted, do not rely on it', ...Array.from({ length: 60 }, (_, i) => `- C${String(i + 100)} concept number ${i} — \`src/c${i}.ts\``)];

function repository(target: string, config: Record<string, unknown> = {}): { home: string; cwd: string } {
  const home = tempDir();
  const cwd = join(tempDir(), 'shop');
  mkdirSync(join(cwd, '.engram'), { recursive: true });
  execFileSync('git', ['init', '-q'], { cwd });
  writeFileSync(join(cwd, '.engram', 'config.yaml'), `briefing:\n  file: ${target}\n`);
  writeFileSync(join(cwd, target), `# Notes\n\n## Project Knowledge Briefing\n${BRIEFING_BEGIN}\n${BRIEFING.join('\n')}\n${BRIEFING_END}\n`);
  writeFileSync(join(home, 'config.json'), JSON.stringify(config));
  return { home, cwd };
}

async function sessionStart(home: string, cwd: string, agent: 'claude' | 'codex', source = 'startup', session = 'sess-1'): Promise<string> {
  const stdout = await runInProcess(
    {
      event: 'SessionStart',
      stdin: JSON.stringify({ session_id: session, transcript_path: '/tmp/t.jsonl', cwd, hook_event_name: 'SessionStart', source, ...(agent === 'codex' ? { model: 'gpt-5' } : {}) }),
      agentFlag: agent,
      envHints: { codex: agent === 'codex', claude: agent === 'claude' },
    },
    { reason: 'server-off', installRoot: ROOT, env: { HOME: home, ENGRAM_HOME: home, ENGRAM_SERVER: 'off' } },
  );
  return stdout === '' ? '' : (JSON.parse(stdout).hookSpecificOutput?.additionalContext ?? '');
}

describe('SessionStart with knowledge docs', () => {
  it('injects the briefing for Codex when it lives in CLAUDE.md, cut at whole lines within half the budget', async () => {
    const { home, cwd } = repository('CLAUDE.md', { hooks: { session_start_chars: 2000 } });
    const text = await sessionStart(home, cwd, 'codex');
    expect(text.startsWith('[ENGRAM] Project knowledge briefing (from CLAUDE.md; full entries: engram docs show <id>)\n_Generated 2026-11-25 after chunk 3._')).toBe(true);
    expect(text).toContain('- E001 74% win rate — refuted, do not rely on it');
    expect(text).toMatch(/\(\d+ more lines of the briefing in CLAUDE\.md\)\n\[\/ENGRAM\]$/);
    expect(text.length).toBeLessThanOrEqual(1000);
    // A resumed session still has it; a compacted one gets it again.
    expect(await sessionStart(home, cwd, 'codex', 'resume')).toBe('');
    expect(await sessionStart(home, cwd, 'codex', 'compact')).toContain('Project knowledge briefing');
  });

  it('leaves it to the agent that loads the file itself', async () => {
    const claude = repository('CLAUDE.md');
    expect(await sessionStart(claude.home, claude.cwd, 'claude')).toBe('');
    const codex = repository('AGENTS.md');
    expect(await sessionStart(codex.home, codex.cwd, 'codex')).toBe('');
    expect(await sessionStart(codex.home, codex.cwd, 'claude')).toContain('Project knowledge briefing (from AGENTS.md');
  });

  it('injects nothing from a repository without knowledge docs or with a broken config', async () => {
    const { home, cwd } = repository('CLAUDE.md');
    writeFileSync(join(cwd, '.engram', 'config.yaml'), 'briefing: [');
    expect(await sessionStart(home, cwd, 'codex')).toBe('');
    const bare = join(tempDir(), 'bare');
    mkdirSync(bare);
    expect(await sessionStart(home, bare, 'codex')).toBe('');
  });
});

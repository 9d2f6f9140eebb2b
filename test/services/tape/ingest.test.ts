import { appendFileSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readEnv } from '../../../src/core/index.js';
import { initRepo } from '../../../src/services/index.js';
import { claudeProjectFolderName, ingestSessions, listTapes, readTape, recordTranscript, tapeLocation } from '../../../src/services/tape/index.js';
import { SHARED, tempDir } from '../../_helpers.js';

const FIXTURES = join(SHARED, 'fixtures', 'transcripts');
const CLAUDE_SESSION = 'f62cb199-5524-4dac-8011-3b74b972172a';

/** Every file under a folder with its size and mtime: proof that nothing was written there. */
function snapshot(dir: string): string[] {
  const out: string[] = [];
  const walk = (folder: string): void => {
    for (const name of readdirSync(folder).sort()) {
      const path = join(folder, name);
      const stat = statSync(path);
      if (stat.isDirectory()) walk(path);
      out.push(`${relative(dir, path)} ${stat.size} ${stat.mtimeMs}`);
    }
  };
  walk(dir);
  return out;
}

/** A user home with Claude Code and Codex logs of a repository (the fixtures, their paths moved to the repo). */
function world(options: { claudeLines?: number } = {}) {
  const base = tempDir();
  const home = join(base, 'home');
  const repo = join(base, 'work', 'proj');
  mkdirSync(join(repo, '.git'), { recursive: true });
  mkdirSync(join(repo, 'src'));
  writeFileSync(join(repo, 'src', 'retry.py'), 'ATTEMPTS = 5\n');
  const move = (text: string): string => text.replaceAll('/home/user/proj', repo);
  const projectDir = join(home, '.claude', 'projects', claudeProjectFolderName(repo));
  mkdirSync(join(projectDir, CLAUDE_SESSION, 'subagents'), { recursive: true });
  const claudeText = move(readFileSync(join(FIXTURES, 'claude-code-2.1.197__scripted-session.jsonl'), 'utf8'));
  const claudeLines = claudeText.split('\n').filter(Boolean);
  const claudePath = join(projectDir, `${CLAUDE_SESSION}.jsonl`);
  const firstPart = options.claudeLines ? claudeLines.slice(0, options.claudeLines) : claudeLines;
  writeFileSync(claudePath, `${firstPart.join('\n')}\n`);
  const subagentPath = join(projectDir, CLAUDE_SESSION, 'subagents', 'agent-ad2377d0aed9ab3de.jsonl');
  writeFileSync(subagentPath, move(readFileSync(join(FIXTURES, 'claude-code-2.1.197__scripted-session__subagent.jsonl'), 'utf8')));
  // A session of another project (same prefix, different folder) must not be picked up.
  const otherDir = join(home, '.claude', 'projects', `${claudeProjectFolderName(repo)}-other`);
  mkdirSync(otherDir, { recursive: true });
  writeFileSync(join(otherDir, 'x.jsonl'), readFileSync(join(FIXTURES, 'git-ai-project__claude-code-with-thinking.jsonl')));
  const codexDir = join(home, '.codex', 'sessions', '2026', '11', '22');
  mkdirSync(codexDir, { recursive: true });
  const codexPath = join(codexDir, 'rollout-2026-11-22T01-01-38-01a200c5-e3f5-7893-a481-82c60fff87ef.jsonl');
  writeFileSync(codexPath, move(readFileSync(join(FIXTURES, 'codex-0.169.0__scripted-session.jsonl'), 'utf8')));
  writeFileSync(join(codexDir, 'rollout-2026-11-22T02-00-00-other.jsonl'), readFileSync(join(FIXTURES, 'lparlett__codex_file_updates.jsonl')));
  const env = readEnv({ HOME: home, ENGRAM_HOME: join(home, '.engram') }, { cwd: repo });
  return { home, repo, env, claudePath, claudeLines, subagentPath, codexPath };
}

describe('ingest', () => {
  it("finds this repository's Claude (with subagents) and Codex sessions; a non-opted-in repository gets nothing written inside it", async () => {
    const w = world();
    const before = snapshot(w.repo);
    const report = await ingestSessions({ cwd: join(w.repo, 'src'), env: w.env });
    expect(snapshot(w.repo)).toEqual(before);
    expect(report.opted_in).toBe(false);
    expect(report.tapes_dir).toBe(tapeLocation(w.repo, w.env.home).tapes_dir);
    expect(report.tapes_dir.startsWith(join(w.home, '.engram', 'tapes'))).toBe(true);
    expect(report.sources.map((source) => [source.path, source.harness, source.status])).toEqual([
      [w.claudePath, 'claude', 'written'],
      [w.subagentPath, 'claude', 'written'],
      [w.codexPath, 'codex', 'written'],
    ]);
    expect(report.tapes_written).toBe(3);
    expect(report.sources[0]).toMatchObject({ session_id: CLAUDE_SESSION, new_lines: w.claudeLines.length, coverage: { grade: 'full' } });
    const tapes = listTapes(report.tapes_dir);
    expect(tapes).toHaveLength(3);
    const codexTape = readTape(tapes.find((tape) => tape.tape_id === report.sources[2]?.tape_id)?.path ?? '');
    expect(codexTape.events.find((event) => event.k === 'code.edit' && event.op === 'edit')).toMatchObject({ file: 'src/retry.py', after_text: 'ATTEMPTS = 5' });
    const subagentTape = readTape(tapes.find((tape) => tape.tape_id === report.sources[1]?.tape_id)?.path ?? '');
    expect(subagentTape.events.slice(1).every((event) => event.agent === 'ad2377d0aed9ab3de')).toBe(true);
    // Cursors live in the home's cache for this project.
    expect(readdirSync(join(tapeLocation(w.repo, w.env.home).cache_dir, 'cursors'))).toHaveLength(3);
  });

  it('finds a Codex rollout whose first record is larger than the first read (base instructions of 100 KB)', async () => {
    const w = world();
    const lines = readFileSync(w.codexPath, 'utf8').split('\n').filter(Boolean);
    const meta = JSON.parse(lines[0] as string) as { payload: Record<string, unknown> };
    meta.payload.base_instructions = { text: 'You are a coding agent. '.repeat(4_500) };
    writeFileSync(w.codexPath, `${[JSON.stringify(meta), ...lines.slice(1)].join('\n')}\n`);
    const report = await ingestSessions({ cwd: w.repo, env: w.env, agent: 'codex' });
    expect(report.sources.map((source) => [source.path, source.status])).toEqual([[w.codexPath, 'written']]);
  });

  it('remembers where each transcript was made: an unchanged one is not read again, a changed one is', async () => {
    const w = world();
    await ingestSessions({ cwd: w.repo, env: w.env, agent: 'codex' });
    const cacheFile = join(w.env.home, 'cache', 'discovery.json');
    const cache = JSON.parse(readFileSync(cacheFile, 'utf8')) as Record<string, { cwd: string | null }>;
    expect(cache[w.codexPath]?.cwd).toBe(w.repo);
    expect(Object.keys(cache)).toHaveLength(2); // the other project's rollout too, so it is not read again either
    // Proof that the cache is what answers: say the rollout belongs elsewhere, and discovery believes it.
    (cache[w.codexPath] as { cwd: string }).cwd = '/elsewhere';
    writeFileSync(cacheFile, JSON.stringify(cache));
    expect((await ingestSessions({ cwd: w.repo, env: w.env, agent: 'codex' })).sources).toEqual([]);
    // A transcript that changed (size or mtime) is read again.
    appendFileSync(w.codexPath, '{"timestamp":"2026-11-22T02:00:00.000Z","type":"event_msg","payload":{"type":"token_count"}}\n');
    expect((await ingestSessions({ cwd: w.repo, env: w.env, agent: 'codex' })).sources.map((source) => source.path)).toEqual([w.codexPath]);
    expect(existsSync(join(w.repo, '.engram-cache'))).toBe(false);
  });

  it("encodes a folder as Claude Code names its project folder (every character but letters and digits becomes '-')", () => {
    expect(claudeProjectFolderName('/home/user/my_proj.v2')).toBe('-home-user-my-proj-v2');
  });

  it('is idempotent: a second run adds nothing', async () => {
    const w = world();
    await ingestSessions({ cwd: w.repo, env: w.env });
    const tapesDir = tapeLocation(w.repo, w.env.home).tapes_dir;
    const files = readdirSync(tapesDir).sort();
    const second = await ingestSessions({ cwd: w.repo, env: w.env });
    expect(second.tapes_written).toBe(0);
    expect(second.tapes_existing).toBe(0);
    expect(second.sources.every((source) => source.status === 'unchanged' && source.tape_id === null && source.new_lines === 0)).toBe(true);
    expect(readdirSync(tapesDir).sort()).toEqual(files);
  });

  it('continues a session recorded in parts from its tapes when the cursors are lost: no tape records the same moments twice', async () => {
    const w = world({ claudeLines: 30 });
    const location = () => tapeLocation(w.repo, w.env.home);
    const tapeCount = () => listTapes(location().tapes_dir).length;
    await ingestSessions({ cwd: w.repo, env: w.env });
    appendFileSync(w.claudePath, `${w.claudeLines.slice(30).join('\n')}\n`);
    const second = await ingestSessions({ cwd: w.repo, env: w.env });
    const grown = second.sources.find((source) => source.path === w.claudePath)?.tape_id as string;
    const before = tapeCount(); // main transcript in two parts, its subagent, the Codex session
    expect(before).toBe(4);
    // The cache (cursors, remembered tape spans) is documented as rebuildable: it goes.
    rmSync(location().cache_dir, { recursive: true, force: true });
    const again = await ingestSessions({ cwd: w.repo, env: w.env });
    expect(again.sources.map((source) => source.status)).toEqual(['unchanged', 'unchanged', 'unchanged']);
    expect(tapeCount()).toBe(before);
    // And the next part continues the last tape, not the first.
    appendFileSync(w.claudePath, `${JSON.stringify({ type: 'user', uuid: 'late-2', sessionId: CLAUDE_SESSION, cwd: w.repo, timestamp: '2026-11-22T01:11:00.000Z', message: { role: 'user', content: 'and add a jitter' } })}\n`);
    rmSync(location().cache_dir, { recursive: true, force: true });
    const third = await ingestSessions({ cwd: w.repo, env: w.env });
    const next = third.sources.find((source) => source.path === w.claudePath);
    expect(next).toMatchObject({ status: 'written', new_lines: 1 });
    const tape = readTape(listTapes(third.tapes_dir).find((file) => file.tape_id === next?.tape_id)?.path ?? '');
    expect(tape.events[0]).toMatchObject({ k: 'meta', previous_tape: grown, lines: [w.claudeLines.length + 1, w.claudeLines.length + 1] });
    expect(tape.events.slice(1)).toEqual([expect.objectContaining({ k: 'msg.in', text: 'and add a jitter' })]);
    expect(tapeCount()).toBe(before + 1);
  });

  it('a growing session gives a tape of only the new complete lines, pointing at the previous tape', async () => {
    const w = world({ claudeLines: 30 });
    const first = await ingestSessions({ cwd: w.repo, env: w.env, agent: 'claude' });
    const firstTape = first.sources[0]?.tape_id as string;
    expect(first.sources[0]?.new_lines).toBe(30);
    // The rest arrives, the last line still being written (no newline yet).
    const rest = w.claudeLines.slice(30);
    appendFileSync(w.claudePath, `${rest.slice(0, -1).join('\n')}\n${rest.at(-1)}`);
    const second = await ingestSessions({ cwd: w.repo, env: w.env, agent: 'claude' });
    const grown = second.sources.find((source) => source.path === w.claudePath);
    expect(grown).toMatchObject({ status: 'written', new_lines: rest.length - 1 });
    const tape = readTape(listTapes(second.tapes_dir).find((file) => file.tape_id === grown?.tape_id)?.path ?? '');
    expect(tape.events[0]).toMatchObject({ k: 'meta', previous_tape: firstTape, model: 'claude-opus-4-8' });
    // Only new lines: the first prompt and the first Write are in the earlier tape, not here.
    expect(tape.events.some((event) => event.k === 'msg.in')).toBe(false);
    expect(tape.events.filter((event) => event.k === 'code.edit').map((event) => event.k === 'code.edit' && event.file)).toEqual(['notes.md']);
    // Completing the last line makes one more tape that continues the second.
    appendFileSync(w.claudePath, '\n');
    const third = await ingestSessions({ cwd: w.repo, env: w.env, agent: 'claude' });
    const last = third.sources.find((source) => source.path === w.claudePath);
    expect(last?.new_lines).toBe(1);
    expect(last?.status).toBe('empty'); // the fixture's last line (last-prompt) holds nothing to record
    // A line with something in it makes one more tape, continuing the last one that was written.
    appendFileSync(w.claudePath, `${JSON.stringify({ type: 'user', uuid: 'late-1', sessionId: CLAUDE_SESSION, cwd: w.repo, timestamp: '2026-11-22T01:10:00.000Z', message: { role: 'user', content: 'one more thing: log each retry' } })}\n`);
    const fourth = await ingestSessions({ cwd: w.repo, env: w.env, agent: 'claude' });
    const latest = fourth.sources.find((source) => source.path === w.claudePath);
    expect(latest).toMatchObject({ status: 'written', new_lines: 1 });
    const lastTape = readTape(listTapes(fourth.tapes_dir).find((file) => file.tape_id === latest?.tape_id)?.path ?? '');
    expect(lastTape.events[0]).toMatchObject({ previous_tape: grown?.tape_id });
    expect(lastTape.events.slice(1)).toEqual([expect.objectContaining({ k: 'msg.in', text: 'one more thing: log each retry' })]);
  });

  it('an opted-in repository keeps tapes in .engram/tapes and cursors in .engram-cache', async () => {
    const w = world();
    initRepo({ cwd: w.repo });
    const report = await ingestSessions({ cwd: w.repo, env: w.env, agent: 'codex' });
    expect(report).toMatchObject({ opted_in: true, tapes_dir: join(w.repo, '.engram', 'tapes'), tapes_written: 1 });
    expect(readdirSync(join(w.repo, '.engram-cache', 'cursors'))).toHaveLength(1);
    expect(listTapes(join(w.repo, '.engram', 'tapes'))).toHaveLength(1);
  });

  it('--file ingests one transcript; strict mode reports an unsupported version per source', async () => {
    const w = world();
    const path = join(w.repo, '..', 'odd.jsonl');
    writeFileSync(path, `${JSON.stringify({ type: 'user', sessionId: 's', cwd: w.repo, version: '7.0.0', uuid: 'u', message: { role: 'user', content: 'hi' } })}\n`);
    const strict = await ingestSessions({ cwd: w.repo, env: w.env, file: path, strict: true });
    expect(strict.sources[0]).toMatchObject({ status: 'error', error: { code: 'UNSUPPORTED_VERSION' } });
    const permissive = await ingestSessions({ cwd: w.repo, env: w.env, file: path });
    expect(permissive.sources[0]).toMatchObject({ status: 'written', coverage: { grade: 'degraded', unknown_versions: ['7.0.0'] } });
    // A file that is neither agent's transcript is an error, and its cursor does not move.
    const notes = join(w.repo, '..', 'notes.jsonl');
    writeFileSync(notes, '{"title": "shopping list"}\n');
    for (let run = 0; run < 2; run++) {
      const report = await ingestSessions({ cwd: w.repo, env: w.env, file: notes });
      expect(report.sources[0]).toMatchObject({ harness: null, status: 'error', error: { code: 'INVALID_INPUT' } });
    }
  });
});

describe('record', () => {
  it('records a transcript file with its subagents; recording again is a no-op', async () => {
    const w = world();
    const first = await recordTranscript({ path: w.claudePath, cwd: w.repo, home: w.env.home });
    expect(first.tapes_written).toBe(2);
    expect(first.tapes.map((tape) => tape.source)).toEqual([w.claudePath, w.subagentPath]);
    const again = await recordTranscript({ path: w.claudePath, cwd: w.repo, home: w.env.home });
    expect(again).toMatchObject({ tapes_written: 0, tapes_existing: 2 });
    // Ingest, which has no cursor for these files, learns from the tapes' own line ranges that they are recorded.
    const ingested = await ingestSessions({ cwd: w.repo, env: w.env, agent: 'claude' });
    expect(ingested.sources.filter((source) => source.path !== w.codexPath).map(({ status, new_lines }) => ({ status, new_lines }))).toEqual([
      { status: 'unchanged', new_lines: 0 },
      { status: 'unchanged', new_lines: 0 },
    ]);
    expect(listTapes(ingested.tapes_dir)).toHaveLength(2);
  });
});

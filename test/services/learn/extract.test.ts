/**
 * Extraction of lessons from transcripts: the real transcripts in ../shared/fixtures/transcripts, a real store, and
 * a fake OpenAI-compatible server on 127.0.0.1 returning fixed JSON (fenced, bare arrays, prose, garbage). Checks
 * what is stored, merged and rejected, provenance, idempotency, resumed sessions, failures and the session-end job.
 */
import { appendFileSync, copyFileSync, readFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createLlmClient, createLogger, loadEmbedder, readTranscript, resolveEmbedder, type Store } from '../../../src/core/index.js';
import {
  addEngram,
  extractSession,
  inferPrerequisites,
  parseExtraction,
  queueSessionEndWork,
  recordSessionStart,
  runPendingJobs,
  wordOverlap,
  contentWords,
  type ExtractionReport,
  type ExtractionSource,
} from '../../../src/services/index.js';
import { completion, fakeOpenAi, llmSettings, type Reply, type SeenRequest } from '../../core/llm/_fakes.js';
import { hasModels, MODELS_DIR, SHARED, tempDir, tempStore } from '../../_helpers.js';

const FIXTURES = join(SHARED, 'fixtures', 'transcripts');

/** A fixture transcript as an extraction source: ids and folders from the file itself, as `engram extract --transcript` does. */
function source(name: string, path = join(FIXTURES, name)): ExtractionSource {
  const transcript = readTranscript(path);
  return {
    sessionId: transcript.sessionId ?? basename(name, '.jsonl'),
    transcriptPath: path,
    repo: transcript.cwd ? basename(transcript.cwd.replace(/\\/g, '/')) : null,
    cwd: transcript.cwd,
    envTags: ['python'],
    mcpServers: [],
  };
}

const lesson = (fields: Record<string, unknown>) => fields;
/** What the fake model answers, by the conversation it was sent. */
const ANSWERS: Array<[string, string | string[]]> = [
  [
    // Claude Code 2.1.197: fenced JSON inside prose, with a summary and an ungrounded "lesson" beside the real one.
    'tool: TaskCreate Have a subagent confirm the attempt count',
    'Here is what I found:\n```json\n' +
      JSON.stringify({
        engrams: [
          lesson({ text: 'In this project src/missing.py does not exist; list src before reading files there.', category: 'project/layout', tags: ['python', 'layout'], kind: 'struggle', scope: 'project', evidence: 'ls src/missing.py (failed)' }),
          lesson({ text: 'The user asked for a retry helper with 5 attempts in src/retry.py.', kind: 'convention', evidence: 'Add a small retry helper' }),
          lesson({ text: 'Always write unit tests before refactoring code.', kind: 'convention', evidence: 'tests are always important' }),
        ],
      }) +
      '\n```\nLet me know if you need more.',
  ],
  [
    // Codex 0.169.0, the same task: a bare array restating the same lesson (merged, not duplicated).
    'tool: exec_command wc -l src/retry.py',
    JSON.stringify([
      lesson({ text: 'In this project, src/missing.py does not exist: list src before reading any file there.', category: 'project/layout', tags: ['python'], kind: 'struggle', scope: 'project', evidence: 'exec_command ls src/missing.py (failed)' }),
    ]),
  ],
  [
    '<command-name>/init</command-name>',
    JSON.stringify({
      engrams: [
        lesson({ text: 'Writing CLAUDE.md into an empty Demo repository can fail; read the tool error before retrying the write.', category: 'tooling/claude-code', tags: ['claude-code'], kind: 'gotcha', scope: 'general', evidence: 'Write /path/to/Demo/CLAUDE.md (failed)' }),
      ],
    }),
  ],
  [
    '<command-name>/orchestrator</command-name>',
    JSON.stringify({
      engrams: [
        lesson({ text: 'Writing CLAUDE.md in the Demo repository can fail; read the tool error before retrying the write.', category: 'tooling/claude-code', tags: ['docs'], kind: 'gotcha', scope: 'general', evidence: 'Edit /path/to/Demo/CLAUDE.md (failed)' }),
      ],
    }),
  ],
  [
    // The ghq session: the first answer is garbage, the retry is good.
    'Make the colors green and yellow',
    [
      'Sorry, I cannot help with that.',
      JSON.stringify({
        engrams: [
          lesson({ text: "ghq's player colours are the --red and --blue CSS variables in src/app/globals.css, which the striped patterns reuse.", category: 'frontend/css', tags: ['css'], kind: 'convention', scope: 'project', evidence: 'Grep --red|--blue' }),
        ],
      }),
    ],
  ],
];

/** The fake model: answers by which fixture's conversation the prompt holds; unknown conversations get no lesson. */
function fakeModel(): (request: SeenRequest) => Reply {
  const asked = new Map<string, number>();
  return (request) => {
    const prompt = String(request.body?.messages?.at(-1)?.content ?? '');
    for (const [marker, answer] of ANSWERS) {
      if (!prompt.includes(marker)) continue;
      const times = asked.get(marker) ?? 0;
      asked.set(marker, times + 1);
      const answers = Array.isArray(answer) ? answer : [answer];
      return completion(answers[Math.min(times, answers.length - 1)] as string);
    }
    return completion('{"engrams": []}');
  };
}

async function fakeLlm(store: Store, reply: (request: SeenRequest, index: number) => Reply = fakeModel()) {
  const server = await fakeOpenAi(reply);
  return { server, llm: createLlmClient(llmSettings({ base_url: server.baseUrl, model: 'extractor', max_calls_per_session: 50 }), { store, retryBaseMs: 1 }) };
}

const ALL = [
  'claude-code-2.1.197__scripted-session.jsonl',
  'claude-code-2.1.197__scripted-session__subagent.jsonl',
  'codex-0.169.0__scripted-session.jsonl',
  'd-kimuson__1af7fc5e-8455-4414-9ccd-011d40f70b2a.jsonl',
  'd-kimuson__5c0375b4-57a5-4f26-b12d-d022ee4e51b7.jsonl',
  'git-ai-project__claude-code-with-thinking.jsonl',
  'git-ai-project__example-claude-code.jsonl',
  'jazzyalex__claude-small.jsonl',
  'jazzyalex__codex-small.jsonl',
  'lparlett__codex_file_updates.jsonl',
];

describe('extraction on the real transcripts', () => {
  it('stores grounded lessons once, merges restatements across sessions and agents, rejects the rest, with provenance', async () => {
    const store = tempStore();
    const { server, llm } = await fakeLlm(store);
    const reports: ExtractionReport[] = [];
    for (const name of ALL) reports.push(await extractSession(store, source(name), { llm, now: () => new Date('2026-11-23T10:00:00Z') }));
    const byName = Object.fromEntries(ALL.map((name, i) => [name, reports[i]]));

    // Too little conversation (one line, a trimmed fixture): no call, nothing read. The subagent file shares the
    // main session's id, whose conversation was already read (subagent messages are not the person's conversation).
    for (const name of [ALL[5], ALL[7], ALL[8], ALL[9]] as string[]) {
      expect(byName[name]).toMatchObject({ outcome: 'skipped', chunks: 0 });
    }
    expect(byName[ALL[1] as string]).toMatchObject({ outcome: 'done', chunks: 0 });
    expect(server.requests).toHaveLength(6); // five sessions, one retried after a garbage answer

    const claude = byName[ALL[0] as string];
    expect(claude).toMatchObject({ outcome: 'completed', chunks: 1, malformed_answers: 0 });
    // Learned lessons wait for a person (autopromote is off by default).
    expect(claude?.lessons).toEqual([expect.objectContaining({ action: 'created', engram_id: 1, project: 'proj', kind: 'struggle', status: 'pending' })]);
    expect(claude?.rejected).toEqual([
      { text: 'The user asked for a retry helper with 5 attempts in src/retry.py.', reason: 'a summary of the task, not a reusable lesson' },
      { text: 'Always write unit tests before refactoring code.', reason: 'the evidence is not in the conversation' },
    ]);
    expect(byName[ALL[2] as string]?.lessons).toEqual([
      expect.objectContaining({ action: 'merged', engram_id: 1, duplicate: expect.objectContaining({ id: 1, by: 'words' }) }),
    ]);
    expect(byName[ALL[4] as string]?.lessons).toEqual([expect.objectContaining({ action: 'merged', engram_id: 2 })]);
    expect(byName[ALL[6] as string]).toMatchObject({ outcome: 'completed', malformed_answers: 1, lessons: [expect.objectContaining({ action: 'created', engram_id: 3 })] });

    const engrams = store.engrams.list({ limit: 100 }).engrams.sort((a, b) => a.id - b.id);
    expect(engrams).toHaveLength(3);
    expect(engrams.map((engram) => [engram.status, engram.learned_by])).toEqual(Array(3).fill(['pending', 'harvest']));
    expect(engrams[0]).toMatchObject({
      text: 'In this project src/missing.py does not exist; list src before reading files there.',
      source: 'extracted',
      kind: 'struggle',
      category: 'project/layout',
      project: 'proj',
      scope: 'project',
      occurrence_count: 2,
      source_sessions: ['f62cb199-5524-4dac-8011-3b74b972172a', '01a200c5-e3f5-7893-a481-82c60fff87ef'],
      tags: ['layout', 'python'],
    });
    expect(engrams[0]?.content).toContain('Evidence: "ls src/missing.py (failed)"');
    expect(engrams[1]).toMatchObject({
      category: 'tooling/claude-code',
      project: null,
      scope: 'personal',
      occurrence_count: 2,
      source_sessions: ['1af7fc5e-8455-4414-9ccd-011d40f70b2a', '5c0375b4-57a5-4f26-b12d-d022ee4e51b7'],
      tags: ['claude-code', 'docs'],
    });
    expect(engrams[2]).toMatchObject({ project: 'ghq', category: 'frontend/css', source_sessions: ['cb947e5b-246e-4253-a953-631f7e464c6b'] });
    // Each lesson is recorded in the session it was first learned from (recall's context step reads session_id); a
    // session that taught it again adds to source_sessions, not a new place in that session's record.
    expect(engrams.map((engram) => engram.session_id)).toEqual([
      'f62cb199-5524-4dac-8011-3b74b972172a',
      '1af7fc5e-8455-4414-9ccd-011d40f70b2a',
      'cb947e5b-246e-4253-a953-631f7e464c6b',
    ]);
    expect(store.engrams.sessionNeighbours(1, 2)).toEqual({ session: 'f62cb199-5524-4dac-8011-3b74b972172a', neighbours: [] });

    // The prompt carried the cleaned conversation, never our own injected blocks.
    const first = server.requests[0]?.body.messages;
    expect(first[0].content).toContain('Extract only from friction');
    expect(first[1].content).toContain('Repository: proj · environment: python');
    expect(first[1].content).toContain('user: Add a small retry helper in src/retry.py');

    // A second run reads nothing again: no call, nothing changes.
    const again: ExtractionReport[] = [];
    for (const name of ALL) again.push(await extractSession(store, source(name), { llm }));
    expect(again.filter((report) => report.outcome === 'done')).toHaveLength(6);
    expect(server.requests).toHaveLength(6);
    expect(store.engrams.get(1)?.occurrence_count).toBe(2);
    expect(store.extractions.counts()).toEqual({ running: 0, completed: 5, failed: 0, skipped: 4 });
  });

  it('a dry run reports what would be created and merged and writes nothing', async () => {
    const store = tempStore();
    const { llm } = await fakeLlm(store);
    const claude = await extractSession(store, source(ALL[0] as string), { llm, dryRun: true });
    const codex = await extractSession(store, source(ALL[2] as string), { llm, dryRun: true });
    expect(claude.lessons).toEqual([expect.objectContaining({ action: 'would-create', engram_id: null })]);
    // Within one dry run nothing is stored, so the Codex restatement is new against the store too.
    expect(codex.lessons).toEqual([expect.objectContaining({ action: 'would-create' })]);
    expect(store.engrams.list({}).total).toBe(0);
    expect(store.extractions.get('f62cb199-5524-4dac-8011-3b74b972172a')).toBeUndefined();
  });

  it('merges into an engram added by hand, once per session, and never across projects', async () => {
    const store = tempStore();
    const mine = addEngram(store, { text: 'In this project src/missing.py does not exist; list src before reading files there.', project: 'proj' }).engram;
    const other = addEngram(store, { text: 'Writing CLAUDE.md into an empty Demo repository can fail; read the tool error before retrying the write.', project: 'elsewhere' }).engram;
    const { llm } = await fakeLlm(store);
    await extractSession(store, source(ALL[0] as string), { llm });
    await extractSession(store, source(ALL[3] as string), { llm });
    expect(store.engrams.get(mine.id)).toMatchObject({ occurrence_count: 2, source_sessions: ['f62cb199-5524-4dac-8011-3b74b972172a'], source: 'manual' });
    // The Demo lesson is general; the hand-written one belongs to another project: a new engram, not a merge.
    expect(store.engrams.get(other.id)?.occurrence_count).toBe(1);
    expect(store.engrams.list({}).total).toBe(3);
  });
});

describe('extraction robustness', () => {
  it('passes over a chunk whose answers hold no JSON after one retry, and keeps going', async () => {
    const store = tempStore();
    const { server, llm } = await fakeLlm(store, () => completion('I could not find anything {not json'));
    const report = await extractSession(store, source(ALL[0] as string), { llm });
    expect(report).toMatchObject({ outcome: 'completed', malformed_answers: 2, chunks: 1, lessons: [] });
    expect(server.requests).toHaveLength(2);
    expect(store.extractions.get(report.session_id)).toMatchObject({ status: 'completed', lines_done: report.lines.total });
  });

  it('a failing model loses nothing: the run fails, is retried, and gives up after three attempts', async () => {
    const store = tempStore();
    const { llm } = await fakeLlm(store, () => ({ status: 400, body: { error: { message: 'model not loaded' } } }));
    const src = source(ALL[0] as string);
    for (let i = 0; i < 3; i++) expect((await extractSession(store, src, { llm })).outcome).toBe('failed');
    expect(store.extractions.get(src.sessionId)).toMatchObject({ status: 'failed', attempts: 3, lines_done: 0 });
    expect((await extractSession(store, src, { llm })).outcome).toBe('gave-up');
  });

  it('without an LLM nothing is extracted, and says so', async () => {
    const store = tempStore();
    const report = await extractSession(store, source(ALL[0] as string), { llm: null });
    expect(report).toMatchObject({ outcome: 'skipped', error: 'no LLM configured: nothing was extracted' });
    expect(store.engrams.list({}).total).toBe(0);
  });

  it('a resumed session is read again only from where the last run stopped', async () => {
    const store = tempStore();
    const path = join(tempDir(), 'session.jsonl');
    copyFileSync(join(FIXTURES, ALL[0] as string), path);
    const { server, llm } = await fakeLlm(store, () => completion('{"engrams": []}'));
    const first = await extractSession(store, source(ALL[0] as string, path), { llm });
    expect(first.lines).toEqual({ from: 0, to: 17, total: 17 });
    const sessionId = first.session_id;
    const more = (uuid: string, role: 'user' | 'assistant', text: string) =>
      JSON.stringify({ type: role, uuid, sessionId, timestamp: '2026-11-23T11:00:00.000Z', message: role === 'user' ? { role, content: text } : { id: uuid, role, content: [{ type: 'text', text }] } });
    appendFileSync(
      path,
      [
        more('r1', 'user', 'No: never put helpers in src/, this project keeps them in lib/helpers/ next to their tests, and every helper gets a docstring that says which caller needs it.'),
        more('r2', 'assistant', 'Understood, moving the retry helper to lib/helpers/retry.py and its test to lib/helpers/test_retry.py, beside it, as this project expects; adding the docstring too.'),
        more('r3', 'user', 'Good. And run the tests with pytest -q from the repository root, not from inside lib, or the conftest fixtures are not found and everything fails with a confusing import error.'),
      ].join('\n') + '\n',
    );
    const second = await extractSession(store, source(ALL[0] as string, path), { llm });
    expect(second.lines).toEqual({ from: 17, to: 20, total: 20 });
    const sent = String(server.requests.at(-1)?.body.messages[1].content);
    expect(sent).toContain('never put helpers in src/');
    expect(sent).not.toContain('Add a small retry helper'); // the old part is not sent again (two lines of overlap only)
  });

  it('reads answers in every shape models give, and rejects bad items one by one', () => {
    const chunk = 'user: no, use pnpm here, npm breaks the lockfile\nassistant: switching to pnpm install';
    const item = { text: 'This repository uses pnpm; npm install breaks its lockfile.', evidence: 'npm breaks the lockfile', tags: ['pnpm', 'Node JS', 'x', 'y'], kind: 'Correction', category: 'Tooling/Package Managers' };
    for (const answer of [JSON.stringify({ engrams: [item] }), JSON.stringify([item]), JSON.stringify({ lessons: [item] }), `Sure!\n${JSON.stringify(item)}\nDone.`]) {
      const parsed = parseExtraction(answer, chunk);
      expect(parsed).toMatchObject({ malformed: false, rejected: [] });
      expect(parsed.lessons).toEqual([
        { text: item.text, evidence: item.evidence, tags: ['node-js', 'pnpm', 'x'], kind: 'correction', category: 'tooling/package-managers', scope: 'general' },
      ]);
    }
    expect(parseExtraction('no idea', chunk)).toEqual({ lessons: [], rejected: [], malformed: true });
    expect(parseExtraction('{"engrams": []}', chunk)).toEqual({ lessons: [], rejected: [], malformed: false });
    const bad = parseExtraction(
      JSON.stringify({ engrams: [{ note: 'x' }, { text: 'short', evidence: 'npm breaks' }, { text: 'x'.repeat(700), evidence: 'npm breaks' }, { text: 'Use pnpm, never npm, in this repository.' }, { text: 'I implemented the pnpm switch for the user today.', evidence: 'switching to pnpm' }, { ...item, category: '///', kind: 'weird' }] }),
      chunk,
    );
    expect(bad.rejected.map((r) => r.reason)).toEqual([
      'not a lesson object (needs at least "text")',
      'shorter than 20 characters',
      'longer than 600 characters: a summary, not a lesson',
      'no evidence quoted from the conversation',
      'a summary of the task, not a reusable lesson',
    ]);
    expect(bad.lessons).toEqual([expect.objectContaining({ kind: 'gotcha', category: 'tooling' })]);
  });

  it('infers only the prerequisites a lesson states: one named OS, MCP servers it mentions', () => {
    expect(inferPrerequisites('On macOS, install it with brew install gnu-sed first.', ['github'])).toEqual({ os: ['darwin'] });
    expect(inferPrerequisites('Use systemctl --user to restart the agent.', [])).toEqual({ os: ['linux'] });
    expect(inferPrerequisites('Works on Windows and macOS alike.', [])).toBeNull();
    expect(inferPrerequisites('Ask the Linear MCP server for the ticket before branching.', ['linear', 'github'])).toEqual({ mcp_servers: ['linear'] });
    expect(inferPrerequisites('Plain advice.', ['gh'])).toBeNull();
  });

  it('word overlap ignores stop words and never merges tiny texts', () => {
    const a = contentWords('Run the database migrations with --dry-run before applying them');
    const b = contentWords('Before applying them, run database migrations with --dry-run');
    expect(wordOverlap(a, b)).toBe(1);
    expect(wordOverlap(contentWords('use pnpm'), contentWords('use pnpm'))).toBe(0);
  });
});

describe.skipIf(!hasModels('static-use-256'))('extraction with a real embedding model', () => {
  it('stores the vector of a new lesson and merges a restatement by meaning', async () => {
    const store = tempStore();
    const settings = llmSettings({}, { ENGRAM_MODEL_DIR: MODELS_DIR, ENGRAM_MODEL: 'static-use-256' });
    const spec = resolveEmbedder(settings).spec;
    if (!spec) throw new Error('model not resolved');
    const embedder = await loadEmbedder(spec);
    const { llm } = await fakeLlm(store);
    await extractSession(store, source(ALL[3] as string), { llm, embedder });
    const space = store.vectors().findSpace(embedder.model, embedder.dim);
    expect(space && store.vectors().countCurrent(space)).toBe(1);
    const second = await extractSession(store, source(ALL[4] as string), { llm, embedder });
    expect(second.lessons[0]).toMatchObject({ action: 'merged', engram_id: 1, duplicate: { id: 1, by: 'embedding' } });
    expect((second.lessons[0]?.duplicate?.similarity ?? 0) >= 0.85).toBe(true);
  }, 60_000);
});

describe('the session-end job extracts after evaluating', () => {
  it('runs extraction once per session, however often the job runs', async () => {
    const store = tempStore();
    const { server, llm } = await fakeLlm(store);
    const path = join(tempDir(), 'proj.jsonl');
    copyFileSync(join(FIXTURES, ALL[0] as string), path);
    const sessionId = JSON.parse(readFileSync(path, 'utf8').split('\n')[0] as string).sessionId ?? 'f62cb199-5524-4dac-8011-3b74b972172a';
    recordSessionStart(store, { sessionId, agent: 'claude', cwd: '/home/user/proj', transcriptPath: path }, 'startup', { now: () => new Date() });
    const log = createLogger({ dir: tempDir(), name: 'jobs' });
    for (let i = 0; i < 2; i++) {
      queueSessionEndWork(store, { sessionId, agent: 'claude', cwd: '/home/user/proj', transcriptPath: path }, { now: () => new Date() });
      expect(await runPendingJobs({ store, log, now: () => new Date(), llm })).toEqual({ ran: 1, failed: 0 });
    }
    expect(server.requests).toHaveLength(1);
    expect(store.engrams.list({}).engrams).toEqual([expect.objectContaining({ source: 'extracted', source_sessions: [sessionId] })]);
  });
});

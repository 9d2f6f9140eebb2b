/**
 * The acceptance check on every real transcript in ../shared/fixtures/transcripts: ingest (permissive)
 * succeeds, re-ingesting gives the same tape, and for code an Edit / Write / apply_patch of that session wrote,
 * `explain` on a file holding that code returns the session's tape first, among the tapes of every fixture; a span of
 * unrelated code returns nothing.
 */
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { explainInFolder, initRepo, readTape, recordTranscript, type CodeEditEvent } from '../../../src/services/index.js';
import { SHARED } from '../../_helpers.js';

const FIXTURES = join(SHARED, 'fixtures', 'transcripts');
const NAMES = readdirSync(FIXTURES)
  .filter((name) => name.endsWith('.jsonl') && !name.includes('__subagent'))
  .sort();

/** Sessions that wrote no code: read-only, trimmed, or whose only Write was refused (so nothing changed on disk). */
const WITHOUT_EDITS = [
  'd-kimuson__1af7fc5e-8455-4414-9ccd-011d40f70b2a.jsonl',
  'jazzyalex__claude-small.jsonl',
  'jazzyalex__codex-small.jsonl',
  'lparlett__codex_file_updates.jsonl',
];

/** An edit worth checking: a line of code or more (the one-line `console.log` insert of a fixture is 27 characters); the longest new text of a session's edits is used. */
const MIN_EDIT_CHARS = 15;

describe('explain on the real transcripts', () => {
  let root = '';
  let home = '';
  const tapeOf = new Map<string, { tape_id: string; edit: CodeEditEvent | null }>();

  // Not tempDir(): that is removed after each test, and these serve all of them.
  const work = mkdtempSync(join(tmpdir(), 'engram-fixtures-explain-'));
  afterAll(() => rmSync(work, { recursive: true, force: true }));

  beforeAll(async () => {
    root = join(work, 'repo');
    home = join(work, 'home');
    mkdirSync(root, { recursive: true });
    initRepo({ cwd: root });
    for (const name of NAMES) {
      const first = await recordTranscript({ path: join(FIXTURES, name), cwd: root, home });
      const again = await recordTranscript({ path: join(FIXTURES, name), cwd: root, home });
      expect(again.tapes.map((tape) => tape.tape_id)).toEqual(first.tapes.map((tape) => tape.tape_id));
      expect(again.tapes_written).toBe(0);
      const main = first.tapes[0];
      if (!main) throw new Error(`${name}: no tape`);
      const edits = readTape(main.path).events.filter(
        (event): event is CodeEditEvent => event.k === 'code.edit' && (event.after_text ?? '').trim().length >= MIN_EDIT_CHARS,
      );
      const longest = edits.sort((a, b) => (b.after_text?.length ?? 0) - (a.after_text?.length ?? 0))[0] ?? null;
      tapeOf.set(name, { tape_id: main.tape_id, edit: longest });
    }
  }, 60_000);

  it('every fixture is recorded; exactly the sessions that wrote code have edits', () => {
    expect(tapeOf.size).toBe(NAMES.length);
    const withoutEdits = [...tapeOf.entries()].filter(([, value]) => value.edit === null).map(([name]) => name);
    expect(withoutEdits.sort()).toEqual([...WITHOUT_EDITS].sort());
  });

  for (const name of NAMES.filter((fixture) => !WITHOUT_EDITS.includes(fixture))) {
    it(`${name}: explain on code the session wrote returns its tape first`, () => {
      const { tape_id, edit } = tapeOf.get(name) as { tape_id: string; edit: CodeEditEvent | null };
      if (!edit) throw new Error(`${name}: no edit found`);
      const text = (edit.after_text as string).replace(/\n$/, '');
      const file = join(root, 'check', name.replace(/\W+/g, '_'), edit.file.split(/[\\/]/).at(-1) ?? 'file.txt');
      mkdirSync(dirname(file), { recursive: true });
      // The code sits in a file with other lines around it, as it would in a working tree.
      writeFileSync(file, `// a header line\n${text}\n// a footer line\n`);
      const lines = text.split('\n').length;
      const response = explainInFolder({ cwd: root, home }, { file, start: 2, end: 1 + lines }, { brief: true });
      expect(response.results.length, JSON.stringify({ refresh: response.index.refresh, total: response.total, file, lines })).toBeGreaterThan(0);
      const rank = response.results.findIndex((result) => result.tape_id === tape_id);
      expect(rank, `${name}: its tape is not among the results`).toBeGreaterThanOrEqual(0);
      // The scripted Claude Code and Codex sessions wrote the same helper: a tape ranked above this one must have
      // written the very same code too (then touch count and recency order them); otherwise this tape is first.
      for (const above of response.results.slice(0, rank)) {
        const wrote = readTape(above.path).events.some((event) => event.k === 'code.edit' && (event.after_text ?? '').includes(text));
        expect(wrote, `${name}: ${above.tape_id.slice(0, 8)} ranks above it without having written this code`).toBe(true);
      }
    });
  }

  it('a span of unrelated code returns nothing', () => {
    const file = join(root, 'check', 'unrelated.rs');
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(
      file,
      [
        'fn fibonacci_memo(n: u64, memo: &mut HashMap<u64, u64>) -> u64 {',
        '    if let Some(&value) = memo.get(&n) { return value; }',
        '    let value = if n < 2 { n } else { fibonacci_memo(n - 1, memo) + fibonacci_memo(n - 2, memo) };',
        '    memo.insert(n, value);',
        '    value',
        '}',
      ].join('\n'),
    );
    expect(explainInFolder({ cwd: root, home }, { file, start: 1, end: 6 }, { brief: true }).results).toEqual([]);
  });
});

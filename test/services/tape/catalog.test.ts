/**
 * The tape catalog the viewer browses: real tapes recorded from the real transcripts in ../shared/fixtures, in an
 * opted-in repository and in the home; paged newest file first, filtered by session, found by id prefix, and read a
 * page of events at a time or around one event, with long texts cut.
 */
import { utimesSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { findTape, initRepo, listTapePage, readTape, recordTranscript, tapeLocation, tapeTimeline, TIMELINE_FIELD_CHARS, writeTape } from '../../../src/services/index.js';
import { SHARED, tempDir, thrown } from '../../_helpers.js';

const FIXTURES = join(SHARED, 'fixtures', 'transcripts');

async function recorded() {
  const home = tempDir();
  const repo = tempDir();
  const plain = tempDir();
  initRepo({ cwd: repo });
  const claude = await recordTranscript({ path: join(FIXTURES, 'claude-code-2.1.197__scripted-session.jsonl'), cwd: repo, home });
  const codex = await recordTranscript({ path: join(FIXTURES, 'codex-0.169.0__scripted-session.jsonl'), cwd: plain, home });
  const dirs = [tapeLocation(repo, home).tapes_dir, tapeLocation(plain, home).tapes_dir];
  return { home, repo, plain, claude, codex, dirs };
}

describe('tape catalog', () => {
  it('lists the tapes of several folders newest file first, pages them, and filters by session', async () => {
    const { claude, codex, dirs } = await recorded();
    expect(dirs[0]).toContain(join('.engram', 'tapes'));
    const codexTape = codex.tapes[0]?.tape_id as string;
    // The codex tape is the newest file.
    for (const tape of claude.tapes) utimesSync(tape.path, new Date('2026-01-01T00:00:00Z'), new Date('2026-01-01T00:00:00Z'));
    const all = listTapePage(dirs);
    expect(all.total).toBe(claude.tapes.length + codex.tapes.length);
    expect(all.tapes[0]).toMatchObject({ tape_id: codexTape, harness: 'codex', dir: dirs[1] });
    expect(all.tapes.every((tape) => tape.session_id && tape.time)).toBe(true);
    const second = listTapePage(dirs, { limit: 1, offset: 1 });
    expect(second.tapes.map((tape) => tape.tape_id)).toEqual([all.tapes[1]?.tape_id]);
    const session = all.tapes.find((tape) => tape.harness === 'claude')?.session_id as string;
    expect(listTapePage(dirs, { session }).tapes.every((tape) => tape.harness === 'claude')).toBe(true);
    expect(listTapePage(dirs, { session: 'no-such-session' }).total).toBe(0);
    expect(listTapePage([join(tempDir(), 'missing')]).total).toBe(0);
    expect(thrown(() => listTapePage(dirs, { limit: 0 }))?.code).toBe('INVALID_INPUT');
    expect(findTape(dirs, codexTape.slice(0, 10)).tape_id).toBe(codexTape);
    expect(thrown(() => findTape(dirs, 'zz'))?.code).toBe('INVALID_INPUT');
    expect(thrown(() => findTape(dirs, '0'.repeat(12)))?.code).toBe('NOT_FOUND');
  });

  it('reads a tape a page at a time, or the page around an event, each edit with its ranges', async () => {
    const { claude, dirs } = await recorded();
    const main = findTape(dirs, claude.tapes[0]?.tape_id as string);
    const first = tapeTimeline(main, { limit: 10 });
    expect(first).toMatchObject({ offset: 0, limit: 10 });
    expect(first.events.map((event) => event.offset)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    expect(first.events[0]?.k).toBe('meta');
    expect(first.kinds['code.edit']).toBeGreaterThan(0);
    const whole = tapeTimeline(main, { limit: 1000 });
    expect(whole.events).toHaveLength(whole.total);
    const edit = whole.events.find((event) => event.k === 'code.edit' && event.op === 'edit');
    expect(edit).toMatchObject({ file: expect.stringContaining('retry.py'), range: expect.any(Array), before_text: expect.any(String), after_text: expect.any(String) });
    const around = tapeTimeline(main, { limit: 10, around: edit?.offset as number });
    expect(around.offset).toBe(Math.floor((edit?.offset as number) / 10) * 10);
    expect(around.events.some((event) => event.offset === edit?.offset)).toBe(true);
    expect(thrown(() => tapeTimeline(main, { around: whole.total }))?.code).toBe('INVALID_INPUT');
    expect(whole.events.every((event) => (event.text ?? '').length <= TIMELINE_FIELD_CHARS)).toBe(true);
  });
  it('cuts a long field to the timeline limit, never through a surrogate pair', async () => {
    const { claude, dirs } = await recorded();
    const tape = readTape(claude.tapes[0]?.path as string);
    // An emoji straddles the cut: its first half is the last character kept.
    const long = `${'x'.repeat(TIMELINE_FIELD_CHARS - 2)}😀${'y'.repeat(2_000)}`;
    const last = tape.events.at(-1)!;
    const written = await writeTape(tempDir(), [...tape.events, { k: 'msg.in', t: last.t, source: last.source, text: long }]);
    const whole = tapeTimeline(findTape([...dirs, dirname(written.path)], written.tape_id), { limit: 1000 });
    const event = whole.events.at(-1);
    expect(event).toMatchObject({ k: 'msg.in', truncated: true });
    expect(event?.text?.length).toBeLessThanOrEqual(TIMELINE_FIELD_CHARS);
    expect(event?.text).toBe(`${'x'.repeat(TIMELINE_FIELD_CHARS - 2)}…`);
    expect(event?.text).not.toMatch(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])/);
    expect(whole.events.slice(0, -1).every((other) => !other.truncated)).toBe(true);
  });
});

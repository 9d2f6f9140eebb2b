import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { indexTape, openEvidenceIndex, rebuildIndex, type EvidenceIndex } from '../../../src/services/tape/evidence-index.js';
import { stripBoilerplate } from '../../../src/services/tape/continuation.js';
import { explainSpan } from '../../../src/services/tape/explain.js';
import type { LoadedTape } from '../../../src/services/tape/events.js';
import { tempDir } from '../../_helpers.js';
import { ask, code, compaction, create, freshIndex, say, tape } from './_tapes.js';

const REASONING =
  'The retry loop must back off exponentially because the payment gateway throttles bursts after the third attempt; ' +
  'I capped the delay at thirty seconds and kept the idempotency key stable across retries so duplicate charges cannot happen.';
const AGENTS_MD =
  '# AGENTS.md instructions for /repo\n\n<INSTRUCTIONS>\nAlways run the linter before committing. Prefer small modules with ' +
  'one exported noun each, write tests beside every change, never print secrets, and keep the changelog updated for users.\n</INSTRUCTIONS>';
const REMINDER =
  '<system-reminder>\nAs you answer the user, use the following context: the repository uses strict TypeScript, vitest ' +
  'for tests and commander for the command line; dependencies are pinned and reviewed.\n</system-reminder>';
const ENVIRONMENT = '<environment_context>\n  <cwd>/repo</cwd>\n  <shell>bash</shell>\n  <approval_policy>on-request</approval_policy>\n</environment_context>';

function edges(index: EvidenceIndex) {
  return index.db
    .prepare('select f.tape_id as from_tape, t.tape_id as to_tape, c.signal, c.confidence from continuations c join tapes f on f.id = c.from_tape join tapes t on t.id = c.to_tape order by 1, 2')
    .all() as Array<{ from_tape: string; to_tape: string; signal: string; confidence: number }>;
}

describe('continuation detection', () => {
  it('links a tape that resumes after a compaction and explain crosses the boundary, labelled', () => {
    const index = freshIndex();
    indexTape(index, tape('early', 1, [ask('make the payment retries safe'), say('Looking at the gateway client first.'), say(REASONING)]));
    indexTape(index, tape('later', 2, [
      compaction('We were making payment retries safe.'),
      ask(`This session continues an earlier conversation. Last message: ${REASONING}`),
      create('src/retry.ts', code('retry', 10)),
    ]));
    const [edge] = edges(index);
    expect(edge).toMatchObject({ from_tape: 'early', to_tape: 'later', signal: 'compaction' });
    expect(edge!.confidence).toBeGreaterThanOrEqual(0.5);
    // The marker is what raised it: the same resumption without a compaction marker scores lower.
    const unmarked = freshIndex();
    indexTape(unmarked, tape('early', 1, [ask('make the payment retries safe'), say('Looking at the gateway client first.'), say(REASONING)]));
    indexTape(unmarked, tape('later', 2, [ask(`This session continues an earlier conversation. Last message: ${REASONING}`), create('src/retry.ts', code('retry', 10))]));
    const [plain] = edges(unmarked);
    expect(plain).toMatchObject({ from_tape: 'early', to_tape: 'later', signal: 'overlap' });
    expect(edge!.confidence).toBeGreaterThan(plain!.confidence);

    const response = explainSpan(index, { file: 'src/retry.ts', start: 1, end: 10, text: code('retry', 10) }, { before: 2, after: 1 });
    expect(response.results.map((r) => [r.tape_id, r.via])).toEqual([
      ['later', 'direct'],
      ['early', 'continuation'],
    ]);
    const early = response.results[1]!;
    expect(early.continuation).toMatchObject({ continues_into: 'later', signal: 'compaction' });
    expect(early.windows).toEqual([{ anchors: [3], from: 1, to: 3 }]);
  });

  it('follows a declared previous tape with confidence 1', () => {
    const index = freshIndex();
    indexTape(index, tape('one', 1, [say('first part')]));
    const second = tape('two', 2, [say('second part')]);
    second.events[0] = { ...second.events[0]!, k: 'meta', label: 'session', previous_tape: 'one' } as LoadedTape['events'][number];
    indexTape(index, second);
    expect(edges(index)).toEqual([{ from_tape: 'one', to_tape: 'two', signal: 'previous_tape', confidence: 1 }]);
  });

  it('does not link two unrelated tapes that share only AGENTS.md, system reminders and environment context', () => {
    const index = freshIndex();
    indexTape(index, tape('parser', 1, [ask(AGENTS_MD), ask(`${ENVIRONMENT}\n${REMINDER}\nfix the parser`), say('The tokenizer drops trailing commas; fixed.')], 'codex'));
    indexTape(index, tape('cache', 2, [ask(AGENTS_MD), ask(`${ENVIRONMENT}\n${REMINDER}\nadd a cache`), say('Added an LRU in front of the lookup.')], 'codex'));
    expect(edges(index)).toEqual([]);
    // The control: the same shared text without its markers does link them.
    const control = freshIndex();
    const bare = stripMarkers(AGENTS_MD + REMINDER);
    indexTape(control, tape('parser', 1, [ask(bare), say('The tokenizer drops trailing commas; fixed.')]));
    indexTape(control, tape('cache', 2, [ask(bare), say('Added an LRU in front of the lookup.')]));
    expect(edges(control)).toHaveLength(1);
  });

  it('treats text found in most of a project’s tapes as boilerplate', () => {
    // Long enough to share well over minShared fingerprints, so only the boilerplate rule keeps the tapes apart.
    const preamble =
      'You are a careful coding agent working in a TypeScript monorepo with strict lint rules, small modules and tests for everything you change. ' +
      'Prefer pure functions, name things after what they hold, keep comments short and about why, and never print secrets or tokens in logs. ' +
      'Run the whole test suite before you say a task is done, and report exactly which commands you ran and what they printed.';
    const tapes = Array.from({ length: 6 }, (_, i) => tape(`t${i}`, i + 1, [ask(preamble), say(`Task ${i}: ${code(`task${i}`, 2)}`)]));
    const path = join(tempDir(), 'index.sqlite');
    expect(rebuildIndex(path, tapes).continuations).toBe(0);
    const index = openEvidenceIndex(path);
    expect(edges(index)).toEqual([]);
    index.close();
    // The control: below the tape count where the rule starts, the same shared preamble does link tapes.
    const few = join(tempDir(), 'few.sqlite');
    expect(rebuildIndex(few, tapes.slice(0, 2)).continuations).toBe(1);
  });

  it('removes scaffolding blocks from text', () => {
    expect(stripBoilerplate(`${REMINDER} keep [ENGRAM] memo [/ENGRAM] this`).trim()).toBe('keep   this');
    expect(stripBoilerplate(AGENTS_MD).trim()).toBe('');
  });
});

function stripMarkers(text: string): string {
  return text.replace(/<\/?[a-z_ -]+>|# AGENTS\.md instructions for \S+/gi, ' ');
}

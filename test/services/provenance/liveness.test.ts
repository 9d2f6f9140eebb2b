/**
 * Provenance and liveness with real tapes and the real tape index in an opted-in repository: an engram learned in a
 * session that wrote `computeTotals` carries that moment and span; when a later session deletes the function (its
 * tape records the deletion as a tombstone), the liveness check flags the engram code-gone and the hooks stop
 * injecting it, while an explicit search still finds it; a person keeps it (approve) or retires it (reject). An engram
 * that does not name the code it was learned beside is never tied to it (liveness is not validity).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openStore, type Store } from '../../../src/core/index.js';
import { runInProcess } from '../../../src/hooks/inprocess.js';
import { addEngram, checkLiveness, createSearchEngine, listAudit, momentSource, reviewQueue, searchTuning, whyEngram } from '../../../src/services/index.js';
import { approveEngrams, undoOperation } from '../../../src/services/gate/index.js';
import { writeTape } from '../../../src/services/tape/store.js';
import type { LoadedTape } from '../../../src/services/tape/index.js';
import { ask, code, create, edit, remove, say, tape } from '../tape/_tapes.js';
import { tempDir } from '../../_helpers.js';

const TOTALS = ['export function computeTotals(lines: Line[]): number {', code('totals', 10), '}'].join('\n');
const QUOTE = 'computeTotals must round each line before summing, never the total';
const LESSON = 'computeTotals in src/cart.ts rounds each line before summing; never round the total again.';
const CONVENTION = 'Cart helpers are written by hand in src/, without adding packages.';

async function repository() {
  const root = join(tempDir('engram-repo-'), 'shop'); // the project is the repository's name
  const home = tempDir('engram-home-');
  mkdirSync(join(root, '.git'), { recursive: true });
  mkdirSync(join(root, '.engram', 'tapes'), { recursive: true });
  const tapes = join(root, '.engram', 'tapes');
  const learned = tape('learn', 1, [ask(`Add the cart totals. ${QUOTE}. Cart helpers are written by hand in src/, without adding packages.`), create('src/cart.ts', TOTALS), say('Done.')]);
  const written = await writeTape(tapes, learned.events);
  const store = openStore({ path: join(home, 'engram.db') });
  return { root, home, tapes, store, learned: { ...learned, tape_id: written.tape_id } as LoadedTape };
}

async function prompt(home: string, root: string, session: string, text: string): Promise<string> {
  const stdout = await runInProcess(
    { event: 'UserPromptSubmit', stdin: JSON.stringify({ session_id: session, transcript_path: join(home, `${session}.jsonl`), cwd: root, hook_event_name: 'UserPromptSubmit', prompt: text }), agentFlag: 'claude', envHints: { codex: false, claude: true } },
    { reason: 'server-off', installRoot: tempDir(), env: { HOME: home, ENGRAM_HOME: home, ENGRAM_SERVER: 'off' } },
  );
  return stdout ? (JSON.parse(stdout).hookSpecificOutput.additionalContext as string) : '';
}

function learn(store: Store, learned: LoadedTape, root: string) {
  const harvest = { by: 'harvest', via: 'job' } as const;
  const source = momentSource([learned], QUOTE, LESSON, { sessionId: 'session-learn', cwd: root });
  const other = momentSource([learned], 'Cart helpers are written by hand in src/', CONVENTION, { sessionId: 'session-learn', cwd: root });
  const lesson = addEngram(store, { text: LESSON, project: 'shop', kind: 'correction' }, { actor: harvest, ...(source ? { sources: [source] } : {}) }).engram;
  const convention = addEngram(store, { text: CONVENTION, project: 'shop', kind: 'convention' }, { actor: harvest, ...(other ? { sources: [other] } : {}) }).engram;
  approveEngrams(store, [lesson.id, convention.id]);
  return { lesson, convention, source, other };
}

describe('provenance of a learned engram', () => {
  it('links it to the tape, the moment, the files touched then, and the code it names', async () => {
    const { root, home, store, learned } = await repository();
    const { lesson, source, other } = learn(store, learned, root);
    expect(source).toMatchObject({ tape_id: learned.tape_id, event_from: 1, event_to: 3, files: [{ file: 'src/cart.ts', kind: 'edit', start: 1, end: 12 }] });
    expect(source?.spans).toEqual([{ file: 'src/cart.ts', start: 1, end: 12, tape_id: learned.tape_id, offset: 2 }]);
    expect(other?.files).toHaveLength(1);
    expect(other?.spans).toEqual([]); // learned beside the code, not about it
    const why = whyEngram(store, lesson.id, { home });
    expect(why.summary).toMatch(/^extracted from session session-learn \(tape [0-9a-f]{16}\) on .*; now active$/);
    expect(why.sources[0]?.tape_found).toBe(true);
    expect(why.sources[0]?.moment.map((event) => event.text)).toEqual([`person: Add the cart totals. ${QUOTE}. Cart helpers are written by hand in src/, without adding packages.`, 'create src/cart.ts:1-12', 'agent: Done.']);
    expect(why.history.map((step) => [step.op, step.actor])).toEqual([
      ['add', 'harvest'],
      ['approve', 'user'],
    ]);
    store.close();
  });
});

describe('liveness', () => {
  it('a dead-code engram leaves injection once a tape records the deletion; a person keeps or retires it', async () => {
    const { root, home, tapes, store, learned } = await repository();
    const { lesson, convention } = learn(store, learned, root);
    expect(await prompt(home, root, 'before', 'how does computeTotals round the cart lines?')).toContain(`EG#${lesson.id}`);
    // An edit inside the function keeps its code alive.
    const head = code('totals', 10).split('\n').slice(0, 2).join('\n');
    await writeTape(tapes, tape('tweak', 2, [ask('rename a variable'), edit('src/cart.ts', head, head.replace('totals_0 =', 'totals_zero ='), 2)]).events);
    expect(checkLiveness(store, { home, cwd: root })).toMatchObject({ checked: 1, gone: [], undo_token: expect.stringMatching(/^u-/) });
    expect(store.engrams.get(lesson.id)?.liveness).toBe('alive');

    // A later session deletes the whole function (as it reads now).
    const deleted = await writeTape(tapes, tape('delete', 3, [ask('remove the old cart totals'), remove('src/cart.ts', TOTALS.replace('totals_0 =', 'totals_zero ='))]).events);
    const report = checkLiveness(store, { home, cwd: root });
    expect(report.gone).toEqual([{ id: lesson.id, deaths: [expect.objectContaining({ tape_id: deleted.tape_id, file: 'src/cart.ts', how: 'deleted' })] }]);
    expect(store.engrams.get(lesson.id)).toMatchObject({ status: 'active', liveness: 'gone' });
    expect(store.engrams.get(convention.id)?.liveness).toBe('unknown'); // validity is not liveness
    expect(listAudit(store, { ops: ['liveness'], limit: 1 })[0]).toMatchObject({ actor: 'system', detail: { gone: [{ id: lesson.id }] } });

    // Hooks no longer inject it; an explicit search still finds it; review asks a person.
    expect(await prompt(home, root, 'after', 'how does computeTotals round the cart lines?')).not.toContain(`EG#${lesson.id}`);
    const engine = createSearchEngine(store, { embedder: null, tuning: searchTuning({ search: {} } as never) });
    expect((await engine.search({ query: 'computeTotals round cart lines', mode: 'bm25' })).results.map((hit) => hit.id)).toContain(lesson.id);
    expect(reviewQueue(store).items).toEqual([expect.objectContaining({ reasons: ['code-gone'], engram: expect.objectContaining({ id: lesson.id }) })]);
    expect(whyEngram(store, lesson.id, { home }).liveness).toMatchObject({ state: 'gone', deaths: [expect.objectContaining({ tape_id: deleted.tape_id })] });

    // A second check changes nothing; undoing the flag restores it; a person keeps it and it is injected again.
    expect(checkLiveness(store, { home, cwd: root })).toMatchObject({ gone: [], undo_token: null });
    approveEngrams(store, [lesson.id]);
    expect(store.engrams.get(lesson.id)?.liveness).toBe('kept');
    expect(await prompt(home, root, 'kept', 'how does computeTotals round the cart lines?')).toContain(`EG#${lesson.id}`);
    store.close();
  });

  it('code put back verbatim lives again; undo of a liveness check restores the flag', async () => {
    const { root, home, tapes, store, learned } = await repository();
    const { lesson } = learn(store, learned, root);
    await writeTape(tapes, tape('delete', 2, [ask('remove it'), remove('src/cart.ts', TOTALS)]).events);
    const gone = checkLiveness(store, { home, cwd: root });
    expect(gone.gone.map((item) => item.id)).toEqual([lesson.id]);
    undoOperation(store, gone.undo_token as string);
    expect(store.engrams.get(lesson.id)?.liveness).toBe('unknown');
    checkLiveness(store, { home, cwd: root });
    await writeTape(tapes, tape('restore', 3, [ask('bring it back'), create('src/cart.ts', TOTALS)]).events);
    expect(checkLiveness(store, { home, cwd: root })).toMatchObject({ revived: [lesson.id] });
    expect(store.engrams.get(lesson.id)?.liveness).toBe('alive');
    store.close();
  });
});

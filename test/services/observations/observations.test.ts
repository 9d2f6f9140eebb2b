/**
 * The Go engram's data model on our store (../shared/seeds/001 §2–4): the behaviours its users and clients rely on,
 * as tests of ours — defaults, dedup window, topic upserts, scopes, soft and hard delete, timeline, passive capture,
 * suggested keys, project names, context, stats, prompts — and that an observation is an engram like any other.
 */
import { describe, expect, it } from 'vitest';
import type { Store } from '../../../src/core/index.js';
import {
  addEngram,
  capturePassive,
  createSearchEngine,
  deleteObservation,
  endSession,
  extractLearnings,
  formatContext,
  getObservation,
  goScope,
  goTopicKey,
  listEngrams,
  mergeProjects,
  migrateProject,
  observationStats,
  recentObservations,
  recentSessions,
  saveObservation,
  savePrompt,
  saveSessionSummary,
  searchObservations,
  searchPrompts,
  startSession,
  suggestTopicKey,
  timeline,
  updateObservation,
  CLI_USER,
  type WriteContext,
} from '../../../src/services/index.js';
import { tempDir, tempStore, thrown } from '../../_helpers.js';

/** A clock the test moves by hand. */
function clock(start = '2026-11-01T10:00:00.000Z') {
  let t = Date.parse(start);
  return { now: () => new Date(t), advance: (minutes: number) => (t += minutes * 60_000) };
}

/** A person's writes (active at once): these tests are about the Go engram's data model; the agent's saves, which wait
 * for review, are tested in governance.test.ts. */
const context = (time = clock(), fields: Partial<WriteContext> = {}): WriteContext => ({ actor: CLI_USER, defaultProject: 'shop', directory: '/work/shop', now: time.now, ...fields });

const bm25 = (store: Store) => createSearchEngine(store, { embedder: null, indexDir: tempDir(), tuning: { rrfK: 60, weights: { bm25: 1, vector: 0.5 }, topK: 10 } });

describe('saving an observation', () => {
  it('defaults to type manual, the project of the caller and its manual-save session, created on demand', () => {
    const store = tempStore();
    const saved = saveObservation(store, { title: 'JWT auth middleware', content: '**What**: switched to JWT\n**Why**: sessions do not scale' }, context());
    expect(saved.status).toBe('created');
    expect(saved.observation).toMatchObject({ type: 'manual', project: 'shop', scope: 'project', session_id: 'manual-save-shop', revision_count: 1, duplicate_count: 1 });
    expect(saved.suggested_topic_key).toBe('topic/jwt-auth-middleware');
    expect(store.sessions.get('manual-save-shop')).toMatchObject({ project: 'shop', cwd: '/work/shop', agent: 'unknown' });
    // An observation is an engram: listed, and stored with the Go fields in columns.
    const engram = store.engrams.get(saved.id);
    expect(engram).toMatchObject({ kind: 'manual', title: 'JWT auth middleware', session_id: 'manual-save-shop', category: 'general', source: 'manual' });
    expect(listEngrams(store).engrams.map((e) => e.id)).toEqual([saved.id]);
  });

  it('without a project anywhere uses the manual-save session and no project', () => {
    const saved = saveObservation(tempStore(), { title: 'Prefers tabs', content: 'The user prefers tabs over spaces.' }, context(clock(), { defaultProject: null }));
    expect(saved.observation).toMatchObject({ project: null, session_id: 'manual-save', scope: 'project' });
  });

  it('counts the same title, type, body, project and scope within 15 minutes as a duplicate, not a row', () => {
    const store = tempStore();
    const time = clock();
    const input = { title: 'Fixed N+1 in user list', content: 'Use a JOIN instead of a query per user.', type: 'bugfix' };
    const first = saveObservation(store, input, context(time));
    time.advance(5);
    // Spacing and case do not make it new.
    const again = saveObservation(store, { ...input, title: 'fixed  n+1 in USER list', content: 'use a JOIN instead of a query   per user.' }, context(time));
    expect(again).toMatchObject({ status: 'duplicate', id: first.id });
    expect(getObservation(store, first.id).duplicate_count).toBe(2);
    time.advance(14);
    // Past the window (counted from creation), it is a new row.
    const later = saveObservation(store, input, context(time));
    expect(later.status).toBe('created');
    expect(later.id).not.toBe(first.id);
    // Another title, type or scope is another observation.
    expect(saveObservation(store, { ...input, title: 'Other title' }, context(time)).status).toBe('created');
    expect(saveObservation(store, { ...input, type: 'pattern' }, context(time)).status).toBe('created');
    expect(saveObservation(store, { ...input, scope: 'personal' }, context(time)).status).toBe('created');
  });

  it('revises the live observation with the same topic key, project and scope in place', () => {
    const store = tempStore();
    const time = clock();
    const first = saveObservation(store, { title: 'Auth model', content: 'Sessions in Redis.', type: 'architecture', topic_key: 'Architecture/Auth Model' }, context(time));
    expect(first.observation.topic_key).toBe('architecture/auth-model');
    expect(first.suggested_topic_key).toBeNull();
    time.advance(60);
    const second = saveObservation(store, { title: 'Auth model v2', content: 'JWT, no server sessions.', type: 'decision', topic_key: 'architecture/auth-model' }, context(time));
    expect(second).toMatchObject({ status: 'revised', id: first.id });
    expect(getObservation(store, first.id)).toMatchObject({ title: 'Auth model v2', content: 'JWT, no server sessions.', type: 'decision', revision_count: 2 });
    // The same key in another scope is another topic.
    const personal = saveObservation(store, { title: 'Mine', content: 'Personal notes on auth.', topic_key: 'architecture/auth-model', scope: 'personal' }, context(time));
    expect(personal.status).toBe('created');
    // A soft-deleted topic row is not revised: the next save starts a new one.
    deleteObservation(store, { id: first.id }, context(time));
    expect(saveObservation(store, { title: 'Auth model v3', content: 'Back to sessions.', topic_key: 'architecture/auth-model' }, context(time)).status).toBe('created');
  });

  it('normalises scope, topic keys and project names like the Go engram, and says when a name changed', () => {
    expect([goScope('PERSONAL '), goScope('team'), goScope(undefined)]).toEqual(['personal', 'project', 'project']);
    expect(goTopicKey('  Architecture   Auth\tModel ')).toBe('architecture-auth-model');
    expect(goTopicKey('x'.repeat(200))).toHaveLength(120);
    const store = tempStore();
    const saved = saveObservation(store, { title: 'Drift', content: 'Project names drift.', project: 'My--Project__X' }, context());
    expect(saved.observation.project).toBe('my-project_x');
    expect(saved.warnings).toContain('⚠️ Project name normalized: "My--Project__X" → "my-project_x"');
    // The caller's own repository keeps its spelling, so the hooks (which know it as "Shop") find it.
    const own = saveObservation(store, { title: 'Ours', content: 'Saved in the repository.', project: 'SHOP' }, context(clock(), { defaultProject: 'Shop' }));
    expect(own.observation.project).toBe('Shop');
    // And a later save with another spelling joins the stored one.
    expect(saveObservation(store, { title: 'Again', content: 'Another spelling.', project: 'shop' }, context(clock(), { defaultProject: null })).observation.project).toBe('Shop');
  });

  it('redacts <private> spans and secrets, and cuts an oversized body with the Go marker and a warning', () => {
    const store = tempStore();
    const saved = saveObservation(store, { title: 'Deploy', content: 'Token <private>hunter2</private> and ghp_abcdefghijklmnopqrstuvwxyz0123456789 used.' }, context());
    expect(saved.observation.content).not.toMatch(/hunter2|ghp_/);
    expect(saved.redacted.length).toBeGreaterThan(0);
    const big = saveObservation(store, { title: 'Huge', content: 'word '.repeat(20_000) }, context());
    expect(big.observation.content.length).toBe(64_000);
    expect(big.observation.content.endsWith('... [truncated]')).toBe(true);
    expect(big.warnings[0]).toMatch(/^⚠ WARNING: Content was truncated from \d+ to 64000 chars/);
    // What is injected stays short; the whole body is kept as detail.
    const engram = store.engrams.get(big.id)!;
    expect(engram.text.length).toBeLessThanOrEqual(2_000);
    expect(engram.content?.length).toBe(64_000);
    expect(thrown(() => saveObservation(store, { title: ' ', content: 'x' }, context()))?.message).toBe('title is required and cannot be empty');
    expect(thrown(() => saveObservation(store, { title: 'x', content: '' }, context()))?.message).toBe('content is required and cannot be empty');
    expect(thrown(() => saveObservation(store, { title: 'x', content: '<private>all of it</private>' }, context()))?.code).toBe('INVALID_INPUT');
  });
});

describe('updating and deleting', () => {
  it('changes only the fields given, bumps the revision and refuses unknown ids and empty patches', () => {
    const store = tempStore();
    const saved = saveObservation(store, { title: 'Cache', content: 'Redis for sessions.', type: 'config', scope: 'personal' }, context());
    const { observation } = updateObservation(store, { id: saved.id, content: 'Valkey for sessions.', project: 'Other' }, context());
    expect(observation).toMatchObject({ title: 'Cache', content: 'Valkey for sessions.', type: 'config', project: 'other', scope: 'personal', revision_count: 2 });
    expect(thrown(() => updateObservation(store, { id: saved.id }, context()))?.message).toBe('provide at least one field to update');
    expect(thrown(() => updateObservation(store, { id: 999, title: 'x' }, context()))).toMatchObject({ code: 'NOT_FOUND', message: 'Observation #999 not found' });
  });

  it('soft-deletes by default (invisible to get, search, recent and timeline) and hard-deletes on request', async () => {
    const store = tempStore();
    const time = clock();
    const a = saveObservation(store, { title: 'Alpha', content: 'alpha zebra fact', session_id: 's1' }, context(time));
    const b = saveObservation(store, { title: 'Beta', content: 'beta zebra fact', session_id: 's1' }, context(time));
    const c = saveObservation(store, { title: 'Gamma', content: 'gamma zebra fact', session_id: 's1' }, context(time));
    expect(deleteObservation(store, { id: b.id }, context(time))).toEqual({ id: b.id, hard_delete: false, undo_token: expect.stringMatching(/^u-/) });
    expect(thrown(() => getObservation(store, b.id))?.code).toBe('NOT_FOUND');
    expect(store.engrams.get(b.id)?.deleted_at).not.toBeNull();
    const found = await searchObservations(store, bm25(store), { query: 'zebra' });
    expect(found.results.map((r) => r.id).sort()).toEqual([a.id, c.id].sort());
    expect(recentObservations(store, {}).map((o) => o.id)).toEqual([c.id, a.id]);
    const around = timeline(store, { observation_id: a.id });
    expect(around.after.map((o) => o.id)).toEqual([c.id]);
    expect(around.total_in_range).toBe(2);
    expect(thrown(() => timeline(store, { observation_id: b.id }))?.code).toBe('NOT_FOUND');
    // Deleting it again: gone already.
    expect(thrown(() => deleteObservation(store, { id: b.id }, context(time)))?.code).toBe('NOT_FOUND');
    expect(deleteObservation(store, { id: b.id, hard_delete: true }, context(time))).toEqual({ id: b.id, hard_delete: true, undo_token: expect.stringMatching(/^u-/) });
    expect(store.engrams.get(b.id)).toBeUndefined();
  });
});

describe('timeline', () => {
  it('shows up to N observations before and after the focus in its session, chronologically, with the session', () => {
    const store = tempStore();
    // Steps about different things: "step 1 of the work" vs "step 2 of the work" would contradict each other (two
    // values for one setting) and wait for review, and reads show active engrams.
    const parts = ['parser', 'lexer', 'cache', 'router', 'logger', 'schema', 'queue', 'index'];
    const ids = parts.map((part, i) => saveObservation(store, { title: `Step ${i}`, content: `Wrote the ${part} module.`, session_id: 'work-1' }, context()).id);
    saveObservation(store, { title: 'Elsewhere', content: 'Another session.', session_id: 'work-2' }, context());
    const result = timeline(store, { observation_id: ids[4]!, before: 2, after: 5 });
    expect(result.focus.id).toBe(ids[4]);
    expect(result.before.map((o) => o.id)).toEqual([ids[2], ids[3]]);
    expect(result.after.map((o) => o.id)).toEqual([ids[5], ids[6], ids[7]]);
    expect(result.total_in_range).toBe(8);
    expect(result.session_info).toMatchObject({ id: 'work-1', project: 'shop' });
    // Defaults are 5 and 5.
    expect(timeline(store, { observation_id: ids[7]! }).before).toHaveLength(5);
    // A lesson saved in no session has its project and scope as its timeline.
    const lesson = addEngram(store, { text: 'A lesson with no session.', project: 'shop' }).engram;
    expect(timeline(store, { observation_id: lesson.id })).toMatchObject({ session_info: null, before: [], after: [], total_in_range: 1 });
  });
});

describe('passive capture', () => {
  const text = [
    'Done with the refactor.',
    '',
    '## Key Learnings:',
    '',
    '1. **FTS5** needs every `user` term quoted before MATCH',
    '2. The retry helper must cap its backoff at thirty seconds',
    '3. too short',
    '',
    '## Next steps',
    '- something else entirely that is long enough',
  ].join('\n');

  it('extracts numbered items (markdown stripped, short ones dropped) from the last section that has any', () => {
    expect(extractLearnings(text)).toEqual(['FTS5 needs every user term quoted before MATCH', 'The retry helper must cap its backoff at thirty seconds']);
    expect(extractLearnings('## Aprendizajes Clave:\n- El índice necesita reconstruirse tras migrar\n')).toEqual(['El índice necesita reconstruirse tras migrar']);
    expect(extractLearnings('## Key Learnings:\n- first section item long enough\n\n### Learnings\n* second section item long enough\n')).toEqual([
      'second section item long enough',
    ]);
    expect(extractLearnings('no section here\n- a bullet that is long enough')).toEqual([]);
  });

  it('saves each learning once per project, counts the rest as duplicates, and stores them as passive observations', () => {
    const store = tempStore();
    expect(capturePassive(store, { content: text, source: 'subagent-stop' }, context())).toMatchObject({ extracted: 2, saved: 2, duplicates: 0, pending: 0 });
    expect(capturePassive(store, { content: text }, context())).toEqual({ extracted: 2, saved: 0, duplicates: 2, pending: 0, ids: [], undo_token: null });
    expect(capturePassive(store, { content: text, project: 'elsewhere' }, context())).toMatchObject({ extracted: 2, saved: 2, duplicates: 0 });
    expect(capturePassive(store, { content: 'nothing to learn' }, context())).toEqual({ extracted: 0, saved: 0, duplicates: 0, pending: 0, ids: [], undo_token: null });
    const stored = recentObservations(store, { project: 'shop' });
    const row = ['passive', 'subagent-stop', 'project', 'manual-save-shop'];
    expect(stored.map((o) => [o.type, o.tool_name, o.scope, o.session_id])).toEqual([row, row]);
    expect(stored.every((o) => o.title.length <= 63)).toBe(true);
  });
});

describe('topic key suggestions', () => {
  it('takes the family from the type, else from keywords, and the slug from the title or the first words', () => {
    expect(suggestTopicKey('architecture', 'Auth model', '')).toBe('architecture/auth-model');
    expect(suggestTopicKey('bugfix', 'Fixed N+1 query', '')).toBe('bug/fixed-n-1-query');
    expect(suggestTopicKey('manual', 'Crash on startup', '')).toBe('bug/crash-on-startup');
    expect(suggestTopicKey('manual', 'Team lunch', '')).toBe('topic/team-lunch');
    expect(suggestTopicKey('session_summary', '', 'We shipped the search feature and fixed paging')).toBe('session/we-shipped-the-search-feature-and-fixed-paging');
    expect(suggestTopicKey('decision', 'Decision: use pnpm', '')).toBe('decision/use-pnpm');
    expect(suggestTopicKey('note', 'Meeting', '')).toBe('note/meeting');
    expect(suggestTopicKey('', '', '')).toBe('topic/general');
  });
});

describe('sessions, prompts, context and stats', () => {
  it('starts and ends sessions, saves summaries and prompts, and formats the context the Go engram way', () => {
    const store = tempStore();
    const time = clock();
    expect(formatContext(store, {})).toBe('');
    expect(startSession(store, { id: 'sess-1', project: 'shop', directory: '/work/shop' }, context(time))).toEqual({ id: 'sess-1', project: 'shop', created: true });
    expect(startSession(store, { id: 'sess-1', project: 'shop' }, context(time)).created).toBe(false);
    saveObservation(store, { title: 'Retry helper', content: 'Backoff capped at 30 s.', type: 'pattern', session_id: 'sess-1' }, context(time));
    savePrompt(store, { content: 'add a retry helper with <private>secret</private> backoff', session_id: 'sess-1' }, context(time));
    expect(endSession(store, { id: 'sess-1', summary: 'Added the retry helper.' }, context(time))).toEqual({ id: 'sess-1', status: 'completed' });
    expect(thrown(() => endSession(store, { id: 'nope' }, context(time)))?.code).toBe('NOT_FOUND');
    expect(store.sessions.get('sess-1')).toMatchObject({ summary: 'Added the retry helper.' });
    expect(store.sessions.get('sess-1')?.ended_at).not.toBeNull();

    const text = formatContext(store, { project: 'shop' });
    expect(text).toContain('## Memory from Previous Sessions\n\n### Recent Sessions\n- **shop** (');
    expect(text).toContain(': Added the retry helper. [1 observations]');
    expect(text).toContain('### Recent User Prompts\n- ');
    expect(text).not.toContain('secret');
    expect(text).toContain('### Recent Observations\n- [pattern] **Retry helper**: Backoff capped at 30 s.\n');
    expect(formatContext(store, { project: 'shop', compact: true })).toContain('- [pattern] **Retry helper**\n');

    const summary = saveSessionSummary(store, { content: '## Goal\nRetry helper', session_id: 'sess-1' }, context(time));
    expect(getObservation(store, summary.id)).toMatchObject({ type: 'session_summary', title: 'Session summary: shop' });
    expect(searchPrompts(store, { q: 'retry helper' }).map((p) => p.session_id)).toEqual(['sess-1']);
    expect(searchPrompts(store, { q: 'NEAR( AND "' }).length).toBe(0);
    expect(recentSessions(store, {})[0]).toMatchObject({ id: 'sess-1', observation_count: 2 });
    expect(observationStats(store)).toEqual({ total_sessions: 1, total_observations: 2, total_prompts: 1, projects: ['shop'] });
  });
});

describe('projects', () => {
  it('merges every spelling of the sources into the canonical name, and migrates one name exactly', () => {
    const store = tempStore();
    for (const project of ['Engram', 'engram-memory', 'ENGRAM--MEMORY', 'other']) {
      saveObservation(store, { title: `In ${project}`, content: `Saved in ${project}.` }, context(clock(), { defaultProject: project }));
    }
    const merged = mergeProjects(store, { from: 'Engram, engram-memory ,', to: 'engram' }, { actor: CLI_USER });
    expect(merged).toEqual({
      canonical: 'engram',
      sources_merged: ['ENGRAM--MEMORY', 'Engram', 'engram-memory'],
      observations_updated: 3,
      sessions_updated: 3,
      prompts_updated: 0,
      undo_token: expect.stringMatching(/^u-/),
    });
    expect(observationStats(store).projects.sort()).toEqual(['engram', 'other']);
    const rename = { actor: CLI_USER };
    expect(migrateProject(store, { old_project: 'other', new_project: 'other' }, rename)).toEqual({ status: 'skipped', reason: 'names are identical', undo_token: null });
    expect(migrateProject(store, { old_project: 'missing', new_project: 'x' }, rename)).toEqual({ status: 'skipped', reason: 'no records found', undo_token: null });
    expect(migrateProject(store, { old_project: 'other', new_project: 'renamed' }, rename)).toEqual({
      status: 'migrated',
      old_project: 'other',
      new_project: 'renamed',
      observations: 1,
      sessions: 1,
      prompts: 0,
      undo_token: expect.stringMatching(/^u-/),
    });
  });
});

describe('one store', () => {
  it('finds observations and lessons with the same search, filtered by type, project and scope', async () => {
    const store = tempStore();
    const obs = saveObservation(store, { title: 'Flaky deploy', content: 'The deploy fails when the index already exists.', type: 'bugfix' }, context());
    const lesson = addEngram(store, { text: 'A deploy needs the migration lock released first.', project: 'shop' }).engram;
    const engine = bm25(store);
    const all = await searchObservations(store, engine, { query: 'deploy' });
    expect(all.results.map((r) => r.id).sort()).toEqual([obs.id, lesson.id].sort());
    expect(all.results.every((r) => r.score > 0 && (r.ranks.bm25 ?? 0) >= 1)).toBe(true);
    expect((await searchObservations(store, engine, { query: 'deploy', type: 'bugfix' })).results.map((r) => r.id)).toEqual([obs.id]);
    expect((await searchObservations(store, engine, { query: 'deploy', project: 'elsewhere' })).results).toEqual([]);
    expect((await searchObservations(store, engine, { query: 'deploy', scope: 'personal' })).results).toEqual([]);
    // The whole engram search (what hooks run) finds the observation too.
    const hits = await engine.search({ query: 'deploy index exists', scope: { project: 'shop', includePersonal: true } });
    expect(hits.results[0]?.id).toBe(obs.id);
    // An empty query lists the newest.
    expect((await searchObservations(store, engine, { query: ' ', limit: 1 })).results.map((r) => r.id)).toEqual([lesson.id]);
  });
});

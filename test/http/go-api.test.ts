/**
 * The Go engram's HTTP API on a real server (an ephemeral loopback port, driven by fetch): every route with the
 * bodies, defaults, status codes and messages ../shared/seeds/001 §1 names, and malformed JSON, ids and bools handled
 * as the Go engram handles them.
 */
import { describe, expect, it } from 'vitest';
import { listAudit } from '../../src/services/index.js';
import { undoOperation } from '../../src/services/gate/index.js';
import { send, startApi, type TestApi } from './_api.js';

/** Every error answer is `{error, code}` JSON and nothing else. */
function expectError(result: { status: number; body: any }, status: number, error?: string | RegExp): void {
  expect(result.status).toBe(status);
  expect(Object.keys(result.body).sort()).toEqual(['code', 'error']);
  expect(typeof result.body.code).toBe('string');
  if (typeof error === 'string') expect(result.body.error).toBe(error);
  else if (error) expect(result.body.error).toMatch(error);
}

async function save(api: TestApi, fields: Record<string, unknown>): Promise<number> {
  const result = await api.json('/observations', send('POST', { session_id: 'sess-1', type: 'bugfix', project: 'shop', ...fields }));
  expect(result.status).toBe(201);
  return result.body.id as number;
}

const GO_TIME = /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/;

describe('GET /health', () => {
  it('answers the Go engram liveness body with 200, and says which Engram in a header', async () => {
    const api = await startApi();
    const result = await api.json('/health');
    expect(result).toMatchObject({ status: 200, body: { status: 'ok', service: 'engram', version: '0.1.0' } });
    expect(result.headers.get('x-engram')).toBeTruthy();
  });
});

describe('sessions', () => {
  it('creates a session with 201, requires id and project, and ends it with 200', async () => {
    const api = await startApi();
    expect(await api.json('/sessions', send('POST', { id: 's-1', project: 'shop', directory: '/w/shop' }))).toMatchObject({ status: 201, body: { id: 's-1', status: 'created' } });
    expectError(await api.json('/sessions', send('POST', { id: 's-2' })), 400, 'id and project are required');
    expectError(await api.json('/sessions', send('POST', '{"id": "s-3", ')), 400, /^invalid json: /);
    expectError(await api.json('/sessions', send('POST', '')), 400, 'invalid json: EOF');
    expectError(await api.json('/sessions', send('POST', { id: 7, project: 'shop' })), 400, /^invalid json: id: /);
    expect(await api.json('/sessions/s-1/end', send('POST', { summary: '## Goal\nShip it' }))).toMatchObject({ status: 200, body: { id: 's-1', status: 'completed' } });
    const session = api.store.sessions.get('s-1');
    expect(session?.ended_at).not.toBeNull();
    expect(session?.summary).toBe('## Goal\nShip it');
    // A body that does not decode is ignored on /end, and an unknown session is answered 200, as the Go engram does.
    expect((await api.json('/sessions/s-1/end', send('POST', 'not json'))).status).toBe(200);
    expect(await api.json('/sessions/nope/end', send('POST', {}))).toMatchObject({ status: 200, body: { id: 'nope', status: 'completed' } });
    expect(api.store.sessions.get('nope')).toBeUndefined();
  });

  it('lists recent sessions as SessionSummary with Go times, filtered by project, 5 by default', async () => {
    const api = await startApi();
    for (let i = 0; i < 7; i++) await api.json('/sessions', send('POST', { id: `s-${i}`, project: i === 0 ? 'other' : 'shop' }));
    await save(api, { session_id: 's-3', title: 'T', content: 'C' });
    const all = await api.json('/sessions/recent');
    expect(all.status).toBe(200);
    expect(all.body).toHaveLength(5);
    const shop = await api.json('/sessions/recent?project=SHOP&limit=50');
    expect(shop.body).toHaveLength(6);
    const counted = shop.body.find((s: any) => s.id === 's-3');
    expect(counted).toMatchObject({ id: 's-3', project: 'shop', observation_count: 1 });
    expect(counted.started_at).toMatch(GO_TIME);
    expect(Object.keys(counted).sort()).toEqual(['id', 'observation_count', 'project', 'started_at']);
    expect((await api.json('/sessions/recent?limit=abc')).body).toHaveLength(5);
  });
});

describe('observations', () => {
  it('saves with 201 {id, status: saved}, upserts by topic key and counts duplicates in the window', async () => {
    const api = await startApi();
    const id = await save(api, { title: 'Checkout rounding', content: 'Round per line.', topic_key: 'bug/rounding' });
    expect(await save(api, { title: 'Checkout rounding', content: 'Round per line, then sum.', topic_key: 'bug/rounding' })).toBe(id);
    const other = await save(api, { title: 'Cents', content: 'Money is integer cents.' });
    expect(await save(api, { title: 'Cents', content: 'money is   integer cents.' })).toBe(other);
    const got = await api.json(`/observations/${id}`);
    expect(got.body).toMatchObject({ id, type: 'bugfix', title: 'Checkout rounding', content: 'Round per line, then sum.', topic_key: 'bug/rounding', revision_count: 2, duplicate_count: 1, scope: 'project', project: 'shop', session_id: 'sess-1' });
    expect((await api.json(`/observations/${other}`)).body.duplicate_count).toBe(2);
    expect(got.body.sync_id).toEqual(expect.any(String));
    expect(got.body.created_at).toMatch(GO_TIME);
    // Go's omitempty: no tool name, no deleted_at keys.
    expect(got.body).not.toHaveProperty('tool_name');
    expect(got.body).not.toHaveProperty('deleted_at');
  });

  it('requires session_id, title and content, and reports malformed bodies as invalid json', async () => {
    const api = await startApi();
    expectError(await api.json('/observations', send('POST', { session_id: 's', title: 'T' })), 400, 'session_id, title, and content are required');
    expectError(await api.json('/observations', send('POST', { title: 'T', content: 'C' })), 400, 'session_id, title, and content are required');
    expectError(await api.json('/observations', send('POST', '{bad')), 400, /^invalid json: /);
    expectError(await api.json('/observations', send('POST', '[1,2]')), 400, /^invalid json: /);
    expectError(await api.json('/observations', send('POST', { session_id: 's', title: 3, content: 'C' })), 400, /^invalid json: title: /);
    // Unknown keys are ignored, as Go's decoder ignores them.
    expect((await api.json('/observations', send('POST', { session_id: 's', title: 'T', content: 'C', colour: 'red' }))).status).toBe(201);
  });

  it('captures passive learnings with 200 and counts, requires a session', async () => {
    const api = await startApi();
    const content = '## Key Learnings:\n1. The payment webhook retries three times before giving up.\n2. Carts expire after thirty minutes of inactivity.\n';
    expect(await api.json('/observations/passive', send('POST', { session_id: 's-1', content, project: 'shop', source: 'subagent-stop' }))).toMatchObject({ status: 200, body: { extracted: 2, saved: 2, duplicates: 0 } });
    expect((await api.json('/observations/passive', send('POST', { session_id: 's-1', content, project: 'shop' }))).body).toEqual({ extracted: 2, saved: 0, duplicates: 2 });
    expect((await api.json('/observations/passive', send('POST', { session_id: 's-1', content: '' }))).body).toEqual({ extracted: 0, saved: 0, duplicates: 0 });
    expectError(await api.json('/observations/passive', send('POST', { content })), 400, 'session_id is required');
  });

  it('lists recent observations (20 by default), by project and normalised scope', async () => {
    const api = await startApi();
    for (let i = 0; i < 22; i++) await save(api, { title: `Note ${i}`, content: `Body number ${i}`, scope: i === 0 ? 'PERSONAL' : 'whatever' });
    const recent = await api.json('/observations/recent');
    expect(recent.body).toHaveLength(20);
    expect(recent.body[0].title).toBe('Note 21');
    expect((await api.json('/observations/recent?scope=personal')).body.map((o: any) => o.title)).toEqual(['Note 0']);
    expect((await api.json('/observations/recent?scope=anything&limit=3')).body).toHaveLength(3);
    expect((await api.json('/observations/recent?project=nope')).body).toEqual([]);
  });

  it('gets one by id: 404 when unknown or soft-deleted, 400 when the id is not a number', async () => {
    const api = await startApi();
    const id = await save(api, { title: 'T', content: 'C' });
    expect((await api.json(`/observations/${id}`)).status).toBe(200);
    expectError(await api.json('/observations/999'), 404, 'observation not found');
    expectError(await api.json('/observations/0'), 404, 'observation not found');
    expectError(await api.json('/observations/abc'), 400, 'invalid observation id');
    expectError(await api.json('/observations/1.5'), 400, 'invalid observation id');
    expectError(await api.json('/observations/99999999999999999999'), 400, 'invalid observation id');
    expect((await api.json(`/observations/${id}`, { method: 'DELETE' })).status).toBe(200);
    expectError(await api.json(`/observations/${id}`), 404, 'observation not found');
  });

  it('patches only the fields given, needs one, and answers 404 for an unknown id', async () => {
    const api = await startApi();
    const id = await save(api, { title: 'Old title', content: 'Body', topic_key: 'x/y' });
    const patched = await api.json(`/observations/${id}`, send('PATCH', { title: 'New title', scope: 'personal', project: null }));
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({ id, title: 'New title', content: 'Body', scope: 'personal', topic_key: 'x/y', project: 'shop', revision_count: 2 });
    expectError(await api.json(`/observations/${id}`, send('PATCH', {})), 400, 'at least one field is required');
    expectError(await api.json(`/observations/${id}`, send('PATCH', { title: null })), 400, 'at least one field is required');
    expectError(await api.json('/observations/4242', send('PATCH', { title: 'x' })), 404, /not found/);
    expectError(await api.json('/observations/abc', send('PATCH', { title: 'x' })), 400, 'invalid observation id');
    expectError(await api.json(`/observations/${id}`, send('PATCH', 'nope')), 400, /^invalid json: /);
  });

  it('deletes softly by default and hard with ?hard= as strconv.ParseBool reads it', async () => {
    const api = await startApi();
    const a = await save(api, { title: 'A', content: 'first' });
    const b = await save(api, { title: 'B', content: 'second' });
    const c = await save(api, { title: 'C', content: 'third' });
    expect(await api.json(`/observations/${a}`, { method: 'DELETE' })).toMatchObject({ status: 200, body: { id: a, status: 'deleted', hard_delete: false } });
    expect(api.store.engrams.get(a)?.deleted_at).not.toBeNull();
    // "yes" is not a Go bool: the default (soft) applies.
    expect((await api.json(`/observations/${b}?hard=yes`, { method: 'DELETE' })).body.hard_delete).toBe(false);
    expect(api.store.engrams.get(b)).toBeDefined();
    expect((await api.json(`/observations/${c}?hard=T`, { method: 'DELETE' })).body).toEqual({ id: c, status: 'deleted', hard_delete: true });
    expect(api.store.engrams.get(c)).toBeUndefined();
    expect(await api.json('/observations/777?hard=1', { method: 'DELETE' })).toMatchObject({ status: 200, body: { id: 777, hard_delete: true } });
    expectError(await api.json('/observations/x', { method: 'DELETE' }), 400, 'invalid observation id');
  });
});

describe('search and timeline', () => {
  it('searches with q required, ranks best first (lower rank is better) and filters by type and project', async () => {
    const api = await startApi();
    await save(api, { title: 'Checkout rounding', content: 'Round each line of the checkout total.' });
    await save(api, { title: 'Deploy', content: 'Deploys go through the staging checkout first.', type: 'config' });
    await save(api, { title: 'Other project', content: 'checkout in another project', project: 'blog' });
    const found = await api.json('/search?q=checkout%20rounding');
    expect(found.status).toBe(200);
    expect(found.body[0].title).toBe('Checkout rounding');
    expect(found.body[0].rank).toBeLessThan(0);
    for (let i = 1; i < found.body.length; i++) expect(found.body[i].rank).toBeGreaterThanOrEqual(found.body[i - 1].rank);
    expect((await api.json('/search?q=checkout&type=config')).body.map((o: any) => o.title)).toEqual(['Deploy']);
    expect((await api.json('/search?q=checkout&project=blog')).body.map((o: any) => o.title)).toEqual(['Other project']);
    expect((await api.json('/search?q=checkout&limit=1')).body).toHaveLength(1);
    // FTS operators in what people type are words, not syntax.
    expect((await api.json('/search?q=%22checkout%22%20AND%20NOT%20(')).status).toBe(200);
    expectError(await api.json('/search'), 400, 'q parameter is required');
    expectError(await api.json('/search?q='), 400, 'q parameter is required');
  });

  it('answers a timeline around an observation of its session: 400 without or with a bad id, 404 when unknown', async () => {
    const api = await startApi();
    const ids = [];
    for (let i = 0; i < 8; i++) ids.push(await save(api, { title: `Step ${i}`, content: `Step number ${i} of the session` }));
    const timeline = await api.json(`/timeline?observation_id=${ids[4]}&before=2&after=1`);
    expect(timeline.status).toBe(200);
    expect(timeline.body.focus.id).toBe(ids[4]);
    expect(timeline.body.before.map((e: any) => e.id)).toEqual([ids[2], ids[3]]);
    expect(timeline.body.after.map((e: any) => e.id)).toEqual([ids[5]]);
    expect(timeline.body.before[0].is_focus).toBe(false);
    expect(timeline.body.session_info).toMatchObject({ id: 'sess-1', project: 'shop' });
    expect(timeline.body.total_in_range).toBe(8);
    expect((await api.json(`/timeline?observation_id=${ids[4]}`)).body.before).toHaveLength(4);
    expectError(await api.json('/timeline'), 400, 'observation_id parameter is required');
    expectError(await api.json('/timeline?observation_id=x'), 400, 'invalid observation_id');
    expectError(await api.json('/timeline?observation_id=404'), 404, /not found/);
  });
});

describe('prompts, context, stats', () => {
  it('saves prompts with 201, lists them (20 by default) and searches them (q required)', async () => {
    const api = await startApi();
    expect(await api.json('/prompts', send('POST', { session_id: 's-1', content: 'why is checkout off by a cent?', project: 'shop' }))).toMatchObject({ status: 201, body: { status: 'saved' } });
    await api.json('/prompts', send('POST', { session_id: 's-1', content: 'deploy the blog', project: 'blog' }));
    expectError(await api.json('/prompts', send('POST', { session_id: 's-1' })), 400, 'session_id and content are required');
    const recent = await api.json('/prompts/recent');
    expect(recent.body.map((p: any) => p.content)).toEqual(['deploy the blog', 'why is checkout off by a cent?']);
    expect(Object.keys(recent.body[0]).sort()).toEqual(['content', 'created_at', 'id', 'project', 'session_id', 'sync_id']);
    expect((await api.json('/prompts/recent?project=shop')).body).toHaveLength(1);
    expect((await api.json('/prompts/search?q=checkout')).body.map((p: any) => p.content)).toEqual(['why is checkout off by a cent?']);
    expect((await api.json('/prompts/search?q=checkout&project=blog')).body).toEqual([]);
    expectError(await api.json('/prompts/search'), 400, 'q parameter is required');
  });

  it('renders context, compact with ?compact=1 and not with ?compact=yes (ignored as in Go)', async () => {
    const api = await startApi();
    expect((await api.json('/context')).body).toEqual({ context: '' });
    await save(api, { title: 'Rounding', content: 'Round per line, not per order.' });
    const full = (await api.json('/context?project=shop')).body.context as string;
    expect(full).toContain('## Memory from Previous Sessions');
    expect(full).toContain('- [bugfix] **Rounding**: Round per line');
    const compact = (await api.json('/context?project=shop&compact=1')).body.context as string;
    expect(compact).toContain('- [bugfix] **Rounding**\n');
    expect((await api.json('/context?project=shop&compact=yes')).body.context).toBe(full);
  });

  it('counts sessions, live observations, prompts and projects', async () => {
    const api = await startApi();
    await save(api, { title: 'A', content: 'a' });
    const gone = await save(api, { title: 'B', content: 'b', project: 'blog' });
    await api.json(`/observations/${gone}`, { method: 'DELETE' });
    await api.json('/prompts', send('POST', { session_id: 'sess-1', content: 'hi there' }));
    expect((await api.json('/stats')).body).toEqual({ total_sessions: 1, total_observations: 1, total_prompts: 1, projects: ['shop'] });
  });
});

describe('export, import, projects, sync status', () => {
  it('exports the Go ExportData as an attachment and imports it into another store (400 for malformed JSON)', async () => {
    const api = await startApi();
    const kept = await save(api, { title: 'Kept', content: 'Kept body', topic_key: 'k/v' });
    const gone = await save(api, { title: 'Gone', content: 'Gone body' });
    await api.json(`/observations/${gone}`, { method: 'DELETE' });
    await api.json('/prompts', send('POST', { session_id: 'sess-1', content: 'a prompt' }));
    const response = await api.fetch('/export');
    expect(response.headers.get('content-disposition')).toBe('attachment; filename=engram-export.json');
    const data = (await response.json()) as any;
    expect(data).toMatchObject({ version: '0.1.0', sessions: [{ id: 'sess-1' }], prompts: [{ content: 'a prompt' }] });
    expect(data.exported_at).toMatch(GO_TIME);
    expect(data.observations.map((o: any) => [o.id, o.title, o.deleted_at !== undefined])).toEqual([[kept, 'Kept', false], [gone, 'Gone', true]]);
    expect(data.observations[0].engram).toMatchObject({ v: 1, category: 'bugfix', tags: [] });

    const other = await startApi();
    await other.json('/observations', send('POST', { session_id: 'x', title: 'Mine', content: 'already here' }));
    const imported = await other.json('/import', send('POST', data));
    expect(imported).toEqual(expect.objectContaining({ status: 200, body: { sessions_imported: 1, observations_imported: 2, prompts_imported: 1 } }));
    // Again: nothing new.
    expect((await other.json('/import', send('POST', data))).body).toEqual({ sessions_imported: 0, observations_imported: 0, prompts_imported: 0 });
    expect((await other.json('/observations/recent')).body.map((o: any) => o.title).sort()).toEqual(['Kept', 'Mine']);
    expectError(await other.json('/import', send('POST', '{"observations": [')), 400, /^invalid json: /);
    expectError(await other.json('/import', send('POST', { observations: [{ title: 5 }] })), 400, /^invalid json: /);
  });

  it('migrates a project, skips identical names and unknown ones, requires both names', async () => {
    const api = await startApi();
    await save(api, { title: 'A', content: 'a', project: 'Engram' });
    expect((await api.json('/projects/migrate', send('POST', { old_project: 'engram', new_project: 'engram-memory' }))).body).toEqual({
      status: 'migrated',
      old_project: 'engram',
      new_project: 'engram-memory',
      observations: 1,
      sessions: 1,
      prompts: 0,
    });
    expect((await api.json('/projects/migrate', send('POST', { old_project: 'x', new_project: 'x' }))).body).toEqual({ status: 'skipped', reason: 'names are identical' });
    expect((await api.json('/projects/migrate', send('POST', { old_project: 'nothing', new_project: 'x' }))).body).toEqual({ status: 'skipped', reason: 'no records found' });
    expectError(await api.json('/projects/migrate', send('POST', { old_project: 'x' })), 400, 'old_project and new_project are required');
  });

  it('answers the sync status stub of an engram without background sync', async () => {
    const api = await startApi();
    expect((await api.json('/sync/status')).body).toEqual({ enabled: false, message: 'background sync is not configured' });
  });
});

describe('unknown routes and methods', () => {
  it('answers 404 and 405 as JSON', async () => {
    const api = await startApi();
    expectError(await api.json('/nothing/here'), 404);
    expectError(await api.json('/health', { method: 'POST' }), 405);
    expectError(await api.json('/observations', { method: 'GET' }), 405);
    expectError(await api.json('/observations/1', send('PUT', {})), 405);
  });
});

describe('governance of HTTP writes', () => {
  it('audits every write as {by: user, via: http}, and engram undo takes each back', async () => {
    const api = await startApi();
    const id = await save(api, { title: 'Cache key', content: 'Cache keys include the locale.' });
    const patched = await api.json(`/observations/${id}`, send('PATCH', { content: 'Cache keys include the locale and currency.' }));
    expect(patched.status).toBe(200);
    expect((await api.json(`/observations/${id}`, { method: 'DELETE' })).status).toBe(200);
    expect((await api.json('/observations/passive', send('POST', { session_id: 'sess-1', content: '## Key Learnings:\n- Feature flags live in flags.yaml\n' }))).status).toBe(200);

    const entries = listAudit(api.store, {});
    expect(entries.map((entry) => [entry.actor, entry.via, entry.op]).reverse()).toEqual([
      ['user', 'http', 'add'],
      ['user', 'http', 'edit'],
      ['user', 'http', 'delete'],
      ['user', 'http', 'passive-capture'],
    ]);
    expect(api.store.engrams.get(id)?.learned_by).toBe('user');

    // Undo, newest first: the passive capture, the delete, the edit, the save: the observation is gone again.
    for (let i = 0; i < entries.length; i++) undoOperation(api.store, undefined, { actor: { by: 'user', via: 'cli' } });
    expect(api.store.engrams.get(id)).toBeUndefined();
    expect((await api.json(`/observations/${id}`)).status).toBe(404);
  });
});

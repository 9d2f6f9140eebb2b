/**
 * The viewer's API (src/ui) on a real loopback server, mounted in the HTTP app the warm server builds, over a real
 * store: the per-launch secret (401 without it, nothing written), the HTTP guards it inherits, server-side pages and
 * filters, writes as `{by: 'user', via: 'http'}` in the audit log, the review gate and undo, and search's explanation.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createLogger, loadSettings, readEnv, type Store } from '../../src/core/index.js';
import { createHttpApp, listenHttp, type Binding, type HttpListener } from '../../src/http/index.js';
import { addEngram, createSearchEngine, initRepo, listAudit, recordSessionStart, recordTranscript, searchTuning } from '../../src/services/index.js';
import { UI_SECRET_HEADER, viewerApp } from '../../src/ui/index.js';
import { ROOT, SHARED, tempDir, tempStore } from '../_helpers.js';

const SECRET = 'test-secret-0123456789abcdefghij';
const listeners: HttpListener[] = [];
afterEach(async () => {
  while (listeners.length) await listeners.pop()?.close();
});

async function startViewer(store: Store = tempStore()) {
  const home = tempDir();
  const env = readEnv({ HOME: home, ENGRAM_HOME: home, ENGRAM_EMBEDDER: 'none' });
  const settings = loadSettings(env);
  const engine = createSearchEngine(store, { embedder: null, indexDir: join(home, 'index'), tuning: searchTuning(settings.config) });
  let touched = 0;
  const binding: Binding = { host: '127.0.0.1', port: 0, remote: false };
  const app = createHttpApp({
    run: () => Promise.reject(new Error('the Go API is not under test here')),
    log: createLogger({ dir: join(home, 'logs'), level: 'debug', name: 'server' }),
    binding,
    groups: [
      {
        path: '/ui',
        app: viewerApp({
          store,
          settings: () => settings,
          search: (request) => engine.search(request),
          knows: (secret) => secret === SECRET,
          assets: join(ROOT, 'dist', 'ui'),
          installRoot: ROOT,
          now: () => new Date(),
          touch: () => void touched++,
        }),
      },
    ],
  });
  const { state, listener } = await listenHttp(app, binding);
  if (state.state !== 'listening' || !listener) throw new Error(JSON.stringify(state));
  listeners.push(listener);
  const url = state.url;
  const call = async (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) => {
    const response = await fetch(`${url}/ui/api${path}`, {
      method,
      headers: { [UI_SECRET_HEADER]: SECRET, ...(body !== undefined ? { 'content-type': 'application/json' } : {}), ...headers },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    });
    return { status: response.status, body: (await response.json()) as any };
  };
  return { url, store, home, call, touched: () => touched };
}

const harvest = { by: 'harvest', via: 'job' } as const;

describe('the per-launch secret', () => {
  it('serves the page and its assets without it, and refuses every API call without the right one, writing nothing', async () => {
    const viewer = await startViewer();
    const { engram } = addEngram(viewer.store, { text: 'Use pnpm, not npm, in the shop repository.' });
    for (const path of ['/ui', '/ui/', '/ui/assets/app.js', '/ui/assets/app.css']) {
      const response = await fetch(`${viewer.url}${path}`);
      expect(response.status, path).toBe(200);
      expect(response.headers.get('content-security-policy'), path).toContain("default-src 'none'");
      expect(response.headers.get('x-frame-options')).toBe('DENY');
    }
    expect(await (await fetch(`${viewer.url}/ui`)).text()).toContain('/ui/assets/app.js');
    expect((await fetch(`${viewer.url}/ui/assets/..%2F..%2Fpackage.json`)).status).toBe(404);

    for (const headers of [{ [UI_SECRET_HEADER]: '' }, { [UI_SECRET_HEADER]: 'wrong' }, { [UI_SECRET_HEADER]: `${SECRET}x` }]) {
      for (const [method, path, body] of [
        ['GET', '/engrams'],
        ['GET', `/engrams/${engram.id}`],
        ['GET', '/review'],
        ['GET', '/doctor'],
        ['POST', '/search', { query: 'pnpm' }],
        ['POST', `/engrams/${engram.id}/pin`, { pinned: true }],
        ['POST', '/review/forget', { ids: [engram.id] }],
      ] as Array<[string, string, unknown?]>) {
        const answer = await viewer.call(method, path, body, headers);
        expect(answer, `${method} ${path}`).toMatchObject({ status: 401, body: { code: 'UNAUTHORIZED' } });
      }
    }
    // A secret in a cookie or a query is not the header.
    const cookie = await fetch(`${viewer.url}/ui/api/engrams?${UI_SECRET_HEADER}=${SECRET}`, { headers: { cookie: `${UI_SECRET_HEADER}=${SECRET}` } });
    expect(cookie.status).toBe(401);
    expect(viewer.store.engrams.get(engram.id)).toMatchObject({ pinned: false, status: 'active' });
    expect(viewer.touched()).toBe(0);
    expect((await viewer.call('GET', '/ping')).status).toBe(200);
    expect(viewer.touched()).toBe(1);
  });

  it('keeps the HTTP guards: another origin cannot write even with the secret', async () => {
    const viewer = await startViewer();
    const { engram } = addEngram(viewer.store, { text: 'Deploys go through the release branch.' });
    const cross = await viewer.call('POST', `/engrams/${engram.id}/pin`, { pinned: true }, { origin: 'https://evil.example' });
    expect(cross).toMatchObject({ status: 403, body: { code: 'CROSS_ORIGIN' } });
    expect(viewer.store.engrams.get(engram.id)?.pinned).toBe(false);
    const same = await viewer.call('POST', `/engrams/${engram.id}/pin`, { pinned: true }, { origin: viewer.url });
    expect(same.status).toBe(200);
    expect(viewer.store.engrams.get(engram.id)?.pinned).toBe(true);
  });
});

describe('Engrams', () => {
  it('pages server-side and filters by status, category, tag, pinned, project, learned_by, code gone and staleness', async () => {
    const viewer = await startViewer();
    const store = viewer.store;
    const old = () => new Date('2024-01-01T00:00:00Z');
    for (let i = 1; i <= 120; i++) {
      addEngram(store, { text: `Service svc${i}q listens on port p${i}z, owned by team t${i}k, configured in cfg${i}w.yaml.`, category: i % 2 ? 'development' : 'ops', tags: i % 3 ? ['node'] : ['python'], ...(i % 10 === 0 ? { project: 'shop' } : {}) }, i <= 5 ? { now: old } : {});
    }
    const pending = addEngram(store, { text: 'Always run the e2e suite before pushing a branch.' }, { actor: harvest }).engram;
    store.engrams.update(3, { pinned: true });
    store.engrams.update(4, { liveness: 'gone' });

    const first = await viewer.call('GET', '/engrams?status=active&limit=50');
    expect(first.body).toMatchObject({ total: 120, limit: 50, offset: 0 });
    expect(first.body.engrams.map((e: { id: number }) => e.id)).toEqual(Array.from({ length: 50 }, (_, i) => i + 1));
    const third = await viewer.call('GET', '/engrams?status=active&limit=50&offset=100');
    expect(third.body.engrams.map((e: { id: number }) => e.id)).toEqual(Array.from({ length: 20 }, (_, i) => i + 101));

    const ids = async (query: string): Promise<number[]> => (await viewer.call('GET', `/engrams?${query}&limit=200`)).body.engrams.map((e: { id: number }) => e.id);
    expect(await ids('status=pending')).toEqual([pending.id]);
    expect((await ids('status=active,pending')).length).toBe(121);
    expect((await ids('category=ops')).every((id) => id % 2 === 0)).toBe(true);
    expect((await ids('tag=python')).every((id) => id % 3 === 0)).toBe(true);
    expect(await ids('pinned=true')).toEqual([3]);
    expect(await ids('project=shop')).toEqual([10, 20, 30, 40, 50, 60, 70, 80, 90, 100, 110, 120]);
    expect(await ids('learned_by=harvest&status=pending,active')).toEqual([pending.id]);
    expect(await ids('liveness=gone')).toEqual([4]);
    // Lessons decay after a year by default: the five written in 2024 are stale.
    expect(await ids('stale=true')).toEqual([1, 2, 3, 4, 5]);
    // Keyset pages: right after or before an id, the same rows as the offset pages.
    expect((await viewer.call('GET', '/engrams?status=active&limit=50&after=50')).body.engrams.map((e: { id: number }) => e.id)).toEqual(Array.from({ length: 50 }, (_, i) => i + 51));
    expect((await viewer.call('GET', '/engrams?status=active&limit=50&before=101')).body.engrams.map((e: { id: number }) => e.id)).toEqual(Array.from({ length: 50 }, (_, i) => i + 51));
    expect((await viewer.call('GET', '/engrams?after=1&before=9')).status).toBe(400);
    expect((await viewer.call('GET', '/engrams?after=x')).status).toBe(400);
    expect((await viewer.call('GET', '/engrams?status=bogus')).status).toBe(400);
    expect((await viewer.call('GET', '/engrams?limit=100000')).status).toBe(400);

    const facets = (await viewer.call('GET', '/facets')).body;
    expect(facets.categories).toEqual(expect.arrayContaining([{ value: 'development', count: 60 }, { value: 'general', count: 1 }, { value: 'ops', count: 60 }]));
    expect(facets.projects).toEqual(expect.arrayContaining([{ value: 'shop', count: 12 }]));
    // Counted once per store generation: a new engram counts at once.
    addEngram(store, { text: 'A new operations note about the nightly backup window.', category: 'ops' });
    expect((await viewer.call('GET', '/facets')).body.categories).toEqual(expect.arrayContaining([{ value: 'ops', count: 61 }]));
  });

  it('shows one engram with its history and learning state, and pins, edits and deprecates it as the user via http', async () => {
    const viewer = await startViewer();
    const { engram } = addEngram(viewer.store, { text: 'Run make migrate before the test suite.', tags: ['make'] });
    viewer.store.stats.upsertTagRelevance(engram.id, { tag: 'linux', score: 1.5, positive_evals: 3, negative_evals: 0, last_evaluated_at: new Date().toISOString() });

    expect((await viewer.call('POST', `/engrams/${engram.id}/pin`, { pinned: true })).body).toMatchObject({ status: 'updated' });
    const edited = await viewer.call('PATCH', `/engrams/${engram.id}`, { text: 'Run make migrate before the whole test suite.', tags: ['make', 'db'] });
    expect(edited.status).toBe(200);
    expect((await viewer.call('PATCH', `/engrams/${engram.id}`, {})).status).toBe(400);
    expect((await viewer.call('POST', `/engrams/${engram.id}/deprecate`, { reason: 'we use the Makefile no more' })).status).toBe(200);
    expect(viewer.store.engrams.get(engram.id)).toMatchObject({ pinned: true, text: 'Run make migrate before the whole test suite.', tags: ['db', 'make'], status: 'deprecated' });

    const detail = (await viewer.call('GET', `/engrams/${engram.id}`)).body;
    expect(detail.engram).toMatchObject({ id: engram.id, status: 'deprecated' });
    expect(detail.stats.tag_relevance).toEqual([expect.objectContaining({ tag: 'linux', score: 1.5 })]);
    expect(detail.history.map((step: { op: string; via: string }) => `${step.op}/${step.via}`)).toEqual(['add/api', 'pin/http', 'edit/http', 'deprecate/http']);
    const audit = listAudit(viewer.store, { engramId: engram.id });
    expect(audit.filter((entry) => entry.via === 'http').every((entry) => entry.actor === 'user')).toBe(true);
    expect((await viewer.call('GET', '/engrams/99999')).status).toBe(404);
    expect((await viewer.call('GET', '/engrams/abc')).status).toBe(400);
  });
});

describe('Review', () => {
  it('approves, rejects and forgets queued engrams, and undoes the last action', async () => {
    const viewer = await startViewer();
    const a = addEngram(viewer.store, { text: 'Always run the full e2e suite before pushing a branch.' }, { actor: harvest }).engram;
    const b = addEngram(viewer.store, { text: 'The staging database is reset every Monday night.' }, { actor: harvest }).engram;
    const c = addEngram(viewer.store, { text: 'Feature flags live in config/flags.yaml of the web app.' }, { actor: harvest }).engram;
    const queue = (await viewer.call('GET', '/review')).body;
    expect(queue.total).toBe(3);
    expect(queue.items.map((item: { engram: { id: number } }) => item.engram.id).sort()).toEqual([a.id, b.id, c.id]);

    const approved = await viewer.call('POST', '/review/approve', { ids: [a.id] });
    expect(approved.body.decisions).toEqual([expect.objectContaining({ id: a.id, action: 'promoted', to: 'active' })]);
    expect(viewer.store.engrams.get(a.id)?.status).toBe('active');
    await viewer.call('POST', '/review/reject', { ids: [b.id], reason: 'not true any more' });
    expect(viewer.store.engrams.get(b.id)).toMatchObject({ status: 'rejected', status_reason: 'not true any more' });
    await viewer.call('POST', '/review/forget', { ids: [c.id] });
    expect(viewer.store.engrams.get(c.id)).toBeUndefined();

    // Undo without a token reverses the latest operation (the forget), then the reject with its token.
    expect((await viewer.call('POST', '/undo', {})).body.undid).toEqual([expect.objectContaining({ op: 'forget', engram_ids: [c.id] })]);
    expect(viewer.store.engrams.get(c.id)?.status).toBe('pending');
    const token = listAudit(viewer.store, { engramId: b.id }).find((entry) => entry.op === 'reject')?.token;
    await viewer.call('POST', '/undo', { token });
    expect(viewer.store.engrams.get(b.id)?.status).toBe('pending');
    expect(listAudit(viewer.store, {}).filter((entry) => entry.via === 'http').map((entry) => `${entry.actor}:${entry.op}`)).toEqual(
      expect.arrayContaining(['user:approve', 'user:reject', 'user:forget']),
    );
    expect((await viewer.call('POST', '/review/approve', { ids: [] })).status).toBe(400);
  });
});

describe('Search', () => {
  it('answers with each result’s BM25 rank, fused score and adjustments, and the abstain verdict', async () => {
    const viewer = await startViewer();
    const { engram } = addEngram(viewer.store, { text: 'Use pnpm, not npm, in the shop repository.', tags: ['node'] });
    addEngram(viewer.store, { text: 'Python services are formatted with black.' });
    viewer.store.engrams.update(engram.id, { pinned: true });
    viewer.store.stats.upsertTagRelevance(engram.id, { tag: 'node', score: 2, positive_evals: 4, negative_evals: 0, last_evaluated_at: new Date().toISOString() });
    const answer = (await viewer.call('POST', '/search', { query: 'pnpm shop repository', env_tags: ['node'] })).body;
    expect(answer.results[0]).toMatchObject({ id: engram.id, ranks: { bm25: 1 } });
    const adjustments = answer.results[0].adjustments;
    expect(adjustments.pinned).toBeGreaterThan(1);
    expect(adjustments.tag_relevance).toMatchObject({ average: 2, evals: 4 });
    expect(adjustments.tag_relevance.factor).toBeGreaterThan(1);
    expect(answer.results[0].score).toBeCloseTo(adjustments.fused * adjustments.tag_relevance.factor * adjustments.pinned * adjustments.recency, 5);
    expect(answer.explain.abstain).toMatchObject({ weak: null });
    expect(answer.explain.fusion.lists.bm25).toBeGreaterThan(0);

    // A weak match still shows its nearest results, with the verdict that the hooks would stay silent.
    const weak = (await viewer.call('POST', '/search', { query: 'kubernetes helm chart pnpm' })).body;
    expect(weak.weak).toEqual(expect.any(String));
    expect(weak.abstained).toBeNull();
    expect(weak.results.length).toBeGreaterThan(0);
    expect((await viewer.call('POST', '/search', { query: '' })).status).toBe(400);
  });
});

describe('Review pages', () => {
  it('pages the queue beyond 200 on the server, and refuses bad paging with a 400', async () => {
    const viewer = await startViewer();
    for (let i = 0; i < 260; i++) addEngram(viewer.store, { text: `Queued lesson r${i}x about worker w${i}y and queue q${i}z.` }, { actor: harvest });
    const first = (await viewer.call('GET', '/review?limit=200')).body;
    expect(first).toMatchObject({ total: 260, offset: 0, limit: 200 });
    const rest = (await viewer.call('GET', '/review?limit=200&offset=200')).body;
    expect(rest.items).toHaveLength(60);
    const ids = [...first.items, ...rest.items].map((item: { engram: { id: number } }) => item.engram.id);
    expect(new Set(ids).size).toBe(260);
    expect((await viewer.call('GET', '/review?limit=0')).status).toBe(400);
    expect((await viewer.call('GET', '/review?offset=-3')).status).toBe(400);
    expect((await viewer.call('GET', '/review?page=2')).status).toBe(400);
  });
});

describe('Sessions, tapes and explain', () => {
  const FIXTURE = join(SHARED, 'fixtures', 'transcripts', 'claude-code-2.1.197__scripted-session.jsonl');
  const SESSION = 'f62cb199-5524-4dac-8011-3b74b972172a';

  async function withSession() {
    const viewer = await startViewer();
    const repo = tempDir();
    initRepo({ cwd: repo });
    recordSessionStart(viewer.store, { sessionId: SESSION, agent: 'claude', cwd: repo, transcriptPath: FIXTURE }, 'startup', { now: () => new Date('2026-11-22T00:57:40Z') });
    recordSessionStart(viewer.store, { sessionId: 'other', agent: 'codex', cwd: repo, transcriptPath: null }, 'startup', { now: () => new Date('2026-11-22T01:00:00Z') });
    const recorded = await recordTranscript({ path: FIXTURE, cwd: repo, home: viewer.home });
    return { ...viewer, repo, recorded };
  }

  it('needs the secret on every new route', async () => {
    const viewer = await startViewer();
    for (const [method, path, body] of [
      ['GET', '/sessions'],
      ['GET', '/session-facets'],
      ['GET', '/sessions/x'],
      ['GET', '/sessions/x/tools'],
      ['GET', '/tape-folders'],
      ['GET', '/tapes'],
      ['GET', '/tapes/0123456789ab'],
      ['POST', '/explain', { root: '/', span: 'a:1-2' }],
    ] as Array<[string, string, unknown?]>) {
      expect(await viewer.call(method, path, body, { [UI_SECRET_HEADER]: 'wrong' }), `${method} ${path}`).toMatchObject({ status: 401, body: { code: 'UNAUTHORIZED' } });
    }
  });

  it('lists sessions newest first by cursor, shows one with its tapes, and refuses bad input with a clear 400', async () => {
    const viewer = await withSession();
    const page = (await viewer.call('GET', '/sessions?limit=1')).body;
    expect(page).toMatchObject({ total: 2, limit: 1, sessions: [{ id: 'other', agent: 'codex' }] });
    const next = (await viewer.call('GET', `/sessions?limit=1&after=${encodeURIComponent(page.next)}`)).body;
    expect(next.sessions.map((s: { id: string }) => s.id)).toEqual([SESSION]);
    expect((await viewer.call('GET', '/sessions?agent=claude')).body.sessions.map((s: { id: string }) => s.id)).toEqual([SESSION]);
    expect((await viewer.call('GET', '/session-facets')).body.agents).toEqual(expect.arrayContaining([{ value: 'claude', count: 1 }]));
    const detail = (await viewer.call('GET', `/sessions/${SESSION}`)).body;
    expect(detail.session.id).toBe(SESSION);
    expect(detail.tapes.map((t: { tape_id: string }) => t.tape_id).sort()).toEqual(viewer.recorded.tapes.map((t) => t.tape_id).sort());
    expect((await viewer.call('GET', `/sessions/${SESSION}/tools?offset=0&limit=10`)).body).toMatchObject({ total: 0, items: [] });
    expect((await viewer.call('GET', '/sessions/nope')).status).toBe(404);
    const bad = await viewer.call('GET', '/sessions?agent=robot');
    expect(bad).toMatchObject({ status: 400, body: { code: 'INVALID_INPUT' } });
    expect(bad.body.error).toContain('agent');
    expect((await viewer.call('GET', '/sessions?after=garbage')).body.error).toContain('cursor');
    expect((await viewer.call('GET', `/sessions/${SESSION}/tools?limit=9999`)).status).toBe(400);
  });

  it('lists tapes of the known folders, reads a timeline around an event, and explains a span into the tape moment of its edit', async () => {
    const viewer = await withSession();
    const folders = (await viewer.call('GET', '/tape-folders')).body.folders;
    expect(folders).toEqual([expect.objectContaining({ root: viewer.repo, opted_in: true })]);
    const tapes = (await viewer.call('GET', '/tapes?limit=10')).body;
    expect(tapes.total).toBe(viewer.recorded.tapes.length);
    expect((await viewer.call('GET', `/tapes?project=${folders[0].project}&session=${SESSION}`)).body.total).toBe(viewer.recorded.tapes.length);
    expect((await viewer.call('GET', '/tapes?project=unknown')).status).toBe(404);
    const main = viewer.recorded.tapes[0]?.tape_id as string;
    const whole = (await viewer.call('GET', `/tapes/${main}?limit=1000`)).body;
    const edit = whole.events.find((event: { k: string; op: string }) => event.k === 'code.edit' && event.op === 'create');
    expect(edit.file).toContain('retry.py');
    const around = (await viewer.call('GET', `/tapes/${main.slice(0, 12)}?limit=5&around=${edit.offset}`)).body;
    expect(around.events.map((event: { offset: number }) => event.offset)).toContain(edit.offset);
    expect((await viewer.call('GET', `/tapes/${main}?around=99999`)).status).toBe(400);
    expect((await viewer.call('GET', '/tapes/xyz')).status).toBe(400);

    // The code the session wrote, in the working tree: explain finds the tape and the edit's event.
    mkdirSync(join(viewer.repo, 'src'), { recursive: true });
    const text = (edit.after_text as string).replace(/\n$/, '');
    writeFileSync(join(viewer.repo, 'src', 'retry.py'), `${text}\n`);
    const lines = text.split('\n').length;
    const answer = (await viewer.call('POST', '/explain', { root: viewer.repo, span: `src/retry.py:1-${lines}` })).body;
    expect(answer.results[0]).toMatchObject({ tape_id: main });
    expect(answer.results[0].touches.map((touch: { offset: number }) => touch.offset)).toContain(edit.offset);
    // Bad input: not a known working tree, outside it, not a span.
    expect((await viewer.call('POST', '/explain', { root: '/etc', span: 'passwd:1-2' })).status).toBe(400);
    const outside = await viewer.call('POST', '/explain', { root: viewer.repo, span: '../../etc/passwd:1-2' });
    expect(outside).toMatchObject({ status: 400, body: { code: 'INVALID_INPUT' } });
    expect(outside.body.error).toContain('not a file of');
    expect((await viewer.call('POST', '/explain', { root: viewer.repo, span: 'src/retry.py' })).body.error).toContain('file:start-end');
    expect((await viewer.call('POST', '/explain', { root: viewer.repo, span: 'src/missing.py:1-2' })).status).toBe(404);
  });
});

// The body of bench/ui.mjs (bundled by it).
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { createLogger, loadSettings, openStore, readEnv, type Store } from '../src/core/index.js';
import { createHttpApp, listenHttp, type Binding } from '../src/http/index.js';
import * as services from '../src/services/index.js';
import { createSearchEngine, governancePolicy, importEngrams, listEngrams, reviewQueue, searchTuning, tapeLocation, writeTape, type TapeEvent } from '../src/services/index.js';
import { UI_SECRET_HEADER, viewerApp } from '../src/ui/index.js';
import { seededRandom } from './_random.js';

const args = process.argv.slice(2);
const option = (name: string, fallback: number): number => {
  const index = args.indexOf(name);
  return index >= 0 ? Number(args[index + 1]) : fallback;
};
const SIZE = option('--size', 100_000);
const REPS = option('--reps', 40);
/** Agent sessions (each with prompts, tool calls, what was shown and judged) and tapes (one per session, of the newest). */
const SESSIONS = option('--sessions', 5_000);
const TAPES = option('--tapes', 300);
const TAPE_EVENTS = option('--tape-events', 400);
const root = args[args.indexOf('--root') + 1] as string;
const textIndexWorker = args[args.indexOf('--text-index-worker') + 1] ?? '';

const random = seededRandom(17);
const WORDS = 'build deploy cache test lint migrate schema index query route handler worker queue token config docker node python rust react api auth log metric trace'.split(' ');
const CATEGORIES = ['development', 'development/node', 'development/web', 'ops', 'ci', 'testing', 'security'];
const PROJECTS = ['shop', 'billing', 'infra', 'web', null];
const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)] as T;
const sentence = (i: number): string => `${Array.from({ length: 8 + Math.floor(random() * 16) }, () => pick(WORDS)).join(' ')} (item ${i} w${Math.floor(random() * 1e9).toString(36)})`;

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return Math.round((sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] as number) * 100) / 100;
}

async function timed(run: () => Promise<unknown> | unknown): Promise<{ first_ms: number; p50_ms: number; p95_ms: number }> {
  let started = performance.now();
  await run();
  const first = performance.now() - started;
  const times: number[] = [];
  for (let i = 0; i < REPS; i++) {
    started = performance.now();
    await run();
    times.push(performance.now() - started);
  }
  return { first_ms: Math.round(first * 100) / 100, p50_ms: percentile(times, 50), p95_ms: percentile(times, 95) };
}

const dir = mkdtempSync(join(tmpdir(), 'engram-bench-ui-'));
const store: Store = openStore({ path: join(dir, 'engram.db') });
try {
  let started = performance.now();
  // 2,000 engrams through the import service (dedup, tiers, audit), then copies of them by SQL with fresh ids, uids
  // and hashes up to SIZE: importing 100k one by one would take this machine many minutes and measure nothing here.
  const base = Math.min(SIZE, 2_000);
  const lines = Array.from({ length: base }, (_, i) => {
    const project = pick(PROJECTS);
    return JSON.stringify({ text: sentence(i), category: pick(CATEGORIES), tags: [pick(WORDS), pick(WORDS)], ...(project ? { project } : {}) });
  });
  importEngrams(store, lines, { batchSize: 1_000 });
  const columns = (store.db.prepare('SELECT name FROM pragma_table_info(?)').pluck().all('engrams') as string[]).filter((name) => !['id', 'uid', 'content_hash', 'text'].includes(name));
  const copy = store.db.prepare(
    `INSERT INTO engrams (uid, content_hash, text, ${columns.join(', ')})
       SELECT lower(hex(randomblob(16))), lower(hex(randomblob(32))), text || ' #' || (SELECT count(*) FROM engrams), ${columns.join(', ')}
         FROM engrams ORDER BY id LIMIT ?`,
  );
  store.db.transaction(() => {
    for (let have = store.engrams.counts().total; have < SIZE; have = store.engrams.counts().total) copy.run(Math.min(have, SIZE - have));
  })();
  // A realistic spread of review states and pins (the list's default shows active and pending).
  store.db.exec(`UPDATE engrams SET status = 'pending' WHERE id % 50 = 0; UPDATE engrams SET pinned = 1 WHERE id % 97 = 0;`);

  // Sessions as the hooks and jobs leave them: every third engram names the session it was learned in; each session
  // has 5 prompts, 20 tool calls, 3 engrams shown, 2 judgements and an audit row. By SQL, for the same reason.
  const cwds = PROJECTS.map((project) => join(dir, 'work', project ?? 'scratch'));
  const sessionId = (i: number): string => `sess-${String(i).padStart(6, '0')}`;
  store.db.transaction(() => {
    const session = store.db.prepare("INSERT INTO sessions (id, agent, project, cwd, started_at, last_activity_at, ended_at, turns) VALUES (?, ?, ?, ?, ?, ?, ?, 7)");
    const prompt = store.db.prepare('INSERT INTO user_prompts (uid, session_id, content, project, created_at) VALUES (?, ?, ?, ?, ?)');
    const tool = store.db.prepare('INSERT INTO tool_events (session_id, tool_use_id, tool_name, target, ok, duration_ms, at) VALUES (?, ?, ?, ?, ?, 12, ?)');
    const shown = store.db.prepare("INSERT INTO session_shown_engrams (session_id, engram_id, event, query, score, rank, chars, answered_by, shown_at) VALUES (?, ?, 'UserPromptSubmit', ?, 0.5, ?, 120, 'server', ?)");
    const judged = store.db.prepare("INSERT INTO engram_judgements (session_id, engram_id, source, score, evidence, judged_by, at) VALUES (?, ?, 'evaluation', 2, 'quoted', 'judge', ?)");
    const audit = store.db.prepare("INSERT INTO session_audit (session_id, env_tags, repo, eval_status, created_at, updated_at) VALUES (?, '[\"node\"]', ?, 'completed', ?, ?)");
    for (let i = 0; i < SESSIONS; i++) {
      const at = new Date(Date.UTC(2026, 0, 1) + i * 600_000).toISOString();
      const p = i % PROJECTS.length;
      const id = sessionId(i);
      session.run(id, i % 3 ? 'claude' : 'codex', PROJECTS[p] ?? null, cwds[p], at, at, at);
      for (let j = 0; j < 5; j++) prompt.run(`${id}-p${j}`, id, sentence(j), PROJECTS[p] ?? null, at);
      for (let j = 0; j < 20; j++) tool.run(id, `t${j}`, pick(['Bash', 'Read', 'Edit', 'Grep']), `src/${pick(WORDS)}.ts`, j % 9 ? 1 : 0, at);
      for (let j = 0; j < 3; j++) shown.run(id, 1 + ((i * 3 + j) % SIZE), sentence(j), j + 1, at);
      for (let j = 0; j < 2; j++) judged.run(id, 1 + ((i * 3 + j) % SIZE), at);
      audit.run(id, PROJECTS[p] ?? null, at, at);
    }
    store.db.prepare("UPDATE engrams SET source_sessions = json_array(printf('sess-%06d', id % ?)) WHERE id % 3 = 0").run(SESSIONS);
  })();

  // Tapes of the newest sessions, in their projects' tape folders under the home (what ingest writes).
  const tapeIds: string[] = [];
  for (let i = SESSIONS - TAPES; i < SESSIONS; i++) {
    const p = i % PROJECTS.length;
    const source = { harness: 'claude' as const, session_id: sessionId(i) };
    const t = (k: number): string => new Date(Date.UTC(2026, 0, 1) + i * 600_000 + k * 1_000).toISOString();
    const events: TapeEvent[] = [{ k: 'meta', label: 'session', t: t(0), source, cwd: cwds[p] as string, model: 'bench-model' }];
    for (let k = 1; events.length < TAPE_EVENTS; k++) {
      const file = `src/${pick(WORDS)}.ts`;
      const code = sentence(k);
      events.push(
        { k: 'msg.in', t: t(k), source, text: sentence(k) },
        { k: 'tool.call', t: t(k), source, tool: 'Edit', call_id: `c${k}`, args: { file_path: file } },
        { k: 'tool.result', t: t(k), source, tool: 'Edit', call_id: `c${k}`, stdout: 'ok', is_error: false },
        { k: 'code.edit', t: t(k), source, file, op: 'edit', before_range: [k, k], after_range: [k, k + 1], before_text: 'x', after_text: code, before_hash: null, after_hash: null, call_id: `c${k}` },
        { k: 'msg.out', t: t(k), source, text: sentence(k) },
      );
    }
    tapeIds.push((await writeTape(tapeLocation(cwds[p] as string, dir).tapes_dir, events)).tape_id);
  }
  const seedMs = Math.round(performance.now() - started);

  // The review queue's first call in a process that holds no text index yet (a CLI `engram review`): it builds the
  // index on the way, from its own connection.
  const cold = openStore({ path: join(dir, 'engram.db') });
  started = performance.now();
  reviewQueue(cold, { limit: 50 });
  const reviewColdMs = Math.round(performance.now() - started);
  cold.close();
  // The warm server builds its text index in a worker thread when it starts (as it builds its BM25 index), so the
  // viewer's first Review call finds it; this process does the same before measuring. Trees without it skip this.
  let textIndexWarmMs: number | null = null;
  const warm = (services as unknown as { warmTextIndex?: (store: Store, builder?: unknown) => Promise<unknown>; textIndexWorkerBuilder?: (script: string) => unknown }).warmTextIndex;
  if (warm && textIndexWorker) {
    started = performance.now();
    await warm(store, (services as unknown as { textIndexWorkerBuilder: (script: string) => unknown }).textIndexWorkerBuilder(textIndexWorker));
    textIndexWarmMs = Math.round(performance.now() - started);
  }

  const env = readEnv({ HOME: dir, ENGRAM_HOME: dir, ENGRAM_EMBEDDER: 'none' });
  const settings = loadSettings(env);
  const engine = createSearchEngine(store, { embedder: null, indexDir: join(dir, 'index'), tuning: searchTuning(settings.config) });
  const secret = 'bench-secret-0123456789abcdefghijkl';
  const binding: Binding = { host: '127.0.0.1', port: 0, remote: false };
  const app = createHttpApp({
    run: () => Promise.reject(new Error('not benchmarked')),
    log: createLogger({ dir: join(dir, 'logs'), level: 'warn', name: 'server' }),
    binding,
    groups: [
      {
        path: '/ui',
        app: viewerApp({ store, settings: () => settings, search: (r) => engine.search(r), knows: (s) => s === secret, assets: join(root, 'dist', 'ui'), installRoot: root, now: () => new Date(), touch: () => {} }),
      },
    ],
  });
  const { state, listener } = await listenHttp(app, binding);
  if (state.state !== 'listening' || !listener) throw new Error(JSON.stringify(state));
  const get = async (path: string, init: RequestInit = {}): Promise<unknown> => {
    const response = await fetch(`${state.url}/ui/api${path}`, { ...init, headers: { [UI_SECRET_HEADER]: secret, ...(init.body ? { 'content-type': 'application/json' } : {}) } });
    if (!response.ok) throw new Error(`${path}: ${response.status} ${await response.text()}`);
    return response.json();
  };

  const results: Record<string, unknown> = {};
  results.ping_roundtrip = await timed(() => get('/ping'));
  results.first_page_in_process = await timed(() => listEngrams(store, { statuses: ['active', 'pending'], limit: 50, offset: 0 }));
  const firstPage = await timed(() => get('/engrams?status=active,pending&limit=50&offset=0'));
  results.first_page_api = firstPage;
  results.filtered_page_api = await timed(() => get('/engrams?status=active&category=development&tag=cache&project=shop&limit=50'));
  // The same deep page two ways, in this run: OFFSET (before) and keyset, right after the previous page's last id (after).
  const deepOffset = Math.max(0, SIZE - 2_000);
  const deepAfter = (listEngrams(store, { statuses: ['active', 'pending'], limit: 1, offset: deepOffset - 1 }).engrams[0]?.id ?? 0) as number;
  const byOffset = (await get(`/engrams?status=active,pending&limit=50&offset=${deepOffset}`)) as { engrams: Array<{ id: number }> };
  const byKeyset = (await get(`/engrams?status=active,pending&limit=50&after=${deepAfter}`)) as { engrams: Array<{ id: number }> };
  if (JSON.stringify(byOffset.engrams.map((e) => e.id)) !== JSON.stringify(byKeyset.engrams.map((e) => e.id))) throw new Error('keyset and offset pages differ');
  results.deep_page_offset_api = await timed(() => get(`/engrams?status=active,pending&limit=50&offset=${deepOffset}`));
  results.deep_page_keyset_api = await timed(() => get(`/engrams?status=active,pending&limit=50&after=${deepAfter}`));
  results.stale_page_api = await timed(() => get('/engrams?status=active&stale=true&limit=50'));
  // Filter counts: the four queries engramFacets ran before (one GROUP BY per column, json_each over every row's tags),
  // and now (one pass), uncached (the search generation moved before each call) and cached (it did not).
  const oldFacets = [
    'SELECT category AS value, count(*) AS count FROM engrams WHERE deleted_at IS NULL GROUP BY category ORDER BY count DESC, value',
    'SELECT project AS value, count(*) AS count FROM engrams WHERE deleted_at IS NULL GROUP BY project ORDER BY count DESC, value',
    'SELECT status AS value, count(*) AS count FROM engrams WHERE deleted_at IS NULL GROUP BY status ORDER BY count DESC, value',
    'SELECT t.value AS value, count(*) AS count FROM engrams e, json_each(e.tags) t WHERE e.deleted_at IS NULL GROUP BY t.value ORDER BY count DESC, t.value LIMIT 200',
  ].map((sql) => store.db.prepare(sql));
  // A real write moves the generation (the triggers log it), as any edit would: a bare bump of search_state would leave
  // the change log short of it, and every index that follows the log (BM25, the text index) would be rebuilt.
  const bump = store.db.prepare('UPDATE engrams SET title = title WHERE id = 1');
  results.facets_before_in_process = await timed(() => oldFacets.map((statement) => statement.all()));
  // Seconds of synchronous work: the server closed the idle keep-alive connection meanwhile; one ping absorbs that.
  await get('/ping').catch(() => get('/ping'));
  results.facets_api_uncached = await timed(() => {
    bump.run();
    return get('/facets');
  });
  results.facets_api_cached = await timed(() => get('/facets'));
  results.detail_api = await timed(() => get(`/engrams/${Math.floor(SIZE / 2)}`));
  results.review_first_page_api = await timed(() => get('/review?limit=50'));
  results.review_page_40_api = await timed(() => get('/review?limit=50&offset=1950'));
  results.sessions_first_page_api = await timed(() => get('/sessions?limit=50'));
  const sessionPage = (await get('/sessions?limit=50')) as { next: string };
  results.sessions_next_page_api = await timed(() => get(`/sessions?limit=50&after=${encodeURIComponent(sessionPage.next)}`));
  results.sessions_filtered_page_api = await timed(() => get('/sessions?limit=50&agent=codex&project=shop'));
  results.session_detail_api = await timed(() => get(`/sessions/${sessionId(SESSIONS - 1)}`));
  results.tapes_first_page_api = await timed(() => get('/tapes?limit=50'));
  results.tape_timeline_api = await timed(() => get(`/tapes/${tapeIds.at(-1)}?limit=200`));
  results.tape_timeline_around_api = await timed(() => get(`/tapes/${tapeIds[0]}?limit=200&around=${TAPE_EVENTS - 10}`));
  // The BM25 index is built in this same process (the warm server has it at start); a connection kept alive across
  // that synchronous build may be closed under the next request, so one ping absorbs that before measuring.
  await engine.search({ query: 'warm the index' });
  await get('/ping').catch(() => get('/ping'));
  results.search_explain_api = await timed(() => get('/search', { method: 'POST', body: JSON.stringify({ query: 'docker cache migrate schema' }) }));
  const inProcess = results.first_page_in_process as { p50_ms: number };
  const ping = results.ping_roundtrip as { p50_ms: number };
  const p50 = (name: string): number => (results[name] as { p50_ms: number }).p50_ms;
  const ratio = (a: number, b: number): number => Math.round((a / b) * 100) / 100;
  const firstPages = ['sessions_first_page_api', 'tapes_first_page_api', 'review_first_page_api', 'tape_timeline_api'] as const;
  process.stdout.write(
    `${JSON.stringify(
      {
        bench: 'ui',
        engrams: store.engrams.counts().total,
        sessions: SESSIONS,
        tapes: TAPES,
        tape_events: TAPE_EVENTS,
        seed_ms: seedMs,
        text_index_warm_ms: textIndexWarmMs,
        review_first_page_cold_process_ms: reviewColdMs,
        load_average: loadavg().map((value) => Math.round(value * 100) / 100),
        reps: REPS,
        results,
        first_page_target_ms: 300,
        first_page_within_target: firstPage.first_ms <= 300 && firstPage.p95_ms <= 300,
        first_page_vs_in_process: Math.round((firstPage.p50_ms / inProcess.p50_ms) * 100) / 100,
        first_page_vs_ping: Math.round((firstPage.p50_ms / ping.p50_ms) * 100) / 100,
        deep_page_keyset_vs_offset: ratio(p50('deep_page_keyset_api'), p50('deep_page_offset_api')),
        facets_uncached_vs_before: ratio(p50('facets_api_uncached'), p50('facets_before_in_process')),
        facets_cached_vs_before: ratio(p50('facets_api_cached'), p50('facets_before_in_process')),
        new_first_pages_within_target: Object.fromEntries(firstPages.map((name) => [name, (results[name] as { first_ms: number; p95_ms: number }).first_ms <= 300 && (results[name] as { p95_ms: number }).p95_ms <= 300])),
        policy_decay_default: governancePolicy(settings.config).decay.default ?? null,
      },
      null,
      2,
    )}\n`,
  );
  await listener.close();
} finally {
  store.close();
  rmSync(dir, { recursive: true, force: true });
}

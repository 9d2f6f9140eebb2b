/**
 * The viewer's routes (`engram ui`), mounted by the warm server under `/ui` after the HTTP API's shared guards (Host,
 * Origin, body caps, deadlines). The page and its two assets carry no data and are served to anyone who passes those
 * guards; every `/ui/api/*` call needs the per-launch secret in the `x-engram-ui` header (never a cookie, so another
 * page cannot ride on it), else 401. Each route is one service call; writes act for `{by: 'user', via: 'http'}`.
 * @module
 */
import { timingSafeEqual } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { isAbsolute, join, relative, resolve } from 'node:path';
import { Hono, type Context, type MiddlewareHandler } from 'hono';
import * as z from 'zod';
import { bodyText } from '../http/index.js';
import { EngramError, formatIssues, normalizeCategory, normalizeTags, type Settings, type Store } from '../core/index.js';
import {
  deprecateEngram,
  engramDetail,
  engramFacets,
  explainInFolder,
  findTape,
  governancePolicy,
  reviewQueue,
  listEngrams,
  listSessions,
  listTapePage,
  pinEngram,
  runDoctor,
  sessionActivity,
  sessionDetail,
  sessionFacets,
  SESSION_AGENTS,
  tapeFolders,
  tapeTimeline,
  textIndexReady,
  updateEngram,
  type Actor,
  type DoctorReport,
  type SearchRequest,
  type SearchResponse,
} from '../services/index.js';
import { approveEngrams, forgetEngrams, rejectEngrams, undoOperation } from '../services/gate/index.js';

/** The header every API call of the page carries. */
export const UI_SECRET_HEADER = 'x-engram-ui';

/** Who the viewer's writes are: a person, through the page. */
export const VIEWER_USER: Actor = { by: 'user', via: 'http' };

/** What the viewer's routes run with (the warm server's parts). */
export interface ViewerContext {
  store: Store;
  /** config.json as of now (the server reloads it when it changes). */
  settings(): Settings;
  /** The server's warm search engine. */
  search(request: SearchRequest): Promise<SearchResponse>;
  /** Whether this secret was handed out by `engram ui` to this server. */
  knows(secret: string): boolean;
  /** The folder holding index.html, app.js and app.css (dist/ui). */
  assets: string;
  /** The install folder (doctor checks its dist/ and node_modules/). */
  installRoot: string;
  now(): Date;
  /** Called on every API call: an open page keeps the background server from stopping idle. */
  touch(): void;
}

/** Sorted, deduplicated comma list → array (empty → undefined). */
const list = (value: string | undefined): string[] | undefined => {
  const items = (value ?? '')
    .split(',')
    .map((item) => item.trim())
    .filter(Boolean);
  return items.length ? [...new Set(items)] : undefined;
};

const STATUSES = ['pending', 'active', 'rejected', 'deprecated'] as const;
const LEARNED_BY = ['user', 'agent', 'harvest', 'import', 'sync'] as const;
const LIVENESS = ['unknown', 'alive', 'gone', 'kept'] as const;

const ListQuery = z.strictObject({
  status: z.string().optional(),
  category: z.string().optional(),
  tag: z.string().optional(),
  pinned: z.enum(['true', 'false']).optional(),
  liveness: z.string().optional(),
  learned_by: z.string().optional(),
  project: z.string().optional(),
  stale: z.enum(['true']).optional(),
  limit: z.coerce.number().int().min(1).max(200).optional(),
  offset: z.coerce.number().int().min(0).optional(),
  after: z.coerce.number().int().min(0).optional(),
  before: z.coerce.number().int().min(1).optional(),
});

const Paging = (max: number) =>
  z.strictObject({
    limit: z.coerce.number().int().min(1).max(max).optional(),
    offset: z.coerce.number().int().min(0).optional(),
  });

const SessionsQuery = z.strictObject({
  project: z.string().max(500).optional(),
  agent: z.enum(SESSION_AGENTS).optional(),
  limit: z.coerce.number().int().min(1).max(200).optional(),
  after: z.string().min(1).max(2000).optional(),
});

/** A tapes folder is named by its project key (`$ENGRAM_HOME/tapes/<project>`, or an opted-in repository's). */
const TapesQuery = z.strictObject({
  project: z.string().min(1).max(300).optional(),
  session: z.string().min(1).max(500).optional(),
  limit: z.coerce.number().int().min(1).max(200).optional(),
  offset: z.coerce.number().int().min(0).optional(),
});

const TimelineQuery = z.strictObject({
  limit: z.coerce.number().int().min(1).max(1000).optional(),
  offset: z.coerce.number().int().min(0).optional(),
  around: z.coerce.number().int().min(0).optional(),
});

/** `file:start-end` (or `file:line`), as `engram explain` takes it. */
const SPAN = /^(.+):(\d+)(?:-(\d+))?$/;
const ExplainBody = z.strictObject({
  span: z.string().min(3).max(2000).regex(SPAN, 'span must be file:start-end (or file:line)'),
  /** The working tree to explain in: one of the known tape folders' roots. */
  root: z.string().min(1).max(4000),
  limit: z.number().int().min(1).max(50).optional(),
});

function parse<T>(schema: z.ZodType<T>, value: unknown, what: string): T {
  const parsed = schema.safeParse(value);
  if (!parsed.success) throw new EngramError('INVALID_INPUT', `${what}: ${formatIssues(parsed.error)}`);
  return parsed.data;
}

function enumList<T extends string>(value: string | undefined, allowed: readonly T[], name: string): T[] | undefined {
  const items = list(value);
  if (!items) return undefined;
  const bad = items.filter((item) => !(allowed as readonly string[]).includes(item));
  if (bad.length) throw new EngramError('INVALID_INPUT', `${name} must be among ${allowed.join(', ')}; got ${bad.join(', ')}`);
  return items as T[];
}

async function body<T>(c: Context, schema: z.ZodType<T>): Promise<T> {
  let json: unknown;
  try {
    // The HTTP app's body cap has read the body already (within its 1 MiB).
    json = JSON.parse(await bodyText(c));
  } catch {
    throw new EngramError('INVALID_INPUT', 'the body must be JSON');
  }
  return parse(schema, json, 'body');
}

const sessionIdOf = (c: Context): string => {
  const id = c.req.param('id') ?? '';
  if (id === '' || id.length > 500) throw new EngramError('INVALID_INPUT', 'a session id is 1 to 500 characters');
  return id;
};

const idOf = (c: Context): number => {
  const id = Number(c.req.param('id'));
  if (!Number.isInteger(id) || id < 1) throw new EngramError('INVALID_INPUT', `engram id must be a positive integer, got ${JSON.stringify(c.req.param('id'))}`);
  return id;
};

/** 401 unless the request carries a secret `engram ui` handed out (compared in constant time by the context). */
function guardSecret(context: ViewerContext): MiddlewareHandler {
  return async (c, next) => {
    const given = c.req.header(UI_SECRET_HEADER) ?? '';
    if (!given || !context.knows(given)) {
      return c.json({ error: `this page needs the secret of an \`engram ui\` launch in the ${UI_SECRET_HEADER} header; run engram ui again`, code: 'UNAUTHORIZED' }, 401);
    }
    context.touch();
    await next();
  };
}

/** Constant-time comparison of a given secret with the known ones. */
export function secretMatches(known: Iterable<string>, given: string): boolean {
  const candidate = Buffer.from(given);
  let found = false;
  for (const secret of known) {
    const expected = Buffer.from(secret);
    if (expected.length === candidate.length && timingSafeEqual(expected, candidate)) found = true;
  }
  return found;
}

const ASSETS: Record<string, string> = {
  'app.js': 'text/javascript; charset=utf-8',
  'app.css': 'text/css; charset=utf-8',
};

/** Headers of everything the viewer serves: no framing, no third-party anything, no referrer. */
const hardening: MiddlewareHandler = async (c, next) => {
  await next();
  c.header('Content-Security-Policy', "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'");
  c.header('X-Frame-Options', 'DENY');
  c.header('X-Content-Type-Options', 'nosniff');
  c.header('Referrer-Policy', 'no-referrer');
  c.header('Cache-Control', 'no-store');
};

const EditBody = z.strictObject({
  text: z.string().min(1).optional(),
  title: z.string().nullable().optional(),
  category: z.string().min(1).optional(),
  tags: z.array(z.string()).optional(),
  project: z.string().nullable().optional(),
});
const SearchBody = z.strictObject({
  query: z.string().min(1).max(2000),
  mode: z.enum(['hybrid', 'bm25', 'vector']).optional(),
  statuses: z.array(z.enum(STATUSES)).min(1).optional(),
  top_k: z.number().int().min(1).max(50).optional(),
  tags: z.array(z.string()).optional(),
  env_tags: z.array(z.string()).optional(),
  abstain: z.boolean().optional(),
});
const Ids = z.array(z.number().int().positive()).min(1).max(500);

/** The viewer's sub-app, to mount at `/ui`. */
export function viewerApp(context: ViewerContext): Hono {
  const app = new Hono();
  app.use('*', hardening);
  const page = (): string => readFileSync(join(context.assets, 'index.html'), 'utf8');
  app.get('/', (c) => c.html(page()));
  app.get('/assets/:name', (c) => {
    const name = c.req.param('name');
    const type = ASSETS[name];
    if (!type) return c.json({ error: `no asset ${name}`, code: 'NOT_FOUND' }, 404);
    return c.body(readFileSync(join(context.assets, name)), 200, { 'Content-Type': type });
  });

  const api = new Hono();
  api.use('*', guardSecret(context));
  const actor = VIEWER_USER;
  const policy = () => governancePolicy(context.settings().config);

  api.get('/ping', (c) => c.json({ ok: true, at: context.now().toISOString() }));

  api.get('/facets', (c) => c.json(engramFacets(context.store)));

  api.get('/engrams', (c) => {
    const q = parse(ListQuery, c.req.query(), 'query');
    const statuses = enumList(q.status, STATUSES, 'status');
    const learnedBy = enumList(q.learned_by, LEARNED_BY, 'learned_by');
    const liveness = enumList(q.liveness, LIVENESS, 'liveness');
    const page = listEngrams(context.store, {
      statuses: statuses ?? [...STATUSES],
      limit: q.limit ?? 50,
      offset: q.offset ?? 0,
      ...(q.after !== undefined ? { after: q.after } : {}),
      ...(q.before !== undefined ? { before: q.before } : {}),
      ...(q.category ? { category: normalizeCategory(q.category) } : {}),
      ...(q.tag ? { tags: normalizeTags(q.tag) } : {}),
      ...(q.pinned ? { pinned: q.pinned === 'true' } : {}),
      ...(learnedBy ? { learnedBy } : {}),
      ...(liveness ? { liveness } : {}),
      ...(q.project !== undefined && q.project !== '' ? { project: q.project === '(none)' ? null : q.project } : {}),
      ...(q.stale ? { stale: { policy: policy(), now: context.now() } } : {}),
    });
    return c.json(page);
  });

  api.get('/engrams/:id', (c) => c.json(engramDetail(context.store, idOf(c), { home: context.settings().paths.home, policy: policy(), now: context.now() })));

  api.post('/engrams/:id/pin', async (c) => {
    const { pinned } = await body(c, z.strictObject({ pinned: z.boolean() }));
    return c.json(pinEngram(context.store, idOf(c), pinned, { now: () => context.now(), actor, policy: policy() }));
  });
  api.post('/engrams/:id/deprecate', async (c) => {
    const { reason, undo } = await body(c, z.strictObject({ reason: z.string().max(500).optional(), undo: z.boolean().optional() }));
    return c.json(deprecateEngram(context.store, idOf(c), { now: () => context.now(), actor, policy: policy(), ...(reason ? { reason } : {}), ...(undo ? { undo } : {}) }));
  });
  api.patch('/engrams/:id', async (c) => {
    const patch = await body(c, EditBody);
    if (Object.keys(patch).length === 0) throw new EngramError('INVALID_INPUT', 'give at least one field to change');
    return c.json(updateEngram(context.store, idOf(c), patch, { now: () => context.now(), actor, policy: policy() }));
  });

  api.post('/search', async (c) => {
    const request = await body(c, SearchBody);
    const response = await context.search({
      query: request.query,
      mode: request.mode ?? 'hybrid',
      explain: true,
      // Results are shown even when the abstain rule doubts them: the page says what the hooks would have done.
      abstain: request.abstain ?? false,
      ...(request.top_k ? { topK: request.top_k } : {}),
      ...(request.statuses ? { statuses: request.statuses } : {}),
      ...(request.tags?.length ? { tags: normalizeTags(request.tags) } : {}),
      ...(request.env_tags?.length ? { environment: { tags: normalizeTags(request.env_tags) } } : {}),
    });
    return c.json(response);
  });

  api.get('/review', async (c) => {
    const q = parse(Paging(200), c.req.query(), 'query');
    // Near-duplicates come from the text index: one the warm server is still building is waited for, not built twice.
    await textIndexReady(context.store);
    return c.json(reviewQueue(context.store, { policy: policy(), now: context.now(), limit: q.limit ?? 50, offset: q.offset ?? 0 }));
  });
  const decide = (kind: 'approve' | 'reject' | 'forget') => async (c: Context) => {
    const { ids, reason, settle } = await body(c, z.strictObject({ ids: Ids, reason: z.string().max(500).optional(), settle: z.enum(['supersede', 'keep-both']).optional() }));
    const options = { now: () => context.now(), actor, policy: policy(), ...(reason ? { reason } : {}) };
    await textIndexReady(context.store);
    if (settle && kind !== 'approve') throw new EngramError('INVALID_INPUT', 'settle applies to approve only');
    const result = kind === 'approve' ? approveEngrams(context.store, ids, { ...options, ...(settle === 'supersede' ? { supersede: true } : settle === 'keep-both' ? { keepBoth: true } : {}) }) : kind === 'reject' ? rejectEngrams(context.store, ids, options) : forgetEngrams(context.store, ids, options);
    return c.json(result);
  };
  api.post('/review/approve', decide('approve'));
  api.post('/review/reject', decide('reject'));
  api.post('/review/forget', decide('forget'));
  api.post('/undo', async (c) => {
    const { token } = await body(c, z.strictObject({ token: z.string().min(1).max(100).optional() }));
    return c.json(undoOperation(context.store, token, { now: () => context.now(), actor, policy: policy() }));
  });

  const home = (): string => context.settings().paths.home;

  api.get('/sessions', (c) => {
    const q = parse(SessionsQuery, c.req.query(), 'query');
    return c.json(
      listSessions(context.store, {
        limit: q.limit ?? 50,
        ...(q.after ? { after: q.after } : {}),
        ...(q.agent ? { agent: q.agent } : {}),
        ...(q.project !== undefined && q.project !== '' ? { project: q.project === '(none)' ? null : q.project } : {}),
      }),
    );
  });
  api.get('/session-facets', (c) => c.json(sessionFacets(context.store)));
  api.get('/sessions/:id', (c) => c.json(sessionDetail(context.store, sessionIdOf(c), { home: home() })));
  api.get('/sessions/:id/:kind{tools|prompts}', (c) => {
    const q = parse(Paging(500), c.req.query(), 'query');
    const kind = c.req.param('kind') as 'tools' | 'prompts';
    const options = { offset: q.offset ?? 0, limit: q.limit ?? 100 };
    return c.json(kind === 'tools' ? sessionActivity(context.store, sessionIdOf(c), 'tools', options) : sessionActivity(context.store, sessionIdOf(c), 'prompts', options));
  });

  api.get('/tape-folders', (c) => c.json({ folders: tapeFolders(context.store, home()) }));
  api.get('/tapes', (c) => {
    const q = parse(TapesQuery, c.req.query(), 'query');
    const folders = tapeFolders(context.store, home()).filter((folder) => q.project === undefined || folder.project === q.project);
    if (q.project !== undefined && folders.length === 0) throw new EngramError('NOT_FOUND', `no tape folder of project ${q.project}`);
    return c.json(listTapePage(folders.map((folder) => folder.tapes_dir), { limit: q.limit ?? 50, offset: q.offset ?? 0, ...(q.session ? { session: q.session } : {}) }));
  });
  api.get('/tapes/:id', (c) => {
    const q = parse(TimelineQuery, c.req.query(), 'query');
    const entry = findTape(tapeFolders(context.store, home()).map((folder) => folder.tapes_dir), c.req.param('id'));
    return c.json(tapeTimeline(entry, { limit: q.limit ?? 200, ...(q.around !== undefined ? { around: q.around } : { offset: q.offset ?? 0 }) }));
  });
  api.post('/explain', async (c) => {
    const request = await body(c, ExplainBody);
    const roots = new Set(tapeFolders(context.store, home()).flatMap((folder) => (folder.root ? [folder.root] : [])));
    if (!roots.has(request.root)) throw new EngramError('INVALID_INPUT', `${request.root} is not the working tree of a known tape folder`);
    const [, file, start, end] = SPAN.exec(request.span) as RegExpExecArray;
    const target = { file: (file as string).trim(), start: Number(start), end: Number(end ?? start) };
    // Spans of the working tree only: the page names files in it, never elsewhere on the machine.
    const path = resolve(request.root, target.file);
    const inside = relative(request.root, path);
    if (inside === '' || inside.startsWith('..') || isAbsolute(inside)) {
      throw new EngramError('INVALID_INPUT', `${target.file} is not a file of ${request.root}`);
    }
    const response = explainInFolder({ cwd: request.root, home: home() }, { ...target, file: path }, { brief: true, limit: request.limit ?? 10 });
    return c.json(response);
  });

  api.get('/doctor', async (c) => {
    const settings = context.settings();
    const report: DoctorReport = await runDoctor(settings.env, { installRoot: context.installRoot, now: () => context.now(), vars: process.env });
    return c.json(report);
  });

  api.all('*', (c) => c.json({ error: `no viewer route ${c.req.method} ${c.req.path}`, code: 'NOT_FOUND' }, 404));
  app.route('/api', api);
  // `/ui/` and any other page path: the same page (its screens are fragments).
  app.get('/*', (c) => c.html(page()));
  return app;
}

/**
 * The Go engram's HTTP API (../shared/seeds/001 §1: 21 routes): what its scripts, plugins and TUI call on
 * 127.0.0.1:7437. Sessions, prompts, context, stats, export/import and project migration here; observations, search
 * and timeline in go-observations.ts.
 * @module
 */
import { Hono } from 'hono';
import * as z from 'zod';
import {
  goPrompt,
  goSessionSummary,
  type GoExport,
  type GoImportReport,
  type MigrateProjectResult,
} from '../services/ops/index.js';
import type { SessionWithCount, UserPrompt } from '../core/index.js';
import { errorBody, HttpError } from './errors.js';
import { given, observationRoutes } from './go-observations.js';
import { bodyText, importCap } from './limits.js';
import { body, GoBody, query, QueryBool, QueryInt, QueryText, Str } from './request.js';
import type { RunOperation } from './run.js';

/** Every path the Go engram serves, for 405 on a method it does not take there. */
export const GO_PATHS = [
  '/health',
  '/sessions',
  '/sessions/:id/end',
  '/sessions/recent',
  '/observations',
  '/observations/passive',
  '/observations/recent',
  '/observations/:id',
  '/search',
  '/timeline',
  '/prompts',
  '/prompts/recent',
  '/prompts/search',
  '/context',
  '/export',
  '/import',
  '/stats',
  '/projects/migrate',
  '/sync/status',
] as const;

// Query parameters of each route, with the Go engram's defaults (built once: see request.ts `query`).
const RecentSessionsQuery = z.object({ project: QueryText, limit: QueryInt(5) });
const RecentPromptsQuery = z.object({ project: QueryText, limit: QueryInt(20) });
const PromptSearchQuery = z.object({ q: QueryText, project: QueryText, limit: QueryInt(10) });
const ContextQuery = z.object({ project: QueryText, scope: QueryText, limit: QueryInt(0), compact: QueryBool(false) });

/** The Go engram's routes over the operations catalog. */
export function goApi(run: RunOperation): Hono {
  const app = new Hono();

  // Always 200: its clients' liveness check (the Go engram's own version string, so version checks keep passing;
  // ours is in the x-engram header).
  app.get('/health', (c) => c.json({ status: 'ok', service: 'engram', version: '0.1.0' }));

  app.post('/sessions', async (c) => {
    const input = await body(c, GoBody({ id: Str, project: Str, directory: Str }));
    if (input.id === '' || input.project === '') throw new HttpError(400, 'INVALID_INPUT', 'id and project are required');
    await run('session.start', given(input, ['id', 'project', 'directory']));
    return c.json({ id: input.id, status: 'created' }, 201);
  });

  app.post('/sessions/:id/end', async (c) => {
    const id = c.req.param('id');
    const input = await body(c, GoBody({ summary: Str }), { lenient: true });
    // The Go engram answers 200 for a session it does not hold (its update touches no row).
    await run('session.end', { id, ...given(input, ['summary']) }).catch((error: { code?: string }) => {
      if (error.code !== 'NOT_FOUND') throw error;
    });
    return c.json({ id, status: 'completed' });
  });

  app.get('/sessions/recent', async (c) => {
    const q = query(c, RecentSessionsQuery);
    const sessions = (await run('session.recent', { ...given(q, ['project']), limit: q.limit })) as SessionWithCount[];
    return c.json(sessions.map(goSessionSummary));
  });

  app.route('/', observationRoutes(run));

  app.post('/prompts', async (c) => {
    const input = await body(c, GoBody({ session_id: Str, content: Str, project: Str }));
    if (input.session_id === '' || input.content === '') throw new HttpError(400, 'INVALID_INPUT', 'session_id and content are required');
    const saved = (await run('prompt.save', given(input, ['session_id', 'content', 'project']))) as { id: number };
    return c.json({ id: saved.id, status: 'saved' }, 201);
  });

  app.get('/prompts/recent', async (c) => {
    const q = query(c, RecentPromptsQuery);
    return c.json(((await run('prompt.recent', { ...given(q, ['project']), limit: q.limit })) as UserPrompt[]).map(goPrompt));
  });

  app.get('/prompts/search', async (c) => {
    const q = query(c, PromptSearchQuery);
    if (q.q === undefined) throw new HttpError(400, 'INVALID_INPUT', 'q parameter is required');
    return c.json(((await run('prompt.search', { q: q.q, ...given(q, ['project']), limit: q.limit })) as UserPrompt[]).map(goPrompt));
  });

  app.get('/context', async (c) => {
    const q = query(c, ContextQuery);
    const result = (await run('obs.context', { ...given(q, ['project', 'scope']), ...(q.limit > 0 ? { limit: q.limit } : {}), compact: q.compact })) as { context: string };
    return c.json({ context: result.context });
  });

  app.get('/stats', async (c) => c.json(await run('obs.stats', {})));

  app.get('/export', async (c) => {
    const data = (await run('go.export', {})) as GoExport;
    c.header('Content-Disposition', 'attachment; filename=engram-export.json');
    return c.json(data);
  });

  app.post('/import', importCap(), async (c) => {
    let data: unknown;
    try {
      data = JSON.parse(await bodyText(c));
    } catch (error) {
      throw new HttpError(400, 'INVALID_JSON', `invalid json: ${(error as Error).message}`);
    }
    const result = (await run('go.import', { data }).catch((error: { code?: string; message?: string }) => {
      if (error.code === 'INVALID_INPUT') throw new HttpError(400, 'INVALID_JSON', `invalid json: ${error.message ?? ''}`);
      throw error;
    })) as GoImportReport;
    return c.json({ sessions_imported: result.sessions_imported, observations_imported: result.observations_imported, prompts_imported: result.prompts_imported });
  });

  app.post('/projects/migrate', async (c) => {
    const input = await body(c, GoBody({ old_project: Str, new_project: Str }));
    if (input.old_project === '' || input.new_project === '') throw new HttpError(400, 'INVALID_INPUT', 'old_project and new_project are required');
    if (input.old_project === input.new_project) return c.json({ status: 'skipped', reason: 'names are identical' });
    const result = (await run('projects.migrate', { old_project: input.old_project, new_project: input.new_project })) as MigrateProjectResult & { undo_token?: string | null };
    // The Go engram's body exactly (its undo token stays in the audit log: `engram undo`).
    const { undo_token: _undo, ...goBody } = result;
    return c.json(goBody);
  });

  // The Go engram's cloud autosync; ours is `engram sync` through git, which is not a background service.
  app.get('/sync/status', (c) => c.json({ enabled: false, message: 'background sync is not configured' }));

  for (const path of GO_PATHS) {
    app.all(path, (c) => c.json(errorBody(`method ${c.req.method} is not allowed on ${c.req.path}`, 'METHOD_NOT_ALLOWED'), 405));
  }
  return app;
}


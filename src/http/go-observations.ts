/**
 * The Go engram's observation routes (../shared/seeds/001 §1, routes 5–12): bodies, defaults, status codes and
 * messages as it answers them; each route parses, runs one operation, and shapes the Go reply.
 * @module
 */
import { Hono } from 'hono';
import * as z from 'zod';
import {
  goObservation,
  goSearchResults,
  goTimeline,
  type ObservationSearch,
  type ObservationView,
  type PassiveCaptureResult,
  type SaveObservationResult,
  type TimelineResult,
} from '../services/ops/index.js';
import { HttpError } from './errors.js';
import { body, GoBody, parseId, PtrStr, query, QueryBool, QueryInt, QueryText, Str } from './request.js';
import type { RunOperation } from './run.js';

const AddObservation = GoBody({
  session_id: Str,
  type: Str,
  title: Str,
  content: Str,
  tool_name: Str,
  project: Str,
  scope: Str,
  topic_key: Str,
});

const UpdateObservation = GoBody({ type: PtrStr, title: PtrStr, content: PtrStr, project: PtrStr, scope: PtrStr, topic_key: PtrStr });

const Passive = GoBody({ session_id: Str, content: Str, project: Str, source: Str });

// Query parameters of each route, with the Go engram's defaults (built once: see request.ts `query`).
const RecentObservationsQuery = z.object({ project: QueryText, scope: QueryText, limit: QueryInt(20) });
const DeleteQuery = z.object({ hard: QueryBool(false) });
const SearchQuery = z.object({ q: QueryText, type: QueryText, project: QueryText, scope: QueryText, limit: QueryInt(10) });
const TimelineQuery = z.object({ before: QueryInt(5), after: QueryInt(5) });

/** The fields of `keys` that were given and are not empty (Go's `omitempty` on the way in); other keys are dropped. */
export function given(fields: Record<string, unknown>, keys: readonly string[] = Object.keys(fields)): Record<string, string> {
  return Object.fromEntries(keys.flatMap((key) => (typeof fields[key] === 'string' && fields[key] !== '' ? [[key, fields[key] as string]] : [])));
}

/** An id in the path: 400 `invalid observation id` unless base-10. */
const observationId = (raw: string | undefined): number => parseId(raw, 'invalid observation id');

/** A NOT_FOUND from a service answered with the Go engram's message. */
async function orNotFound<T>(work: Promise<T>, message: string): Promise<T> {
  try {
    return await work;
  } catch (error) {
    if ((error as { code?: string }).code === 'NOT_FOUND') throw new HttpError(404, 'NOT_FOUND', message);
    throw error;
  }
}

/** Routes under /observations, /search and /timeline. */
export function observationRoutes(run: RunOperation): Hono {
  const app = new Hono();

  app.post('/observations', async (c) => {
    const input = await body(c, AddObservation);
    if (input.session_id === '' || input.title === '' || input.content === '') {
      throw new HttpError(400, 'INVALID_INPUT', 'session_id, title, and content are required');
    }
    const saved = (await run('obs.save', given(input, Object.keys(AddObservation.shape)))) as SaveObservationResult;
    return c.json({ id: saved.id, status: 'saved' }, 201);
  });

  app.post('/observations/passive', async (c) => {
    const input = await body(c, Passive);
    if (input.session_id === '') throw new HttpError(400, 'INVALID_INPUT', 'session_id is required');
    // Text without a learnings section extracts nothing (the Go engram answers zeros, not an error).
    if (input.content.trim() === '') return c.json({ extracted: 0, saved: 0, duplicates: 0 });
    const result = (await run('obs.passive', given(input, Object.keys(Passive.shape)))) as PassiveCaptureResult;
    return c.json({ extracted: result.extracted, saved: result.saved, duplicates: result.duplicates });
  });

  app.get('/observations/recent', async (c) => {
    const q = query(c, RecentObservationsQuery);
    const rows = (await run('obs.recent', { ...given({ project: q.project, scope: q.scope }), limit: q.limit })) as ObservationView[];
    return c.json(rows.map(goObservation));
  });

  app.get('/observations/:id', async (c) => {
    const id = observationId(c.req.param('id'));
    if (id === 0) throw new HttpError(404, 'NOT_FOUND', 'observation not found');
    const view = (await orNotFound(run('obs.get', { id }), 'observation not found')) as ObservationView;
    return c.json(goObservation(view));
  });

  app.patch('/observations/:id', async (c) => {
    const id = observationId(c.req.param('id'));
    const input = await body(c, UpdateObservation);
    const fields = Object.fromEntries(Object.entries(input).filter(([key, value]) => value !== undefined && key in UpdateObservation.shape));
    if (Object.keys(fields).length === 0) throw new HttpError(400, 'INVALID_INPUT', 'at least one field is required');
    if (id === 0) throw new HttpError(404, 'NOT_FOUND', `observation #${c.req.param('id')} not found`);
    const result = (await orNotFound(run('obs.update', { id, ...fields }), `observation #${id} not found`)) as { observation: ObservationView };
    return c.json(goObservation(result.observation));
  });

  app.delete('/observations/:id', async (c) => {
    const id = observationId(c.req.param('id'));
    const hard = query(c, DeleteQuery).hard;
    // The Go engram answers 200 for an id it does not hold (its delete touches no row and reports no error).
    if (id !== 0) await run('obs.delete', { id, hard_delete: hard }).catch((error: { code?: string }) => {
      if (error.code !== 'NOT_FOUND') throw error;
    });
    return c.json({ id: id === 0 ? Number(c.req.param('id')) : id, status: 'deleted', hard_delete: hard });
  });

  app.get('/search', async (c) => {
    const q = query(c, SearchQuery);
    if (q.q === undefined) throw new HttpError(400, 'INVALID_INPUT', 'q parameter is required');
    const found = (await run('obs.search', { query: q.q, ...given({ type: q.type, project: q.project, scope: q.scope }), limit: q.limit })) as ObservationSearch;
    return c.json(goSearchResults(found.results));
  });

  app.get('/timeline', async (c) => {
    const raw = c.req.query('observation_id');
    if (raw === undefined || raw === '') throw new HttpError(400, 'INVALID_INPUT', 'observation_id parameter is required');
    const id = parseId(raw, 'invalid observation_id');
    const q = query(c, TimelineQuery);
    if (id === 0) throw new HttpError(404, 'NOT_FOUND', `observation #${raw} not found`);
    const result = (await orNotFound(run('obs.timeline', { observation_id: id, before: q.before, after: q.after }), `observation #${id} not found`)) as TimelineResult;
    return c.json(goTimeline(result));
  });

  return app;
}


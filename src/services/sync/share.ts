/**
 * `engram sync`, outgoing: what changed in the project's memory since it was last shared becomes one new chunk.
 * Edits and deletions go out as later records of the same sync id (a hard delete as a tombstone), an engram made
 * personal, moved to another project or rejected in review as a deletion; personal rows and secrets never leave the machine.
 * @module
 */
import { createHash } from 'node:crypto';
import { userInfo } from 'node:os';
import { sanitizeText, type Engram, type Session, type Store } from '../../core/index.js';
import { exportedObservation, goPrompt, goTime, type GoSession } from '../goengram/index.js';
import { goProjectKey } from '../observations/index.js';
import { appendManifest, prepareSyncFiles, writeChunk, type ChunkEntry } from './files.js';
import type { SyncRepository } from './repository.js';

/** The session given to observations saved in none, and to tombstones (the Go engram requires one per row). */
export const SYNC_SESSION = 'engram-sync';

/** What one export wrote. */
export interface ShareReport {
  chunk_id: string | null;
  observations: number;
  sessions: number;
  prompts: number;
  /** Strings a secret or private span was removed from on the way out (rows stored before a rule existed). */
  redacted: number;
  is_empty: boolean;
}

/** Every string in a value run through redaction again: nothing secret leaves, whatever was stored. */
function scrub<T>(value: T, count: { n: number }): T {
  if (typeof value === 'string') {
    const clean = sanitizeText(value).text;
    if (clean !== value) count.n++;
    return clean as T;
  }
  if (Array.isArray(value)) return value.map((item) => scrub(item, count)) as T;
  if (value !== null && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, scrub(item, count)])) as T;
  return value;
}

/** The session as shared: the project's name, no absolute path of anyone's machine. */
export function sharedSession(session: Session, project: string): GoSession {
  return {
    id: session.id,
    project,
    directory: '.',
    started_at: goTime(session.started_at),
    ...(session.ended_at ? { ended_at: goTime(session.ended_at) } : {}),
    ...(session.summary ? { summary: session.summary } : {}),
  };
}

/** A session's version: a fingerprint of what is shared of it (sessions change by gaining an end and a summary). */
export const sessionVersion = (session: GoSession): string => createHash('sha256').update(JSON.stringify(session)).digest('hex').slice(0, 32);

/** The engrams of a project that may be shared: project scope, this project by the Go engram's name rules, and
 * reviewed (active or deprecated): what waits for review or was rejected here is not the team's memory. */
export const shareable = (engram: Engram, key: string): boolean =>
  engram.scope === 'project' && (engram.status === 'active' || engram.status === 'deprecated') && engram.project !== null && goProjectKey(engram.project) === key;

/** Writes one chunk with every change of the repository's project since it was last shared, and lists it. */
export function shareChanges(store: Store, repo: SyncRepository, options: { now: Date; prompts: boolean; createdBy?: string }): ShareReport {
  const key = goProjectKey(repo.project);
  const at = options.now.toISOString();
  const count = { n: 0 };
  const { body, records, changed } = store.read(() => {
    const observations: unknown[] = [];
    const records: Array<{ kind: 'observation' | 'session' | 'prompt'; sync_id: string; version: string; deleted: boolean }> = [];
    const sessions = new Map<string, GoSession>();
    const sessionRows = new Map(store.sessions.all().filter((s) => s.project !== null && goProjectKey(s.project) === key).map((s) => [s.id, s]));
    const needSession = (id: string | null): string => {
      if (id && sessionRows.has(id)) {
        sessions.set(id, sharedSession(sessionRows.get(id) as Session, repo.project));
        return id;
      }
      if (id && !sessions.has(id)) {
        const other = store.sessions.get(id);
        if (other) {
          sessions.set(id, sharedSession(other, repo.project));
          return id;
        }
      }
      if (id && sessions.has(id)) return id;
      sessions.set(SYNC_SESSION, { id: SYNC_SESSION, project: repo.project, directory: '.', started_at: '1970-01-01 00:00:00' });
      return SYNC_SESSION;
    };
    const known = new Map(store.sync.records(repo.key, 'observation').map((record) => [record.sync_id, record]));
    for (const engram of store.engrams.iterate({ includeDeleted: true })) {
      const record = known.get(engram.uid);
      known.delete(engram.uid);
      if (shareable(engram, key)) {
        if (record && record.version === engram.updated_at && !record.deleted) continue;
        const shared = exportedObservation(engram);
        observations.push({ ...shared, project: repo.project, session_id: needSession(engram.session_id ?? null) });
        records.push({ kind: 'observation', sync_id: engram.uid, version: engram.updated_at, deleted: false });
      } else if (engram.status === 'pending') {
        // Waiting for review here (a teammate's engram this store has not approved yet, or an edit back in review):
        // neither shared nor withdrawn; the team keeps the version it has.
        continue;
      } else if (record && !record.deleted && !record.version.startsWith('gone:')) {
        // Shared before, no longer the team's (made personal, moved to another project): a deletion for them.
        observations.push(tombstone(engram.uid, needSession(null), repo.project, at, false));
        records.push({ kind: 'observation', sync_id: engram.uid, version: `gone:${at}`, deleted: false });
      }
    }
    // Shared before and hard-deleted here since: a tombstone, so no one brings it back.
    for (const record of known.values()) {
      if (record.deleted) continue;
      observations.push(tombstone(record.sync_id, needSession(null), repo.project, at, true));
      records.push({ kind: 'observation', sync_id: record.sync_id, version: at, deleted: true });
    }
    let changedSessions = 0;
    for (const [id, session] of sessionRows) {
      const shared = sharedSession(session, repo.project);
      if (store.sync.record(repo.key, 'session', id)?.version === sessionVersion(shared)) continue;
      sessions.set(id, shared);
      changedSessions++;
    }
    for (const [id, session] of sessions) records.push({ kind: 'session', sync_id: id, version: sessionVersion(session), deleted: false });
    const prompts: unknown[] = [];
    if (options.prompts) {
      for (const prompt of store.sessions.allPrompts()) {
        if (prompt.project === null || goProjectKey(prompt.project) !== key || store.sync.record(repo.key, 'prompt', prompt.uid)) continue;
        prompts.push({ ...goPrompt(prompt), project: repo.project, session_id: needSession(prompt.session_id) });
        records.push({ kind: 'prompt', sync_id: prompt.uid, version: prompt.created_at, deleted: false });
      }
    }
    const body = { sessions: scrub([...sessions.values()], count), observations: scrub(observations, count), prompts: scrub(prompts, count) };
    return { body, records, changed: observations.length + prompts.length + changedSessions };
  });
  if (changed === 0) {
    return { chunk_id: null, observations: 0, sessions: 0, prompts: 0, redacted: 0, is_empty: true };
  }
  prepareSyncFiles(repo.engramDir);
  const chunk = writeChunk(repo.engramDir, body);
  const entry: ChunkEntry = {
    id: chunk.id,
    created_by: options.createdBy ?? userInfo().username,
    created_at: at.replace(/\.\d{3}Z$/, 'Z'),
    sessions: body.sessions.length,
    memories: body.observations.length,
    prompts: body.prompts.length,
  };
  appendManifest(repo.engramDir, entry);
  // Recorded after the files exist: a crash in between leaves a chunk that the next import reads back as the same
  // versions (nothing changes), never a record of a chunk that is not there.
  store.write(() => {
    for (const record of records) store.sync.setRecord(repo.key, { ...record, chunk_id: chunk.id });
    store.sync.addChunk({ repo: repo.key, chunk_id: chunk.id, direction: 'exported', records: records.length, error: null, at });
  });
  return { chunk_id: chunk.id, observations: body.observations.length, sessions: body.sessions.length, prompts: body.prompts.length, redacted: count.n, is_empty: false };
}

/** A deletion record in the Go engram's observation shape (its importer needs every required field). */
function tombstone(syncId: string, session: string, project: string, at: string, hard: boolean): unknown {
  return {
    id: 0,
    sync_id: syncId,
    session_id: session,
    type: 'deleted',
    title: '(deleted)',
    content: '(deleted)',
    project,
    scope: 'project',
    revision_count: 1,
    duplicate_count: 1,
    created_at: goTime(at),
    updated_at: goTime(at),
    deleted_at: goTime(at),
    engram: { v: 1, updated_at: at, deleted_at: at, hard_delete: hard, tombstone: true, category: 'general', tags: [], prerequisites: null, pinned: false, source: 'import', source_sessions: [] },
  };
}

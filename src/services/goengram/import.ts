/**
 * Moving in from the Go engram: its sessions, observations (soft-deleted ones stay deleted) and prompts into our
 * store, in one transaction, idempotently (records are matched by their sync id, which becomes our uid). One audit row
 * (actor `import`): `engram undo` takes a whole move back; what comes in is learned by `import` (a person's decision).
 * @module
 */
import type { NewEngram, Store } from '../../core/index.js';
import { audited, syncJournal } from '../governance/index.js';
import { engramFromGo, ensureSession, observationSyncId, promptFromGo } from './records.js';
import type { GoExportIn } from './schema.js';

/** The Go engram's `ImportResult`, and what it does not say. */
export interface GoImportReport {
  sessions_imported: number;
  observations_imported: number;
  prompts_imported: number;
  /** Observations already here that the source holds a newer version of. */
  observations_updated: number;
  /** Records already here, unchanged (a second run of the same import counts everything here). */
  unchanged: number;
  /** Records that cannot be engrams (no title and no content, a prompt without a session). */
  skipped: Array<{ kind: 'observation' | 'prompt'; id: number | null; reason: string }>;
  /**
   * Observations whose Go id was taken here by an engram that existed before: they have a new id (every other one
   * keeps its Go id, so `GET /observations/{id}` answers for it as before).
   */
  renumbered: Array<{ go_id: number; id: number }>;
}

/** Options of {@link importGoData}. */
export interface GoImportOptions {
  /** Who asked: `import` (recorded as `learned_by`, and as the audit row's actor). */
  actor: 'import';
  /** The surface, for the audit row (`cli`, `http`). @default `api` */
  via?: string;
  now?: () => Date;
}

/**
 * Imports a Go engram's data (its database read by `readGoDatabase`, or its export JSON) in one IMMEDIATE
 * transaction: nothing is half-imported. Go ids are kept where they are free here. A record already here (same sync
 * id) is updated when the source's version is newer, else left alone, so running it again adds nothing.
 */
export function importGoData(store: Store, data: GoExportIn, options: GoImportOptions): GoImportReport {
  const now = (options.now ?? (() => new Date()))().toISOString();
  const report: GoImportReport = {
    sessions_imported: 0,
    observations_imported: 0,
    prompts_imported: 0,
    observations_updated: 0,
    unchanged: 0,
    skipped: [],
    renumbered: [],
  };
  const { result } = audited(
    store,
    (done: GoImportReport) => ({
      actor: { by: options.actor, via: options.via ?? 'api' },
      op: 'go-import',
      detail: { observations: done.observations_imported, updated: done.observations_updated, prompts: done.prompts_imported, sessions: done.sessions_imported },
    }),
    (changes) => {
      for (const session of data.sessions) {
        if (session.id.trim() === '') continue;
        if (ensureSession(store, session, { now })) report.sessions_imported++;
      }
      // Rows whose Go id is free here go first, so a row given a new id never takes the id another row keeps.
      const collided: Array<{ obs: (typeof data.observations)[number]; fields: Omit<NewEngram, 'id' | 'uid'>; uid: string }> = [];
      for (const obs of data.observations) {
        const fields = engramFromGo(store, obs, { now });
        if ('reason' in fields) {
          report.skipped.push({ kind: 'observation', id: obs.id ?? null, reason: fields.reason });
          continue;
        }
        if (fields.session_id) ensureSession(store, { id: fields.session_id, project: fields.project, started_at: obs.created_at }, { now, project: fields.project });
        const uid = observationSyncId(obs);
        const existing = store.engrams.getByUid(uid);
        if (existing) {
          if (fields.updated_at > existing.updated_at) {
            changes.engram(existing.id);
            store.engrams.update(existing.id, fields);
            report.observations_updated++;
          } else {
            report.unchanged++;
          }
          continue;
        }
        const goId = obs.id ?? 0;
        if (goId > 0 && store.engrams.get(goId) !== undefined) {
          collided.push({ obs, fields, uid });
          continue;
        }
        const inserted = store.engrams.insert({ ...fields, uid, learned_by: 'import', ...(goId > 0 ? { id: goId } : {}) });
        changes.created('engrams', { id: inserted.id });
        report.observations_imported++;
      }
      for (const { obs, fields, uid } of collided) {
        const engram = store.engrams.insert({ ...fields, uid, learned_by: 'import' });
        changes.created('engrams', { id: engram.id });
        report.renumbered.push({ go_id: obs.id ?? 0, id: engram.id });
        report.observations_imported++;
      }
      for (const prompt of data.prompts) {
        const fields = promptFromGo(store, prompt, { now });
        if ('reason' in fields) {
          report.skipped.push({ kind: 'prompt', id: prompt.id ?? null, reason: fields.reason });
          continue;
        }
        ensureSession(store, { id: fields.session_id, project: fields.project, started_at: prompt.created_at }, { now, project: fields.project });
        const stored = store.sessions.insertImported({ ...fields, ...(prompt.id ? { id: prompt.id } : {}) });
        if (stored) report.prompts_imported++;
        else report.unchanged++;
      }
      return report;
    },
    now,
  );
  syncJournal(store);
  return result;
}

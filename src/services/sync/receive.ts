/**
 * `engram sync --import`, incoming: every chunk of the repository not applied yet, in one transaction. A record is
 * matched by its sync id (never duplicated, whatever the order or number of imports) and applied when it is newer
 * than what is held: last writer by time, ties by chunk id, a local edit not shared yet losing a tie. A hard-delete
 * tombstone removes the engram and keeps it removed. Records come in under this repository's project name.
 * Governance (docs/GOVERNANCE.md): a teammate's new engram is learned by `sync` and admitted like an agent's (pending
 * for review unless tier 1 with autopromote on, or when it contradicts an active one); edits keep the status held
 * here. One import is one audit row (actor `sync`), so `engram undo` takes it back.
 * @module
 */
import type { Store } from '../../core/index.js';
import { admit, audited, classifyTier, findConflicts, governancePolicy, recordConflicts, syncJournal, type Actor, type GovernancePolicy } from '../governance/index.js';
import { engramFromGo, ensureSession, GoExportInSchema, observationSyncId, observationVersion, promptFromGo, type GoExportIn } from '../goengram/index.js';
import { chunkFiles, readChunk, readManifest } from './files.js';
import type { SyncRepository } from './repository.js';
import { sessionVersion, sharedSession, SYNC_SESSION } from './share.js';

/** What one import did. */
export interface ReceiveReport {
  /** The audit row's undo token (null when nothing was applied). */
  undo_token: string | null;
  /** New engrams waiting for `engram review` (governance admitted them as pending). */
  observations_pending: number;
  chunks_imported: number;
  chunks_skipped: number;
  /** Chunks that are not chunks (damaged, not JSON, wrong shapes): named with why, never applied. */
  chunks_rejected: Array<{ id: string; error: string }>;
  sessions_imported: number;
  observations_imported: number;
  observations_updated: number;
  observations_deleted: number;
  prompts_imported: number;
}

/** The chunk ids of a repository: its manifest's and any chunk file it lacks, deduped, manifest order first. */
export function remoteChunks(repo: SyncRepository): string[] {
  return [...new Set([...readManifest(repo.engramDir).map((entry) => entry.id), ...chunkFiles(repo.engramDir)])];
}

/** (version, chunk) pairs compare by version, then chunk id. */
const newer = (a: [string, string], b: [string, string]): boolean => (a[0] !== b[0] ? a[0] > b[0] : a[1] > b[1]);

/** Applies every chunk of the repository this store has not applied (or written) yet. */
export function receiveChanges(store: Store, repo: SyncRepository, options: { now: Date; actor?: Actor; policy?: GovernancePolicy }): ReceiveReport {
  const at = options.now.toISOString();
  const actor: Actor = options.actor ?? { by: 'sync', via: 'cli' };
  const policy = options.policy ?? governancePolicy();
  const report: ReceiveReport = {
    undo_token: null,
    observations_pending: 0,
    chunks_imported: 0,
    chunks_skipped: 0,
    chunks_rejected: [],
    sessions_imported: 0,
    observations_imported: 0,
    observations_updated: 0,
    observations_deleted: 0,
    prompts_imported: 0,
  };
  const done = new Set(store.read(() => store.sync.chunks(repo.key)).map((chunk) => chunk.chunk_id));
  const pending: Array<{ id: string; data: GoExportIn }> = [];
  for (const id of remoteChunks(repo)) {
    if (done.has(id)) {
      report.chunks_skipped++;
      continue;
    }
    try {
      const parsed = GoExportInSchema.safeParse(readChunk(repo.engramDir, id));
      if (!parsed.success) throw new Error(`not a chunk: ${parsed.error.issues[0]?.path.join('.')}: ${parsed.error.issues[0]?.message}`);
      pending.push({ id, data: parsed.data });
    } catch (error) {
      report.chunks_rejected.push({ id, error: (error as Error).message });
    }
  }
  if (pending.length === 0 && report.chunks_rejected.length === 0) return report;
  // A fixed order, so ties resolve the same way on every machine (versions decide the rest).
  pending.sort((a, b) => (a.id < b.id ? -1 : 1));
  const applied = audited(
    store,
    (done: ReceiveReport) => ({ actor, op: 'sync.import', detail: { repo: repo.root, chunks: done.chunks_imported, imported: done.observations_imported, updated: done.observations_updated, deleted: done.observations_deleted } }),
    (changes) => {
      for (const rejected of report.chunks_rejected) {
        store.sync.addChunk({ repo: repo.key, chunk_id: rejected.id, direction: 'rejected', records: 0, error: rejected.error.slice(0, 500), at });
      }
      for (const { id: chunkId, data } of pending) {
        for (const session of data.sessions) {
          if (session.id.trim() === '' || session.id === SYNC_SESSION) continue;
          if (ensureSession(store, { ...session, directory: null }, { now: at, project: repo.project })) report.sessions_imported++;
          const stored = store.sessions.get(session.id);
          if (stored) store.sync.setRecord(repo.key, { kind: 'session', sync_id: session.id, version: sessionVersion(sharedSession(stored, repo.project)), chunk_id: chunkId, deleted: false });
        }
        for (const obs of data.observations) {
          // Someone's personal row does not belong to anyone else (the Go engram may have shared it).
          if ((obs.scope ?? '').trim().toLowerCase() === 'personal') continue;
          const uid = observationSyncId(obs);
          const version = observationVersion(obs) ?? at;
          const held = store.engrams.getByUid(uid);
          const record = store.sync.record(repo.key, 'observation', uid);
          const current: [string, string] | null = held
            ? record && record.version === held.updated_at
              ? [record.version, record.chunk_id]
              : [held.updated_at, '']
            : record
              ? [record.version, record.chunk_id]
              : null;
          if (current && !newer([version, chunkId], current)) continue;
          const hard = obs.engram?.hard_delete === true;
          if (hard) {
            if (held) {
              changes.dependents(held.id);
              changes.engram(held.id);
              store.engrams.hardDelete(held.id);
              report.observations_deleted++;
            }
          } else if (obs.engram?.tombstone === true) {
            // No longer shared (made personal or moved by its author): hidden here, its text kept.
            if (held && held.deleted_at === null) {
              changes.engram(held.id);
              store.engrams.update(held.id, { deleted_at: version, updated_at: version });
              report.observations_deleted++;
            }
          } else {
            const fields = engramFromGo(store, { ...obs, session_id: obs.session_id === SYNC_SESSION ? null : obs.session_id }, { project: repo.project, now: at });
            if ('reason' in fields) continue;
            if (held) {
              changes.engram(held.id);
              // The review state stays this store's: a teammate's edit does not approve or reject anything here.
              store.engrams.update(held.id, { ...fields, updated_at: version });
              if (fields.deleted_at && !held.deleted_at) report.observations_deleted++;
              else report.observations_updated++;
            } else if (!fields.deleted_at) {
              const conflicts = findConflicts(store, { text: fields.text, project: fields.project });
              const admission = admit({ learnedBy: 'sync', tier: classifyTier(fields.kind, fields.text, policy), conflicts, policy });
              const tier = classifyTier(fields.kind, fields.text, policy).tier;
              const inserted = store.engrams.insert({ ...fields, uid, updated_at: version, learned_by: 'sync', status: admission.status, status_reason: admission.reason, tier, confirmed_at: admission.status === 'active' ? at : null });
              changes.created('engrams', { id: inserted.id });
              recordConflicts(store, changes, inserted.id, conflicts, at);
              report.observations_imported++;
              if (admission.status === 'pending') report.observations_pending++;
            }
          }
          store.sync.setRecord(repo.key, { kind: 'observation', sync_id: uid, version, chunk_id: chunkId, deleted: hard });
        }
        for (const prompt of data.prompts) {
          const fields = promptFromGo(store, prompt, { now: at, project: repo.project });
          if ('reason' in fields || store.sessions.getByUid(fields.uid)) continue;
          ensureSession(store, { id: fields.session_id, project: repo.project, started_at: prompt.created_at }, { now: at, project: repo.project });
          if (store.sessions.insertImported(fields)) report.prompts_imported++;
          store.sync.setRecord(repo.key, { kind: 'prompt', sync_id: fields.uid, version: fields.created_at, chunk_id: chunkId, deleted: false });
        }
        store.sync.addChunk({ repo: repo.key, chunk_id: chunkId, direction: 'imported', records: data.sessions.length + data.observations.length + data.prompts.length, error: null, at });
        report.chunks_imported++;
      }
      return report;
    },
    at,
  );
  syncJournal(store);
  return { ...applied.result, undo_token: applied.entry?.token ?? null };
}

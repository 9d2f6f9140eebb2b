import type { Store } from '../../core/index.js';
import { GoExportInSchema } from '../goengram/index.js';
import { goProjectKey } from '../observations/index.js';
import { readChunk } from './files.js';
import { remoteChunks } from './receive.js';
import { shareable } from './share.js';
import type { SyncRepository } from './repository.js';

/** `engram sync --status`: what this store holds of the project, what the repository holds, and what is pending. */
export interface SyncStatus {
  repo: string;
  project: string;
  local: { observations: number; sessions: number; prompts: number };
  remote: { chunks: number; observations: number; sessions: number; prompts: number };
  pending: {
    /** Chunks in the repository not applied here yet (a pull brought them; the git hooks import them). */
    import: number;
    /** Live or deleted engrams of the project changed since they were last shared. */
    export: number;
  };
  rejected: Array<{ id: string; error: string | null }>;
}

/** Counts without writing anything. */
export function syncStatus(store: Store, repo: SyncRepository): SyncStatus {
  const key = goProjectKey(repo.project);
  const ids = remoteChunks(repo);
  const remote = { chunks: ids.length, observations: 0, sessions: 0, prompts: 0 };
  const uids = new Set<string>();
  for (const id of ids) {
    try {
      const data = GoExportInSchema.parse(readChunk(repo.engramDir, id));
      data.observations.forEach((obs) => uids.add(obs.sync_id ?? ''));
      remote.sessions += data.sessions.length;
      remote.prompts += data.prompts.length;
    } catch {
      // Counted among the rejected once an import tries it.
    }
  }
  remote.observations = [...uids].filter(Boolean).length;
  return store.read(() => {
    const chunks = store.sync.chunks(repo.key);
    const applied = new Set(chunks.filter((chunk) => chunk.direction !== 'rejected').map((chunk) => chunk.chunk_id));
    const records = new Map(store.sync.records(repo.key, 'observation').map((record) => [record.sync_id, record]));
    let observations = 0;
    let changed = 0;
    for (const engram of store.engrams.iterate({ includeDeleted: true })) {
      const record = records.get(engram.uid);
      if (!shareable(engram, key)) {
        if (engram.status === 'pending') continue;
        // Shared once and no longer the team's: its deletion is pending.
        if (record && !record.deleted && !record.version.startsWith('gone:')) changed++;
        continue;
      }
      if (engram.deleted_at === null) observations++;
      if (record?.version !== engram.updated_at) changed++;
    }
    return {
      repo: repo.root,
      project: repo.project,
      local: {
        observations,
        sessions: store.sessions.all().filter((session) => session.project !== null && goProjectKey(session.project) === key).length,
        prompts: store.sessions.allPrompts().filter((prompt) => prompt.project !== null && goProjectKey(prompt.project) === key).length,
      },
      remote,
      pending: { import: ids.filter((id) => !applied.has(id) && !chunks.some((chunk) => chunk.chunk_id === id)).length, export: changed },
      rejected: chunks.filter((chunk) => chunk.direction === 'rejected').map((chunk) => ({ id: chunk.chunk_id, error: chunk.error })),
    };
  });
}

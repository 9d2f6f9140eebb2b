/**
 * Where an engram was learned (`engram_sources`): the session, the tape and the moment in it, the files touched then
 * and the code spans the engram names. Written with the engram by extraction; read by `engram why` and liveness.
 * @module
 */
import { redactDeep, sanitizeText, type Store } from '../../core/index.js';
import type { ChangeSet } from './audit.js';

/** A code span an engram names, as the tape recorded it: the edit event that wrote it. */
export interface SourceSpan {
  file: string;
  start: number | null;
  end: number | null;
  /** The tape and the event offset of the edit (the lineage node liveness follows). */
  tape_id: string;
  offset: number;
}

/** A file the session touched during the moment. */
export interface SourceFile {
  file: string;
  kind: 'read' | 'edit';
  start: number | null;
  end: number | null;
}

/** One source of an engram. */
export interface EngramSource {
  session_id: string | null;
  tape_id: string | null;
  /** The session's working folder (where its tapes and tape index are found again). */
  cwd: string | null;
  /** The moment: events `event_from..event_to` (inclusive) of the tape. */
  event_from: number | null;
  event_to: number | null;
  /** The words of the conversation the engram rests on. */
  quote: string | null;
  files: SourceFile[];
  spans: SourceSpan[];
}

/** A stored source. */
export interface StoredSource extends EngramSource {
  id: number;
  engram_id: number;
  created_at: string;
}

/** Stores sources of an engram (tracked as created rows of the change). */
export function recordSources(store: Store, changes: ChangeSet, engramId: number, sources: readonly EngramSource[], at: string): void {
  const insert = store.db.prepare(
    `INSERT INTO engram_sources (engram_id, session_id, tape_id, cwd, event_from, event_to, quote, files, spans, created_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  );
  for (const source of sources) {
    const info = insert.run(
      engramId,
      source.session_id,
      source.tape_id,
      source.cwd,
      source.event_from,
      source.event_to,
      source.quote === null ? null : sanitizeText(source.quote).text,
      JSON.stringify(redactDeep(source.files)),
      JSON.stringify(redactDeep(source.spans)),
      at,
    );
    changes.created('engram_sources', { id: Number(info.lastInsertRowid) });
  }
}

/** The sources of an engram, oldest first. */
export function sourcesOf(store: Store, engramId: number): StoredSource[] {
  return (
    store.db.prepare('SELECT * FROM engram_sources WHERE engram_id = ? ORDER BY id').all(engramId) as Array<
      Omit<StoredSource, 'files' | 'spans'> & { files: string; spans: string }
    >
  ).map((row) => ({ ...row, files: JSON.parse(row.files) as SourceFile[], spans: JSON.parse(row.spans) as SourceSpan[] }));
}

/** Engrams with code spans to follow (liveness), with their spans, optionally only those learned in `cwds`. */
export function engramsWithSpans(store: Store): Array<{ engram_id: number; spans: SourceSpan[]; cwd: string | null }> {
  const rows = store.db
    .prepare(
      `SELECT s.engram_id, s.spans, s.cwd FROM engram_sources s JOIN engrams e ON e.id = s.engram_id
        WHERE e.deleted_at IS NULL AND s.spans != '[]' ORDER BY s.engram_id, s.id`,
    )
    .all() as Array<{ engram_id: number; spans: string; cwd: string | null }>;
  return rows.map((row) => ({ engram_id: row.engram_id, cwd: row.cwd, spans: JSON.parse(row.spans) as SourceSpan[] }));
}

import { EngramError } from '../errors.js';
import type { Database } from './database.js';

/**
 * One forward-only schema step. Migrations are never edited once released; a change is a new migration.
 * `PRAGMA user_version` holds the last applied version; `schema_migrations` keeps the history.
 */
export interface Migration {
  version: number;
  name: string;
  sql: string;
}

/** The schema, step by step. docs/ARCHITECTURE.md describes every column. */
export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: 'engrams',
    sql: `
      CREATE TABLE engrams (
        id               INTEGER PRIMARY KEY,
        uid              TEXT    NOT NULL UNIQUE,
        kind             TEXT    NOT NULL DEFAULT 'lesson',
        title            TEXT,
        text             TEXT    NOT NULL CHECK (length(text) > 0),
        content          TEXT,
        category         TEXT    NOT NULL DEFAULT 'general',
        tags             TEXT    NOT NULL DEFAULT '[]' CHECK (json_valid(tags) AND json_type(tags) = 'array'),
        prerequisites    TEXT    CHECK (prerequisites IS NULL OR (json_valid(prerequisites) AND json_type(prerequisites) = 'object')),
        source           TEXT    NOT NULL DEFAULT 'manual' CHECK (source IN ('manual', 'extracted', 'feedback', 'import')),
        source_sessions  TEXT    NOT NULL DEFAULT '[]' CHECK (json_valid(source_sessions) AND json_type(source_sessions) = 'array'),
        tool_name        TEXT,
        occurrence_count INTEGER NOT NULL DEFAULT 1 CHECK (occurrence_count >= 0),
        times_matched    INTEGER NOT NULL DEFAULT 0 CHECK (times_matched >= 0),
        last_matched_at  TEXT,
        pinned           INTEGER NOT NULL DEFAULT 0 CHECK (pinned IN (0, 1)),
        auto_pinned      INTEGER NOT NULL DEFAULT 0 CHECK (auto_pinned IN (0, 1)),
        deprecated       INTEGER NOT NULL DEFAULT 0 CHECK (deprecated IN (0, 1)),
        deprecated_reason TEXT,
        project          TEXT,
        scope            TEXT    NOT NULL DEFAULT 'personal' CHECK (scope IN ('project', 'personal')),
        topic_key        TEXT,
        content_hash     TEXT    NOT NULL,
        revision_count   INTEGER NOT NULL DEFAULT 0 CHECK (revision_count >= 0),
        duplicate_count  INTEGER NOT NULL DEFAULT 0 CHECK (duplicate_count >= 0),
        created_at       TEXT    NOT NULL,
        updated_at       TEXT    NOT NULL,
        last_seen_at     TEXT    NOT NULL,
        deleted_at       TEXT
      );
      CREATE INDEX engrams_live     ON engrams (deleted_at, deprecated);
      CREATE INDEX engrams_category ON engrams (category);
      CREATE INDEX engrams_project  ON engrams (project, scope);
      CREATE INDEX engrams_hash     ON engrams (content_hash, project, scope);
      CREATE INDEX engrams_topic    ON engrams (topic_key, project, scope) WHERE topic_key IS NOT NULL;
      CREATE INDEX engrams_pinned   ON engrams (pinned) WHERE pinned = 1;
    `,
  },
  {
    version: 2,
    name: 'sessions-and-prompts',
    sql: `
      CREATE TABLE sessions (
        id               TEXT    PRIMARY KEY,
        agent            TEXT    NOT NULL DEFAULT 'unknown' CHECK (agent IN ('claude', 'codex', 'unknown')),
        project          TEXT,
        cwd              TEXT,
        repo_root        TEXT,
        transcript_path  TEXT,
        model            TEXT,
        start_source     TEXT,
        turns            INTEGER NOT NULL DEFAULT 0 CHECK (turns >= 0),
        summary          TEXT,
        started_at       TEXT    NOT NULL,
        last_activity_at TEXT    NOT NULL,
        ended_at         TEXT,
        end_reason       TEXT
      );
      CREATE INDEX sessions_project ON sessions (project, started_at);
      CREATE INDEX sessions_started ON sessions (started_at);

      CREATE TABLE user_prompts (
        id         INTEGER PRIMARY KEY,
        uid        TEXT    NOT NULL UNIQUE,
        session_id TEXT    NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
        prompt_key TEXT,
        content    TEXT    NOT NULL,
        project    TEXT,
        created_at TEXT    NOT NULL,
        UNIQUE (session_id, prompt_key)
      );
      CREATE INDEX user_prompts_session ON user_prompts (session_id, created_at);
      CREATE INDEX user_prompts_project ON user_prompts (project, created_at);
    `,
  },
  {
    version: 3,
    name: 'learning-state',
    sql: `
      CREATE TABLE engram_repo_stats (
        engram_id       INTEGER NOT NULL REFERENCES engrams (id) ON DELETE CASCADE,
        repo            TEXT    NOT NULL,
        times_matched   INTEGER NOT NULL DEFAULT 0 CHECK (times_matched >= 0),
        last_matched_at TEXT,
        PRIMARY KEY (engram_id, repo)
      );

      CREATE TABLE engram_tag_stats (
        engram_id       INTEGER NOT NULL REFERENCES engrams (id) ON DELETE CASCADE,
        tag_set         TEXT    NOT NULL CHECK (json_valid(tag_set) AND json_type(tag_set) = 'array'),
        times_matched   INTEGER NOT NULL DEFAULT 0 CHECK (times_matched >= 0),
        last_matched_at TEXT,
        PRIMARY KEY (engram_id, tag_set)
      );

      CREATE TABLE engram_tag_relevance (
        engram_id         INTEGER NOT NULL REFERENCES engrams (id) ON DELETE CASCADE,
        tag               TEXT    NOT NULL,
        score             REAL    NOT NULL DEFAULT 0 CHECK (score BETWEEN -3 AND 3),
        positive_evals    INTEGER NOT NULL DEFAULT 0 CHECK (positive_evals >= 0),
        negative_evals    INTEGER NOT NULL DEFAULT 0 CHECK (negative_evals >= 0),
        last_evaluated_at TEXT,
        PRIMARY KEY (engram_id, tag)
      );

      CREATE TABLE session_audit (
        session_id      TEXT    PRIMARY KEY REFERENCES sessions (id) ON DELETE CASCADE,
        env_tags        TEXT    NOT NULL DEFAULT '[]' CHECK (json_valid(env_tags) AND json_type(env_tags) = 'array'),
        repo            TEXT,
        transcript_path TEXT,
        eval_status     TEXT    NOT NULL DEFAULT 'pending'
                                CHECK (eval_status IN ('pending', 'running', 'completed', 'failed', 'skipped')),
        eval_attempts   INTEGER NOT NULL DEFAULT 0 CHECK (eval_attempts >= 0),
        eval_error      TEXT,
        evaluated_at    TEXT,
        created_at      TEXT    NOT NULL,
        updated_at      TEXT    NOT NULL
      );
      CREATE INDEX session_audit_status ON session_audit (eval_status);

      CREATE TABLE session_shown_engrams (
        session_id TEXT    NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
        engram_id  INTEGER NOT NULL REFERENCES engrams (id) ON DELETE CASCADE,
        event      TEXT    NOT NULL,
        query      TEXT,
        score      REAL,
        shown_at   TEXT    NOT NULL,
        PRIMARY KEY (session_id, engram_id)
      );
      CREATE INDEX session_shown_engram ON session_shown_engrams (engram_id);
    `,
  },
  {
    version: 4,
    name: 'search-index',
    sql: `
      -- One row per embedding model ever used. Vectors of model n live in the sqlite-vec table engram_vec_<n>
      -- (created when the model is first used, because vec0 needs the extension loaded), so a model change never
      -- mixes vector spaces and switching back finds the old vectors still there.
      CREATE TABLE embedding_models (
        id           INTEGER PRIMARY KEY,
        model        TEXT    NOT NULL,
        dim          INTEGER NOT NULL CHECK (dim BETWEEN 1 AND 8192),
        created_at   TEXT    NOT NULL,
        last_used_at TEXT    NOT NULL,
        UNIQUE (model, dim)
      );

      -- Which engrams have a vector in which model, and of what text: a vector is stale when the engram's
      -- embedded text (its hash) changed since.
      CREATE TABLE engram_vectors (
        engram_id   INTEGER NOT NULL REFERENCES engrams (id) ON DELETE CASCADE,
        model_id    INTEGER NOT NULL REFERENCES embedding_models (id) ON DELETE CASCADE,
        text_hash   TEXT    NOT NULL,
        embedded_at TEXT    NOT NULL,
        PRIMARY KEY (model_id, engram_id)
      );
      CREATE INDEX engram_vectors_engram ON engram_vectors (engram_id);

      -- A counter every change to searchable engram fields moves (triggers, so no writer can forget), and a random
      -- id for this store file: together they say whether a persisted BM25 snapshot still matches the store.
      CREATE TABLE search_state (
        id         INTEGER PRIMARY KEY CHECK (id = 1),
        store_uid  TEXT    NOT NULL,
        generation INTEGER NOT NULL DEFAULT 0
      );
      INSERT INTO search_state (id, store_uid, generation) VALUES (1, lower(hex(randomblob(16))), 0);
      CREATE TRIGGER engrams_search_insert AFTER INSERT ON engrams
        BEGIN UPDATE search_state SET generation = generation + 1 WHERE id = 1; END;
      CREATE TRIGGER engrams_search_update
        AFTER UPDATE OF title, text, category, tags, deprecated, deleted_at, project, scope ON engrams
        BEGIN UPDATE search_state SET generation = generation + 1 WHERE id = 1; END;
      CREATE TRIGGER engrams_search_delete AFTER DELETE ON engrams
        BEGIN UPDATE search_state SET generation = generation + 1 WHERE id = 1; END;
    `,
  },
  {
    version: 5,
    name: 'hook-activity',
    sql: `
      -- A compaction empties the agent's context, so what was shown before it may be shown again: the session's
      -- context epoch moves on SessionStart(compact), and "already shown" means shown in the current epoch.
      ALTER TABLE sessions ADD COLUMN context_epoch INTEGER NOT NULL DEFAULT 0 CHECK (context_epoch >= 0);
      ALTER TABLE session_shown_engrams ADD COLUMN context_epoch INTEGER NOT NULL DEFAULT 0;
      ALTER TABLE session_shown_engrams ADD COLUMN times INTEGER NOT NULL DEFAULT 1 CHECK (times >= 1);
      ALTER TABLE session_shown_engrams ADD COLUMN rank INTEGER;
      ALTER TABLE session_shown_engrams ADD COLUMN chars INTEGER NOT NULL DEFAULT 0 CHECK (chars >= 0);
      ALTER TABLE session_shown_engrams ADD COLUMN answered_by TEXT;

      -- One row per tool call the hooks saw (PostToolUse / PostToolUseFailure): what the evaluator and the tape
      -- builder use to tell which files and commands a session touched.
      CREATE TABLE tool_events (
        id          INTEGER PRIMARY KEY,
        session_id  TEXT    NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
        tool_use_id TEXT    NOT NULL,
        tool_name   TEXT    NOT NULL,
        target      TEXT,
        ok          INTEGER NOT NULL CHECK (ok IN (0, 1)),
        error       TEXT,
        duration_ms INTEGER,
        at          TEXT    NOT NULL,
        UNIQUE (session_id, tool_use_id)
      );

      -- Slow work a hook hands to the background server (evaluation, tapes): written by the hook in one small
      -- transaction, claimed and run by exactly one server.
      CREATE TABLE jobs (
        id          INTEGER PRIMARY KEY,
        kind        TEXT    NOT NULL,
        session_id  TEXT,
        payload     TEXT    NOT NULL DEFAULT '{}' CHECK (json_valid(payload)),
        status      TEXT    NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'running', 'done', 'failed')),
        attempts    INTEGER NOT NULL DEFAULT 0 CHECK (attempts >= 0),
        error       TEXT,
        created_at  TEXT    NOT NULL,
        started_at  TEXT,
        finished_at TEXT,
        UNIQUE (kind, session_id)
      );
      CREATE INDEX jobs_status ON jobs (status, id);
    `,
  },
  {
    version: 6,
    name: 'llm-usage',
    sql: `
      -- What LLM calls cost, per UTC day and agent session ('' for calls outside a session), so the caps on calls
      -- and tokens hold across processes: hooks, the server and the CLI all count against the same rows.
      CREATE TABLE llm_usage (
        day               TEXT    NOT NULL CHECK (length(day) = 10),
        session_id        TEXT    NOT NULL DEFAULT '',
        calls             INTEGER NOT NULL DEFAULT 0 CHECK (calls >= 0),
        prompt_tokens     INTEGER NOT NULL DEFAULT 0 CHECK (prompt_tokens >= 0),
        completion_tokens INTEGER NOT NULL DEFAULT 0 CHECK (completion_tokens >= 0),
        PRIMARY KEY (day, session_id)
      );
      CREATE INDEX llm_usage_session ON llm_usage (session_id);
    `,
  },
  {
    version: 7,
    name: 'judgements',
    sql: `
      -- Every judgement of an engram in a session: the evaluator's (score -3..3 with quoted evidence, or NULL when no
      -- LLM could judge) and, later, explicit feedback. One per (session, engram, source): an evaluation interrupted
      -- and retried never counts an engram twice, because statistics move in the transaction that inserts the row.
      CREATE TABLE engram_judgements (
        id         INTEGER PRIMARY KEY,
        session_id TEXT    REFERENCES sessions (id) ON DELETE CASCADE,
        engram_id  INTEGER NOT NULL REFERENCES engrams (id) ON DELETE CASCADE,
        source     TEXT    NOT NULL CHECK (source IN ('evaluation', 'feedback')),
        score      REAL    CHECK (score IS NULL OR score BETWEEN -3 AND 3),
        evidence   TEXT,
        judged_by  TEXT    NOT NULL,
        at         TEXT    NOT NULL,
        UNIQUE (session_id, engram_id, source)
      );
      CREATE INDEX engram_judgements_engram ON engram_judgements (engram_id);
    `,
  },
  {
    version: 8,
    name: 'extractions',
    sql: `
      -- Which part of each session's conversation extraction has read, so a session is mined once however often its
      -- job runs, and a resumed session (same id, longer transcript) is mined again only for what is new.
      -- Not tied to sessions: \`engram extract --transcript\` reads sessions the hooks never saw.
      CREATE TABLE session_extractions (
        session_id      TEXT    PRIMARY KEY,
        transcript_path TEXT,
        status          TEXT    NOT NULL CHECK (status IN ('running', 'completed', 'failed', 'skipped')),
        attempts        INTEGER NOT NULL DEFAULT 0 CHECK (attempts >= 0),
        lines_done      INTEGER NOT NULL DEFAULT 0 CHECK (lines_done >= 0),
        created         INTEGER NOT NULL DEFAULT 0,
        merged          INTEGER NOT NULL DEFAULT 0,
        rejected        INTEGER NOT NULL DEFAULT 0,
        error           TEXT,
        updated_at      TEXT    NOT NULL
      );
      CREATE INDEX session_extractions_status ON session_extractions (status);
    `,
  },
  {
    version: 9,
    name: 'observations',
    sql: `
      -- The Go engram's observations are engrams (one store). An observation belongs to the session it was saved in
      -- (mem_save's default is manual-save-<project>); timeline and context group by it. No foreign key: the column is
      -- a grouping key, and an import may bring engrams without the sessions they were saved in.
      ALTER TABLE engrams ADD COLUMN session_id TEXT;
      CREATE INDEX engrams_session ON engrams (session_id, id) WHERE session_id IS NOT NULL;
      -- Recent observations (context, /observations/recent) and the dedup window read by creation time.
      CREATE INDEX engrams_created ON engrams (created_at);

      -- Prompt search (the Go engram's prompts_fts): external-content FTS5 over user_prompts, kept by triggers so no
      -- writer can forget it.
      CREATE VIRTUAL TABLE user_prompts_fts USING fts5 (content, project, content = 'user_prompts', content_rowid = 'id');
      CREATE TRIGGER user_prompts_fts_insert AFTER INSERT ON user_prompts BEGIN
        INSERT INTO user_prompts_fts (rowid, content, project) VALUES (new.id, new.content, new.project);
      END;
      CREATE TRIGGER user_prompts_fts_delete AFTER DELETE ON user_prompts BEGIN
        INSERT INTO user_prompts_fts (user_prompts_fts, rowid, content, project) VALUES ('delete', old.id, old.content, old.project);
      END;
      CREATE TRIGGER user_prompts_fts_update AFTER UPDATE ON user_prompts BEGIN
        INSERT INTO user_prompts_fts (user_prompts_fts, rowid, content, project) VALUES ('delete', old.id, old.content, old.project);
        INSERT INTO user_prompts_fts (rowid, content, project) VALUES (new.id, new.content, new.project);
      END;
      INSERT INTO user_prompts_fts (user_prompts_fts) VALUES ('rebuild');
    `,
  },
  {
    version: 10,
    name: 'governance',
    sql: `
      -- Review state of every engram (docs/GOVERNANCE.md). Existing engrams were all shown before review existed:
      -- they stay active (deprecated ones become status deprecated), confirmed as of their creation.
      ALTER TABLE engrams ADD COLUMN status TEXT NOT NULL DEFAULT 'active'
        CHECK (status IN ('pending', 'active', 'rejected', 'deprecated'));
      ALTER TABLE engrams ADD COLUMN status_reason TEXT;
      ALTER TABLE engrams ADD COLUMN learned_by TEXT NOT NULL DEFAULT 'user'
        CHECK (learned_by IN ('user', 'agent', 'harvest', 'import', 'sync'));
      ALTER TABLE engrams ADD COLUMN tier INTEGER CHECK (tier IS NULL OR tier IN (1, 2, 3));
      ALTER TABLE engrams ADD COLUMN confirmed_at TEXT;
      ALTER TABLE engrams ADD COLUMN liveness TEXT NOT NULL DEFAULT 'unknown'
        CHECK (liveness IN ('unknown', 'alive', 'gone', 'kept'));
      ALTER TABLE engrams ADD COLUMN liveness_at TEXT;
      UPDATE engrams SET
        status = CASE WHEN deprecated = 1 THEN 'deprecated' ELSE 'active' END,
        status_reason = CASE WHEN deprecated = 1 THEN deprecated_reason END,
        learned_by = CASE source WHEN 'extracted' THEN 'harvest' WHEN 'import' THEN 'import' ELSE 'user' END,
        confirmed_at = created_at;
      CREATE INDEX engrams_status ON engrams (status, deleted_at);

      -- The BM25 index keeps each engram's status to filter inside the search: a status change makes it stale.
      DROP TRIGGER engrams_search_update;
      CREATE TRIGGER engrams_search_update
        AFTER UPDATE OF title, text, category, tags, deprecated, deleted_at, project, scope, status ON engrams
        BEGIN UPDATE search_state SET generation = generation + 1 WHERE id = 1; END;

      -- One row per mutation, written in the transaction of the change itself; $ENGRAM_HOME/audit.jsonl is the same
      -- rows appended after commit (and caught up on the next open after a crash). Rows are never changed: an undo is
      -- a new row that names the one it undid. \`changes\` holds row images [{table, key, before, after}] (null
      -- before: created; null after: removed); \`hash\` chains each row to the previous one.
      CREATE TABLE audit_log (
        seq        INTEGER PRIMARY KEY,
        token      TEXT    NOT NULL UNIQUE,
        at         TEXT    NOT NULL,
        actor      TEXT    NOT NULL CHECK (actor IN ('user', 'agent', 'harvest', 'import', 'sync', 'system')),
        via        TEXT    NOT NULL,
        op         TEXT    NOT NULL,
        engram_ids TEXT    NOT NULL DEFAULT '[]' CHECK (json_valid(engram_ids) AND json_type(engram_ids) = 'array'),
        reason     TEXT,
        changes    TEXT    NOT NULL CHECK (json_valid(changes) AND json_type(changes) = 'array'),
        detail     TEXT    CHECK (detail IS NULL OR json_valid(detail)),
        undoes     INTEGER REFERENCES audit_log (seq),
        prev_hash  TEXT    NOT NULL,
        hash       TEXT    NOT NULL
      );
      CREATE UNIQUE INDEX audit_log_undoes ON audit_log (undoes) WHERE undoes IS NOT NULL;
      -- Which engrams each mutation touched (for \`engram history\`); no foreign key: history outlives a hard delete.
      CREATE TABLE audit_engrams (
        engram_id INTEGER NOT NULL,
        seq       INTEGER NOT NULL REFERENCES audit_log (seq),
        PRIMARY KEY (engram_id, seq)
      ) WITHOUT ROWID;

      -- Contradictions found before an engram became active: the newcomer waits in review until a person decides.
      CREATE TABLE engram_conflicts (
        id          INTEGER PRIMARY KEY,
        engram_id   INTEGER NOT NULL REFERENCES engrams (id) ON DELETE CASCADE,
        other_id    INTEGER NOT NULL REFERENCES engrams (id) ON DELETE CASCADE,
        method      TEXT    NOT NULL CHECK (method IN ('rules', 'llm')),
        signal      TEXT    NOT NULL,
        reason      TEXT    NOT NULL,
        status      TEXT    NOT NULL DEFAULT 'open' CHECK (status IN ('open', 'resolved')),
        resolution  TEXT    CHECK (resolution IS NULL OR resolution IN ('superseded', 'kept-both', 'rejected', 'gone')),
        created_at  TEXT    NOT NULL,
        resolved_at TEXT,
        UNIQUE (engram_id, other_id)
      );
      CREATE INDEX engram_conflicts_other ON engram_conflicts (other_id);
      CREATE INDEX engram_conflicts_open ON engram_conflicts (status) WHERE status = 'open';

      -- Where an engram was learned: the session, the tape and the moment (a range of its events), the files touched
      -- then, and the code spans the engram names (what liveness follows through the tape index).
      CREATE TABLE engram_sources (
        id          INTEGER PRIMARY KEY,
        engram_id   INTEGER NOT NULL REFERENCES engrams (id) ON DELETE CASCADE,
        session_id  TEXT,
        tape_id     TEXT,
        cwd         TEXT,
        event_from  INTEGER,
        event_to    INTEGER,
        quote       TEXT,
        files       TEXT    NOT NULL DEFAULT '[]' CHECK (json_valid(files) AND json_type(files) = 'array'),
        spans       TEXT    NOT NULL DEFAULT '[]' CHECK (json_valid(spans) AND json_type(spans) = 'array'),
        created_at  TEXT    NOT NULL
      );
      CREATE INDEX engram_sources_engram ON engram_sources (engram_id);
    `,
  },
  {
    version: 11,
    name: 'turn-keys',
    sql: `
      -- The turns a session's Stop events counted, by the agent's id for the turn (Claude Code's prompt_id, Codex's
      -- turn_id): one Stop handled twice (a hook that gave up on a busy server, answered by itself, while the server
      -- still handled it) counts one turn.
      CREATE TABLE session_turns (
        session_id TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
        turn_key   TEXT NOT NULL,
        PRIMARY KEY (session_id, turn_key)
      ) WITHOUT ROWID;
    `,
  },
  {
    version: 12,
    name: 'git-sync',
    sql: `
      -- engram sync: the chunk files of a repository's .engram/chunks/ this store wrote (exported) or applied
      -- (imported), and those it refused (rejected, with why: a chunk is content-addressed, so it never gets better).
      -- repo is the main working tree's path.
      CREATE TABLE sync_chunks (
        repo      TEXT NOT NULL,
        chunk_id  TEXT NOT NULL,
        direction TEXT NOT NULL CHECK (direction IN ('exported', 'imported', 'rejected')),
        records   INTEGER NOT NULL DEFAULT 0,
        error     TEXT,
        at        TEXT NOT NULL,
        PRIMARY KEY (repo, chunk_id)
      );
      -- The version of each shared record this store holds and the chunk it came in (or went out in): last writer
      -- wins by version (an ISO time; a session's is a fingerprint), ties by chunk id. A row outlives a hard-deleted
      -- engram as its tombstone, so an older chunk read later cannot bring it back.
      CREATE TABLE sync_records (
        repo     TEXT NOT NULL,
        kind     TEXT NOT NULL CHECK (kind IN ('observation', 'session', 'prompt')),
        sync_id  TEXT NOT NULL,
        version  TEXT NOT NULL,
        chunk_id TEXT NOT NULL,
        deleted  INTEGER NOT NULL DEFAULT 0,
        PRIMARY KEY (repo, kind, sync_id)
      );
    `,
  },
  {
    version: 13,
    name: 'search-changes',
    sql: `
      -- Which engram each move of search_state.generation was about: one row per move, written by the same triggers,
      -- so a process holding a BM25 index built at generation G reads the rows changed since (generation > G) and
      -- updates its index incrementally instead of rebuilding it. The log is complete for (G, now] exactly when it
      -- holds now − G rows; rows at or below a persisted snapshot's generation are pruned.
      CREATE TABLE search_changes (
        generation INTEGER PRIMARY KEY,
        engram_id  INTEGER NOT NULL
      );
      DROP TRIGGER engrams_search_insert;
      DROP TRIGGER engrams_search_update;
      DROP TRIGGER engrams_search_delete;
      CREATE TRIGGER engrams_search_insert AFTER INSERT ON engrams BEGIN
        UPDATE search_state SET generation = generation + 1 WHERE id = 1;
        INSERT INTO search_changes (generation, engram_id) SELECT generation, new.id FROM search_state WHERE id = 1;
      END;
      -- learned_by joins the watched columns: BM25 filters pending engrams by it.
      CREATE TRIGGER engrams_search_update
        AFTER UPDATE OF title, text, category, tags, deprecated, deleted_at, project, scope, status, learned_by ON engrams BEGIN
        UPDATE search_state SET generation = generation + 1 WHERE id = 1;
        INSERT INTO search_changes (generation, engram_id) SELECT generation, new.id FROM search_state WHERE id = 1;
      END;
      CREATE TRIGGER engrams_search_delete AFTER DELETE ON engrams BEGIN
        UPDATE search_state SET generation = generation + 1 WHERE id = 1;
        INSERT INTO search_changes (generation, engram_id) SELECT generation, old.id FROM search_state WHERE id = 1;
      END;
      -- The warm server's in-memory vector index asks which vectors were written since it last looked.
      CREATE INDEX engram_vectors_embedded ON engram_vectors (model_id, embedded_at, engram_id);
    `,
  },
  {
    version: 14,
    name: 'relevance-history',
    sql: `
      -- Every move of a tag's relevance EMA (engram_tag_relevance keeps only the current value), written by the
      -- transaction that moves it (services/learn): the value before and after, the judgement that caused it and
      -- when. judgement_id names engram_judgements.id without a foreign key: a judgement goes with its session, the
      -- history stays with the engram. A store upgraded with relevance already learned starts each (engram, tag)
      -- from one 'baseline' row: the value it had then.
      CREATE TABLE engram_tag_relevance_history (
        id              INTEGER PRIMARY KEY,
        engram_id       INTEGER NOT NULL REFERENCES engrams (id) ON DELETE CASCADE,
        tag             TEXT    NOT NULL,
        score_before    REAL    CHECK (score_before IS NULL OR score_before BETWEEN -3 AND 3),
        score           REAL    NOT NULL CHECK (score BETWEEN -3 AND 3),
        cause           TEXT    NOT NULL CHECK (cause IN ('evaluation', 'feedback', 'baseline')),
        judgement_id    INTEGER,
        judgement_score REAL    CHECK (judgement_score IS NULL OR judgement_score BETWEEN -3 AND 3),
        session_id      TEXT,
        at              TEXT    NOT NULL
      );
      CREATE INDEX engram_tag_relevance_history_engram ON engram_tag_relevance_history (engram_id, tag, at);
      INSERT INTO engram_tag_relevance_history (engram_id, tag, score_before, score, cause, at)
        SELECT engram_id, tag, NULL, score, 'baseline', coalesce(last_evaluated_at, strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
          FROM engram_tag_relevance;

      -- The viewer's Sessions screen: what was learned from a session. Extraction names the session in
      -- source_sessions (a JSON array, searched with LIKE over this index of the engrams that have one) and, with the
      -- moment it found, in engram_sources.
      CREATE INDEX engrams_source_sessions ON engrams (source_sessions) WHERE source_sessions <> '[]';
      CREATE INDEX engram_sources_session ON engram_sources (session_id) WHERE session_id IS NOT NULL;
    `,
  },
  {
    version: 15,
    name: 'shown-signals',
    sql: `
      -- Where each list ranked what a hook injected (1-based, after gates; NULL when the list did not hold it or did
      -- not run). Joined with the evaluator's judgements, it says whether memories the vector list found were
      -- useful as often as those BM25 found, which weighs the vector list in this store's searches
      -- (services/recall reliability.ts).
      ALTER TABLE session_shown_engrams ADD COLUMN bm25_rank INTEGER;
      ALTER TABLE session_shown_engrams ADD COLUMN vector_rank INTEGER;
    `,
  },
  {
    version: 16,
    name: 'lesson-sessions',
    sql: `
      -- An engram learned from sessions is recorded in the first of them (services/memory recordedIn), so recall's
      -- context step and the timeline see it beside that session's other memories. Rows written before that rule
      -- (extracted lessons, imported drafts) get the same, once. Rows that name their session already keep it.
      UPDATE engrams SET session_id = json_extract(source_sessions, '$[0]')
       WHERE session_id IS NULL AND json_type(source_sessions, '$[0]') = 'text';
    `,
  },
];

/** The schema version this build writes. */
export const SCHEMA_VERSION = MIGRATIONS.at(-1)?.version ?? 0;

/** Reads `PRAGMA user_version`. */
export function schemaVersion(db: Database): number {
  return Number(db.pragma('user_version', { simple: true }));
}

/** What {@link migrate} did. */
export interface MigrationReport {
  from: number;
  to: number;
  applied: string[];
}

/**
 * Brings the schema up to `target` (default: latest). Each step runs in its own IMMEDIATE transaction that
 * re-reads the version first, so processes opening a new store at the same moment apply each step exactly once.
 * A store newer than this build is refused rather than touched.
 */
export function migrate(db: Database, target: number = SCHEMA_VERSION): MigrationReport {
  const from = schemaVersion(db);
  if (from > SCHEMA_VERSION) {
    throw new EngramError(
      'STORE_TOO_NEW',
      `the store has schema version ${from}, but this Engram only knows up to ${SCHEMA_VERSION}; upgrade Engram`,
      { details: { store_version: from, known_version: SCHEMA_VERSION } },
    );
  }
  const applied: string[] = [];
  for (const migration of MIGRATIONS) {
    if (migration.version > target || migration.version <= from) continue;
    const step = db.transaction(() => {
      if (schemaVersion(db) >= migration.version) return false;
      db.exec(`CREATE TABLE IF NOT EXISTS schema_migrations (
        version    INTEGER PRIMARY KEY,
        name       TEXT NOT NULL,
        applied_at TEXT NOT NULL
      )`);
      db.exec(migration.sql);
      db.prepare('INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)').run(
        migration.version,
        migration.name,
        new Date().toISOString(),
      );
      db.pragma(`user_version = ${migration.version}`);
      return true;
    });
    if (step.immediate()) applied.push(`${migration.version}-${migration.name}`);
  }
  return { from, to: schemaVersion(db), applied };
}

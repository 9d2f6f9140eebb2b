import type { Statement } from 'better-sqlite3';
import type { EngramStats } from '../engram.js';
import type { Database } from './database.js';

/** SQL access to an engram's learning state (per-repo, per-tag-set and per-tag tables). Callers own transactions. */
export interface StatsRepo {
  /** The learning state of one engram, each list in a stable order. */
  get(engramId: number): EngramStats;
  /** Replaces the learning state of one engram (import). */
  replace(engramId: number, stats: EngramStats): void;
  /** Tag-relevance rows of these engrams for these tags (recall's tag adjustment). */
  tagRelevance(engramIds: readonly number[], tags: readonly string[]): TagRelevanceRow[];
  /**
   * Counts one match: `engrams.times_matched` and the rows of this repo and this tag set (sorted here) go up by one;
   * each `last_matched_at` becomes the later of its value and `at`. An empty repo or tag set is not counted.
   */
  recordMatch(engramId: number, match: { repo: string | null; tagSet: readonly string[]; at: string }): void;
  /** Writes one tag's relevance row as given (the learn service computes the EMA). */
  upsertTagRelevance(engramId: number, row: EngramStats['tag_relevance'][number]): void;
  /** Records one move of a tag's relevance (the learn service calls it in the transaction that moves the EMA). */
  recordRelevanceChange(change: NewRelevanceChange): void;
  /** An engram's relevance history, per tag oldest first; at most `perTag` newest moves of each tag. */
  relevanceHistory(engramId: number, perTag?: number): RelevanceHistoryRow[];
}

/** Why a tag's relevance moved: a judgement of the evaluator or feedback, or `baseline` (the value it had when its history began: a store upgraded to schema 14, an import). */
export type RelevanceCause = 'evaluation' | 'feedback' | 'baseline';

/** One move of one tag's relevance, as {@link StatsRepo.recordRelevanceChange} takes it. */
export interface NewRelevanceChange {
  engram_id: number;
  tag: string;
  /** Null for a tag judged for the first time. */
  score_before: number | null;
  score: number;
  cause: RelevanceCause;
  /** The `engram_judgements` row that caused it, when one was stored. */
  judgement_id: number | null;
  judgement_score: number | null;
  session_id: string | null;
  at: string;
}

/** One stored move of a tag's relevance. */
export interface RelevanceHistoryRow extends NewRelevanceChange {
  id: number;
}

/** One engram's learned relevance in one tag. */
export interface TagRelevanceRow {
  engram_id: number;
  tag: string;
  score: number;
  positive_evals: number;
  negative_evals: number;
}

/** Builds the statistics repository over a connection. */
export function createStatsRepo(db: Database): StatsRepo {
  const repos = db.prepare<[number], EngramStats['repos'][number]>(
    'SELECT repo, times_matched, last_matched_at FROM engram_repo_stats WHERE engram_id = ? ORDER BY repo',
  );
  const tagSets = db.prepare<[number], { tag_set: string; times_matched: number; last_matched_at: string | null }>(
    'SELECT tag_set, times_matched, last_matched_at FROM engram_tag_stats WHERE engram_id = ? ORDER BY tag_set',
  );
  const relevance = db.prepare<[number], EngramStats['tag_relevance'][number]>(
    `SELECT tag, score, positive_evals, negative_evals, last_evaluated_at
       FROM engram_tag_relevance WHERE engram_id = ? ORDER BY tag`,
  );
  const clear = [
    db.prepare('DELETE FROM engram_repo_stats WHERE engram_id = ?'),
    db.prepare('DELETE FROM engram_tag_stats WHERE engram_id = ?'),
    db.prepare('DELETE FROM engram_tag_relevance WHERE engram_id = ?'),
  ];
  const insertRepo = db.prepare(
    'INSERT INTO engram_repo_stats (engram_id, repo, times_matched, last_matched_at) VALUES (?, ?, ?, ?)',
  );
  const insertTagSet = db.prepare(
    'INSERT INTO engram_tag_stats (engram_id, tag_set, times_matched, last_matched_at) VALUES (?, ?, ?, ?)',
  );
  const insertRelevance = db.prepare(
    `INSERT INTO engram_tag_relevance (engram_id, tag, score, positive_evals, negative_evals, last_evaluated_at)
     VALUES (?, ?, ?, ?, ?, ?)`,
  );

  const matchEngram = db.prepare(
    `UPDATE engrams SET times_matched = times_matched + 1,
            last_matched_at = max(coalesce(last_matched_at, ''), @at) WHERE id = @id`,
  );
  const matchRepo = db.prepare(
    `INSERT INTO engram_repo_stats (engram_id, repo, times_matched, last_matched_at) VALUES (@id, @repo, 1, @at)
     ON CONFLICT (engram_id, repo) DO UPDATE SET times_matched = times_matched + 1,
       last_matched_at = max(coalesce(last_matched_at, ''), excluded.last_matched_at)`,
  );
  const matchTagSet = db.prepare(
    `INSERT INTO engram_tag_stats (engram_id, tag_set, times_matched, last_matched_at) VALUES (@id, @tagSet, 1, @at)
     ON CONFLICT (engram_id, tag_set) DO UPDATE SET times_matched = times_matched + 1,
       last_matched_at = max(coalesce(last_matched_at, ''), excluded.last_matched_at)`,
  );
  const insertChange = db.prepare(
    `INSERT INTO engram_tag_relevance_history (engram_id, tag, score_before, score, cause, judgement_id, judgement_score, session_id, at)
     VALUES (@engram_id, @tag, @score_before, @score, @cause, @judgement_id, @judgement_score, @session_id, @at)`,
  );
  const history = db.prepare<[number, number], RelevanceHistoryRow>(
    `SELECT id, engram_id, tag, score_before, score, cause, judgement_id, judgement_score, session_id, at FROM (
       SELECT *, row_number() OVER (PARTITION BY tag ORDER BY at DESC, id DESC) AS newest
         FROM engram_tag_relevance_history WHERE engram_id = ?)
      WHERE newest <= ? ORDER BY tag, at, id`,
  );
  const upsertRelevance = db.prepare(
    `INSERT INTO engram_tag_relevance (engram_id, tag, score, positive_evals, negative_evals, last_evaluated_at)
     VALUES (@id, @tag, @score, @positive_evals, @negative_evals, @last_evaluated_at)
     ON CONFLICT (engram_id, tag) DO UPDATE SET score = excluded.score, positive_evals = excluded.positive_evals,
       negative_evals = excluded.negative_evals, last_evaluated_at = excluded.last_evaluated_at`,
  );

  // Prepared on first use and kept: search calls it for every query.
  let relevanceOf: Statement<[string, string], TagRelevanceRow> | undefined;
  return {
    tagRelevance(engramIds, tags) {
      if (engramIds.length === 0 || tags.length === 0) return [];
      relevanceOf ??= db.prepare<[string, string], TagRelevanceRow>(
        `SELECT engram_id, tag, score, positive_evals, negative_evals FROM engram_tag_relevance
          WHERE engram_id IN (SELECT value FROM json_each(?)) AND tag IN (SELECT value FROM json_each(?))`,
      );
      return relevanceOf.all(JSON.stringify(engramIds), JSON.stringify(tags));
    },
    recordMatch(engramId, { repo, tagSet, at }) {
      matchEngram.run({ id: engramId, at });
      if (repo) matchRepo.run({ id: engramId, repo, at });
      if (tagSet.length > 0) matchTagSet.run({ id: engramId, tagSet: JSON.stringify([...new Set(tagSet)].sort()), at });
    },
    upsertTagRelevance(engramId, row) {
      upsertRelevance.run({ id: engramId, ...row });
    },
    recordRelevanceChange(change) {
      insertChange.run(change);
    },
    relevanceHistory(engramId, perTag = 1_000) {
      return history.all(engramId, perTag);
    },
    get(engramId) {
      return {
        repos: repos.all(engramId),
        tag_sets: tagSets.all(engramId).map((row) => ({
          tag_set: JSON.parse(row.tag_set) as string[],
          times_matched: row.times_matched,
          last_matched_at: row.last_matched_at,
        })),
        tag_relevance: relevance.all(engramId),
      };
    },
    replace(engramId, stats) {
      for (const statement of clear) statement.run(engramId);
      for (const row of stats.repos) insertRepo.run(engramId, row.repo, row.times_matched, row.last_matched_at);
      for (const row of stats.tag_sets) {
        const tagSet = JSON.stringify([...row.tag_set].sort());
        insertTagSet.run(engramId, tagSet, row.times_matched, row.last_matched_at);
      }
      for (const row of stats.tag_relevance) {
        insertRelevance.run(engramId, row.tag, row.score, row.positive_evals, row.negative_evals, row.last_evaluated_at);
        // The history of a replaced state starts from its value (an import brings no history of its own).
        insertChange.run({ engram_id: engramId, tag: row.tag, score_before: null, score: row.score, cause: 'baseline', judgement_id: null, judgement_score: null, session_id: null, at: row.last_evaluated_at ?? new Date().toISOString() });
      }
    },
  };
}

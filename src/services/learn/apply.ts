import { EngramError, normalizeProject, normalizeTags, type Store } from '../../core/index.js';
import { ChangeSet, syncJournal, writeAuditEntry } from '../governance/index.js';
import { resolveEngram } from '../memory/index.js';
import { checkScore, nextRelevance } from './ema.js';
import { LEARNING, type JudgementSource } from './constants.js';
import { decidePin, type PinChange } from './pin.js';

/** One verdict on one engram in one environment: from the session evaluator or from explicit feedback. */
export interface Judgement {
  engramId: number;
  /** −3 (clearly harmful here) … +3 (clearly useful here); 0 means "cannot tell" and changes nothing. */
  score: number;
  /** The environment's tags (core/environment), where the engram was judged. */
  tags: readonly string[];
  /** The environment's repository (project name), if any. */
  repo?: string | null;
  source: JudgementSource;
  /** When it was judged (ISO-8601, or a Date). */
  at: string | Date;
  /** The stored judgement (`engram_judgements` row) and its session: what the relevance history names as the cause. */
  judgementId?: number | null;
  sessionId?: string | null;
}

/** One tag's relevance score before and after a judgement; `before` is null for a tag judged for the first time. */
export interface RelevanceChange {
  tag: string;
  before: number | null;
  after: number;
}

/** What a judgement changed. */
export interface JudgementResult {
  engram_id: number;
  /** The tags and repo it was applied to, normalised. */
  tags: string[];
  repo: string | null;
  /** The EMA weight it carried (LEARNING.weights). */
  weight: number;
  /** True when it counted as a match (score > 0): times_matched, the repo's row and the tag set's row went up. */
  matched: boolean;
  relevance: RelevanceChange[];
  pin: PinChange | null;
}

/** An ISO-8601 instant, always in the same form so stored dates compare as strings. */
function instant(at: string | Date): string {
  const time = at instanceof Date ? at.getTime() : Date.parse(at);
  if (!Number.isFinite(time)) throw new EngramError('INVALID_INPUT', `'${String(at)}' is not a date`);
  return new Date(time).toISOString();
}

/** Environment tags normalised like engram tags (no limit on their number: an environment is what it is). */
const environmentTags = (tags: readonly string[]): string[] => [...new Set(tags.flatMap((tag) => normalizeTags(tag)))].sort();

/**
 * Applies one judgement in one write transaction: a positive score counts a match (global, per repo, per tag set);
 * any non-zero score moves each environment tag's relevance EMA with the source's weight and adds one positive or
 * negative evaluation, each move also written as a row of the tag's relevance history; then the pin is re-checked ({@link decidePin}) and changed if needed. The result depends only
 * on the store's state and the judgement (including `at`), never on the clock.
 *
 * Not idempotent: applying the same judgement twice counts it twice. Callers make sure each session is judged once
 * (the evaluator through `session_audit.eval_status`; engrammar re-counted on every Stop, peers.md §1.10).
 */
export function applyJudgement(store: Store, judgement: Judgement): JudgementResult {
  const score = checkScore(judgement.score);
  const weight = LEARNING.weights[judgement.source];
  if (weight === undefined) throw new EngramError('INVALID_INPUT', `unknown judgement source '${String(judgement.source)}'`);
  const tags = environmentTags(judgement.tags);
  const repo = normalizeProject(judgement.repo ?? null);
  const at = instant(judgement.at);

  const result = store.write(() => {
    const engram = resolveEngram(store, judgement.engramId);
    const before = store.stats.get(engram.id);
    const matched = score > 0;
    if (matched) store.stats.recordMatch(engram.id, { repo, tagSet: tags, at });

    const relevance: RelevanceChange[] = [];
    if (score !== 0) {
      const rows = new Map(before.tag_relevance.map((row) => [row.tag, row]));
      for (const tag of tags) {
        const row = rows.get(tag);
        const next = nextRelevance(row, tag, score, weight, at);
        store.stats.upsertTagRelevance(engram.id, next);
        // The history row is written with the move it records: the chart over time never misses a step.
        store.stats.recordRelevanceChange({
          engram_id: engram.id,
          tag,
          score_before: row?.score ?? null,
          score: next.score,
          cause: judgement.source,
          judgement_id: judgement.judgementId ?? null,
          judgement_score: score,
          session_id: judgement.sessionId ?? null,
          at,
        });
        relevance.push({ tag, before: row?.score ?? null, after: next.score });
      }
    }

    const pin = decidePin(engram, before, store.stats.get(engram.id));
    // A pin Engram sets or clears by itself is a change like a person's: audited (actor system), so it can be undone.
    const changes = new ChangeSet(store.db);
    if (pin) changes.engram(engram.id);
    if (pin?.action === 'pinned') {
      store.engrams.update(engram.id, {
        pinned: true,
        auto_pinned: true,
        ...(pin.prerequisites !== undefined ? { prerequisites: pin.prerequisites } : {}),
        updated_at: at,
      });
    } else if (pin?.action === 'unpinned') {
      store.engrams.update(engram.id, { pinned: false, auto_pinned: false, updated_at: at });
    }
    if (pin) {
      writeAuditEntry(store, { actor: { by: 'system', via: judgement.source === 'feedback' ? 'api' : 'job' }, op: pin.action === 'pinned' ? 'auto-pin' : 'auto-unpin', reason: `${pin.reason}: ${pin.detail}` }, changes.finish(), [], at);
    }
    return { engram_id: engram.id, tags, repo, weight, matched, relevance, pin };
  });
  if (result.pin && !store.db.inTransaction) syncJournal(store);
  return result;
}

/**
 * Finding an engram's conflicts in the store: the rules (or an LLM's earlier verdicts) against the active engrams it
 * would be shown beside — same project, or personal — that can contradict it, found through the store's text index
 * (text-index.ts), and recording them in `engram_conflicts`.
 * @module
 */
import { sanitizeText, type EngramStatus, type LlmClient, type Store } from '../../core/index.js';
import { analyse, CONFLICT_RULES, llmVerdict, ruleVerdict, type ConflictVerdict } from './conflicts.js';
import { analysed, textIndexOf } from './text-index.js';
import type { ChangeSet } from './audit.js';

/** What is compared: the text and where it would be shown. */
export interface ConflictProbe {
  text: string;
  project: string | null;
  /** The engram itself, when it is already stored (an edit, an approval): never compared with itself. */
  id?: number;
}

/** A conflict found, before or after it is recorded. */
export interface FoundConflict extends ConflictVerdict {
  other_id: number;
  other_text: string;
}

/** LLM verdicts computed ahead of a write transaction (LLM calls are async, transactions are not), by other engram id. */
export type PrecomputedVerdicts = ReadonlyMap<number, ConflictVerdict>;

/**
 * The active engrams the probe contradicts, strongest signal first (an LLM verdict, when given, replaces the rules').
 * Only engrams sharing at least `CONFLICT_RULES.subjectOverlap` of the smaller side's salient stems are judged: the
 * rules give every other pair "no conflict" (rule 1), so the verdicts are those of judging every active engram in
 * scope (test/services/governance/conflict-index.test.ts compares both), found through the store's text index.
 */
export function findConflicts(store: Store, probe: ConflictProbe, precomputed?: PrecomputedVerdicts): FoundConflict[] {
  const mine = analysed(probe.text);
  const index = textIndexOf(store);
  const found: Array<ConflictVerdict & { other_id: number }> = [];
  for (const candidate of index.conflictCandidates(mine, probe, CONFLICT_RULES.subjectOverlap, precomputed?.keys())) {
    const verdict = precomputed?.get(candidate.id) ?? ruleVerdict(mine, index.analysisOf(candidate.slot));
    if (verdict.conflict) found.push({ ...verdict, other_id: candidate.id });
  }
  if (found.length === 0) return [];
  const texts = textsOf(store, found.map((conflict) => conflict.other_id));
  return found
    .map((conflict) => ({ ...conflict, other_text: texts.get(conflict.other_id) ?? '' }))
    .sort((a, b) => b.overlap - a.overlap || a.other_id - b.other_id);
}

/** Texts of a few engrams, by id. */
function textsOf(store: Store, ids: readonly number[]): Map<number, string> {
  const rows = store.db.prepare('SELECT id, text FROM engrams WHERE id IN (SELECT value FROM json_each(?))').all(JSON.stringify(ids)) as Array<{ id: number; text: string }>;
  return new Map(rows.map((row) => [row.id, row.text]));
}

/**
 * Asks the LLM about the probe's closest active engrams (at most `llmMaxPairs`, salient overlap at least
 * `llmCandidateOverlap`). Returns the verdicts it gave; a failed call (budget, timeout) leaves that pair to the rules.
 */
export async function llmVerdicts(store: Store, probe: ConflictProbe, llm: LlmClient | null | undefined, options: { sessionId?: string } = {}): Promise<Map<number, ConflictVerdict>> {
  const verdicts = new Map<number, ConflictVerdict>();
  if (!llm || llm.provider === 'none') return verdicts;
  const mine = analyse(probe.text);
  const close = store.read(() => {
    const index = textIndexOf(store);
    const nearest = index
      .conflictCandidates(mine, probe, CONFLICT_RULES.llmCandidateOverlap)
      .sort((a, b) => b.overlap - a.overlap || a.id - b.id)
      .slice(0, CONFLICT_RULES.llmMaxPairs);
    const texts = textsOf(store, nearest.map((candidate) => candidate.id));
    return nearest.map((candidate) => ({ id: candidate.id, text: texts.get(candidate.id) ?? '', analysis: index.analysisOf(candidate.slot) }));
  });
  for (const candidate of close) {
    try {
      const verdict = await llmVerdict(llm, probe.text, candidate.text, ruleVerdict(mine, candidate.analysis), options.sessionId);
      if (verdict) verdicts.set(candidate.id, verdict);
    } catch {
      // No answer: the rules decide this pair.
    }
  }
  return verdicts;
}

/** Records conflicts of `engramId` (open), tracking the rows for the audit entry; returns the ids recorded. */
export function recordConflicts(store: Store, changes: ChangeSet, engramId: number, conflicts: readonly FoundConflict[], at: string): number[] {
  const ids: number[] = [];
  if (conflicts.length === 0) return ids;
  const { insert, find } = conflictStatements(store);
  for (const conflict of conflicts) {
    const existing = find.get(engramId, conflict.other_id) as { id: number } | undefined;
    if (existing) changes.track('engram_conflicts', { id: existing.id });
    // A model's "why" may quote what it was sent: stored like any free text, secrets removed.
    insert.run(engramId, conflict.other_id, conflict.method, conflict.signal ?? 'llm', sanitizeText(conflict.reason).text, at);
    const id = existing?.id ?? (find.get(engramId, conflict.other_id) as { id: number }).id;
    if (!existing) changes.created('engram_conflicts', { id });
    ids.push(id);
  }
  return ids;
}

// Prepared once per connection: an import records conflicts for many lines (preparing was 9 % of its time).
interface ConflictStatements {
  insert: { run(...params: unknown[]): unknown };
  find: { get(...params: unknown[]): unknown };
}
const statements = new WeakMap<Store['db'], ConflictStatements>();

function conflictStatements(store: Store): ConflictStatements {
  let prepared = statements.get(store.db);
  if (!prepared) {
    prepared = {
      insert: store.db.prepare(
        `INSERT INTO engram_conflicts (engram_id, other_id, method, signal, reason, status, created_at)
     VALUES (?, ?, ?, ?, ?, 'open', ?)
     ON CONFLICT (engram_id, other_id) DO UPDATE SET method = excluded.method, signal = excluded.signal, reason = excluded.reason,
       status = 'open', resolution = NULL, resolved_at = NULL, created_at = excluded.created_at`,
      ),
      find: store.db.prepare('SELECT id FROM engram_conflicts WHERE engram_id = ? AND other_id = ?'),
    };
    statements.set(store.db, prepared);
  }
  return prepared;
}

/** Open conflicts that involve an engram (either side). */
export function openConflictsOf(store: Store, engramId: number): Array<{ id: number; engram_id: number; other_id: number; reason: string }> {
  return store.db
    .prepare("SELECT id, engram_id, other_id, reason FROM engram_conflicts WHERE status = 'open' AND (engram_id = ? OR other_id = ?) ORDER BY id")
    .all(engramId, engramId) as Array<{ id: number; engram_id: number; other_id: number; reason: string }>;
}

/** Marks conflicts resolved (tracked for the audit entry). */
export function resolveConflicts(store: Store, changes: ChangeSet, ids: readonly number[], resolution: 'superseded' | 'kept-both' | 'rejected' | 'gone', at: string): void {
  for (const id of ids) {
    changes.track('engram_conflicts', { id });
    store.db.prepare("UPDATE engram_conflicts SET status = 'resolved', resolution = ?, resolved_at = ? WHERE id = ?").run(resolution, at, id);
  }
}

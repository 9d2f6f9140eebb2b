/**
 * Finding an engram's conflicts in the store: the rules (or an LLM's earlier verdicts) against every active engram it
 * would be shown beside — same project, or personal — and recording them in `engram_conflicts`.
 * @module
 */
import { sanitizeText, type EngramStatus, type LlmClient, type Store } from '../../core/index.js';
import { analyse, CONFLICT_RULES, llmVerdict, ruleVerdict, subjectOverlap, type Analysis, type ConflictVerdict } from './conflicts.js';
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

interface Candidate {
  id: number;
  text: string;
  analysis: Analysis;
}

// Analyses of stored texts, per store, by id and content hash: an add compares against every active engram in scope,
// and re-analysing thousands of texts on every add would cost more than the add.
const analyses = new WeakMap<Store, Map<number, { hash: string; analysis: Analysis }>>();

/** Active engrams the probe would be shown beside, analysed. */
function candidates(store: Store, probe: ConflictProbe, statuses: readonly EngramStatus[] = ['active']): Candidate[] {
  const rows = store.db
    .prepare(
      `SELECT id, text, content_hash FROM engrams
        WHERE deleted_at IS NULL AND status IN (SELECT value FROM json_each(?)) AND id IS NOT ?
          AND (? IS NULL OR project IS NULL OR project = ?)`,
    )
    .all(JSON.stringify(statuses), probe.id ?? null, probe.project, probe.project) as Array<{ id: number; text: string; content_hash: string }>;
  return rows.map((row) => ({ id: row.id, text: row.text, analysis: analysisOf(store, row) }));
}

// The last text analysed as a probe: the same text is analysed again as a stored row right after it is written.
let lastProbe: { text: string; analysis: Analysis } | null = null;

/** `analyse`, remembering the last probe (the analysis is a pure function of the text). */
function analysed(text: string): Analysis {
  if (lastProbe?.text !== text) lastProbe = { text, analysis: analyse(text) };
  return lastProbe.analysis;
}

/** A stored text's analysis, from the per-store cache while its content hash holds. */
function analysisOf(store: Store, row: { id: number; text: string; content_hash: string }): Analysis {
  let cache = analyses.get(store);
  if (!cache) analyses.set(store, (cache = new Map()));
  let entry = cache.get(row.id);
  if (!entry || entry.hash !== row.content_hash) cache.set(row.id, (entry = { hash: row.content_hash, analysis: analysed(row.text) }));
  return entry.analysis;
}

/** One active engram as the index holds it. */
interface Indexed extends Candidate {
  project: string | null;
  /** The stems it is listed under in the prefix postings. */
  prefix: string[];
}

/**
 * The fewest shared salient stems that make rule 1's `shared / smaller` reach `subjectOverlap` when the smaller side
 * has `size` stems (computed with the rule's own division), and at least one: a pair sharing none is never compared.
 */
function sharedNeeded(size: number): number {
  let needed = Math.max(1, Math.ceil(CONFLICT_RULES.subjectOverlap * size));
  while (needed > 1 && (needed - 1) / size >= CONFLICT_RULES.subjectOverlap) needed--;
  while (needed <= size && needed / size < CONFLICT_RULES.subjectOverlap) needed++;
  return needed;
}

/**
 * The active engrams of a store, analysed and indexed by salient stem, for many conflict checks inside **one write
 * transaction** (an import batch): loaded once, then kept true by {@link refresh} for every engram the caller
 * writes. Outside the transaction it was loaded in, it is stale: other writers may have changed the store.
 *
 * Only pairs that rule 1 lets through (`shared / smaller side ≥ subjectOverlap`) can be rule conflicts, so only they
 * are compared, and they are found without walking every engram that shares a common stem (which made an import
 * slow down as the store grew — docs/PERFORMANCE.md). A pair that shares `k` of the smaller side's stems shares at
 * least one of any `size − k + 1` of them (pigeonhole), so:
 * - engrams at least as large as the probe are looked up under the probe's `m − k(m) + 1` rarest stems only;
 * - each engram is also listed under its own `e − k(e) + 1` rarest stems (its prefix), where the probe's stems find
 *   the engrams smaller than the probe.
 * Every pair found has its shared stems counted exactly and goes through rule 1's test, so the candidates are exactly
 * those of comparing with every engram (test/services/governance/conflict-index.test.ts).
 */
export class ConflictIndex {
  /** Indexed engrams by slot (a removed one leaves null). */
  private readonly slots: Array<Indexed | null> = [];
  private readonly slotOf = new Map<number, number>();
  /** Every salient stem → the slots of the engrams that have it. */
  private readonly byStem = new Map<string, Set<number>>();
  /** Each engram's prefix stems → slots. */
  private readonly byPrefix = new Map<string, Set<number>>();
  private one: ReturnType<Store['db']['prepare']> | undefined;
  /** While the constructor loads the store: each stem's frequency among the loaded engrams. */
  private loading: Map<string, number> | null = null;

  constructor(private readonly store: Store) {
    const rows = store.db
      .prepare("SELECT id, text, content_hash, project FROM engrams WHERE deleted_at IS NULL AND status = 'active'")
      .all() as Array<{ id: number; text: string; content_hash: string; project: string | null }>;
    const analysed = rows.map((row) => ({ id: row.id, text: row.text, project: row.project, analysis: analysisOf(store, row) }));
    // The loaded engrams' prefixes are chosen by their final frequencies (any choice is correct; rare is fast).
    this.loading = new Map();
    for (const entry of analysed) for (const stem of entry.analysis.salient) this.loading.set(stem, (this.loading.get(stem) ?? 0) + 1);
    for (const entry of analysed) this.add(entry);
    this.loading = null;
  }

  /** Re-reads one engram after the caller wrote it (inserted, revised, status changed, deleted). */
  refresh(id: number): void {
    this.remove(id);
    this.one ??= this.store.db.prepare("SELECT id, text, content_hash, project FROM engrams WHERE id = ? AND deleted_at IS NULL AND status = 'active'");
    const row = this.one.get(id) as { id: number; text: string; content_hash: string; project: string | null } | undefined;
    if (row) this.add({ id: row.id, text: row.text, project: row.project, analysis: analysisOf(this.store, row) });
  }

  /**
   * The engrams the probe would be shown beside whose salient stems overlap it enough for rule 1 (the same
   * `shared / smaller side` as `ruleVerdict`), plus any with a precomputed verdict. The rest could only get "no
   * conflict" from the rules, so they are not compared at all.
   */
  candidates(probe: ConflictProbe, mine: Analysis, precomputed?: PrecomputedVerdicts): Candidate[] {
    const size = mine.salient.size;
    const seen = new Set<number>();
    if (size > 0) {
      const rarest = [...mine.salient].sort((a, b) => this.frequency(a) - this.frequency(b));
      // Engrams at least as large as the probe: under its rarest stems.
      for (const stem of rarest.slice(0, size - sharedNeeded(size) + 1)) {
        for (const slot of this.byStem.get(stem) ?? []) if ((this.slots[slot]?.analysis.salient.size ?? 0) >= size) seen.add(slot);
      }
      // Smaller engrams: under their own prefixes.
      for (const stem of rarest) {
        for (const slot of this.byPrefix.get(stem) ?? []) if ((this.slots[slot]?.analysis.salient.size ?? size) < size) seen.add(slot);
      }
    }
    const found: Candidate[] = [];
    const consider = (entry: Indexed | null | undefined): void => {
      if (!entry || entry.id === probe.id) return;
      if (probe.project !== null && entry.project !== null && entry.project !== probe.project) return;
      const shared = sharedCount(mine.salient, entry.analysis.salient);
      if (shared === 0 && !precomputed?.has(entry.id)) return;
      const overlap = shared / Math.min(size, entry.analysis.salient.size);
      if (overlap < CONFLICT_RULES.subjectOverlap && !precomputed?.has(entry.id)) return;
      found.push(entry);
    };
    for (const slot of seen) consider(this.slots[slot]);
    // Engrams with a verdict of their own that the stems did not bring up.
    for (const id of precomputed?.keys() ?? []) {
      const slot = this.slotOf.get(id);
      if (slot !== undefined && !seen.has(slot)) consider(this.slots[slot]);
    }
    return found;
  }

  /** How many indexed engrams have this salient stem. */
  private frequency(stem: string): number {
    return this.loading?.get(stem) ?? this.byStem.get(stem)?.size ?? 0;
  }

  private posting(map: Map<string, Set<number>>, stem: string): Set<number> {
    let slots = map.get(stem);
    if (!slots) map.set(stem, (slots = new Set()));
    return slots;
  }

  private add(entry: Omit<Indexed, 'prefix'>): void {
    const slot = this.slots.length;
    const size = entry.analysis.salient.size;
    const prefix = size === 0 ? [] : [...entry.analysis.salient].sort((a, b) => this.frequency(a) - this.frequency(b)).slice(0, size - sharedNeeded(size) + 1);
    const indexed: Indexed = { ...entry, prefix };
    this.slots.push(indexed);
    this.slotOf.set(entry.id, slot);
    for (const stem of entry.analysis.salient) this.posting(this.byStem, stem).add(slot);
    for (const stem of prefix) this.posting(this.byPrefix, stem).add(slot);
  }

  private remove(id: number): void {
    const slot = this.slotOf.get(id);
    if (slot === undefined) return;
    const entry = this.slots[slot];
    this.slots[slot] = null;
    this.slotOf.delete(id);
    if (!entry) return;
    for (const stem of entry.analysis.salient) this.byStem.get(stem)?.delete(slot);
    for (const stem of entry.prefix) this.byPrefix.get(stem)?.delete(slot);
  }
}

/** How many members two sets share. */
function sharedCount(a: ReadonlySet<string>, b: ReadonlySet<string>): number {
  const [small, large] = a.size <= b.size ? [a, b] : [b, a];
  let shared = 0;
  for (const word of small) if (large.has(word)) shared++;
  return shared;
}

/** The active engrams the probe contradicts, strongest signal first (an LLM verdict, when given, replaces the rules'). */
export function findConflicts(store: Store, probe: ConflictProbe, precomputed?: PrecomputedVerdicts, index?: ConflictIndex): FoundConflict[] {
  const mine = analysed(probe.text);
  const found: FoundConflict[] = [];
  for (const candidate of index ? index.candidates(probe, mine, precomputed) : candidates(store, probe)) {
    const verdict = precomputed?.get(candidate.id) ?? ruleVerdict(mine, candidate.analysis);
    if (verdict.conflict) found.push({ ...verdict, other_id: candidate.id, other_text: candidate.text });
  }
  return found.sort((a, b) => b.overlap - a.overlap || a.other_id - b.other_id);
}

/**
 * Asks the LLM about the probe's closest active engrams (at most `llmMaxPairs`, salient overlap at least
 * `llmCandidateOverlap`). Returns the verdicts it gave; a failed call (budget, timeout) leaves that pair to the rules.
 */
export async function llmVerdicts(store: Store, probe: ConflictProbe, llm: LlmClient | null | undefined, options: { sessionId?: string } = {}): Promise<Map<number, ConflictVerdict>> {
  const verdicts = new Map<number, ConflictVerdict>();
  if (!llm || llm.provider === 'none') return verdicts;
  const mine = analyse(probe.text);
  const close = store
    .read(() => candidates(store, probe))
    .map((candidate) => ({ candidate, overlap: subjectOverlap(mine, candidate.analysis) }))
    .filter((entry) => entry.overlap >= CONFLICT_RULES.llmCandidateOverlap)
    .sort((a, b) => b.overlap - a.overlap)
    .slice(0, CONFLICT_RULES.llmMaxPairs);
  for (const { candidate } of close) {
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

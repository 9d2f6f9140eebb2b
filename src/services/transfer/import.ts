import {
  contentHash,
  EngramError,
  formatIssues,
  normalizeCategory,
  normalizePrerequisites,
  normalizeProject,
  normalizeTags,
  normalizeTopicKey,
  LIMITS,
  type EngramStatus,
  type LearnedBy,
  type RedactionKind,
  type Store,
} from '../../core/index.js';
import { randomUUID } from 'node:crypto';
import {
  API_USER,
  audited,
  classifyTier,
  findConflicts,
  governancePolicy,
  recordConflicts,
  syncJournal,
  type Actor,
  type ChangeSet,
  type GovernancePolicy,
} from '../governance/index.js';
import { cleanText, learnedByOf, parseDraft, prepareDraft, requiredText, storeDraft, type PreparedDraft } from '../memory/index.js';
import { exportLine, ExportLineSchema, type ExportLine } from './export.js';

/** What importing did, per line outcome. */
export interface ImportReport {
  /** Non-blank lines read. */
  lines: number;
  /** New engrams stored. */
  created: number;
  /** Existing engrams (same uid) replaced by a newer version from the file. */
  updated: number;
  /** Lines identical to what the store already holds. */
  unchanged: number;
  /** Lines whose text already lives in the same project and scope under another identity; left alone. */
  duplicates: number;
  /** Lines older than the store's version of the same engram; the store's version was kept. */
  older: number;
  /** Lines that had secrets or private spans removed. */
  redacted: number;
  /** Write transactions used. */
  batches: number;
  /** Lines that came in (or stayed) pending because they contradict an active engram. */
  conflicts: number;
  dry_run: boolean;
  /** `engram undo <token>` reverses the whole import (every batch); null when nothing changed. */
  undo_token: string | null;
}

/** One line problem, for INVALID_INPUT details. */
export interface LineError {
  line: number;
  message: string;
}

/** Options for {@link importEngrams}. */
export interface ImportOptions {
  /** Validate and count, then roll everything back. @default false */
  dryRun?: boolean;
  /** Lines per write transaction: an interrupted import keeps whole batches, and re-running it finishes the job. @default 500 */
  batchSize?: number;
  /** Clock for minimal lines' timestamps. @default () => new Date() */
  now?: () => Date;
  /** Called after each committed batch. */
  onProgress?: (done: number, total: number) => void;
  /** Who imports (docs/GOVERNANCE.md): a person by default; a teammate's store comes in as `sync`. */
  actor?: Actor;
  /** config.json `governance`. @default the built-in policy */
  policy?: GovernancePolicy;
}

type Planned = { line: number; kind: 'full'; value: ExportLine; redacted: boolean } | { line: number; kind: 'draft'; value: PreparedDraft };

const MAX_REPORTED_ERRORS = 50;

const LEARNED_FROM_SOURCE: Record<string, LearnedBy> = { manual: 'user', extracted: 'harvest', feedback: 'user', import: 'import' };

/** Normalises a full export line the way the store would, so comparisons and re-exports are stable. Lines written
 * before review existed get the review columns the migration gives stored engrams. */
function normalizeFull(line: ExportLine): { value: ExportLine; redacted: boolean } {
  const found = new Set<RedactionKind>();
  const status: EngramStatus = line.status ?? (line.deprecated ? 'deprecated' : 'active');
  const value: ExportLine = {
    ...line,
    status,
    deprecated: status === 'deprecated',
    status_reason: cleanText(line.status_reason ?? (status === 'deprecated' ? line.deprecated_reason : null), 'status_reason', LIMITS.textChars, found),
    learned_by: line.learned_by ?? LEARNED_FROM_SOURCE[line.source] ?? 'import',
    tier: line.tier ?? null,
    confirmed_at: line.confirmed_at === undefined ? line.created_at : line.confirmed_at,
    liveness: line.liveness ?? 'unknown',
    liveness_at: line.liveness_at ?? null,
    title: cleanText(line.title, 'title', LIMITS.titleChars, found),
    text: requiredText(line.text, 'text', LIMITS.textChars, found),
    content: cleanText(line.content, 'content', LIMITS.contentChars, found),
    deprecated_reason: cleanText(line.deprecated_reason, 'deprecated_reason', LIMITS.textChars, found),
    category: normalizeCategory(line.category),
    tags: normalizeTags(line.tags),
    prerequisites: normalizePrerequisites(line.prerequisites),
    project: normalizeProject(line.project),
    topic_key: normalizeTopicKey(line.topic_key),
  };
  return { value, redacted: found.size > 0 };
}

/** Parses and validates every line before anything is written; throws INVALID_INPUT listing bad lines by number. */
export function planImport(lines: readonly string[]): Planned[] {
  const planned: Planned[] = [];
  const errors: LineError[] = [];
  lines.forEach((raw, index) => {
    const line = index + 1;
    const text = raw.trim();
    if (text === '' || errors.length >= MAX_REPORTED_ERRORS) return;
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch (error) {
      errors.push({ line, message: `malformed JSON (${(error as Error).message})` });
      return;
    }
    if (value === null || typeof value !== 'object' || Array.isArray(value)) {
      errors.push({ line, message: 'expected a JSON object' });
      return;
    }
    try {
      if ('uid' in value) {
        const parsed = ExportLineSchema.safeParse(value);
        if (!parsed.success) throw new EngramError('INVALID_INPUT', formatIssues(parsed.error));
        const { value: full, redacted } = normalizeFull(parsed.data);
        planned.push({ line, kind: 'full', value: full, redacted });
      } else {
        planned.push({ line, kind: 'draft', value: prepareDraft({ source: 'import', ...parseDraft(value) }) });
      }
    } catch (error) {
      errors.push({ line, message: (error as Error).message });
    }
  });
  if (errors.length > 0) {
    const first = errors[0] as LineError;
    throw new EngramError(
      'INVALID_INPUT',
      `${errors.length}${errors.length >= MAX_REPORTED_ERRORS ? '+' : ''} invalid line(s); nothing was imported. line ${first.line}: ${first.message}`,
      { details: { errors } },
    );
  }
  return planned;
}

/** JSON with object keys sorted, for order-independent equality. */
function canonical(value: unknown): string {
  return JSON.stringify(value, (_key, item: unknown) =>
    item !== null && typeof item === 'object' && !Array.isArray(item)
      ? Object.fromEntries(Object.entries(item).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : item,
  );
}

const ROLLBACK = Symbol('dry-run rollback');

const RANK: Record<EngramStatus, number> = { rejected: 0, deprecated: 0, pending: 1, active: 2 };

/**
 * Writes one full export line: insert (keeping its id when free), replace if newer, else leave. A new engram keeps the
 * status it had where it was exported, unless it contradicts an active engram here (then it waits in review); a
 * newer version of an engram already here never raises its status — approving is done here, by a person.
 */
function applyFull(
  store: Store,
  line: ExportLine,
  changes: ChangeSet,
  policy: GovernancePolicy,
  at: string,
): 'created' | 'updated' | 'unchanged' | 'duplicates' | 'older' | 'conflicts' {
  const { id, uid, content_hash: _hash, stats, ...fields } = line;
  const existing = store.engrams.getByUid(uid);
  if (existing) {
    const current = exportLine(existing, store.stats.get(existing.id));
    if (canonical(current) === canonical({ ...line, id: existing.id, content_hash: existing.content_hash })) {
      return 'unchanged';
    }
    if (line.updated_at <= existing.updated_at) return 'older';
    changes.engram(existing.id);
    changes.dependents(existing.id);
    const status = RANK[line.status as EngramStatus] > RANK[existing.status] ? existing.status : line.status;
    store.engrams.update(existing.id, {
      ...fields,
      status,
      ...(status !== line.status ? { status_reason: existing.status_reason } : {}),
    });
    store.stats.replace(existing.id, stats);
    changes.newDependents(existing.id);
    return 'updated';
  }
  // The same lesson stored independently on two machines: keep one, as `add` would.
  if (line.deleted_at === null && store.engrams.findLiveByHash(contentHash(line.text), line.project, line.scope)) {
    return 'duplicates';
  }
  const conflicts = line.status === 'active' && line.deleted_at === null ? findConflicts(store, { text: line.text, project: line.project }) : [];
  const free = store.engrams.get(id) === undefined;
  const inserted = store.engrams.insert({
    ...fields,
    uid,
    ...(free ? { id } : {}),
    tier: fields.tier ?? classifyTier(fields.kind, fields.text, policy).tier,
    ...(conflicts.length
      ? { status: 'pending' as const, status_reason: `contradicts active engram ${conflicts.map((c) => `#${c.other_id}`).join(', ')}; a person decides which holds` }
      : {}),
  });
  changes.created('engrams', { id: inserted.id });
  store.stats.replace(inserted.id, stats);
  changes.newDependents(inserted.id);
  recordConflicts(store, changes, inserted.id, conflicts, at);
  return conflicts.length ? 'conflicts' : 'created';
}

/**
 * Imports JSONL: full lines from `engram export` (matched by uid, so re-importing changes nothing) and minimal lines
 * such as `{"text": "...", "category": "...", "tags": [...]}` (matched by content, so re-importing adds nothing).
 * All lines are validated first; a bad line aborts the import before any write.
 */
export function importEngrams(store: Store, lines: readonly string[], options: ImportOptions = {}): ImportReport {
  const planned = planImport(lines);
  const batchSize = Math.max(1, options.batchSize ?? 500);
  const now = options.now ?? (() => new Date());
  const actor = options.actor ?? API_USER;
  const policy = options.policy ?? governancePolicy();
  const learnedBy: LearnedBy = actor.by === 'user' ? 'import' : learnedByOf(actor);
  const report: ImportReport = {
    lines: planned.length,
    created: 0,
    updated: 0,
    unchanged: 0,
    duplicates: 0,
    older: 0,
    redacted: 0,
    batches: 0,
    conflicts: 0,
    dry_run: options.dryRun ?? false,
    undo_token: null,
  };
  // Every batch is its own transaction and audit row; they share a group, so one undo reverses the whole import.
  const group = randomUUID();

  const runBatch = (batch: Planned[], index: number): void => {
    const at = now().toISOString();
    const { entry } = audited(
      store,
      { actor, op: 'import', detail: { group, batch: index } },
      (changes) => {
        for (const item of batch) {
          if (item.kind === 'full') {
            const outcome = applyFull(store, item.value, changes, policy, at);
            if (outcome === 'conflicts') {
              report.created++;
              report.conflicts++;
            } else report[outcome]++;
            if (item.redacted) report.redacted++;
          } else {
            const { status, engram } = storeDraft(store, item.value, at, 'skip', { changes, learnedBy, policy });
            if (status === 'created') report.created++;
            else if (status === 'revised') report.updated++;
            else report.duplicates++;
            if (status !== 'skipped' && engram.status === 'pending' && engram.status_reason?.startsWith('contradicts')) report.conflicts++;
            if (item.value.redacted.length) report.redacted++;
          }
        }
      },
      at,
    );
    report.undo_token ??= entry?.token ?? null;
  };

  if (report.dry_run) {
    try {
      store.write(() => {
        runBatch(planned, 0);
        throw ROLLBACK;
      });
    } catch (error) {
      if (error !== ROLLBACK) throw error;
    }
    report.batches = 0;
    report.undo_token = null;
    return report;
  }

  for (let start = 0; start < planned.length; start += batchSize) {
    const batch = planned.slice(start, start + batchSize);
    runBatch(batch, report.batches);
    report.batches++;
    options.onProgress?.(Math.min(start + batchSize, planned.length), planned.length);
  }
  syncJournal(store);
  return report;
}

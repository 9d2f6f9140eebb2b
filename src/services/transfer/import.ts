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
  type RedactionKind,
  type Store,
} from '../../core/index.js';
import { cleanText, parseDraft, prepareDraft, requiredText, storeDraft, type PreparedDraft } from '../memory/index.js';
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
  dry_run: boolean;
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
}

type Planned = { line: number; kind: 'full'; value: ExportLine; redacted: boolean } | { line: number; kind: 'draft'; value: PreparedDraft };

const MAX_REPORTED_ERRORS = 50;

/** Normalises a full export line the way the store would, so comparisons and re-exports are stable. */
function normalizeFull(line: ExportLine): { value: ExportLine; redacted: boolean } {
  const found = new Set<RedactionKind>();
  const value: ExportLine = {
    ...line,
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

/** Writes one full export line: insert (keeping its id when free), replace if newer, else leave. */
function applyFull(store: Store, line: ExportLine): 'created' | 'updated' | 'unchanged' | 'duplicates' | 'older' {
  const { id, uid, content_hash: _hash, stats, ...fields } = line;
  const existing = store.engrams.getByUid(uid);
  if (existing) {
    const current = exportLine(existing, store.stats.get(existing.id));
    if (canonical(current) === canonical({ ...line, id: existing.id, content_hash: existing.content_hash })) {
      return 'unchanged';
    }
    if (line.updated_at <= existing.updated_at) return 'older';
    store.engrams.update(existing.id, fields);
    store.stats.replace(existing.id, stats);
    return 'updated';
  }
  // The same lesson stored independently on two machines: keep one, as `add` would.
  if (line.deleted_at === null && store.engrams.findLiveByHash(contentHash(line.text), line.project, line.scope)) {
    return 'duplicates';
  }
  const free = store.engrams.get(id) === undefined;
  const inserted = store.engrams.insert({ ...fields, uid, ...(free ? { id } : {}) });
  store.stats.replace(inserted.id, stats);
  return 'created';
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
  const report: ImportReport = {
    lines: planned.length,
    created: 0,
    updated: 0,
    unchanged: 0,
    duplicates: 0,
    older: 0,
    redacted: 0,
    batches: 0,
    dry_run: options.dryRun ?? false,
  };

  const runBatch = (batch: Planned[]): void => {
    const at = now().toISOString();
    for (const item of batch) {
      if (item.kind === 'full') {
        report[applyFull(store, item.value)]++;
        if (item.redacted) report.redacted++;
      } else {
        const { status } = storeDraft(store, item.value, at, 'skip');
        if (status === 'created') report.created++;
        else if (status === 'revised') report.updated++;
        else report.duplicates++;
        if (item.value.redacted.length) report.redacted++;
      }
    }
  };

  if (report.dry_run) {
    try {
      store.write(() => {
        runBatch(planned);
        throw ROLLBACK;
      });
    } catch (error) {
      if (error !== ROLLBACK) throw error;
    }
    report.batches = 0;
    return report;
  }

  for (let start = 0; start < planned.length; start += batchSize) {
    const batch = planned.slice(start, start + batchSize);
    store.write(() => runBatch(batch));
    report.batches++;
    options.onProgress?.(Math.min(start + batchSize, planned.length), planned.length);
  }
  return report;
}

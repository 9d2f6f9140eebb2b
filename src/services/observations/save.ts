import * as z from 'zod';
import {
  contentHash,
  EngramError,
  LIMITS,
  normalizeCategory,
  normalizeTopicKey,
  type Engram,
  type EngramStatus,
  type RedactionKind,
  type Store,
} from '../../core/index.js';
import {
  audited,
  ChangeSet,
  governancePolicy,
  syncJournal,
  type Actor,
  type GovernancePolicy,
} from '../governance/index.js';
import {
  cleanText,
  deleteEngram,
  freshRowCounters,
  insertReviewed,
  learnedByOf,
  reassess,
  summarize,
  updateEngram,
  type ConflictSummary,
  type EngramPatch,
  type StoreContext,
} from '../memory/index.js';
import { canonicalProject, projectWarning } from './projects.js';
import { DEDUPE_WINDOW_MINUTES, defaultSessionId, extractLearnings, goScope, goTopicKey, suggestTopicKey, titleKey } from './rules.js';
import { observationView, type ObservationView } from './view.js';

/** What a write knows about its caller beyond its arguments. */
export interface WriteContext {
  /**
   * Who asks (services/governance): the agent through MCP (`{by: 'agent', via: 'mcp'}`), a person through the CLI or
   * the viewer. Every engram row a write changes is audited as this actor's operation (undoable with `engram undo`),
   * and a new engram is learned by it: its tier and the review policy decide whether it is active or waits for a
   * person (docs/GOVERNANCE.md). Required, so no write can default to a person's standing. Nothing here promotes.
   */
  actor: Actor;
  /** config.json `governance` (tiers, autopromote). @default the built-in policy */
  policy?: GovernancePolicy;
  /** The caller's project (its repository's name, as the hooks know it): the default project, and the spelling
   * preferred when a given name is the same project. */
  defaultProject?: string | null | undefined;
  /** Where the caller works, recorded on sessions it creates. */
  directory?: string | null | undefined;
  now?: () => Date;
}

/** The actor, policy and clock services/memory's audited edits take. */
const changeOptions = (context: WriteContext) => ({
  actor: context.actor,
  ...(context.policy ? { policy: context.policy } : {}),
  ...(context.now ? { now: context.now } : {}),
});

/** `... [truncated]`, as the Go engram marks a cut observation. */
const TRUNCATED = '... [truncated]';

export const SaveObservationSchema = z.strictObject({
  title: z.string(),
  content: z.string(),
  type: z.string().optional(),
  session_id: z.string().optional(),
  project: z.string().optional(),
  scope: z.string().optional(),
  topic_key: z.string().optional(),
  tool_name: z.string().optional(),
});
export type SaveObservationInput = z.infer<typeof SaveObservationSchema>;

/** What saving did: a new row, a revision of the row with the same topic key, or a duplicate counted. */
export interface SaveObservationResult {
  status: 'created' | 'revised' | 'duplicate';
  id: number;
  observation: ObservationView;
  /** The engram's review status after the save (`pending` until a person approves it, for the agent's saves by
   * default) and why it is not active. */
  review: { status: EngramStatus; reason: string | null };
  /** Active engrams it contradicts (it then waits in review). */
  conflicts: ConflictSummary[];
  /** `engram undo <token>` reverses this save. */
  undo_token: string | null;
  /** Given when the caller named no topic key: the key the next save of this topic could use. */
  suggested_topic_key: string | null;
  /** Truncation and project-name notes, in the Go engram's words. */
  warnings: string[];
  redacted: RedactionKind[];
}

const required = (value: string, message: string): string => {
  if (value.trim() === '') throw new EngramError('INVALID_INPUT', message);
  return value;
};

/** The observation's type as a kind (at most 40 characters; `manual` when none). */
function kindOf(type: string | undefined): string {
  const kind = (type ?? '').trim() || 'manual';
  if (kind.length > LIMITS.kindChars) {
    throw new EngramError('INVALID_INPUT', `type is ${kind.length} characters; the limit is ${LIMITS.kindChars}`);
  }
  return kind;
}

/** A category from the type, so filters and injected blocks name it; `general` for `manual` or an unusable type. */
export function categoryOf(kind: string): string {
  if (kind === 'manual') return 'general';
  try {
    return normalizeCategory(kind);
  } catch {
    return 'general';
  }
}

/** The body as stored: redacted, capped (cut, with the Go engram's marker and warning), never empty. */
function cleanBody(raw: string, field: string, redacted: Set<RedactionKind>, warnings: string[]): string {
  const text = cleanText(raw, field, Number.MAX_SAFE_INTEGER, redacted);
  if (text === null) throw new EngramError('INVALID_INPUT', `${field} is empty (after removing private and secret content)`);
  if (text.length <= LIMITS.contentChars) return text;
  warnings.push(
    `⚠ WARNING: Content was truncated from ${text.length} to ${LIMITS.contentChars} chars. Consider splitting into smaller observations.`,
  );
  return text.slice(0, LIMITS.contentChars - TRUNCATED.length) + TRUNCATED;
}

/** The title as stored: redacted, at most 200 characters. */
function cleanTitle(raw: string, redacted: Set<RedactionKind>, warnings: string[]): string {
  const title = cleanText(raw, 'title', Number.MAX_SAFE_INTEGER, redacted);
  if (title === null) throw new EngramError('INVALID_INPUT', 'title is empty (after removing private and secret content)');
  if (title.length <= LIMITS.titleChars) return title;
  warnings.push(`⚠ WARNING: Title was truncated from ${title.length} to ${LIMITS.titleChars} chars.`);
  return `${title.slice(0, LIMITS.titleChars - 1).trimEnd()}…`;
}

/**
 * An engram keeps what is injected (`text`, ≤ 2,000 characters) apart from long detail (`content`). An observation
 * body that fits is the text; a longer one is kept whole as content, with its opening as the text.
 */
export function splitBody(body: string): { text: string; content: string | null } {
  if (body.length <= LIMITS.textChars) return { text: body, content: null };
  const head = body.slice(0, LIMITS.textChars - 1);
  const cut = head.lastIndexOf(' ');
  return { text: `${(cut > LIMITS.textChars / 2 ? head.slice(0, cut) : head).trimEnd()}…`, content: body };
}

/** The whole body of an engram as an observation. */
const bodyOf = (engram: Engram): string => engram.content ?? engram.text;
const sameBody = (a: string, b: string): boolean => a.split(/\s+/).join(' ').toLowerCase() === b.split(/\s+/).join(' ').toLowerCase();

/** A topic key from the Go API: its rules (cut at 120), then ours (no secrets in an identifier). */
function topicKeyOf(raw: string | undefined): string | null {
  const key = goTopicKey(raw);
  return key === null ? null : normalizeTopicKey(key);
}

/**
 * Saves an observation the Go engram's way (`mem_save`, `POST /observations`), as one engram in one transaction:
 *
 * 1. the project is resolved ({@link canonicalProject}), the scope normalised (`personal` or `project`), the session
 *    defaults to `manual-save-<project>` and is created if missing, the type defaults to `manual`;
 * 2. title and content are redacted (secrets and `<private>` spans) and capped, with a warning;
 * 3. with a topic key, the live engram of the same key, project and scope is revised in place (type, title, body,
 *    tool; `revision_count` + 1);
 * 4. else the same body, normalised title, type, project and scope saved within the last 15 minutes counts a
 *    duplicate (`duplicate_count` + 1) instead of a row;
 * 5. else a new engram is stored with the status review gives it (services/governance): the agent's saves wait for a
 *    person (`pending`: found by the agent's own searches, never injected) unless their tier and the policy allow
 *    otherwise; once active it is injected by the hooks like any other engram and found by every search.
 *
 * The change and its audit row (the context's actor) are one transaction; `engram undo <token>` reverses it.
 */
export function saveObservation(store: Store, input: SaveObservationInput, context: WriteContext): SaveObservationResult {
  const prepared = prepareObservation(input, (context.now ?? (() => new Date()))());
  const at = prepared.now.toISOString();
  const { result, entry } = audited(
    store,
    (outcome: StoredObservation) => auditMeta(context, outcome, OBSERVATION_OPS[outcome.status]),
    (changes) => storeObservation(store, prepared, context, changes),
    at,
  );
  if (entry) syncJournal(store);
  return savedResult(prepared, result, entry?.token ?? null);
}

/** An observation ready to store: redacted, capped, its type, scope and topic key normalised. */
export interface PreparedObservation {
  input: SaveObservationInput;
  now: Date;
  kind: string;
  scope: ReturnType<typeof goScope>;
  topicKey: string | null;
  title: string;
  body: string;
  text: string;
  content: string | null;
  toolName: string | null;
  warnings: string[];
  redacted: Set<RedactionKind>;
}

/** Checks and cleans an observation before any transaction (steps 1–2 of {@link saveObservation}). */
export function prepareObservation(input: SaveObservationInput, now: Date = new Date()): PreparedObservation {
  required(input.title, 'title is required and cannot be empty');
  required(input.content, 'content is required and cannot be empty');
  const redacted = new Set<RedactionKind>();
  const warnings: string[] = [];
  const title = cleanTitle(input.title, redacted, warnings);
  const body = cleanBody(input.content, 'content', redacted, warnings);
  return {
    input,
    now,
    kind: kindOf(input.type),
    scope: goScope(input.scope),
    topicKey: topicKeyOf(input.topic_key),
    title,
    body,
    ...splitBody(body),
    toolName: input.tool_name?.trim() || null,
    warnings,
    redacted,
  };
}

/** What {@link storeObservation} did. */
export interface StoredObservation {
  status: SaveObservationResult['status'];
  engram: Engram;
  conflicts: ConflictSummary[];
}

/** The audit operation of each save outcome (the names `engram add` uses for the same outcomes). */
const OBSERVATION_OPS: Record<StoredObservation['status'], string> = { created: 'add', revised: 'revise', duplicate: 'restate' };

/** The audit row of a save: the caller's actor, and why the engram waits when it does. */
const auditMeta = (context: WriteContext, outcome: StoredObservation, op: string) => ({
  actor: context.actor,
  op,
  reason: outcome.engram.status === 'pending' ? outcome.engram.status_reason : null,
});

/** The review context of a write: the actor's learned_by and the policy, tracking rows on `changes`. */
export const reviewContext = (context: WriteContext, changes: ChangeSet): StoreContext => ({
  changes,
  learnedBy: learnedByOf(context.actor),
  policy: context.policy ?? governancePolicy(),
});

/**
 * Steps 3–5 of {@link saveObservation} inside the caller's write transaction, every engram row it touches tracked on
 * `changes` for the caller's audit row: a topic-key revision (reviewed again when its body or type changed: the agent
 * re-wording an active engram sends it back to review), a duplicate counted (its status never changes), or a new
 * engram with the status its tier, its conflicts and the actor give it.
 */
export function storeObservation(store: Store, prepared: PreparedObservation, context: WriteContext, changes: ChangeSet): StoredObservation {
  const { input, kind, scope, topicKey, title, body, text, content, toolName, warnings } = prepared;
  const at = prepared.now.toISOString();
  const review = reviewContext(context, changes);
  const projectRaw = input.project?.trim() || context.defaultProject || '';
  const project = canonicalProject(store, projectRaw, context.defaultProject);
  const warning = projectWarning(input.project, project);
  if (warning) warnings.push(warning);
  const sessionId = input.session_id?.trim() || defaultSessionId(project);
  store.sessions.ensure(sessionId, { project, cwd: context.directory ?? null, at });

  if (topicKey !== null) {
    const existing = store.engrams.findLiveByTopic(topicKey, project, scope);
    if (existing) {
      changes.engram(existing.id);
      const reworded = !sameBody(bodyOf(existing), body) || existing.kind !== kind;
      const again = reworded ? reassess(store, review, existing, text, at, kind) : { fields: {}, conflicts: [] };
      const engram = store.engrams.update(existing.id, {
        kind,
        title,
        text,
        content,
        category: categoryOf(kind),
        tool_name: toolName,
        revision_count: existing.revision_count + 1,
        updated_at: at,
        last_seen_at: at,
        ...again.fields,
      });
      return { status: 'revised', engram, conflicts: summarize(again.conflicts) };
    }
  }
  const since = new Date(prepared.now.getTime() - DEDUPE_WINDOW_MINUTES * 60_000).toISOString();
  const duplicate = store.observations
    .recentDuplicates(contentHash(text), project, scope, kind, since)
    .find((candidate) => titleKey(candidate.title ?? '') === titleKey(title) && sameBody(bodyOf(candidate), body));
  if (duplicate) {
    // Counting a duplicate never changes its status: re-saving what waits for review, or what a person rejected,
    // does not make it active.
    changes.engram(duplicate.id);
    const engram = store.engrams.update(duplicate.id, { duplicate_count: duplicate.duplicate_count + 1, last_seen_at: at, updated_at: at });
    return { status: 'duplicate', engram, conflicts: [] };
  }
  const { engram, conflicts } = insertReviewed(
    store,
    review,
    {
      kind,
      title,
      text,
      content,
      category: categoryOf(kind),
      tags: [],
      prerequisites: null,
      source: 'manual',
      source_sessions: [sessionId],
      session_id: sessionId,
      tool_name: toolName,
      pinned: false,
      auto_pinned: false,
      project,
      scope,
      topic_key: topicKey,
      ...freshRowCounters(at),
    },
    at,
  );
  return { status: 'created', engram, conflicts: summarize(conflicts) };
}

/** The answer of a save, from what was stored (read again: conflict rows may follow the insert). */
export function savedResult(prepared: PreparedObservation, stored: StoredObservation, undoToken: string | null): SaveObservationResult {
  const { engram } = stored;
  return {
    status: stored.status,
    id: engram.id,
    observation: observationView(engram),
    review: { status: engram.status, reason: engram.status === 'active' ? null : engram.status_reason },
    conflicts: stored.conflicts,
    undo_token: undoToken,
    suggested_topic_key: prepared.topicKey === null ? suggestTopicKey(prepared.kind, prepared.input.title, prepared.input.content) : null,
    warnings: prepared.warnings,
    redacted: [...prepared.redacted],
  };
}

/** A save's fields, each optional, minus the session and tool a save is made in. */
export const UpdateObservationSchema = SaveObservationSchema.omit({ session_id: true, tool_name: true })
  .partial()
  .extend({ id: z.number().int().positive() });
export type UpdateObservationInput = z.infer<typeof UpdateObservationSchema>;

/** What {@link updateObservation} did. */
export interface UpdateObservationResult {
  observation: ObservationView;
  /** The review status after the change: an agent re-wording an active engram sends it back to review. */
  review: { status: EngramStatus; reason: string | null };
  warnings: string[];
  redacted: RedactionKind[];
  undo_token: string | null;
}

/**
 * Partial update of one observation (`mem_update`, `PATCH /observations/{id}`): only the fields given change, audited
 * as the context's actor (services/memory `updateEngram`: a new body or type is reviewed again).
 */
export function updateObservation(store: Store, input: UpdateObservationInput, context: WriteContext): UpdateObservationResult {
  const { id, ...fields } = input;
  if (Object.values(fields).every((value) => value === undefined)) {
    throw new EngramError('INVALID_INPUT', 'provide at least one field to update');
  }
  const warnings: string[] = [];
  const redacted = new Set<RedactionKind>();
  const patch: EngramPatch = {};
  if (fields.type !== undefined) {
    patch.kind = kindOf(fields.type);
    patch.category = categoryOf(patch.kind);
  }
  if (fields.title !== undefined) patch.title = cleanTitle(required(fields.title, 'title cannot be empty'), redacted, warnings);
  if (fields.content !== undefined) {
    const split = splitBody(cleanBody(required(fields.content, 'content cannot be empty'), 'content', redacted, warnings));
    patch.text = split.text;
    patch.content = split.content;
  }
  if (fields.topic_key !== undefined) patch.topic_key = topicKeyOf(fields.topic_key);
  const result = store.write(() => {
    const current = store.engrams.get(id);
    if (!current || current.deleted_at !== null) throw new EngramError('NOT_FOUND', `Observation #${id} not found`, { details: { id } });
    if (fields.project !== undefined) {
      patch.project = canonicalProject(store, fields.project, context.defaultProject);
      const warning = projectWarning(fields.project, patch.project);
      if (warning) warnings.push(warning);
    }
    // The scope stays as it was unless given (moving an observation to another project does not make it personal).
    patch.scope = fields.scope !== undefined ? goScope(fields.scope) : current.scope;
    return updateEngram(store, id, patch, changeOptions(context));
  });
  // The audit row committed with the change; the journal is appended after commit.
  if (result.undo_token) syncJournal(store);
  result.redacted.forEach((kind) => redacted.add(kind));
  const { engram } = result;
  return {
    observation: observationView(engram),
    review: { status: engram.status, reason: engram.status === 'active' ? null : engram.status_reason },
    warnings,
    redacted: [...redacted],
    undo_token: result.undo_token,
  };
}

export const DeleteObservationSchema = z.strictObject({ id: z.number().int().positive(), hard_delete: z.boolean().optional() });
export type DeleteObservationInput = z.infer<typeof DeleteObservationSchema>;

/**
 * Deletes an observation: soft by default (hidden from get, search, timeline and injection, kept for export), hard
 * on request (the row and its learning state are gone). An unknown or already soft-deleted id is NOT_FOUND.
 */
export function deleteObservation(
  store: Store,
  input: DeleteObservationInput,
  context: WriteContext,
): { id: number; hard_delete: boolean; undo_token: string | null } {
  const result = store.write(() => {
    const current = store.engrams.get(input.id);
    // A hard delete may remove a soft-deleted row; nothing may delete what is not there.
    if (!current || (current.deleted_at !== null && !input.hard_delete)) {
      throw new EngramError('NOT_FOUND', `Observation #${input.id} not found`, { details: { id: input.id } });
    }
    const deleted = deleteEngram(store, input.id, { hard: input.hard_delete ?? false, ...changeOptions(context) });
    return { id: input.id, hard_delete: input.hard_delete ?? false, undo_token: deleted.undo_token };
  });
  if (result.undo_token) syncJournal(store);
  return result;
}

export const PassiveCaptureSchema = z.strictObject({
  content: z.string(),
  session_id: z.string().optional(),
  project: z.string().optional(),
  source: z.string().optional(),
});
export type PassiveCaptureInput = z.infer<typeof PassiveCaptureSchema>;

/** The Go engram's `PassiveCaptureResult`, plus what review made of the new engrams. */
export interface PassiveCaptureResult {
  /** Learnings found in the text. */
  extracted: number;
  /** New engrams stored. */
  saved: number;
  /** Learnings the project already held (same normalised text). */
  duplicates: number;
  /** Of the new engrams, those that wait for a person's review (not shown to later sessions until approved). */
  pending: number;
  /** The new engrams' ids. */
  ids: number[];
  /** `engram undo <token>` removes the whole capture; null when nothing was stored. */
  undo_token: string | null;
}

/** A passive learning's title: its first 60 characters. */
const learningTitle = (learning: string): string => (learning.length > 60 ? `${learning.slice(0, 60)}...` : learning);

/**
 * Passive capture (`mem_capture_passive`, `POST /observations/passive`): each learning of the text's "## Key
 * Learnings:" section ({@link extractLearnings}) becomes an engram of type `passive` (tool name: the source), unless
 * the project already holds the same text, with the status review gives the actor's saves. All of them in one
 * transaction and one audited operation: a capture is stored whole or not at all, and undone whole.
 */
export function capturePassive(store: Store, input: PassiveCaptureInput, context: WriteContext): PassiveCaptureResult {
  required(input.content, "content is required — include text with a '## Key Learnings:' section");
  const learnings = extractLearnings(input.content);
  const empty: PassiveCaptureResult = { extracted: learnings.length, saved: 0, duplicates: 0, pending: 0, ids: [], undo_token: null };
  if (learnings.length === 0) return empty;
  const at = (context.now ?? (() => new Date()))().toISOString();
  const { result, entry } = audited(
    store,
    (outcome: PassiveCaptureResult) => ({
      actor: context.actor,
      op: 'passive-capture',
      reason: outcome.pending > 0 ? `${outcome.pending} of ${outcome.saved} wait for review` : null,
      // No row changed (only duplicates): no audit row either.
      detail: outcome.saved > 0 ? { source: input.source?.trim() || null, extracted: outcome.extracted, saved: outcome.saved, duplicates: outcome.duplicates } : null,
    }),
    (changes) => {
      const result = { ...empty, ids: [] as number[] };
      const review = reviewContext(context, changes);
      const project = canonicalProject(store, input.project?.trim() || context.defaultProject || '', context.defaultProject);
      const sessionId = input.session_id?.trim() || defaultSessionId(project);
      store.sessions.ensure(sessionId, { project, cwd: context.directory ?? null, at });
      for (const learning of learnings) {
        const redacted = new Set<RedactionKind>();
        const body = cleanText(learning, 'learning', LIMITS.contentChars, redacted);
        if (body === null) continue;
        const { text, content } = splitBody(body);
        if (store.observations.liveByHashInProject(contentHash(text), project)) {
          result.duplicates++;
          continue;
        }
        const { engram } = insertReviewed(
          store,
          review,
          {
            kind: 'passive',
            title: learningTitle(body),
            text,
            content,
            category: 'passive',
            tags: [],
            prerequisites: null,
            source: 'extracted',
            source_sessions: [sessionId],
            session_id: sessionId,
            tool_name: input.source?.trim() || null,
            occurrence_count: 1,
            times_matched: 0,
            last_matched_at: null,
            pinned: false,
            auto_pinned: false,
            deprecated: false,
            deprecated_reason: null,
            project,
            scope: 'project',
            topic_key: null,
            revision_count: 0,
            duplicate_count: 0,
            created_at: at,
            updated_at: at,
            last_seen_at: at,
            deleted_at: null,
          },
          at,
        );
        result.saved++;
        result.ids.push(engram.id);
        if (engram.status === 'pending') result.pending++;
      }
      return result;
    },
    at,
  );
  // A capture of nothing but duplicates writes no audit row (nothing changed) and gets no token.
  if (entry) syncJournal(store);
  return { ...result, undo_token: entry?.token ?? null };
}

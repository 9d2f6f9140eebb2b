// node:crypto is loaded where it is used (process.getBuiltinModule): hooks load this module and rarely hash.
import * as z from 'zod';
import { EngramError } from './errors.js';
import { redact } from './redact.js';

/** How an engram came to exist. */
export const SOURCES = ['manual', 'extracted', 'feedback', 'import'] as const;
export const SourceSchema = z.enum(SOURCES);
export type Source = z.infer<typeof SourceSchema>;

/**
 * Where an engram stands in review (docs/GOVERNANCE.md). Only `active` engrams are injected by hooks or returned by
 * search by default; `pending` ones wait for a person; `rejected` ones were refused by a person (kept, so the same
 * lesson harvested again stays refused); `deprecated` ones were true once and are kept for the record.
 */
export const STATUSES = ['pending', 'active', 'rejected', 'deprecated'] as const;
export const StatusSchema = z.enum(STATUSES);
export type EngramStatus = z.infer<typeof StatusSchema>;

/**
 * Who taught Engram this engram: a person through the CLI (`user`), the agent through MCP (`agent`), extraction from
 * a session (`harvest`), an import file (`import`), a teammate's store (`sync`). Review rules depend on it.
 */
export const LEARNED_BY = ['user', 'agent', 'harvest', 'import', 'sync'] as const;
export const LearnedBySchema = z.enum(LEARNED_BY);
export type LearnedBy = z.infer<typeof LearnedBySchema>;

/**
 * Whether the code an engram is about still exists, from the tape index's lineage and tombstones — never whether the
 * claim is still true (that is validity, decided by a person). `unknown`: not about code, or never checked;
 * `gone`: every span it was learned from was deleted or replaced (left out of injection); `kept`: gone, but a person
 * said to keep showing it.
 */
export const LIVENESS = ['unknown', 'alive', 'gone', 'kept'] as const;
export const LivenessSchema = z.enum(LIVENESS);
export type Liveness = z.infer<typeof LivenessSchema>;

/** `personal` engrams follow the user everywhere; `project` engrams belong to one project. */
export const SCOPES = ['project', 'personal'] as const;
export const ScopeSchema = z.enum(SCOPES);
export type Scope = z.infer<typeof ScopeSchema>;

/** Size limits, with the reason for each. */
export const LIMITS = {
  /** An engram is injected into agent context many times: one to three sentences, not an essay. */
  textChars: 2_000,
  /** A title is a label shown in lists. */
  titleChars: 200,
  /** Long-form detail that is shown on request, never injected wholesale. */
  contentChars: 64_000,
  /** Deep category trees stop being navigable. */
  categoryDepth: 5,
  segmentChars: 64,
  /** Enough to describe an environment; more becomes noise in tag statistics. */
  tags: 32,
  tagChars: 64,
  /** Matches the Go engram's topic key limit, so keys survive a round trip through its API. */
  topicKeyChars: 120,
  projectChars: 200,
  kindChars: 40,
} as const;

const ISO = z.iso.datetime({ offset: true });

/**
 * Structural prerequisites (os, repos, paths, mcp_servers) are hard gates at recall time; `tags` is a soft signal
 * learned from evaluations (see docs/ARCHITECTURE.md).
 */
export const PrerequisitesSchema = z.strictObject({
  os: z.array(z.string().min(1)).optional(),
  repos: z.array(z.string().min(1)).optional(),
  paths: z.array(z.string().min(1)).optional(),
  mcp_servers: z.array(z.string().min(1)).optional(),
  tags: z.array(z.string().min(1)).optional(),
});
export type Prerequisites = z.infer<typeof PrerequisitesSchema>;

/** One engram exactly as stored, exported and printed. Field order here is the order of every JSON output. */
const buildEngramSchema = () =>
  z.strictObject({
    id: z.number().int().positive(),
    uid: z.string().min(8).max(64),
    kind: z.string().min(1).max(LIMITS.kindChars),
    title: z.string().max(LIMITS.titleChars).nullable(),
    text: z.string().min(1).max(LIMITS.textChars),
    content: z.string().max(LIMITS.contentChars).nullable(),
    category: z.string().min(1),
    tags: z.array(z.string().min(1)),
    prerequisites: PrerequisitesSchema.nullable(),
    source: SourceSchema,
    source_sessions: z.array(z.string()),
    /**
     * The session it was saved in (the Go engram's observation session, e.g. `manual-save-shop`), or null. Optional in
     * the type so exports written before it existed still parse; the store always returns it.
     */
    session_id: z.string().nullable().optional(),
    tool_name: z.string().nullable(),
    occurrence_count: z.number().int().min(0),
    times_matched: z.number().int().min(0),
    last_matched_at: ISO.nullable(),
    pinned: z.boolean(),
    auto_pinned: z.boolean(),
    deprecated: z.boolean(),
    deprecated_reason: z.string().nullable(),
    project: z.string().nullable(),
    scope: ScopeSchema,
    topic_key: z.string().nullable(),
    content_hash: z.string(),
    revision_count: z.number().int().min(0),
    duplicate_count: z.number().int().min(0),
    created_at: ISO,
    updated_at: ISO,
    last_seen_at: ISO,
    deleted_at: ISO.nullable(),
    /** Review state (docs/GOVERNANCE.md). `deprecated` here and the `deprecated` flag above always agree. */
    status: StatusSchema,
    /** Why it waits (a conflict, its tier, autopromote off) or why a person rejected or retired it. */
    status_reason: z.string().nullable(),
    learned_by: LearnedBySchema,
    /** Risk tier when it was admitted or last edited (1 low … 3 always reviewed); null for engrams older than review. */
    tier: z.number().int().min(1).max(3).nullable(),
    /** When a person last confirmed it (approve, or their own add); freshness counts from here or the last match. */
    confirmed_at: ISO.nullable(),
    liveness: LivenessSchema,
    liveness_at: ISO.nullable(),
  });
let builtEngramSchema: ReturnType<typeof buildEngramSchema> | undefined;
/**
 * The schema of one engram, built on first use: a hook never parses a whole engram, and building this and
 * {@link engramStatsSchema} at load cost every process that loads core ~5 ms.
 */
export function engramSchema(): ReturnType<typeof buildEngramSchema> {
  return (builtEngramSchema ??= buildEngramSchema());
}
export type Engram = z.infer<ReturnType<typeof buildEngramSchema>>;

/** The learning state kept beside each engram; exported with it so a move between machines keeps what was learned. */
const buildEngramStatsSchema = () =>
  z.strictObject({
    repos: z.array(
      z.strictObject({
        repo: z.string().min(1),
        times_matched: z.number().int().min(0),
        last_matched_at: ISO.nullable(),
      }),
    ),
    tag_sets: z.array(
      z.strictObject({
        tag_set: z.array(z.string().min(1)),
        times_matched: z.number().int().min(0),
        last_matched_at: ISO.nullable(),
      }),
    ),
    tag_relevance: z.array(
      z.strictObject({
        tag: z.string().min(1),
        score: z.number().min(-3).max(3),
        positive_evals: z.number().int().min(0),
        negative_evals: z.number().int().min(0),
        last_evaluated_at: ISO.nullable(),
      }),
    ),
  });
let builtEngramStatsSchema: ReturnType<typeof buildEngramStatsSchema> | undefined;
/** The schema of an engram's learning state, built on first use (as {@link engramSchema}). */
export function engramStatsSchema(): ReturnType<typeof buildEngramStatsSchema> {
  return (builtEngramStatsSchema ??= buildEngramStatsSchema());
}
export type EngramStats = z.infer<ReturnType<typeof buildEngramStatsSchema>>;

const invalid = (message: string, details?: Record<string, unknown>): EngramError =>
  new EngramError('INVALID_INPUT', message, details ? { details } : {});

/**
 * Identifiers (category, tags, topic key, project) are indexed and shown everywhere; one that holds a secret is
 * refused outright rather than stored redacted. The message does not repeat the value.
 */
function refuseSecrets(field: string, raw: string): void {
  const { kinds } = redact(raw);
  if (kinds.length > 0) throw invalid(`${field} contains what looks like a secret (${kinds.join(', ')}); it was not stored`);
}

const SEGMENT = /^[a-z0-9][a-z0-9._-]*$/;

/**
 * Normalises a category path: trimmed, lower-case, spaces to `-`, `/`-separated segments of `[a-z0-9._-]`.
 * An empty category is `general`.
 */
export function normalizeCategory(raw: string | null | undefined): string {
  refuseSecrets('category', raw ?? '');
  const text = (raw ?? '').trim().toLowerCase();
  if (text === '') return 'general';
  const segments = text.split('/').map((segment) => segment.trim().replace(/\s+/g, '-'));
  if (segments.length > LIMITS.categoryDepth) {
    throw invalid(`category '${raw}' has ${segments.length} levels; the limit is ${LIMITS.categoryDepth}`);
  }
  for (const segment of segments) {
    if (segment === '') throw invalid(`category '${raw}' has an empty segment`);
    if (segment.length > LIMITS.segmentChars) {
      throw invalid(`category segment '${segment}' is longer than ${LIMITS.segmentChars} characters`);
    }
    if (!SEGMENT.test(segment)) {
      throw invalid(`category segment '${segment}' may only contain a-z, 0-9, '.', '_' and '-' and must start with a letter or digit`);
    }
  }
  return segments.join('/');
}

const TAG = /^[a-z0-9][a-z0-9._:/+#-]*$/;

/** Normalises tags: comma-separated strings are split, each trimmed and lower-cased, duplicates dropped, sorted. */
export function normalizeTags(raw: ReadonlyArray<string> | string | null | undefined): string[] {
  const list = typeof raw === 'string' ? [raw] : (raw ?? []);
  list.forEach((item) => refuseSecrets('a tag', item));
  const items = list
    .flatMap((item) => item.split(','))
    .map((item) => item.trim().toLowerCase().replace(/\s+/g, '-'))
    .filter((item) => item !== '');
  const tags = [...new Set(items)].sort();
  for (const tag of tags) {
    if (tag.length > LIMITS.tagChars) throw invalid(`tag '${tag}' is longer than ${LIMITS.tagChars} characters`);
    if (!TAG.test(tag)) {
      throw invalid(`tag '${tag}' may only contain a-z, 0-9 and . _ : / + # - and must start with a letter or digit`);
    }
  }
  if (tags.length > LIMITS.tags) throw invalid(`${tags.length} tags given; the limit is ${LIMITS.tags}`);
  return tags;
}

/** Normalises a topic key like the Go engram: lower-case, whitespace to `-`, at most 120 characters. */
export function normalizeTopicKey(raw: string | null | undefined): string | null {
  refuseSecrets('topic key', raw ?? '');
  const key = (raw ?? '').trim().toLowerCase().replace(/\s+/g, '-');
  if (key === '') return null;
  if (key.length > LIMITS.topicKeyChars) {
    throw invalid(`topic key is ${key.length} characters; the limit is ${LIMITS.topicKeyChars}`);
  }
  return key;
}

/** Normalises a project name: trimmed; empty means none. */
export function normalizeProject(raw: string | null | undefined): string | null {
  refuseSecrets('project', raw ?? '');
  const project = (raw ?? '').trim();
  if (project === '') return null;
  if (project.length > LIMITS.projectChars) {
    throw invalid(`project name is ${project.length} characters; the limit is ${LIMITS.projectChars}`);
  }
  return project;
}

/** The default scope: `project` when the engram names a project, else `personal`. */
export function defaultScope(project: string | null): Scope {
  return project === null ? 'personal' : 'project';
}

/** Normalises and validates prerequisites; empty lists are dropped and an empty object becomes null. */
export function normalizePrerequisites(raw: unknown): Prerequisites | null {
  if (raw === null || raw === undefined) return null;
  const parsed = PrerequisitesSchema.safeParse(raw);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`).join('; ');
    throw invalid(`prerequisites are invalid: ${problems} (allowed keys: os, repos, paths, mcp_servers, tags)`);
  }
  const entries = Object.entries(parsed.data).filter(([, list]) => list !== undefined && list.length > 0);
  return entries.length === 0 ? null : (Object.fromEntries(entries) as Prerequisites);
}

/**
 * The normalised content hash used for exact-duplicate detection: SHA-256 of the text lower-cased with whitespace
 * collapsed, so re-adding the same lesson with different spacing or capitals is recognised.
 */
export function contentHash(text: string): string {
  return process.getBuiltinModule('node:crypto').createHash('sha256').update(text.toLowerCase().replace(/\s+/g, ' ').trim()).digest('hex');
}

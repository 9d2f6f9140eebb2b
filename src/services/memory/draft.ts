import * as z from 'zod';
import {
  defaultScope,
  EngramError,
  isOnlyRedacted,
  LIMITS,
  normalizeCategory,
  normalizePrerequisites,
  normalizeProject,
  normalizeTags,
  normalizeTopicKey,
  sanitizeText,
  ScopeSchema,
  SourceSchema,
  type Prerequisites,
  type RedactionKind,
  type Scope,
  type Source,
} from '../../core/index.js';

/**
 * What a caller may say about a new engram: the CLI's flags, an import line in minimal form, later MCP arguments.
 * Only `text` is required. Unknown keys are rejected so a typo (`catgory`) is an error, not silently dropped.
 */
export const EngramDraftSchema = z.strictObject({
  text: z.string(),
  title: z.string().nullish(),
  content: z.string().nullish(),
  kind: z.string().min(1).max(LIMITS.kindChars).optional(),
  category: z.string().nullish(),
  tags: z.union([z.array(z.string()), z.string()]).nullish(),
  prerequisites: z.unknown().optional(),
  source: SourceSchema.optional(),
  source_sessions: z.array(z.string().min(1)).optional(),
  tool_name: z.string().nullish(),
  project: z.string().nullish(),
  scope: ScopeSchema.optional(),
  topic_key: z.string().nullish(),
  pinned: z.boolean().optional(),
});
export type EngramDraft = z.infer<typeof EngramDraftSchema>;

/** A draft after normalisation, sanitisation and validation: ready to store. */
export interface PreparedDraft {
  text: string;
  title: string | null;
  content: string | null;
  kind: string;
  category: string;
  tags: string[];
  prerequisites: Prerequisites | null;
  source: Source;
  source_sessions: string[];
  tool_name: string | null;
  project: string | null;
  scope: Scope;
  topic_key: string | null;
  pinned: boolean;
  /** Secret or private kinds removed from the free text. */
  redacted: RedactionKind[];
}

const tooLong = (field: string, length: number, limit: number, hint = ''): EngramError =>
  new EngramError('INVALID_INPUT', `${field} is ${length} characters; the limit is ${limit}${hint}`, {
    details: { field, length, limit },
  });

/**
 * The write-path cleaning of one free-text field, shared by add, update and import: secrets and private spans
 * removed (their kinds added to `found`), trimmed, length checked. Empty — or nothing left but redaction markers —
 * becomes null.
 */
export function cleanText(
  value: string | null | undefined,
  field: string,
  limit: number,
  found: Set<RedactionKind>,
  hint = '',
): string | null {
  if (value === null || value === undefined) return null;
  const cleaned = sanitizeText(value);
  cleaned.kinds.forEach((kind) => found.add(kind));
  const text = cleaned.text.trim();
  if (isOnlyRedacted(text)) return null;
  if (text.length > limit) throw tooLong(field, text.length, limit, hint);
  return text;
}

/** Like {@link cleanText} for a required field: empty is an error naming the field. */
export function requiredText(value: string, field: string, limit: number, found: Set<RedactionKind>, hint = ''): string {
  const text = cleanText(value, field, limit, found, hint);
  if (text === null) {
    throw new EngramError('INVALID_INPUT', `${field} is empty (after removing private and secret content)`, {
      details: { field },
    });
  }
  return text;
}

/**
 * Normalises a draft: secrets and private spans removed, invisible characters stripped, category/tags/project
 * normalised, limits enforced. Throws INVALID_INPUT with a message naming the field.
 */
export function prepareDraft(draft: EngramDraft): PreparedDraft {
  const redacted = new Set<RedactionKind>();
  const text = requiredText(draft.text, 'text', LIMITS.textChars, redacted, '; put longer detail in content');
  const project = normalizeProject(draft.project);
  return {
    text,
    title: cleanText(draft.title, 'title', LIMITS.titleChars, redacted),
    content: cleanText(draft.content, 'content', LIMITS.contentChars, redacted),
    kind: draft.kind ?? 'lesson',
    category: normalizeCategory(draft.category),
    tags: normalizeTags(draft.tags),
    prerequisites: normalizePrerequisites(draft.prerequisites),
    source: draft.source ?? 'manual',
    source_sessions: [...new Set(draft.source_sessions ?? [])],
    tool_name: draft.tool_name?.trim() || null,
    project,
    scope: draft.scope ?? defaultScope(project),
    topic_key: normalizeTopicKey(draft.topic_key),
    pinned: draft.pinned ?? false,
    redacted: [...redacted],
  };
}

/** Parses unknown input (an import line, MCP arguments) as a draft, naming each invalid field. */
export function parseDraft(input: unknown): EngramDraft {
  const parsed = EngramDraftSchema.safeParse(input);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`).join('; ');
    throw new EngramError('INVALID_INPUT', problems, { details: { issues: parsed.error.issues } });
  }
  return parsed.data;
}

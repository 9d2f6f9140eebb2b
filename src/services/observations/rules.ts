/**
 * The Go engram's normalisation rules (../shared/seeds/001 §4), so names, scopes and keys written through its API
 * compare the way its clients expect.
 * @module
 */
import { createHash } from 'node:crypto';
import type { Scope } from '../../core/index.js';

/** Saving the same observation again within this window counts a duplicate instead of adding a row. */
export const DEDUPE_WINDOW_MINUTES = 15;

/** The Go engram's project key: trimmed, lower-case, runs of `-` and of `_` collapsed. */
export function goProjectKey(raw: string | null | undefined): string {
  return (raw ?? '').trim().toLowerCase().replace(/-{2,}/g, '-').replace(/_{2,}/g, '_');
}

/** `personal` stays personal; anything else (empty included) is `project`. */
export function goScope(raw: string | null | undefined): Scope {
  return (raw ?? '').trim().toLowerCase() === 'personal' ? 'personal' : 'project';
}

/** Lower-case, whitespace runs to `-`, at most 120 characters (cut, as the Go engram does); empty is null. */
export function goTopicKey(raw: string | null | undefined): string | null {
  const key = (raw ?? '').trim().toLowerCase().split(/\s+/).filter(Boolean).join('-').slice(0, 120);
  return key === '' ? null : key;
}

/** A title for comparison: lower-case, whitespace collapsed. */
export const titleKey = (title: string): string => title.toLowerCase().split(/\s+/).filter(Boolean).join(' ');

/** The Go engram's content hash: SHA-256 of the lower-cased text with whitespace runs collapsed. */
export function goContentHash(content: string): string {
  return createHash('sha256').update(content.split(/\s+/).filter(Boolean).join(' ').toLowerCase()).digest('hex');
}

/** The default session of saves that name none. */
export const defaultSessionId = (project: string | null): string => (project ? `manual-save-${project}` : 'manual-save');

/** Whether a session id is the default one (`defaultSessionId`): a catch-all of saves that named no session, so its
 * members are not each other's context (recall's context step skips it). */
export const isDefaultSessionId = (sessionId: string): boolean => sessionId === 'manual-save' || sessionId.startsWith('manual-save-');

const FAMILIES: Record<string, string> = {
  architecture: 'architecture', design: 'architecture', adr: 'architecture', refactor: 'architecture',
  bug: 'bug', bugfix: 'bug', fix: 'bug', incident: 'bug', hotfix: 'bug',
  decision: 'decision',
  pattern: 'pattern', convention: 'pattern', guideline: 'pattern',
  config: 'config', setup: 'config', infra: 'config', infrastructure: 'config', ci: 'config',
  discovery: 'discovery', investigation: 'discovery', root_cause: 'discovery', 'root-cause': 'discovery',
  learning: 'learning', learn: 'learning',
  session_summary: 'session',
};

/** Keyword groups tried in order when the type names no family. */
const KEYWORDS: Array<[string, string[]]> = [
  ['bug', ['bug', 'fix', 'panic', 'error', 'crash', 'regression', 'incident', 'hotfix']],
  ['architecture', ['architecture', 'design', 'adr', 'boundary', 'hexagonal', 'refactor']],
  ['decision', ['decision', 'tradeoff', 'chose', 'choose', 'decide']],
  ['pattern', ['pattern', 'convention', 'naming', 'guideline']],
  ['config', ['config', 'setup', 'environment', 'env', 'docker', 'pipeline']],
  ['discovery', ['discovery', 'investigate', 'investigation', 'found', 'root cause']],
  ['learning', ['learned', 'learning']],
];

const PRIVATE = /<private>[\s\S]*?<\/private>/gi;

/** `[a-z0-9]` runs joined by `-`, at most 100 characters. */
function segment(text: string): string {
  return text
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, ' ')
    .trim()
    .split(/\s+/)
    .filter(Boolean)
    .join('-')
    .slice(0, 100);
}

/**
 * A stable `family/slug` key for topic upserts, as the Go engram suggests it: the family from the type (architecture,
 * bug, decision, pattern, config, discovery, learning, session), else from keywords in the title and content, else the
 * type itself or `topic`; the slug from the title, else the content's first eight words, else `general`.
 */
export function suggestTopicKey(type: string | null | undefined, title: string | null | undefined, content: string | null | undefined): string {
  const kind = (type ?? '').trim().toLowerCase();
  let family = FAMILIES[kind];
  if (!family) {
    const text = `${title ?? ''} ${content ?? ''}`.toLowerCase();
    family = KEYWORDS.find(([, words]) => words.some((word) => text.includes(word)))?.[0];
  }
  family ??= kind !== '' && kind !== 'manual' ? segment(kind) || 'topic' : 'topic';
  let slug = segment((title ?? '').replace(PRIVATE, ' '));
  if (slug === '') slug = segment((content ?? '').replace(PRIVATE, ' ').split(/\s+/).filter(Boolean).slice(0, 8).join(' '));
  if (slug.startsWith(`${family}-`)) slug = slug.slice(family.length + 1);
  if (slug === '' || slug === family) slug = 'general';
  return `${family}/${slug}`;
}

const HEADER = /^#{2,3}\s+(?:Aprendizajes(?:\s+Clave)?|Key\s+Learnings?|Learnings?):?\s*$/gim;
const NEXT_HEADER = /\n#{1,3} /;
const NUMBERED = /^\s*\d+[.)]\s+(.+)/gm;
const BULLET = /^\s*[-*]\s+(.+)/gm;
/** Shorter items are noise ("fixed it"). */
const MIN_LEARNING_CHARS = 20;

function cleanMarkdown(text: string): string {
  return text
    .replace(/\*\*([^*]+)\*\*/g, '$1')
    .replace(/`([^`]+)`/g, '$1')
    .replace(/\*([^*]+)\*/g, '$1')
    .split(/\s+/)
    .filter(Boolean)
    .join(' ');
}

/**
 * The learnings of a "## Key Learnings:" (or "## Aprendizajes Clave:", "### Learnings") section: numbered items,
 * else bullets, markdown stripped, items under 20 characters dropped. The last section that yields any wins (the
 * most recent output).
 */
export function extractLearnings(text: string): string[] {
  const starts = [...text.matchAll(HEADER)].map((match) => (match.index ?? 0) + match[0].length);
  for (const start of starts.reverse()) {
    let section = text.slice(start);
    const next = NEXT_HEADER.exec(section);
    if (next) section = section.slice(0, next.index);
    const pick = (pattern: RegExp): string[] =>
      [...section.matchAll(pattern)].map((match) => cleanMarkdown(match[1] ?? '')).filter((item) => item.length >= MIN_LEARNING_CHARS);
    const numbered = pick(NUMBERED);
    const learnings = numbered.length > 0 ? numbered : pick(BULLET);
    if (learnings.length > 0) return learnings;
  }
  return [];
}

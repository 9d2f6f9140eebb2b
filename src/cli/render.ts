import type { Engram } from '../core/index.js';

/** One engram as a short block for people: id, category, text, then what matters about it. */
export function renderEngram(engram: Engram): string {
  const facts = [
    engram.tags.length ? `tags: ${engram.tags.join(', ')}` : '',
    engram.project ? `project: ${engram.project}` : '',
    engram.scope,
    engram.pinned ? (engram.auto_pinned ? 'auto-pinned' : 'pinned') : '',
    engram.status === 'deprecated' ? `deprecated${engram.deprecated_reason ? ` (${engram.deprecated_reason})` : ''}` : '',
    engram.status === 'pending' || engram.status === 'rejected' ? `${engram.status}${engram.status_reason ? ` (${engram.status_reason})` : ''}` : '',
    engram.liveness === 'gone' ? 'code gone' : engram.liveness === 'kept' ? 'code gone, kept' : '',
    engram.deleted_at ? `deleted ${engram.deleted_at}` : '',
    engram.topic_key ? `topic: ${engram.topic_key}` : '',
    `source: ${engram.source}`,
  ].filter(Boolean);
  const title = engram.title ? `${engram.title}\n  ` : '';
  return `#${engram.id} [${engram.category}] ${title}${engram.text}\n  ${facts.join(' · ')}`;
}

/** A list of engrams with a paging footer. */
export function renderEngramList(page: { engrams: Engram[]; total: number; offset: number }): string {
  if (page.engrams.length === 0) return page.total === 0 ? 'No engrams.' : `No engrams on this page (${page.total} in all).`;
  const first = page.offset + 1;
  const last = page.offset + page.engrams.length;
  return `${page.engrams.map(renderEngram).join('\n')}\n\n${first}–${last} of ${page.total}`;
}

/** `key: value` lines, with nested objects indented. */
export function renderFields(value: Record<string, unknown>, indent = ''): string {
  return Object.entries(value)
    .map(([key, item]) =>
      item !== null && typeof item === 'object' && !Array.isArray(item)
        ? `${indent}${key}:\n${renderFields(item as Record<string, unknown>, `${indent}  `)}`
        : `${indent}${key}: ${Array.isArray(item) ? item.join(', ') || '—' : item === null ? '—' : String(item)}`,
    )
    .join('\n');
}

/** A note about removed secrets, for people. */
export function redactionNote(kinds: readonly string[]): string {
  return kinds.length ? `\nnote: removed before storing: ${kinds.join(', ')}` : '';
}

/** The active engrams an add or an edit contradicts, for people. */
export function conflictNote(conflicts: ReadonlyArray<{ other_id: number; other_text: string; reason: string }>): string {
  return conflicts.length
    ? `\ncontradicts:\n${conflicts.map((conflict) => `  #${conflict.other_id} ${conflict.other_text}\n    (${conflict.reason})`).join('\n')}\nreview it: engram review, then engram approve or reject`
    : '';
}

/** The undo token of a change, for people. */
export function undoNote(token: string | null | undefined): string {
  return token ? `\nundo: engram undo ${token}` : '';
}

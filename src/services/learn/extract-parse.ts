import * as z from 'zod';
import { LIMITS, normalizeCategory, normalizeTags } from '../../core/index.js';

/**
 * Reading an extraction answer. Models wrap JSON in fences and prose, return a bare array instead of the object
 * asked for, drop fields or invent them, so every item is checked on its own: one bad item is rejected with a
 * reason, the rest are kept. Nothing here throws.
 */

/** The kinds of lesson the prompt asks for (../shared/seeds/003 "Extraction Criteria"). */
export const LESSON_KINDS = ['correction', 'struggle', 'convention', 'gotcha'] as const;
export type LessonKind = (typeof LESSON_KINDS)[number];

/** One lesson as the model proposed it, after normalisation. */
export interface ProposedLesson {
  text: string;
  category: string;
  tags: string[];
  kind: LessonKind;
  /** `project`: true of this repository only; `general`: true wherever its tags apply. */
  scope: 'project' | 'general';
  /** The quote from the conversation the lesson rests on. */
  evidence: string;
}

/** One item that was not kept, and why. */
export interface RejectedLesson {
  text: string | null;
  reason: string;
}

/** Lesson length bounds: shorter says nothing; longer is an essay or a task summary, not a memory to inject. */
export const LESSON_CHARS = { min: 20, max: 600 } as const;
/** At most this many content tags per lesson (engrammar's 1–3): more tags dilute the tag statistics. */
export const LESSON_TAGS = 3;

const ItemSchema = z.object({
  text: z.string(),
  category: z.string().nullish(),
  tags: z.union([z.array(z.string()), z.string()]).nullish(),
  kind: z.string().nullish(),
  scope: z.string().nullish(),
  evidence: z.string().nullish(),
});

/** Openings of task summaries and progress reports, which the prompt forbids and models still write. */
const SUMMARY = /^(the (user|assistant|agent) (asked|wanted|requested|was asked|needed)|(we|i) (implemented|added|built|created|fixed|updated|refactored|wrote)|(implemented|added|built|created|fixed|refactored) (a|an|the)\b|this session\b|in this session\b)/i;

const squash = (text: string): string => text.replace(/\s+/g, ' ').trim().toLowerCase();

/** True when `evidence` (whitespace and case aside) occurs in `source`; long quotes are checked on their first 120 characters. */
export function quotedIn(evidence: string, source: string): boolean {
  const quote = squash(evidence).replace(/^["'“”]+|["'“”]+$/g, '').slice(0, 120);
  return quote.length >= 8 && squash(source).includes(quote);
}

/** The JSON value in an answer: bare, fenced, or the outermost object or array inside prose. */
function parseJsonValue(text: string): unknown {
  const fenced = /```(?:json)?\s*\n?([\s\S]*?)```/i.exec(text)?.[1];
  const object = text.indexOf('{') >= 0 ? text.slice(text.indexOf('{'), text.lastIndexOf('}') + 1) : undefined;
  const array = text.indexOf('[') >= 0 ? text.slice(text.indexOf('['), text.lastIndexOf(']') + 1) : undefined;
  for (const candidate of [text.trim(), fenced?.trim(), object, array]) {
    if (!candidate) continue;
    try {
      return JSON.parse(candidate);
    } catch {
      // Try the next reading.
    }
  }
  return undefined;
}

/** The list of items in a parsed answer: `{engrams: [...]}`, `{lessons: [...]}`, a bare array, or one bare item. */
function itemsOf(value: unknown): unknown[] | undefined {
  if (Array.isArray(value)) return value;
  if (value === null || typeof value !== 'object') return undefined;
  const record = value as Record<string, unknown>;
  for (const key of ['engrams', 'lessons', 'memories', 'items', 'results']) {
    if (Array.isArray(record[key])) return record[key] as unknown[];
  }
  return typeof record.text === 'string' ? [record] : undefined;
}

const asKind = (raw: string | null | undefined): LessonKind => {
  const kind = (raw ?? '').toLowerCase().trim();
  return (LESSON_KINDS as readonly string[]).includes(kind) ? (kind as LessonKind) : 'gotcha';
};

/** A category from the model, or one derived from the kind when the model's is missing or not a valid path. */
function categoryOf(raw: string | null | undefined, kind: LessonKind): string {
  const fallback = { correction: 'corrections', struggle: 'debugging', convention: 'conventions', gotcha: 'tooling' }[kind];
  try {
    const category = normalizeCategory(raw ?? '');
    return category === 'general' ? fallback : category;
  } catch {
    return fallback;
  }
}

function tagsOf(raw: string[] | string | null | undefined): string[] {
  try {
    // The model lists the most telling tags first: keep its first ones, then normalise (which sorts).
    const list = typeof raw === 'string' ? raw.split(',') : (raw ?? []);
    return normalizeTags(list.slice(0, LESSON_TAGS));
  } catch {
    return [];
  }
}

/**
 * The lessons in an extraction answer, each checked against `chunk` (the conversation the model read): an item needs
 * text of a sensible length, must not be a task summary, and its evidence must quote the chunk — a lesson the
 * conversation does not show is the model's invention. `malformed` is true when the answer held no list at all.
 */
export function parseExtraction(answer: string, chunk: string): { lessons: ProposedLesson[]; rejected: RejectedLesson[]; malformed: boolean } {
  const items = itemsOf(parseJsonValue(answer));
  if (!items) return { lessons: [], rejected: [], malformed: true };
  const lessons: ProposedLesson[] = [];
  const rejected: RejectedLesson[] = [];
  for (const item of items) {
    const parsed = ItemSchema.safeParse(item);
    if (!parsed.success) {
      rejected.push({ text: null, reason: 'not a lesson object (needs at least "text")' });
      continue;
    }
    const text = parsed.data.text.replace(/\s+/g, ' ').trim();
    const evidence = (parsed.data.evidence ?? '').trim();
    const reject = (reason: string): void => void rejected.push({ text: text.slice(0, LIMITS.titleChars) || null, reason });
    if (text.length < LESSON_CHARS.min) reject(`shorter than ${LESSON_CHARS.min} characters`);
    else if (text.length > LESSON_CHARS.max) reject(`longer than ${LESSON_CHARS.max} characters: a summary, not a lesson`);
    else if (SUMMARY.test(text)) reject('a summary of the task, not a reusable lesson');
    else if (!evidence) reject('no evidence quoted from the conversation');
    else if (!quotedIn(evidence, chunk)) reject('the evidence is not in the conversation');
    else {
      const kind = asKind(parsed.data.kind);
      lessons.push({
        text,
        category: categoryOf(parsed.data.category, kind),
        tags: tagsOf(parsed.data.tags),
        kind,
        scope: (parsed.data.scope ?? '').toLowerCase().trim() === 'project' ? 'project' : 'general',
        evidence: evidence.slice(0, 500),
      });
    }
  }
  return { lessons, rejected, malformed: false };
}

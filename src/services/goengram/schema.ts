/**
 * zod schemas for what the Go engram (or a teammate's Engram) writes: its export JSON and its sync chunks. Other
 * programs' payloads: unknown keys are accepted (newer Go versions add fields), types are not.
 * @module
 */
import * as z from 'zod';

const text = z.string();
const maybe = z.string().nullish();
const count = z.number().int().nullish();

/** Our own fields on an observation (see {@link EngramExtension}); anything malformed in it is ignored, not fatal. */
export const EngramExtensionSchema = z.looseObject({
  v: z.number().optional(),
  updated_at: z.string().optional(),
  deleted_at: z.string().nullish(),
  hard_delete: z.boolean().optional(),
  /** A deletion record only (its title and content are placeholders). */
  tombstone: z.boolean().optional(),
  category: z.string().optional(),
  tags: z.array(z.string()).optional(),
  prerequisites: z.unknown().optional(),
  pinned: z.boolean().optional(),
  source: z.string().optional(),
  source_sessions: z.array(z.string()).optional(),
});

export const GoSessionInSchema = z.looseObject({
  id: text,
  project: maybe,
  directory: maybe,
  started_at: maybe,
  ended_at: maybe,
  summary: maybe,
});
export type GoSessionIn = z.infer<typeof GoSessionInSchema>;

export const GoObservationInSchema = z.looseObject({
  id: z.number().int().nullish(),
  sync_id: maybe,
  session_id: maybe,
  type: maybe,
  title: maybe,
  content: maybe,
  tool_name: maybe,
  project: maybe,
  scope: maybe,
  topic_key: maybe,
  revision_count: count,
  duplicate_count: count,
  last_seen_at: maybe,
  created_at: maybe,
  updated_at: maybe,
  deleted_at: maybe,
  engram: EngramExtensionSchema.nullish().catch(undefined),
});
export type GoObservationIn = z.infer<typeof GoObservationInSchema>;

export const GoPromptInSchema = z.looseObject({
  id: z.number().int().nullish(),
  sync_id: maybe,
  session_id: maybe,
  content: maybe,
  project: maybe,
  created_at: maybe,
});
export type GoPromptIn = z.infer<typeof GoPromptInSchema>;

/** A Go nil slice is `null` in its JSON: the same as empty. */
const list = <T extends z.ZodType>(item: T) => z.array(item).nullish().transform((items) => items ?? []);

/** The Go engram's `ExportData`, and the body of a sync chunk (`ChunkData`: the same three lists). */
export const GoExportInSchema = z.looseObject({
  version: z.string().nullish(),
  exported_at: z.string().nullish(),
  sessions: list(GoSessionInSchema),
  observations: list(GoObservationInSchema),
  prompts: list(GoPromptInSchema),
});
export type GoExportIn = z.infer<typeof GoExportInSchema>;

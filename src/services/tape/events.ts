import * as z from 'zod';

/**
 * The tape event vocabulary (../shared/seeds/000 "Tape event schema"): raw facts only, one JSON object per line.
 * Every event carries `t` (ISO time, null when the transcript line had none), `k` (kind) and `source` (harness and
 * session). Lines are 1-based and ranges inclusive `[start, end]`. Hashes are SHA-256 hex of the exact text.
 * Adapters must produce these deterministically: the same transcript gives byte-identical events.
 */

export const HARNESSES = ['claude', 'codex'] as const;
export const HarnessSchema = z.enum(HARNESSES);
export type Harness = z.infer<typeof HarnessSchema>;

export const SourceSchema = z.object({ harness: HarnessSchema, session_id: z.string() }).strict();
export type TapeSource = z.infer<typeof SourceSchema>;

/** `[start, end]`, 1-based inclusive lines. */
export const RangeSchema = z.tuple([z.number().int().min(1), z.number().int().min(0)]);
export type LineRange = z.infer<typeof RangeSchema>;

const base = {
  t: z.string().nullable(),
  source: SourceSchema,
  /** Written by a subagent (Claude sidechain or a `subagents/` file): its agent id, else absent. */
  agent: z.string().optional(),
};

/** Coverage of one tape: how much of the transcript the adapter understood. */
export const CoverageSchema = z
  .object({
    /** `full`: every record understood and the version supported; `partial`: some skipped; `degraded`: unknown version. */
    grade: z.enum(['full', 'partial', 'degraded']),
    /** Record types skipped, with counts (sorted keys). */
    skipped: z.record(z.string(), z.number().int()),
    /** Lines that were not JSON. */
    malformed: z.number().int(),
    /** The harness version(s) seen that the adapter's matrix does not list. */
    unknown_versions: z.array(z.string()),
  })
  .strict();
export type Coverage = z.infer<typeof CoverageSchema>;

export const MetaEventSchema = z
  .object({
    ...base,
    k: z.literal('meta'),
    /** `session` (first event of every tape), `compaction` (the context was compacted here). */
    label: z.enum(['session', 'compaction']),
    model: z.string().nullable().optional(),
    harness_version: z.string().nullable().optional(),
    cwd: z.string().nullable().optional(),
    repo_head: z.string().nullable().optional(),
    adapter: z.object({ name: z.string(), version: z.number().int() }).strict().optional(),
    coverage: CoverageSchema.optional(),
    /** The tape this one continues (a growing session recorded again): its id. */
    previous_tape: z.string().nullable().optional(),
    /**
     * The transcript lines this tape's events come from (1-based, inclusive; lines before the first are read as
     * context only). With it, ingest continues a session from its tapes when its cursor is lost, instead of recording
     * the same moments again. Absent in tapes written before it was added.
     */
    lines: RangeSchema.optional(),
    /** For `compaction`: the summary the agent carried over, when the transcript has it. */
    summary: z.string().nullable().optional(),
  })
  .strict();

export const MsgInEventSchema = z.object({ ...base, k: z.literal('msg.in'), text: z.string() }).strict();
export const MsgOutEventSchema = z.object({ ...base, k: z.literal('msg.out'), text: z.string() }).strict();

export const ToolCallEventSchema = z
  .object({ ...base, k: z.literal('tool.call'), tool: z.string(), call_id: z.string(), args: z.unknown() })
  .strict();

export const ToolResultEventSchema = z
  .object({
    ...base,
    k: z.literal('tool.result'),
    tool: z.string(),
    call_id: z.string(),
    stdout: z.string(),
    stderr: z.string().optional(),
    exit: z.number().int().nullable().optional(),
    is_error: z.boolean(),
  })
  .strict();

export const CodeReadEventSchema = z
  .object({
    ...base,
    k: z.literal('code.read'),
    file: z.string(),
    range: RangeSchema.nullable(),
    /** The text read (line-number prefixes removed), when the result carried it. */
    text: z.string().nullable(),
  })
  .strict();

export const CodeEditEventSchema = z
  .object({
    ...base,
    k: z.literal('code.edit'),
    file: z.string(),
    /** `create` (a new file), `overwrite` (whole file written), `edit` (part replaced), `delete`. */
    op: z.enum(['create', 'overwrite', 'edit', 'delete']),
    before_range: RangeSchema.nullable(),
    after_range: RangeSchema.nullable(),
    /** The replaced and the new text, when known; hashes of the same. */
    before_text: z.string().nullable(),
    after_text: z.string().nullable(),
    before_hash: z.string().nullable(),
    after_hash: z.string().nullable(),
    /** The tool call that made the edit. */
    call_id: z.string().nullable(),
  })
  .strict();

export const SpanLinkEventSchema = z
  .object({
    ...base,
    k: z.literal('span.link'),
    from_file: z.string(),
    from_range: RangeSchema,
    to_file: z.string(),
    to_range: RangeSchema,
    note: z.string().nullable(),
  })
  .strict();

export const TapeEventSchema = z.discriminatedUnion('k', [
  MetaEventSchema,
  MsgInEventSchema,
  MsgOutEventSchema,
  ToolCallEventSchema,
  ToolResultEventSchema,
  CodeReadEventSchema,
  CodeEditEventSchema,
  SpanLinkEventSchema,
]);
export type TapeEvent = z.infer<typeof TapeEventSchema>;
export type TapeEventKind = TapeEvent['k'];
export type MetaEvent = z.infer<typeof MetaEventSchema>;
export type CodeEditEvent = z.infer<typeof CodeEditEventSchema>;
export type CodeReadEvent = z.infer<typeof CodeReadEventSchema>;
export type SpanLinkEvent = z.infer<typeof SpanLinkEventSchema>;

/** A tape as services pass it around: its id (SHA-256 of its uncompressed JSONL), when it was written, its events. */
export interface LoadedTape {
  tape_id: string;
  /** Where the tape file is. */
  path: string;
  events: TapeEvent[];
}

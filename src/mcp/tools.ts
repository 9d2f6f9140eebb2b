/**
 * Every MCP tool: its zod argument schema (the one parse, listed to clients as JSON Schema), its annotations, whether
 * clients may defer loading it, and how its arguments map to one operation of services/ops. Engram's tools answer in
 * JSON; the Go engram's `mem_*` tools answer in its exact texts (format.ts).
 * @module
 */
import * as z from 'zod';
import { EngramError } from '../core/index.js';
import type {
  MergeProjectsResult,
  ObservationSearch,
  ObservationView,
  PassiveCaptureResult,
  SaveObservationResult,
  TimelineResult,
  UpdateObservationResult,
} from '../services/ops/index.js';
import {
  formatContext,
  formatMerge,
  formatObservation,
  formatPassive,
  formatSaved,
  formatSearch,
  formatStats,
  formatTimeline,
  quote,
  statusNote,
  truncate,
} from './format.js';

/** Text an agent sent: invalid UTF-8 arrives as U+FFFD (the transport's decoder) or as unpaired surrogates. */
export const UNREADABLE = 'is not valid UTF-8 text (it holds U+FFFD replacement characters or unpaired surrogates): resend it as UTF-8';
const BROKEN = /\uFFFD|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
const text = () => z.string().refine((value) => !BROKEN.test(value), { message: UNREADABLE });
const optionalText = () => text().optional();
const id = (what: string) => z.number().int().positive().describe(what);
const tags = () => z.array(text()).max(32).describe('Tags such as ["typescript", "testing"]');

/** MCP tool annotations (hints clients show and act on). */
export interface Annotations {
  title: string;
  readOnlyHint: boolean;
  destructiveHint: boolean;
  idempotentHint: boolean;
  openWorldHint: boolean;
}

/** What a tool's handler may do: call an operation, and know the caller's defaults. */
export interface ToolContext {
  call<T = unknown>(method: string, params: unknown): Promise<T>;
}

/** One tool. `core` tools are kept loaded by clients that defer tools (Claude Code); the others may be deferred. */
export interface ToolDef {
  name: string;
  description: string;
  schema: z.ZodObject;
  annotations: Annotations;
  core: boolean;
  /**
   * How a failure reads: the Go engram's tools prefix the reason as it words them ("Failed to save: …", '' for none);
   * Engram's tools (null) give the error code first ("NOT_FOUND: engram 7 does not exist").
   */
  failure: string | null;
  run(args: Record<string, unknown>, context: ToolContext): Promise<string>;
}

const hints = (title: string, flags: Partial<Omit<Annotations, 'title'>> = {}): Annotations => ({
  title,
  readOnlyHint: false,
  destructiveHint: false,
  idempotentHint: false,
  openWorldHint: false,
  ...flags,
});
const readOnly = (title: string): Annotations => hints(title, { readOnlyHint: true, idempotentHint: true });

/** Drops undefined values, so optional arguments stay absent in the operation's parameters. */
const defined = (args: Record<string, unknown>): Record<string, unknown> =>
  Object.fromEntries(Object.entries(args).filter(([, value]) => value !== undefined));

const json = (value: unknown): string => JSON.stringify(value);

function tool<S extends z.ZodRawShape>(definition: Omit<ToolDef, 'schema' | 'run' | 'failure'> & {
  shape: S;
  failure?: string | null;
  run(args: z.infer<z.ZodObject<S>>, context: ToolContext): Promise<string>;
}): ToolDef {
  const { shape, run, ...rest } = definition;
  const failure = definition.failure !== undefined ? definition.failure : definition.name.startsWith('mem_') ? '' : null;
  return { ...rest, failure, schema: z.object(shape), run: run as ToolDef['run'] };
}

// ─── Engram's tools ─────────────────────────────────────────────────────────────────────────────────────────────

const ENGRAM_TOOLS: ToolDef[] = [
  tool({
    name: 'engram_search',
    description:
      'Search Engram memory (lessons, decisions, observations from earlier sessions) with hybrid keyword + semantic search. ' +
      "Scoped to this project and personal memories unless all_projects is true. Returns JSON: each result's id, text, tags, " +
      'category, the fused score and each signal\'s rank (bm25, vector); "abstained" says when the query had nothing to search for.',
    shape: {
      query: text().describe('What you want to know, in natural language or keywords'),
      tags: tags().optional(),
      category: optionalText().describe('Only this category and its children, e.g. "development/frontend"'),
      limit: z.number().int().min(1).max(50).optional().describe('Results to return (default 5)'),
      all_projects: z.boolean().optional().describe('Search every project, not only this one'),
    },
    annotations: readOnly('Search Engram memory'),
    core: true,
    run: async (args, { call }) => json(await call('engram.search', defined(args))),
  }),
  tool({
    name: 'engram_add',
    description:
      'Store a lesson in Engram memory: one to three sentences another session should know (a fix, a convention, a gotcha, ' +
      'a user preference). Secrets and <private>…</private> spans are removed before storing; the same text in the same ' +
      'project and scope is counted as a duplicate, not stored twice. Omit project for a personal lesson that applies everywhere. ' +
      'What you add waits for a person\'s review (engram.status "pending") before later sessions are shown it; your own searches find it at once.',
    shape: {
      text: text().describe('The lesson itself (at most 2,000 characters; longer detail goes in content)'),
      title: optionalText().describe('A short label'),
      content: optionalText().describe('Longer detail, shown on request and never injected whole'),
      category: optionalText().describe('A category path such as development/testing (default general)'),
      tags: tags().optional(),
      prerequisites: z
        .object({
          os: z.array(text()).optional(),
          repos: z.array(text()).optional(),
          paths: z.array(text()).optional(),
          mcp_servers: z.array(text()).optional(),
          tags: z.array(text()).optional(),
        })
        .optional()
        .describe('Where it applies: os, repos, paths and mcp_servers are hard conditions, tags a hint'),
      project: optionalText().describe('The project it belongs to (default: none, a personal lesson)'),
      topic_key: optionalText().describe('A later add with the same key revises this lesson instead of adding another'),
    },
    annotations: hints('Add to Engram memory'),
    core: true,
    run: async (args, { call }) => json(await call('engram.add', defined(args))),
  }),
  tool({
    name: 'engram_update',
    description: 'Correct an engram by id: only the fields given change (tags replaces the list; add_tags / remove_tags edit it).',
    shape: {
      id: id('The engram to change'),
      text: optionalText(),
      title: optionalText(),
      content: optionalText(),
      category: optionalText(),
      tags: tags().optional(),
      add_tags: tags().optional(),
      remove_tags: tags().optional(),
      project: optionalText(),
      topic_key: optionalText(),
    },
    annotations: hints('Update an engram', { idempotentHint: true }),
    core: false,
    run: async (args, { call }) => json(await call('engram.update', defined(args))),
  }),
  tool({
    name: 'engram_deprecate',
    description: 'Retire an engram that is wrong or outdated: it is kept but never shown again (undo: true brings it back).',
    shape: { id: id('The engram to retire'), reason: optionalText().describe('Why, for whoever reviews it'), undo: z.boolean().optional() },
    annotations: hints('Deprecate an engram', { idempotentHint: true }),
    core: false,
    run: async (args, { call }) => json(await call('engram.deprecate', defined(args))),
  }),
  tool({
    name: 'engram_feedback',
    description:
      'Say whether an engram you were shown applied here. It moves the same match statistics and per-tag relevance the ' +
      'session evaluator does, so Engram learns where to show it; counted once per engram per session.',
    shape: {
      id: id('The engram (EG#<id> in an [ENGRAM] block)'),
      applicable: z.boolean().describe('true when it was useful here, false when it did not apply or was wrong'),
      reason: optionalText().describe('Why, in a sentence'),
    },
    annotations: hints('Give feedback on an engram', { idempotentHint: true }),
    core: true,
    run: async (args, { call }) => json(await call('engram.feedback', defined(args))),
  }),
  tool({
    name: 'engram_pin',
    description: 'Pin an engram: shown at the start of every session where its prerequisites hold.',
    shape: { id: id('The engram to pin') },
    annotations: hints('Pin an engram', { idempotentHint: true }),
    core: false,
    run: async (args, { call }) => json(await call('engram.pin', args)),
  }),
  tool({
    name: 'engram_unpin',
    description: 'Unpin an engram: shown again only when relevant.',
    shape: { id: id('The engram to unpin') },
    annotations: hints('Unpin an engram', { idempotentHint: true }),
    core: false,
    run: async (args, { call }) => json(await call('engram.unpin', args)),
  }),
  tool({
    name: 'engram_list',
    description: 'List engrams in id order, filtered by category, tags or project. Returns JSON with the total.',
    shape: {
      category: optionalText(),
      tags: tags().optional(),
      project: optionalText(),
      include_deprecated: z.boolean().optional(),
      limit: z.number().int().min(1).max(200).optional().describe('Default 20'),
      offset: z.number().int().min(0).optional(),
    },
    annotations: readOnly('List engrams'),
    core: false,
    run: async (args, { call }) => json(await call('engram.list', defined(args))),
  }),
  tool({
    name: 'engram_status',
    description: "Engram's state: counts, store, search mode and model, and this environment's project and tags.",
    shape: {},
    annotations: readOnly('Engram status'),
    core: false,
    run: async (_args, { call }) => json(await call('engram.status', {})),
  }),
  tool({
    name: 'engram_explain',
    description:
      'Why does this exist? Given span file:start-end (lines 1-based, relative to this folder), returns the recorded agent ' +
      'sessions (tapes) that wrote, edited, read or discussed those lines, with the moments around each touch. Given id (an ' +
      'engram, EG#<id> in an [ENGRAM] block), returns where that memory came from: the session and moment it was learned in, ' +
      'the files touched then, whether the code it names still exists, and its history (who changed it, when).',
    shape: {
      span: optionalText().describe('file:start-end, e.g. src/auth.ts:42-60 (or file:line); give span or id'),
      id: id('An engram id: explain where that memory came from instead of lines of code').optional(),
      before: z.number().int().min(0).max(200).optional().describe('With span: events to show before each touch'),
      after: z.number().int().min(0).max(200).optional().describe('With span: events to show after each touch'),
      brief: z.boolean().optional().describe('With span: only which tapes and where, no transcript'),
      limit: z.number().int().min(1).max(100).optional().describe('With span: tapes to return (default 10)'),
    },
    annotations: readOnly('Explain code or a memory'),
    core: true,
    async run({ span, id: engramId, ...options }, { call }) {
      if ((span === undefined) === (engramId === undefined)) {
        throw new EngramError('INVALID_INPUT', 'give either span (file:start-end, e.g. src/auth.ts:42-60) or id (an engram), not both');
      }
      if (engramId !== undefined) return json(await call('engram.why', { id: engramId }));
      const match = /^(.+):(\d+)(?:-(\d+))?$/.exec((span as string).trim());
      if (!match) throw new EngramError('INVALID_INPUT', `span must be file:start-end, e.g. src/auth.ts:42-60; got ${quote(span as string)}`);
      const [, file, start, end] = match;
      return json(await call('engram.explain', defined({ file, start: Number(start), end: Number(end ?? start), ...options })));
    },
  }),
  tool({
    name: 'engram_doc',
    description:
      "Read one entry of this repository's living knowledge docs by its stable id: a concept (C###), a claim (E###) or a " +
      'workflow (W###), as briefings and docs cite them. Returns JSON: its markdown, fields, status and graveyard history.',
    shape: { id: text().describe('The entry id, e.g. C012, E003 or W001') },
    annotations: readOnly('Read a knowledge doc entry'),
    core: false,
    run: async (args, { call }) => json(await call('docs.entry', args)),
  }),
];

// ─── The Go engram's tools ──────────────────────────────────────────────────────────────────────────────────────

const project = () => optionalText().describe('Project name');
const session = () => optionalText().describe('Session ID to associate with (default: manual-save-{project})');

const GO_TOOLS: ToolDef[] = [
  tool({
    name: 'mem_search',
    description:
      'Search your persistent memory across all sessions: past decisions, bugs fixed, patterns, files changed, any context ' +
      'from previous coding sessions. Results are previews; call mem_get_observation for the full text.',
    shape: {
      query: text().describe('Search query — natural language or keywords'),
      type: optionalText().describe('Filter by type: decision, architecture, bugfix, pattern, config, discovery, learning, manual, …'),
      project: optionalText().describe('Filter by project name'),
      scope: optionalText().describe('Filter by scope: project (default) or personal'),
      limit: z.number().int().optional().describe('Max results (default: 10, max: 20)'),
    },
    annotations: readOnly('Search Memory'),
    core: true,
    failure: 'Search error: ',
    async run(args, { call }) {
      const found = await call<ObservationSearch>('obs.search', defined(args));
      return formatSearch(args.query, found.results, found.abstained);
    },
  }),
  tool({
    name: 'mem_save',
    description:
      'Save an important observation to persistent memory. Call it PROACTIVELY after a decision, a bug fix, a new pattern or ' +
      'convention, a configuration change or a discovery — do not wait to be asked. Title: short and searchable. Content: ' +
      '**What** / **Why** / **Where** / **Learned**. Give topic_key (see mem_suggest_topic_key) to update one observation as a ' +
      'topic evolves instead of adding new ones. A save waits for a person\'s review before later sessions are shown it; your ' +
      'own searches find it at once.',
    shape: {
      title: text().describe("Short, searchable title (e.g. 'JWT auth middleware', 'Fixed N+1 query')"),
      content: text().describe('Structured content using **What**, **Why**, **Where**, **Learned**'),
      type: optionalText().describe('Category: decision, architecture, bugfix, pattern, config, discovery, learning (default: manual)'),
      session_id: session(),
      project: project(),
      scope: optionalText().describe('Scope for this observation: project (default) or personal'),
      topic_key: optionalText().describe('Optional topic identifier for upserts (e.g. architecture/auth-model)'),
    },
    annotations: hints('Save Memory'),
    core: true,
    failure: 'Failed to save: ',
    async run(args, { call }) {
      const saved = await call<SaveObservationResult>('obs.save', defined(args));
      return formatSaved(saved, args.title, args.type?.trim() || 'manual');
    },
  }),
  tool({
    name: 'mem_update',
    description: 'Update an existing observation by ID. Only provided fields are changed.',
    shape: {
      id: id('Observation ID to update'),
      title: optionalText().describe('New title'),
      content: optionalText().describe('New content'),
      type: optionalText().describe('New type/category'),
      project: optionalText().describe('New project value'),
      scope: optionalText().describe('New scope: project or personal'),
      topic_key: optionalText().describe('New topic key (normalized internally)'),
    },
    annotations: hints('Update Memory'),
    core: false,
    failure: 'Failed to update memory: ',
    async run(args, { call }) {
      const { observation, warnings, review } = await call<UpdateObservationResult>('obs.update', defined(args));
      const note = statusNote(review);
      return [`Memory updated: #${observation.id} ${quote(observation.title)} (${observation.type}, scope=${observation.scope})`, ...warnings, ...(note ? [note] : [])].join('\n');
    },
  }),
  tool({
    name: 'mem_suggest_topic_key',
    description: 'Suggest a stable topic_key for memory upserts. Use it before mem_save when a topic (an architecture decision) should update one observation over time.',
    shape: {
      type: optionalText().describe('Observation type/category, e.g. architecture, decision, bugfix'),
      title: optionalText().describe('Observation title (preferred input for stable keys)'),
      content: optionalText().describe('Observation content used as fallback if title is empty'),
    },
    annotations: readOnly('Suggest Topic Key'),
    core: false,
    async run(args, { call }) {
      const { topic_key } = await call<{ topic_key: string }>('obs.suggest_topic_key', defined(args));
      return `Suggested topic_key: ${topic_key}`;
    },
  }),
  tool({
    name: 'mem_delete',
    description: 'Delete an observation by ID. Soft-delete by default; set hard_delete=true for permanent deletion.',
    shape: { id: id('Observation ID to delete'), hard_delete: z.boolean().optional().describe('If true, permanently deletes the observation') },
    annotations: hints('Delete Memory', { destructiveHint: true }),
    core: false,
    failure: 'Failed to delete memory: ',
    async run(args, { call }) {
      const result = await call<{ id: number; hard_delete: boolean }>('obs.delete', defined(args));
      return `Memory #${result.id} ${result.hard_delete ? 'permanently deleted' : 'soft-deleted'}`;
    },
  }),
  tool({
    name: 'mem_save_prompt',
    description: "Save a user prompt to persistent memory: what the user asked — intent, questions, requests — so future sessions know the user's goals.",
    shape: { content: text().describe("The user's prompt text"), session_id: session(), project: project() },
    annotations: hints('Save User Prompt'),
    core: true,
    failure: 'Failed to save prompt: ',
    async run(args, { call }) {
      await call('prompt.save', defined(args));
      return `Prompt saved: ${quote(truncate(args.content, 80))}`;
    },
  }),
  tool({
    name: 'mem_context',
    description: 'Get recent memory context from previous sessions: recent sessions, prompts and observations. Call it at session start or after a compaction.',
    shape: {
      project: optionalText().describe('Filter by project (omit for all projects)'),
      scope: optionalText().describe('Filter observations by scope: project (default) or personal'),
      limit: z.number().int().optional().describe('Number of observations to retrieve (default: 20)'),
    },
    annotations: readOnly('Get Memory Context'),
    core: true,
    failure: 'Failed to get context: ',
    async run(args, { call }) {
      const { context, stats } = await call<{ context: string; stats: Parameters<typeof formatContext>[1] }>('obs.context', defined(args));
      return formatContext(context, stats);
    },
  }),
  tool({
    name: 'mem_stats',
    description: 'Show memory system statistics — total sessions, observations, prompts and projects tracked.',
    shape: {},
    annotations: readOnly('Memory Stats'),
    core: false,
    failure: 'Failed to get stats: ',
    run: async (_args, { call }) => formatStats(await call('obs.stats', {})),
  }),
  tool({
    name: 'mem_timeline',
    description:
      'Show chronological context around a specific observation: the observations saved before and after it in its session. ' +
      'Progressive disclosure: search first, then timeline.',
    shape: {
      observation_id: id('The observation ID to center the timeline on (from mem_search results)'),
      before: z.number().int().optional().describe('Number of observations to show before the focus (default: 5)'),
      after: z.number().int().optional().describe('Number of observations to show after the focus (default: 5)'),
    },
    annotations: readOnly('Memory Timeline'),
    core: false,
    failure: 'Timeline error: ',
    run: async (args, { call }) => formatTimeline(await call<TimelineResult>('obs.timeline', defined(args))),
  }),
  tool({
    name: 'mem_get_observation',
    description: 'Get the full content of a specific observation by ID: the untruncated text of a result from mem_search or mem_timeline.',
    shape: { id: id('The observation ID to retrieve') },
    annotations: readOnly('Get Observation'),
    core: true,
    run: async (args, { call }) => formatObservation(await call<ObservationView>('obs.get', args)),
  }),
  tool({
    name: 'mem_session_summary',
    description:
      'Save a comprehensive end-of-session summary when a session ends or significant work is complete. Use this structure: ' +
      '## Goal, ## Instructions, ## Discoveries, ## Accomplished, ## Relevant Files.',
    shape: {
      content: text().describe('Full session summary using the Goal/Instructions/Discoveries/Accomplished/Files format'),
      session_id: optionalText().describe('Session ID (default: manual-save-{project})'),
      project: project(),
    },
    annotations: hints('Save Session Summary'),
    core: true,
    failure: 'Failed to save session summary: ',
    async run(args, { call }) {
      const summary = await call<{ project: string | null; saved: SaveObservationResult }>('session.summary', defined(args));
      const note = statusNote(summary.saved.review);
      return `Session summary saved for project ${quote(summary.project ?? '')}${note ? `\n${note}` : ''}`;
    },
  }),
  tool({
    name: 'mem_session_start',
    description: 'Register the start of a new coding session.',
    shape: { id: text().describe('Unique session identifier'), project: project(), directory: optionalText().describe('Working directory') },
    annotations: hints('Start Session', { idempotentHint: true }),
    core: false,
    failure: 'Failed to start session: ',
    async run(args, { call }) {
      const started = await call<{ id: string; project: string | null }>('session.start', defined(args));
      return `Session ${quote(started.id)} started for project ${quote(started.project ?? '')}`;
    },
  }),
  tool({
    name: 'mem_session_end',
    description: 'Mark a coding session as completed with an optional summary.',
    shape: { id: text().describe('Session identifier to close'), summary: optionalText().describe('Summary of what was accomplished') },
    annotations: hints('End Session', { idempotentHint: true }),
    core: false,
    failure: 'Failed to end session: ',
    async run(args, { call }) {
      const ended = await call<{ id: string }>('session.end', defined(args));
      return `Session ${quote(ended.id)} completed`;
    },
  }),
  tool({
    name: 'mem_capture_passive',
    description:
      'Extract and save structured learnings from text output: the items of a "## Key Learnings:" (or "## Aprendizajes Clave:") ' +
      'section, each as its own observation. Duplicates are detected and skipped, so it is safe to call again with the same text.',
    shape: {
      content: text().describe("The text output containing a '## Key Learnings:' section with numbered or bulleted items"),
      session_id: optionalText().describe('Session ID (default: manual-save-{project})'),
      project: project(),
      source: optionalText().describe("Source identifier (e.g. 'subagent-stop', 'session-end')"),
    },
    annotations: hints('Capture Learnings', { idempotentHint: true }),
    core: false,
    failure: 'Passive capture failed: ',
    async run(args, { call }) {
      const params = defined({ ...args, source: args.source?.trim() || 'mcp-passive' });
      return formatPassive(await call<PassiveCaptureResult>('obs.passive', params));
    },
  }),
  tool({
    name: 'mem_merge_projects',
    description:
      "Merge memories from several project name variants into one canonical name (e.g. 'Engram' and 'engram-memory' into 'engram'). " +
      'DESTRUCTIVE — moves all records from the source names to the canonical name.',
    shape: {
      from: text().describe("Comma-separated list of project names to merge FROM (e.g. 'Engram,engram-memory,ENGRAM')"),
      to: text().describe("The canonical project name to merge INTO (e.g. 'engram')"),
    },
    annotations: hints('Merge Projects', { destructiveHint: true, idempotentHint: true }),
    core: false,
    failure: 'Merge failed: ',
    run: async (args, { call }) => formatMerge(await call<MergeProjectsResult>('projects.merge', args)),
  }),
];

/** Every tool, Engram's first. */
export const TOOLS: readonly ToolDef[] = [...ENGRAM_TOOLS, ...GO_TOOLS];

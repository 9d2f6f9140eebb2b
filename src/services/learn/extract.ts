import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  EngramError,
  isEngramError,
  readTranscript,
  type Embedder,
  type LlmClient,
  type Logger,
  type Store,
  type Transcript,
} from '../../core/index.js';
import { audited, governancePolicy, llmVerdicts, recordSources, syncJournal, type Actor, type EngramSource, type GovernancePolicy } from '../governance/index.js';
import { prepareDraft, storeDraft } from '../memory/index.js';
import { conversationChunks, conversationLines, CONVERSATION } from './conversation.js';
import { LessonIndex, type DuplicateMatch } from './extract-dedup.js';
import { parseExtraction, type ProposedLesson, type RejectedLesson } from './extract-parse.js';

/** Extraction limits, with the reason for each. */
export const EXTRACTION = {
  /** New conversation shorter than this (characters, tool lines included) is not worth a call: below it a session is
   * one request and its answer, and nothing went wrong long enough to teach anything (of the shared fixtures, a
   * one-line edit is 233 characters, a session with a failed command and a subagent about 500). */
  minChars: 400,
  /** …nor is new conversation without a message from the person. */
  minUserMessages: 1,
  /** An answer with no JSON list is asked again this many times, then its chunk is passed over (counted in
   * `malformed_answers`): a model that cannot answer one chunk must not stall the session forever. */
  malformedRetries: 1,
  /** Chunks sent per run at most (8,000 characters each): a long session costs at most this many calls per run;
   * what is left is read by the next run (the session's next job, or `engram extract`). */
  maxChunksPerRun: 6,
  /** Lessons kept per chunk at most: a chunk with more "lessons" is the model summarising. */
  maxLessonsPerChunk: 5,
  /** Tokens an answer may take: five lessons with their evidence. */
  maxAnswerTokens: 1_500,
  /** A run is tried at most this many times in a row after failures (a failing model, a spent budget). */
  maxAttempts: 3,
  /** A run still marked running after this long died with its process; another may take over. */
  staleRunMs: 10 * 60 * 1000,
  /** Characters of each of CLAUDE.md and AGENTS.md sent so the model does not re-learn what is already written down. */
  instructionsChars: 4_000,
} as const;

/** The prompt (../shared/seeds/003 "Extraction Criteria"; engrammar's NOT-list, peers.md §1.8). */
export const EXTRACTION_SYSTEM = [
  'You read part of a conversation between a person and a coding agent, and find lessons a future agent working on a',
  'DIFFERENT task should remember. Extract only from friction:',
  '- correction: the agent did A, the person said no, do B;',
  '- struggle: several turns or failed commands spent on something avoidable;',
  '- convention: the person revealed a rule of this project or of how they work;',
  '- gotcha: a tool, library or API behaved unexpectedly.',
  'Do NOT extract: the task itself ("build X", "add Y"), summaries of what was done, generic programming advice,',
  'one-off facts (a ticket number, a file the task happened to touch), benchmark numbers, anything already in the',
  'project instructions given.',
  'Most conversations hold no lesson: then answer {"engrams": []}.',
  'Answer with one JSON object: {"engrams": [{"text": "<1-2 factual sentences, the lesson itself>",',
  '"category": "<area/topic, e.g. tooling/git>", "tags": ["<1-3 short topic tags>"],',
  '"kind": "correction|struggle|convention|gotcha", "scope": "project|general",',
  '"evidence": "<an exact quote from the conversation that shows it>"}]}.',
  'scope is "project" when the lesson holds only in this repository, "general" when it holds wherever its tags apply.',
].join('\n');

/** Where and what a session is: from the hooks' records, or from the transcript alone. */
export interface ExtractionSource {
  sessionId: string;
  transcriptPath: string;
  /** The project (repository name) the session worked in; project-scoped lessons belong to it. */
  repo: string | null;
  cwd: string | null;
  /** The environment's tags, sent as context. */
  envTags: readonly string[];
  /** MCP servers configured where the session ran: a lesson that names one requires it. */
  mcpServers: readonly string[];
  /** Tapes that record this session (services/tape), named in each new engram's provenance. */
  tapes?: readonly string[];
}

/** What happened to one proposed lesson. */
export interface LessonOutcome {
  text: string;
  category: string;
  tags: string[];
  kind: ProposedLesson['kind'];
  /** `created` (new engram), `merged` (into a duplicate), `would-create` / `would-merge` (dry run). */
  action: 'created' | 'merged' | 'would-create' | 'would-merge';
  engram_id: number | null;
  /** The review state it was stored in (`pending` unless its tier and autopromote let it be active), null in a dry run. */
  status: 'pending' | 'active' | 'rejected' | 'deprecated' | null;
  /** Where in the session's tape it was learned, when a tape of the session was given. */
  source: EngramSource | null;
  duplicate: DuplicateMatch | null;
  project: string | null;
  prerequisites: Record<string, string[]> | null;
  evidence: string;
}

/** Who extraction writes as: the harvest of a session, by the background job unless said otherwise. */
const HARVEST: Actor = { by: 'harvest', via: 'job' };

/** Options of {@link extractSession}. */
export interface ExtractOptions {
  llm: LlmClient | null;
  embedder?: Embedder | null;
  dryRun?: boolean;
  now?: () => Date;
  log?: Logger;
  /** config.json `governance`: tiers and autopromote decide whether a lesson waits for review. @default built-in */
  policy?: GovernancePolicy;
  /** Finds the moment a lesson was learned (its quote in the session's tapes): services/provenance momentSource. */
  provenance?: (quote: string, text: string) => EngramSource | null;
  /** @default harvest by the job */
  actor?: Actor;
}

/** What extracting one session did. */
export interface ExtractionReport {
  session_id: string;
  /** `done`: nothing new to read; `busy`: another run holds it; `gave-up`: attempts used up. */
  outcome: 'completed' | 'skipped' | 'failed' | 'done' | 'busy' | 'gave-up';
  dry_run: boolean;
  /** Conversation lines read in this run: `[from, to)`. */
  lines: { from: number; to: number; total: number };
  chunks: number;
  lessons: LessonOutcome[];
  rejected: RejectedLesson[];
  /** Answers that held no JSON list at all. */
  malformed_answers: number;
  error: string | null;
}

/** A report before anything was read. */
const emptyReport = (sessionId: string, dryRun: boolean): ExtractionReport => ({
  session_id: sessionId,
  outcome: 'completed',
  dry_run: dryRun,
  lines: { from: 0, to: 0, total: 0 },
  chunks: 0,
  lessons: [],
  rejected: [],
  malformed_answers: 0,
  error: null,
});

/** Operating systems a lesson names (one family only: a lesson naming two is not OS-specific). */
const OS_WORDS: Array<[string, RegExp]> = [
  ['darwin', /\b(macos|mac os|os x|homebrew|brew install|launchctl|xcode)\b/i],
  ['windows', /\b(windows|powershell|cmd\.exe|wsl)\b/i],
  ['linux', /\b(apt-get|apt install|systemctl|systemd|journalctl)\b/i],
];

/**
 * Structural prerequisites a lesson states by itself: an operating system it names (macOS / Windows / Linux-only
 * tools) and the MCP servers of the session it mentions by name. Only explicit mentions: a wrong hard gate hides a
 * lesson everywhere, a missing one only shows it somewhere it may not apply (and tag relevance learns that).
 */
export function inferPrerequisites(text: string, mcpServers: readonly string[]): Record<string, string[]> | null {
  const prerequisites: Record<string, string[]> = {};
  const systems = OS_WORDS.filter(([, pattern]) => pattern.test(text)).map(([os]) => os);
  if (systems.length === 1) prerequisites.os = systems;
  const lower = text.toLowerCase();
  const servers = mcpServers.filter((name) => name.length >= 3 && new RegExp(`\\b${name.toLowerCase().replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\b`).test(lower));
  if (servers.length > 0) prerequisites.mcp_servers = [...servers].sort();
  return Object.keys(prerequisites).length > 0 ? prerequisites : null;
}

/** CLAUDE.md and AGENTS.md where the session ran, cut: what is written there need not be learned. */
function projectInstructions(cwd: string | null): string {
  if (!cwd) return '';
  const parts: string[] = [];
  for (const name of ['CLAUDE.md', 'AGENTS.md']) {
    try {
      const text = readFileSync(join(cwd, name), 'utf8').slice(0, EXTRACTION.instructionsChars);
      if (text.trim()) parts.push(`${name}:\n${text}`);
    } catch {
      // Absent or unreadable: nothing to add.
    }
  }
  return parts.join('\n\n');
}

function prompt(source: ExtractionSource, chunk: string, instructions: string): string {
  return [
    `Repository: ${source.repo ?? '(none)'}${source.envTags.length ? ` · environment: ${source.envTags.join(', ')}` : ''}`,
    ...(instructions ? ['', 'Project instructions already written down (do not extract these):', instructions] : []),
    '',
    'Conversation:',
    chunk,
  ].join('\n');
}

/**
 * Mines a session's conversation for lessons and stores them as engrams (`source: extracted`, the session in
 * `source_sessions`, the quoted evidence in `content`), merging each into an existing engram it duplicates instead
 * (occurrences counted once per session, sessions and tags united). Reads only conversation lines it has not read
 * before, chunk by chunk, recording progress after each chunk: a resumed session is read again only for what is new,
 * and a failure (model down, budget spent) loses nothing already done. With `dryRun`, nothing is written.
 */
export async function extractSession(
  store: Store,
  source: ExtractionSource,
  options: ExtractOptions,
): Promise<ExtractionReport> {
  const now = options.now ?? (() => new Date());
  const dryRun = options.dryRun ?? false;
  const report = emptyReport(source.sessionId, dryRun);
  const llm = options.llm && options.llm.provider !== 'none' ? options.llm : null;

  let transcript: Transcript;
  try {
    transcript = readTranscript(source.transcriptPath);
  } catch (error) {
    throw new EngramError('NOT_FOUND', `cannot read the transcript of session '${source.sessionId}' at ${source.transcriptPath}`, { cause: error });
  }
  const lines = conversationLines(transcript, { tools: true });
  const state = store.extractions.get(source.sessionId);
  const from = dryRun ? 0 : Math.min(state?.lines_done ?? 0, lines.length);
  report.lines = { from, to: from, total: lines.length };
  if (from >= lines.length && state) return { ...report, outcome: 'done' };

  const fresh = lines.slice(from);
  const userMessages = fresh.filter((line) => line.role === 'user').length;
  const freshChars = fresh.reduce((sum, line) => sum + line.text.length, 0);
  const tooLittle = userMessages < EXTRACTION.minUserMessages || freshChars < EXTRACTION.minChars;
  if (!llm || tooLittle) {
    // Nothing is read, so lines_done stays: the session is looked at again when it grows or an LLM is configured.
    const error = !llm ? 'no LLM configured: nothing was extracted' : `too little new conversation (${userMessages} user messages, ${freshChars} characters)`;
    if (!dryRun) store.write(() => store.extractions.skip(source.sessionId, source.transcriptPath, error, now().toISOString()));
    return { ...report, outcome: 'skipped', error };
  }

  if (!dryRun) {
    const staleBefore = new Date(now().getTime() - EXTRACTION.staleRunMs).toISOString();
    const claim = store.write(() => store.extractions.claim(source.sessionId, source.transcriptPath, now().toISOString(), EXTRACTION.maxAttempts, staleBefore));
    if (claim !== 'claimed') return { ...report, outcome: claim };
  }

  // Chunks over the new lines, starting a little before them so a correction that began earlier is seen whole.
  const start = Math.max(0, from - CONVERSATION.overlapMessages);
  const chunks = conversationChunks(lines.slice(start)).map((chunk) => ({ ...chunk, start: chunk.start + start, end: chunk.end + start }));
  const instructions = projectInstructions(source.cwd);
  const index = new LessonIndex(store, options.embedder ?? null);
  index.load(source.repo);

  let done = from;
  const finish = (outcome: 'completed' | 'failed', error: string | null): ExtractionReport => {
    report.lines.to = done;
    if (!dryRun) {
      const counts = {
        created: report.lessons.filter((lesson) => lesson.action === 'created').length,
        merged: report.lessons.filter((lesson) => lesson.action === 'merged').length,
        rejected: report.rejected.length,
      };
      store.write(() => store.extractions.finish(source.sessionId, { status: outcome, lines_done: done, ...counts, error }, now().toISOString()));
    }
    return { ...report, outcome, error };
  };

  for (const chunk of chunks.slice(0, EXTRACTION.maxChunksPerRun)) {
    let parsed: ReturnType<typeof parseExtraction> = { lessons: [], rejected: [], malformed: true };
    for (let attempt = 0; attempt <= EXTRACTION.malformedRetries && parsed.malformed; attempt++) {
      try {
        const response = await llm.complete({
          system: EXTRACTION_SYSTEM,
          prompt: prompt(source, chunk.text, instructions),
          json: true,
          maxTokens: EXTRACTION.maxAnswerTokens,
          sessionId: source.sessionId,
          purpose: 'extract',
        });
        parsed = parseExtraction(response.text, chunk.text);
      } catch (error) {
        return finish('failed', isEngramError(error) ? `${error.code}: ${error.message}` : String(error));
      }
      if (parsed.malformed) {
        report.malformed_answers++;
        options.log?.warn('extraction answer held no JSON list', { session: source.sessionId, attempt: attempt + 1 });
      }
    }
    report.chunks++;
    report.rejected.push(...parsed.rejected);
    const kept = parsed.lessons.slice(0, EXTRACTION.maxLessonsPerChunk);
    for (const extra of parsed.lessons.slice(EXTRACTION.maxLessonsPerChunk)) report.rejected.push({ text: extra.text, reason: 'over the per-chunk limit' });
    for (const lesson of kept) {
      report.lessons.push(
        await keepLesson(store, index, source, lesson, {
          dryRun,
          at: now().toISOString(),
          embedder: options.embedder ?? null,
          llm,
          policy: options.policy ?? governancePolicy(),
          actor: options.actor ?? HARVEST,
          ...(options.provenance ? { provenance: options.provenance } : {}),
        }),
      );
    }
    done = chunk.end;
    if (!dryRun) {
      store.write(() => store.extractions.finish(source.sessionId, { status: 'running', lines_done: done, created: 0, merged: 0, rejected: 0, error: null }, now().toISOString()));
    }
  }
  return finish('completed', null);
}

/**
 * Stores one lesson: merged into its duplicate, or created (its vector stored too, so later dedup and search see it)
 * with the status review gives it — pending unless its tier allows autopromotion and nothing active contradicts it —
 * and the moment it was learned. Each is one audited operation by `harvest`.
 */
async function keepLesson(
  store: Store,
  index: LessonIndex,
  source: ExtractionSource,
  lesson: ProposedLesson,
  options: {
    dryRun: boolean;
    at: string;
    embedder: Embedder | null;
    llm: LlmClient | null;
    policy: GovernancePolicy;
    actor: Actor;
    provenance?: (quote: string, text: string) => EngramSource | null;
  },
): Promise<LessonOutcome> {
  const project = lesson.scope === 'project' ? source.repo : null;
  const prerequisites = inferPrerequisites(lesson.text, source.mcpServers);
  const vector = await index.vector(lesson.text);
  const duplicate = index.duplicateOf(lesson.text, project, vector);
  const moment = options.provenance?.(lesson.evidence, lesson.text) ?? null;
  const outcome: LessonOutcome = {
    text: lesson.text,
    category: lesson.category,
    tags: lesson.tags,
    kind: lesson.kind,
    action: duplicate ? 'would-merge' : 'would-create',
    engram_id: duplicate?.id ?? null,
    status: null,
    source: moment,
    duplicate,
    project,
    prerequisites,
    evidence: lesson.evidence,
  };
  if (options.dryRun) {
    if (!duplicate) index.remember(null, lesson.text, project, vector);
    return outcome;
  }
  if (duplicate && duplicate.id !== null) {
    const id = duplicate.id;
    const { result, entry } = audited(
      store,
      { actor: options.actor, op: 'merge', reason: `found again in session ${source.sessionId}` },
      (changes) => {
        const existing = store.engrams.get(id);
        if (!existing || existing.source_sessions.includes(source.sessionId)) return existing?.status ?? null; // This session already counted.
        changes.engram(id);
        // A lesson found again never changes the status of what it restates: a rejected one stays rejected.
        const merged = store.engrams.update(id, {
          occurrence_count: existing.occurrence_count + 1,
          source_sessions: [...existing.source_sessions, source.sessionId],
          tags: [...new Set([...existing.tags, ...lesson.tags])].sort(),
          last_seen_at: options.at,
        });
        if (moment) recordSources(store, changes, id, [moment], options.at);
        return merged.status;
      },
      options.at,
    );
    if (entry) syncJournal(store);
    return { ...outcome, action: 'merged', status: result };
  }
  const draft = prepareDraft({
    text: lesson.text,
    content: `Learned from session ${source.sessionId}${source.tapes?.length ? ` (tape ${source.tapes.map((tape) => tape.slice(0, 16)).join(', ')})` : ''} (${lesson.kind}). Evidence: "${lesson.evidence}"`,
    kind: lesson.kind,
    category: lesson.category,
    tags: lesson.tags,
    prerequisites,
    source: 'extracted',
    source_sessions: [source.sessionId],
    project,
  });
  // Contradictions with what is active: the LLM is asked about the closest pairs before the write (when configured).
  const verdicts = options.policy.conflictLlm === 'off' ? undefined : await llmVerdicts(store, { text: draft.text, project }, options.llm, { sessionId: source.sessionId });
  // Without a vector space (no embedder, no vector extension) the engram is embedded later like any other.
  const space = vector ? index.space() : null;
  const { result: stored, entry } = audited(
    store,
    (result: ReturnType<typeof storeDraft>) => ({
      actor: options.actor,
      op: result.status === 'created' ? 'add' : result.status === 'revised' ? 'revise' : 'restate',
      reason: result.engram.status === 'pending' ? result.engram.status_reason : null,
    }),
    (changes) => {
      const result = storeDraft(store, draft, options.at, 'count', {
        changes,
        learnedBy: 'harvest',
        policy: options.policy,
        ...(verdicts?.size ? { verdicts } : {}),
        ...(moment ? { sources: [moment] } : {}),
      });
      if (space && vector && result.status === 'created') store.vectors().put(space, result.engram.id, result.engram.content_hash, vector);
      return result;
    },
    options.at,
  );
  if (entry) syncJournal(store);
  index.remember(stored.engram.id, lesson.text, project, vector);
  return { ...outcome, action: stored.status === 'created' ? 'created' : 'merged', engram_id: stored.engram.id, status: stored.engram.status };
}

/** A session the hooks recorded, as an extraction source; null when it has no transcript on record. */
export function sessionSource(
  store: Store,
  sessionId: string,
  describe?: (cwd: string) => { tags?: readonly string[]; mcpServers?: readonly string[] },
): ExtractionSource | null {
  const session = store.sessions.get(sessionId);
  if (!session?.transcript_path) return null;
  const audit = store.activity.evaluation(sessionId);
  const environment = session.cwd && describe ? describe(session.cwd) : null;
  return {
    sessionId,
    transcriptPath: session.transcript_path,
    repo: session.project,
    cwd: session.cwd,
    envTags: audit?.env_tags.length ? audit.env_tags : (environment?.tags ?? []),
    mcpServers: environment?.mcpServers ?? [],
  };
}

/** `engram extract` over many sessions: each in turn, a failure recorded in its report and the rest still run. */
export async function extractSessions(
  store: Store,
  sources: readonly ExtractionSource[],
  options: ExtractOptions,
): Promise<ExtractionReport[]> {
  const reports: ExtractionReport[] = [];
  for (const source of sources) {
    try {
      reports.push(await extractSession(store, source, options));
    } catch (error) {
      const message = isEngramError(error) ? `${error.code}: ${error.message}` : String(error);
      reports.push({ ...emptyReport(source.sessionId, options.dryRun ?? false), outcome: 'failed', error: message });
    }
  }
  return reports;
}

import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { isAbsolute, join, resolve } from 'node:path';
import type * as Yaml from 'yaml';
import * as z from 'zod';
import { EngramError } from '../../core/index.js';
import { CONFIG_FILE } from './_paths.js';

/**
 * The project's knowledge configuration, `.engram/config.yaml` (seed 002, "Project Config"): where the living docs,
 * graveyards and the L0 briefing are, what to watch, thresholds, budget and the fold agent. Every key the seed shows
 * is accepted as it shows it; the few additions (`fold`, `dispatch`, briefing line limit) have defaults. Unknown keys
 * are rejected: a typo must not silently fall back to a default.
 */

const relativePath = z
  .string()
  .min(1)
  .refine((value) => !isAbsolute(value) && !value.split(/[\\/]/).includes('..'), 'must be a path inside the repository (relative, no ..)');

const SESSION_FORMATS = ['claude-code', 'codex'] as const;

const SessionSourceSchema = z
  .object({
    /** Which agent's history. Built-in: claude-code, codex. */
    format: z.enum(SESSION_FORMATS),
    /** The agent's history file (`~/.claude/history.jsonl`, `~/.codex/history.jsonl`) or its folder; transcripts are found beside it. */
    path: z.string().min(1).optional(),
    /** Substrings of the session's working folder; a session matching none is not this project's. Default: inside the repository. */
    project_match: z.array(z.string().min(1)).optional(),
  })
  .strict();

/** @default seed values everywhere. */
export const KnowledgeConfigSchema = z
  .object({
    living_docs: z
      .object({
        timeline: relativePath.default('docs/decisions/timeline.md'),
        concepts: relativePath.default('docs/decisions/concept_registry.md'),
        epistemic: relativePath.default('docs/decisions/epistemic_state.md'),
        workflows: relativePath.default('docs/decisions/workflow_registry.md'),
      })
      .strict()
      .prefault({}),
    graveyard: z
      .object({
        concepts: relativePath.default('docs/decisions/concept_graveyard.md'),
        epistemic: relativePath.default('docs/decisions/epistemic_graveyard.md'),
      })
      .strict()
      .prefault({}),
    briefing: z
      .object({
        file: relativePath.default('CLAUDE.md'),
        section: z.string().regex(/^#{1,6} \S/, 'must be a markdown heading such as "## Project Knowledge Briefing"').default('## Project Knowledge Briefing'),
        /** Upper bound of the generated briefing (the seed's 50–100 lines). */
        max_lines: z.number().int().min(10).max(400).default(100),
      })
      .strict()
      .prefault({}),
    sources: z
      .object({
        issues: z.union([relativePath, z.array(relativePath)]).optional(),
        docs: z.array(relativePath).default([]),
        sessions: z.union([SessionSourceSchema, z.array(SessionSourceSchema)]).optional(),
      })
      .strict()
      .prefault({}),
    thresholds: z
      .object({
        orphan_triage: z.number().int().min(0).default(50),
        contested_review_days: z.number().int().min(0).default(14),
        stale_unverified_days: z.number().int().min(0).default(30),
        workflow_repetition: z.number().int().min(1).default(3),
        /** Contested claims older than contested_review_days before a resolution review (seed: > 5). */
        contested_count: z.number().int().min(0).default(5),
        /** Stale unverified claims before an evidence review (seed: > 10). */
        stale_count: z.number().int().min(0).default(10),
        /** Timeline size that triggers compaction of old phases (seed: e.g. 50K). */
        timeline_compact_chars: z.number().int().min(1_000).default(50_000),
        /** Phases that ended longer ago than this collapse to one paragraph (seed: 6 months). */
        timeline_compact_months: z.number().int().min(1).default(6),
        /** A FULL entry longer than this many lines is a violation (seed learning 1: line limits). */
        max_entry_lines: z.number().int().min(3).default(25),
      })
      .strict()
      .prefault({}),
    budget: z
      .object({
        context_limit_chars: z.number().int().min(10_000).default(600_000),
        instructions_overhead: z.number().int().min(0).default(10_000),
        max_chunk_chars: z.number().int().min(1_000).default(200_000),
      })
      .strict()
      .prefault({}),
    /** Model name passed to the fold command's `{model}` placeholder. */
    model: z.string().min(1).default('sonnet'),
    fold: z
      .object({
        /** argv of the fold agent; `{model}` is replaced. The prompt arrives on stdin. */
        command: z.array(z.string().min(1)).min(1).default(['claude', '-p', '--model', '{model}', '--allowedTools', 'Read,Edit,Write,Glob,Grep']),
        /** One dispatch (or retry) is killed after this long. */
        timeout_minutes: z.number().min(0.01).max(24 * 60).default(30),
        /** Correction-prompt retries after a lint failure (seed: max 2). */
        max_retries: z.number().int().min(0).max(5).default(2),
      })
      .strict()
      .prefault({}),
    dispatch: z
      .object({
        /** How often git and session history are polled (seed: 60 s). */
        poll_seconds: z.number().min(0.1).default(60),
        /** A buffer that has not grown for this long is dispatched even when not full. */
        settle_seconds: z.number().min(0).default(300),
      })
      .strict()
      .prefault({}),
  })
  .strict();

/** The validated configuration. */
export type KnowledgeConfig = z.infer<typeof KnowledgeConfigSchema>;
/** One session source, normalised. */
export type SessionSource = z.infer<typeof SessionSourceSchema>;

export { CONFIG_FILE } from './_paths.js';

/** The `issues` source as a list. */
export const issueFolders = (config: KnowledgeConfig): string[] =>
  config.sources.issues === undefined ? [] : Array.isArray(config.sources.issues) ? config.sources.issues : [config.sources.issues];

/** The `sessions` source as a list. */
export const sessionSources = (config: KnowledgeConfig): SessionSource[] =>
  config.sources.sessions === undefined ? [] : Array.isArray(config.sources.sessions) ? config.sources.sessions : [config.sources.sessions];

const nodeRequire = createRequire(import.meta.url);
let yamlModule: typeof Yaml | undefined;

/**
 * The YAML parser, loaded on first use and kept outside the bundles (scripts/bundle.mjs): the hooks and the server
 * share a bundle with this module, and only repositories with knowledge docs ever parse YAML.
 */
function yaml(): typeof Yaml {
  try {
    yamlModule ??= nodeRequire('yaml') as typeof Yaml;
    return yamlModule;
  } catch (error) {
    throw new EngramError('INTERNAL', `the yaml package could not be loaded (${(error as Error).message.split('\n')[0]}); run ./install.sh`, { cause: error });
  }
}

/** `1:5` style position of a zod issue's key in the YAML text, or null. */
function issuePosition(doc: Yaml.Document, lines: Yaml.LineCounter, path: ReadonlyArray<PropertyKey>): string | null {
  const { isMap, isNode } = yaml();
  // Walk as far as the path exists: a missing key is reported at its parent.
  let node: unknown = doc.contents;
  let found: Yaml.Node | null = isNode(node) ? node : null;
  for (const key of path) {
    if (!isMap(node) && !(isNode(node) && 'items' in node)) break;
    const collection = node as { get(key: unknown, keepScalar: true): unknown; items: Array<{ key: unknown }> };
    const pair = isMap(node) ? node.items.find((item) => isNode(item.key) && (item.key as { value?: unknown }).value === key) : undefined;
    const next = collection.get(key, true);
    if (next === undefined) break;
    node = next;
    found = isNode(pair?.key) ? (pair.key as Yaml.Node) : isNode(next) ? next : found;
  }
  const offset = found?.range?.[0];
  if (offset === undefined) return null;
  const pos = lines.linePos(offset);
  return `${pos.line}:${pos.col}`;
}

/**
 * Parses config text. Throws CONFIG_INVALID naming the file, the line and the key of every problem: YAML syntax
 * errors (from the parser, with positions) and schema errors (zod paths mapped back to the YAML nodes).
 */
export function parseKnowledgeConfig(text: string, file: string): KnowledgeConfig {
  const { LineCounter, parseDocument } = yaml();
  const lines = new LineCounter();
  const doc = parseDocument(text, { lineCounter: lines, prettyErrors: true, uniqueKeys: true });
  if (doc.errors.length > 0) {
    const problems = doc.errors.map((error) => {
      const pos = error.linePos?.[0];
      return `${file}${pos ? `:${pos.line}:${pos.col}` : ''}: ${error.message.split('\n')[0]}`;
    });
    throw new EngramError('CONFIG_INVALID', `${file} is not valid YAML: ${problems.join('; ')}`, { details: { file, errors: problems } });
  }
  const raw: unknown = doc.toJS() ?? {};
  const parsed = KnowledgeConfigSchema.safeParse(raw);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((issue) => {
      // An unknown key is reported where it is written, not at its parent.
      const path = issue.code === 'unrecognized_keys' ? [...issue.path, issue.keys[0]!] : issue.path;
      const where = issuePosition(doc, lines, path);
      const key = path.length ? path.join('.') : '(root)';
      const message = issue.code === 'unrecognized_keys' ? `unknown key${issue.keys.length > 1 ? `s ${issue.keys.join(', ')}` : ''}` : issue.message;
      return `${file}${where ? `:${where}` : ''}: ${key}: ${message}`;
    });
    throw new EngramError('CONFIG_INVALID', `${file} is not a valid knowledge config: ${problems.join('; ')}`, { details: { file, errors: problems } });
  }
  return parsed.data;
}

/** Reads `<root>/.engram/config.yaml`: NOT_FOUND when absent (the repository did not opt in), CONFIG_INVALID when wrong. */
export function loadKnowledgeConfig(root: string): KnowledgeConfig {
  const file = join(root, CONFIG_FILE);
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') {
      throw new EngramError('NOT_FOUND', `no knowledge config at ${file}; run 'engram docs init --from-today' to opt this repository in`);
    }
    throw new EngramError('IO', `cannot read ${file}: ${(error as Error).message}`, { cause: error });
  }
  return parseKnowledgeConfig(text, file);
}

/** The six doc files by role, as absolute paths under `root`. */
export interface DocPaths {
  timeline: string;
  concepts: string;
  epistemic: string;
  workflows: string;
  conceptGraveyard: string;
  epistemicGraveyard: string;
}

/** Absolute doc paths for a config rooted at `root`. */
export function docPaths(config: KnowledgeConfig, root: string): DocPaths {
  const at = (path: string) => resolve(root, path);
  return {
    timeline: at(config.living_docs.timeline),
    concepts: at(config.living_docs.concepts),
    epistemic: at(config.living_docs.epistemic),
    workflows: at(config.living_docs.workflows),
    conceptGraveyard: at(config.graveyard.concepts),
    epistemicGraveyard: at(config.graveyard.epistemic),
  };
}

/** The config file a new project starts with: the seed's example with this project's name, commented. */
export function defaultConfigYaml(options: { projectMatch: string }): string {
  return `# Engram knowledge docs (engram docs …, engram run). Keys as in seed 002; see docs/KNOWLEDGE.md.
living_docs:
  timeline: docs/decisions/timeline.md
  concepts: docs/decisions/concept_registry.md
  epistemic: docs/decisions/epistemic_state.md
  workflows: docs/decisions/workflow_registry.md

graveyard:
  concepts: docs/decisions/concept_graveyard.md
  epistemic: docs/decisions/epistemic_graveyard.md

briefing: # L0 target: only the block between Engram's markers under this heading is ever rewritten
  file: CLAUDE.md
  section: "## Project Knowledge Briefing"
  max_lines: 100

sources:
  docs: []          # folders whose changes feed the docs, e.g. [docs/specs/]
  # issues: local_data/issues/
  sessions:         # sessions started inside this repository unless project_match says otherwise
    - format: claude-code        # transcripts beside ~/.claude/history.jsonl
      # project_match: [${JSON.stringify(options.projectMatch)}]
    - format: codex              # rollouts beside ~/.codex/history.jsonl
      # project_match: [${JSON.stringify(options.projectMatch)}]

thresholds:
  orphan_triage: 50
  contested_review_days: 14
  stale_unverified_days: 30
  workflow_repetition: 3

budget:
  context_limit_chars: 600000
  instructions_overhead: 10000
  max_chunk_chars: 200000

model: sonnet  # or any LLM with file editing

fold:
  command: [claude, -p, --model, "{model}", --allowedTools, "Read,Edit,Write,Glob,Grep"]
  timeout_minutes: 30
  max_retries: 2

dispatch:
  poll_seconds: 60
  settle_seconds: 300
`;
}

/**
 * Numbers that decide what hooks inject, with the reason for each. Thresholds were set on the development queries
 * (fixtures/eval/queries-dev.jsonl, including the `none` queries that should inject nothing) with
 * `bench/inject.mjs`; the held-out queries only report.
 */
export const INJECT = {
  /** At most this many memories per prompt: more crowds the user's own words. */
  promptMax: 3,
  /** At most this many per tool call: tool calls are frequent, and each memory costs context. */
  toolMax: 2,
  /**
   * PreToolUse searches with BM25 alone: its query is a tool name, paths and a command — words, not meaning — and
   * the semantic rule rarely fires on it, while embedding the query and a vector scan cost ~17 ms of a hook that
   * runs on every tool call (bench/hooks.mjs, 10k engrams).
   */
  toolMode: 'bm25',
  /**
   * A hit after the first is injected only when its fused score is at least this share of the first's: the second
   * and third hits are right far less often than the first. Swept on the dev splits of the three evaluation sets with
   * `node bench/inject.mjs --sweep` (USE lite, as hooks run): 0.9 raised the precision of what is injected from 48 %
   * to 74 % on the lesson set (60 → 85 % on fixtures/eval, 32 → 47 % on the conversational turns) for 5 points of
   * prompts with a relevant injection (63 → 58 %; 37 → 37 %; 49 → 37 %). Lower cutoffs (0.6, 0.75) kept most of the
   * noise; one memory per prompt (max 1) gave the same as 0.9.
   */
  relativeScore: 0.9,
  /** Candidates read from search before thresholds and de-duplication. */
  candidates: 10,
  /**
   * A hit is relevant lexically when enough of the query's content terms occur in the engram: at least
   * `minMatched` terms covering `minCoverage` of the query, or `strongMatched` terms whatever the query's length (a
   * long error message dilutes coverage), or a single term when the query has at most two. On the dev queries,
   * coverage 0.5 instead of 0.34 raised the precision of what is injected from 0.54 to 0.67 for the same recall.
   */
  lexical: { minMatched: 2, minCoverage: 0.5, strongMatched: 4, shortQueryTerms: 2 },
  /**
   * …or semantically, when it is the nearest vector and its cosine similarity is at least this (per embedder kind:
   * USE lite's similarities run higher than the distilled models'). Swept on the dev queries (0.4–0.7): USE lite at
   * 0.6 injected a relevant memory for 42 % of answerable queries but spoke up on 27 % of unanswerable ones; 0.7
   * gives 37 % and stays silent on all of them, and a hook that talks out of turn costs more than one that is quiet.
   * ctx-use-256 reaches the same point at 0.5.
   */
  similarity: { transformers: 0.5, 'use-lite': 0.7, test: 0.6 } as Record<string, number>,
  /** One memory is shown in at most this many characters; the rest is cut with an ellipsis. */
  itemChars: 700,
  /** SessionStart: project memories beyond the pinned ones. */
  sessionProjectMax: 4,
} as const;

/** Words that say which tool or file type, not what about: left out when measuring how much of a query matched. */
export const GENERIC_TERMS = new Set([
  'bash', 'edit', 'write', 'read', 'grep', 'glob', 'multiedit', 'multi', 'notebookedit', 'notebook', 'task', 'agent',
  'apply', 'patch', 'src', 'lib', 'index', 'home', 'user', 'users', 'tmp', 'var', 'usr', 'ts', 'tsx', 'js', 'jsx',
  'mjs', 'cjs', 'py', 'rb', 'rs', 'java', 'json', 'yaml', 'yml', 'md', 'txt', 'toml', 'cd', 'ls', 'cat', 'echo',
  // Error-message boilerplate: every failure says it.
  'error', 'exit', 'code', 'failed', 'failure', 'status', 'command',
]);

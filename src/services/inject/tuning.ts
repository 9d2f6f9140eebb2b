/**
 * Numbers that decide what hooks inject, with the reason for each. Thresholds were set on the dev splits of the
 * evaluation sets (including the queries no memory answers, which should inject nothing) with `bench/inject.mjs
 * --sweep`; the held-out test splits only report.
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
   * A result is injected only when its confidence — search's fitted probability that it answers the query (the hit
   * model in services/recall/ranker-weights.json: its own signals, its search's, its position) — reaches this; per
   * kind of hook event, because prompts search hybrid and tool calls BM25 alone, and their confidences come from
   * different models. Swept with `node bench/inject.mjs --sweep --splits dev` over the three offline embedders (dev
   * splits only): on the lesson set (hook inputs) prompt 0.35 / tool 0.5 injected a relevant memory for 57 % of
   * answerable queries at 86 % precision and stayed silent on 85 % of unanswerable ones; 0.25 / 0.45 gave 62 % at
   * 81 %, 0.45 / 0.55 gave 53 % at 87 %. It replaced a lexical/semantic relevance rule and a cutoff relative to the
   * first hit's score (58 % at 75 %), which the confidence subsumes: it reads the same coverage and similarity.
   */
  minConfidence: { prompt: 0.35, tool: 0.5 },
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

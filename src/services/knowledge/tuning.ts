/**
 * Numbers that shape chunks and the briefing, with the reason for each. Budgets the user controls are in
 * `.engram/config.yaml`; these are the fixed proportions inside them.
 */
export const CHUNK = {
  /** A commit's diff is shown up to this many characters: enough to see what changed, not a vendored file. */
  commitDiffChars: 12_000,
  /** A changed doc or issue is shown up to this many characters. */
  fileChars: 20_000,
  /** A session excerpt is at most this long: the words, not the tool output. */
  sessionChars: 20_000,
  /** One message of a session excerpt. */
  messageChars: 1_500,
  /** The catch-up scan of watched folders stops after this many changed files (a whole tree touched by a checkout). */
  scanMaxFiles: 2_000,
  /** Growth expected per new entry (seed: ~200 chars per new ACTIVE entry) and per item (edits to existing ones). */
  growthPerId: 220,
  growthPerItem: 150,
  /** Growth expected of every chunk: a timeline paragraph (seed: 1–2K chars per phase). */
  growthBase: 1_500,
  /** The guard never fires below this much change: small chunks legitimately touch a few entries. */
  growthFloor: 3_000,
} as const;

/** How many ids a chunk reserves, per kind of item (unused ones at the tail are returned at commit). */
export const RESERVE = {
  /** New concepts: per commit that adds files, per changed doc or issue. */
  conceptPerCommit: 1,
  conceptPerFile: 1,
  claimPerFile: 1,
  claimPerSession: 1,
  /** A workflow per repeated request, and one per three sessions. */
  workflowPerSessions: 3,
  min: { C: 2, E: 2, W: 1 },
  max: { C: 50, E: 30, W: 10 },
  /** The seed chunk (path A and B): an onboarding read of the whole repository. */
  seed: { C: 40, E: 15, W: 8 },
} as const;

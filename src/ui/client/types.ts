/**
 * The API's answers as the page reads them: the subset of the server's types (services/*) the page uses, written
 * out here because the page is compiled for the browser, apart from the Node code.
 */
export interface Engram {
  id: number;
  title: string | null;
  text: string;
  content: string | null;
  category: string;
  tags: string[];
  prerequisites: unknown;
  source: string;
  times_matched: number;
  last_matched_at: string | null;
  pinned: boolean;
  auto_pinned: boolean;
  project: string | null;
  revision_count: number;
  created_at: string;
  updated_at: string;
  status: 'pending' | 'active' | 'rejected' | 'deprecated';
  status_reason: string | null;
  learned_by: string;
  liveness: string;
  liveness_at: string | null;
}
export interface Page {
  engrams: Engram[];
  total: number;
  limit: number;
  offset: number;
}
export interface Facets {
  categories: Array<{ value: string; count: number }>;
  projects: Array<{ value: string | null; count: number }>;
  tags: Array<{ value: string; count: number }>;
}
export interface HistoryStep {
  token: string;
  at: string;
  actor: string;
  via: string;
  op: string;
  reason: string | null;
  fields: Record<string, unknown>;
  undone_by: string | null;
}
export interface ConflictView {
  other_id: number;
  other_text: string;
  other_status: string | null;
  reason: string;
  status: string;
}
export interface RelevancePoint {
  at: string;
  score: number;
  score_before: number | null;
  cause: 'evaluation' | 'feedback' | 'baseline';
  judgement_score: number | null;
  session_id: string | null;
  evidence: string | null;
  judged_by: string | null;
}
export interface RelevanceSeries {
  tag: string;
  current: number | null;
  points: RelevancePoint[];
}
export interface PinStep {
  at: string;
  pinned: boolean;
  auto: boolean;
  actor: string;
  via: string;
  op: string;
  reason: string | null;
  token: string;
  undone_by: string | null;
}
export interface Detail {
  engram: Engram | null;
  id: number;
  summary: string;
  sources: Array<{ session_id: string | null; tape_id: string | null; event_from: number | null; event_to: number | null; quote: string | null; tape_found: boolean; moment: Array<{ offset: number; kind: string; text: string }> }>;
  relevance_history: RelevanceSeries[];
  pin_history: PinStep[];
  history: HistoryStep[];
  stats: { repos: Array<{ repo: string; times_matched: number }>; tag_relevance: Array<{ tag: string; score: number; positive_evals: number; negative_evals: number }> } | null;
  conflicts: ConflictView[];
  stale_after: string | null;
  stale: boolean;
}
export interface SearchView {
  query: string;
  mode: string;
  model: string | null;
  abstained: string | null;
  weak: string | null;
  degraded: string | null;
  timings: { total_ms: number };
  results: Array<{
    id: number;
    score: number;
    ranks: { bm25: number | null; vector: number | null; anchor: number | null };
    signals: { bm25: number | null; vector: number | null };
    engram: Engram;
    adjustments?: { fused: number; tag_relevance: { average: number; evals: number; factor: number } | null; pinned: number; recency: number };
  }>;
  explain?: {
    fusion: { k: number; weights: { bm25: number; vector: number; anchor: number }; lists: { bm25: number; vector: number; anchor: number } };
    abstain: { weak: string | null; terms: Array<{ term: string; weight: number }>; unknown: { terms: string[]; share: number }; best: { id: number; coverage: number; matched: string[]; agreed: boolean } | null; rule: string };
  };
}
export interface ReviewQueueView {
  items: Array<{
    engram: Engram;
    reasons: string[];
    evidence: Array<{ session_id: string | null; quote: string | null; files: string[] }>;
    conflicts: ConflictView[];
    near_duplicates: Array<{ id: number; text: string; status: string; similarity: number }>;
  }>;
  total: number;
  counts: Record<string, number>;
  offset: number;
  limit: number;
}
export interface DecisionResult {
  decisions: Array<{ id: number; from: string; to: string; action: string }>;
  undo_token: string | null;
}
export interface UndoView {
  undid: Array<{ token: string; op: string; engram_ids: number[] }>;
  undo_token: string | null;
}
export interface DoctorReport {
  status: string;
  checks: Array<{ name: string; status: string; detail: string; fix?: string }>;
}
export interface SessionSummary {
  id: string;
  agent: string;
  project: string | null;
  cwd: string | null;
  model: string | null;
  start_source: string | null;
  turns: number;
  started_at: string;
  last_activity_at: string;
  ended_at: string | null;
  end_reason: string | null;
  shown: number;
  prompts: number;
  tools: number;
  judged: number;
  eval_status: string | null;
}
export interface SessionPage {
  sessions: SessionSummary[];
  total: number;
  limit: number;
  next: string | null;
}
export interface SessionFacets {
  projects: Array<{ value: string | null; count: number }>;
  agents: Array<{ value: string; count: number }>;
}
export interface EngramRefView {
  id: number;
  text: string | null;
  status: string | null;
  category: string | null;
}
export interface ActivityPage<T> {
  items: T[];
  total: number;
  offset: number;
  limit: number;
}
export interface ToolEventView {
  tool_use_id: string;
  tool_name: string;
  target: string | null;
  ok: boolean;
  error: string | null;
  duration_ms: number | null;
  at: string;
}
export interface PromptView {
  content: string;
  created_at: string;
}
export interface SessionDetail {
  session: SessionSummary & { repo_root: string | null; transcript_path: string | null; summary: string | null };
  audit: { env_tags: string[]; repo: string | null; eval_status: string; eval_attempts: number; eval_error: string | null; evaluated_at: string | null } | null;
  extraction: { status: string; created: number; merged: number; rejected: number; error: string | null; updated_at: string } | null;
  injections: Array<{ event: string; query: string | null; at: string; answered_by: string | null; context_epoch: number; engrams: Array<EngramRefView & { rank: number | null; score: number | null; chars: number; times: number }> }>;
  judgements: Array<{ engram: EngramRefView; source: string; score: number | null; evidence: string | null; judged_by: string; at: string }>;
  extracted: Array<EngramRefView & { learned_by: string; status_reason: string | null; created_at: string; tape_id: string | null; event_from: number | null; event_to: number | null }>;
  prompts: ActivityPage<PromptView>;
  tools: ActivityPage<ToolEventView>;
  tapes: TapeEntry[];
}
export interface TapeEntry {
  tape_id: string;
  path: string;
  dir: string;
  size: number;
  written_at: string;
  time: string | null;
  harness: string | null;
  session_id: string | null;
  agent: string | null;
  cwd: string | null;
  model: string | null;
  previous_tape: string | null;
  lines: [number, number] | null;
  coverage: string | null;
}
export interface TapeFolder {
  root: string | null;
  project: string;
  opted_in: boolean;
  tapes_dir: string;
}
export interface TapeList {
  tapes: TapeEntry[];
  total: number;
  limit: number;
  offset: number;
}
export interface TimelineEvent {
  offset: number;
  k: string;
  t: string | null;
  agent: string | null;
  text: string | null;
  tool: string | null;
  call_id: string | null;
  args: string | null;
  is_error: boolean | null;
  exit: number | null;
  file: string | null;
  op: string | null;
  range: [number, number] | null;
  before_range: [number, number] | null;
  before_text: string | null;
  after_text: string | null;
  to_file: string | null;
  to_range: [number, number] | null;
  truncated: boolean;
}
export interface TimelinePage {
  tape: TapeEntry;
  total: number;
  offset: number;
  limit: number;
  kinds: Record<string, number>;
  events: TimelineEvent[];
}
export interface ExplainView {
  span: { file: string; start: number; end: number };
  total: number;
  results: Array<{
    tape_id: string;
    session: { agent: string; id: string };
    confidence: number;
    via: string;
    depth: number;
    touches: Array<{ offset: number; kind: string; file: string | null; time: string | null; part: string; confidence: number; via: string; depth: number }>;
    continuation?: { continues_into: string; confidence: number; signal: string };
  }>;
}

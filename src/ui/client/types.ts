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
export interface Detail {
  engram: Engram | null;
  id: number;
  summary: string;
  sources: Array<{ session_id: string | null; tape_id: string | null; event_from: number | null; event_to: number | null; quote: string | null; tape_found: boolean; moment: Array<{ kind: string; text: string }> }>;
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
    abstain: { weak: string | null; terms: Array<{ term: string; weight: number }>; best: { id: number; coverage: number; matched: string[]; agreed: boolean } | null; rule: string };
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

/**
 * Reading what review needs: the queue (pending, stale, code-gone, with evidence, conflicts and near-duplicates), the
 * open conflicts, and each engram's history from the audit log. Decisions are services/gate.
 * @module
 */
export { reviewQueue, listConflicts, conflictsOf, engramHistory, NEAR_DUPLICATE_OVERLAP } from './queue.js';
export type { ReviewItem, ReviewQueue, ReviewReason, ReviewOptions, ConflictView, HistoryStep } from './queue.js';

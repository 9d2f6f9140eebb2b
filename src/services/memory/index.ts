export { cleanText, EngramDraftSchema, parseDraft, prepareDraft, requiredText } from './draft.js';
export type { EngramDraft, PreparedDraft } from './draft.js';
export { addEngram, storeDraft, insertReviewed, freshRowCounters, learnedByOf, reassess, summarize } from './add.js';
export type { AddResult, AddStatus, AddOptions, ConflictSummary, StoreContext, UnreviewedEngram } from './add.js';
export { getEngram, listEngrams, resolveEngram, engramFacets } from './read.js';
export type { EngramRef, ListOptions, EngramPage, EngramFacets } from './read.js';
export { updateEngram, deprecateEngram, pinEngram, deleteEngram, EngramPatchSchema } from './edit.js';
export type { EngramPatch, EditResult, DeleteResult, ChangeOptions } from './edit.js';

/**
 * Agent sessions for a person to inspect: the viewer's Sessions screen (what the hooks injected, what the evaluator
 * judged, what was learned, the prompts, the tapes). Read-only.
 * @module
 */
export { listSessions, sessionFacets, sessionDetail, sessionActivity, sessionTapes, SESSION_AGENTS, SESSION_PAGE } from './sessions.js';
export type {
  SessionSummary,
  SessionListOptions,
  SessionPage,
  SessionDetail,
  HookInjection,
  SessionJudgement,
  ExtractedEngram,
  EngramRefView,
  ActivityPage,
  SessionToolEvent,
} from './sessions.js';

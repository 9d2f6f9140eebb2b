export { recordSessionStart, recordPrompt, recordTurnEnd, recordSessionEnd } from './sessions.js';
export type { SessionContext, PromptRecord } from './sessions.js';
export { recordToolEvent, queueSessionEndWork, ensureSession } from './activity.js';

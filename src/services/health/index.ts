export { storeStatus } from './status.js';
export type { StatusReport } from './status.js';
export { runDoctor } from './checks.js';
export type { DoctorOptions } from './checks.js';
export type { Check, DoctorReport } from './report.js';
export { checkClaude, checkCodex, CODEX_HOOK_EVENTS } from './agents.js';
export { checkClaudeMcp, checkCodexMcp, checkMcpStarts } from './mcp.js';

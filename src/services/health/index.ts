export { storeStatus } from './status.js';
export type { StatusReport } from './status.js';
export { runDoctor } from './checks.js';
export type { Check, DoctorReport, DoctorOptions } from './checks.js';
export { checkClaude, checkCodex, CODEX_HOOK_EVENTS } from './agents.js';
export { checkClaudeMcp, checkCodexMcp, checkMcpStarts } from './mcp.js';

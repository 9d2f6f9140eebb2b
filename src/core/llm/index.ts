/**
 * The pluggable LLM client: an OpenAI-compatible endpoint, a command such as `claude -p`, or none (docs/LLM.md).
 * @module
 */
export { createLlmClient, estimateTokens, DEFAULT_MAX_TOKENS } from './client.js';
export { resolveLlm } from './settings.js';
export type { LlmChoice, LlmLimits } from './settings.js';
export { usageDay } from './budget.js';
export { LLM_CHILD_VARIABLE, MAX_COMMAND_OUTPUT_BYTES } from './command.js';
export { parseRetryAfter } from './openai.js';
export { extractJsonObject } from './json.js';
export type { LlmClient, LlmClientOptions, LlmRequest, LlmResponse, LlmUsage } from './types.js';

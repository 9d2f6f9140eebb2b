import type { Config, Settings } from '../config.js';
import { redactText } from '../redact.js';

/** The caps and limits every provider shares (config.json `llm.*`). */
export interface LlmLimits {
  timeoutMs: number;
  maxRetries: number;
  maxCallsPerSession: number;
  maxTokensPerSession: number;
  maxCallsPerDay: number;
  maxTokensPerDay: number;
  maxPromptChars: number;
}

/** Which LLM to use, decided from config and environment without contacting it. `reason` says why, for status output. */
export type LlmChoice =
  | { provider: 'none'; reason: string; limits: LlmLimits }
  | { provider: 'openai'; baseUrl: string; model: string; apiKeyEnv: string; reason: string; limits: LlmLimits }
  | { provider: 'command'; argv: string[]; model: string | null; reason: string; limits: LlmLimits };

function limitsOf(llm: Config['llm']): LlmLimits {
  return {
    timeoutMs: llm.timeout_ms,
    maxRetries: llm.max_retries,
    maxCallsPerSession: llm.max_calls_per_session,
    maxTokensPerSession: llm.max_tokens_per_session,
    maxCallsPerDay: llm.max_calls_per_day,
    maxTokensPerDay: llm.max_tokens_per_day,
    maxPromptChars: llm.max_prompt_chars,
  };
}

/** `http://host/v1/` → `http://host/v1`, so `/chat/completions` can be appended. */
const trimSlashes = (url: string): string => url.replace(/\/+$/, '');

/**
 * Decides the LLM provider. `auto` is `openai` when a base URL is set, else `command` when a command is set, else
 * `none`. An incomplete setup (an endpoint without a model, an explicit provider without its endpoint or command)
 * is `none` with a reason rather than an error: every caller has a fallback, and `engram doctor` shows the reason.
 */
export function resolveLlm(settings: Settings): LlmChoice {
  const llm = settings.config.llm;
  const limits = limitsOf(llm);
  const provider = llm.provider === 'auto' ? (llm.base_url ? 'openai' : llm.command ? 'command' : 'none') : llm.provider;
  switch (provider) {
    case 'none':
      return {
        provider: 'none',
        limits,
        reason:
          llm.provider === 'none'
            ? 'the LLM is switched off (llm.provider / ENGRAM_LLM_PROVIDER = none)'
            : 'no LLM configured; set llm.base_url or llm.command (ENGRAM_LLM_BASE_URL / ENGRAM_LLM_COMMAND)',
      };
    case 'openai': {
      if (!llm.base_url) {
        return { provider: 'none', limits, reason: 'llm.provider is openai but llm.base_url is not set (ENGRAM_LLM_BASE_URL)' };
      }
      if (!llm.model) {
        return { provider: 'none', limits, reason: 'llm.base_url is set but llm.model is not (ENGRAM_LLM_MODEL)' };
      }
      const baseUrl = trimSlashes(llm.base_url);
      return {
        provider: 'openai',
        baseUrl,
        model: llm.model,
        apiKeyEnv: llm.api_key_env,
        limits,
        reason: redactText(`OpenAI-compatible endpoint ${baseUrl}, model ${llm.model}`),
      };
    }
    case 'command': {
      if (!llm.command?.length) {
        return { provider: 'none', limits, reason: 'llm.provider is command but llm.command is not set (ENGRAM_LLM_COMMAND)' };
      }
      return {
        provider: 'command',
        argv: [...llm.command],
        model: llm.model ?? null,
        limits,
        reason: redactText(`command ${llm.command.join(' ')}`),
      };
    }
  }
}

import { performance } from 'node:perf_hooks';
import type { Settings } from '../config.js';
import { llmApiKey } from '../env.js';
import { EngramError, toEngramError } from '../errors.js';
import { redactText } from '../redact.js';
import { createBudget, type BudgetTicket } from './budget.js';
import { runCommand } from './command.js';
import { callOpenAi, type ProviderAnswer } from './openai.js';
import { resolveLlm, type LlmChoice } from './settings.js';
import type { LlmClient, LlmClientOptions, LlmRequest, LlmResponse, LlmUsage } from './types.js';

/** Answer length when the caller does not say: evaluation verdicts and extracted lessons are short. */
export const DEFAULT_MAX_TOKENS = 1024;
/** Largest `maxTokens` a caller may ask for. */
const MAX_TOKENS_LIMIT = 32_768;
/** Added for commands when `json` is asked: they have no response_format. */
const JSON_INSTRUCTION = 'Answer with one JSON object and nothing else.';

/** Tokens counted for text the provider did not count: about four characters per token for English and code. */
export const estimateTokens = (chars: number): number => Math.ceil(chars / 4);

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Checks a request before anything is counted or sent; prompts are refused, never cut, so callers excerpt. */
function validate(request: LlmRequest, maxPromptChars: number): { chars: number; maxTokens: number } {
  if (typeof request.prompt !== 'string' || request.prompt.trim() === '') {
    throw new EngramError('INVALID_INPUT', 'an LLM request needs a non-empty prompt');
  }
  const chars = (request.system?.length ?? 0) + request.prompt.length;
  if (chars > maxPromptChars) {
    throw new EngramError(
      'INVALID_INPUT',
      `the LLM prompt has ${chars} characters (system + prompt), more than llm.max_prompt_chars (${maxPromptChars}); excerpt it`,
      { details: { chars, max: maxPromptChars } },
    );
  }
  const maxTokens = request.maxTokens ?? DEFAULT_MAX_TOKENS;
  if (!Number.isInteger(maxTokens) || maxTokens < 1 || maxTokens > MAX_TOKENS_LIMIT) {
    throw new EngramError('INVALID_INPUT', `maxTokens must be an integer from 1 to ${MAX_TOKENS_LIMIT}, got ${maxTokens}`);
  }
  return { chars, maxTokens };
}

/** Where calls go, without secrets. */
function describeChoice(choice: LlmChoice): string {
  switch (choice.provider) {
    case 'none':
      return `none: ${choice.reason}`;
    case 'openai':
      return `openai ${choice.reason}`;
    case 'command':
      return `command: ${choice.reason}${choice.model ? `, model ${choice.model}` : ''}`;
  }
}

/**
 * The one LLM client evaluation and extraction use: an OpenAI-compatible `/chat/completions` endpoint, a command
 * such as `claude -p`, or none (every call throws LLM_UNAVAILABLE and callers use their fallback). Nothing is
 * contacted until `complete` is called. Each call is checked against the caps (config.json `llm.*`), counted in the
 * store's `llm_usage` (in memory without a store) and logged as one line without prompt or key.
 */
export function createLlmClient(settings: Settings, options: LlmClientOptions = {}): LlmClient {
  const choice = resolveLlm(settings);
  const describe = describeChoice(choice);
  if (choice.provider === 'none') {
    return {
      provider: 'none',
      describe,
      complete: () => Promise.reject(new EngramError('LLM_UNAVAILABLE', choice.reason, { details: { reason: choice.reason } })),
    };
  }

  const { limits } = choice;
  const now = options.now ?? (() => new Date());
  const budget = createBudget(limits, { store: options.store, now });
  const log = options.log;

  /**
   * Prompts are redacted on the way out, like text on the way into the store: a transcript excerpt can hold a secret
   * or a `<private>` span, and no caller should be able to send one to an endpoint by forgetting to redact.
   */
  const ask = (original: LlmRequest, maxTokens: number): Promise<ProviderAnswer> => {
    const request = { ...original, system: original.system && redactText(original.system), prompt: redactText(original.prompt) };
    if (choice.provider === 'openai') {
      return callOpenAi({
        baseUrl: choice.baseUrl,
        model: choice.model,
        // Read now, from the variable the config names, so the key never sits in Settings or a long-lived object.
        apiKey: llmApiKey(choice.apiKeyEnv, options.env),
        system: request.system,
        prompt: request.prompt,
        maxTokens,
        json: request.json ?? false,
        timeoutMs: limits.timeoutMs,
        maxRetries: limits.maxRetries,
        retryBaseMs: options.retryBaseMs ?? 500,
        maxRetryAfterMs: options.maxRetryAfterMs ?? 30_000,
        fetch: options.fetch ?? globalThis.fetch,
        sleep,
      });
    }
    const system = [request.system, request.json ? JSON_INSTRUCTION : undefined].filter(Boolean).join('\n\n');
    return runCommand({
      argv: choice.argv,
      model: choice.model,
      input: system ? `${system}\n\n${request.prompt}` : request.prompt,
      timeoutMs: limits.timeoutMs,
      ...(original.cwd ? { cwd: original.cwd } : {}),
      ...(original.signal ? { signal: original.signal } : {}),
      ...(original.onSpawn ? { onSpawn: original.onSpawn } : {}),
    });
  };

  return {
    provider: choice.provider,
    describe,
    async complete(request) {
      const { chars, maxTokens } = validate(request, limits.maxPromptChars);
      const purpose = String(request.purpose).slice(0, 64);
      const fields = { provider: choice.provider, purpose, ...(request.sessionId ? { session_id: request.sessionId } : {}) };
      let ticket: BudgetTicket;
      try {
        ticket = budget.reserve(request.sessionId, estimateTokens(chars) + maxTokens);
      } catch (error) {
        const engramError = toEngramError(error);
        log?.warn('llm call refused', { ...fields, code: engramError.code, cap: engramError.details?.cap });
        throw engramError;
      }

      const started = performance.now();
      let answer: ProviderAnswer;
      try {
        answer = await ask(request, maxTokens);
      } catch (error) {
        const engramError = toEngramError(error);
        const ms = Math.round(performance.now() - started);
        log?.warn('llm call failed', { ...fields, ms, attempts: engramError.details?.attempts, code: engramError.code, error: engramError.message });
        throw engramError;
      }
      const ms = Math.round(performance.now() - started);
      const usage: LlmUsage = answer.usage
        ? { ...answer.usage, estimated: false }
        : { promptTokens: estimateTokens(chars), completionTokens: estimateTokens(answer.text.length), estimated: true };
      try {
        budget.settle(ticket, usage);
      } catch (error) {
        // The call was counted when reserved and its answer is paid for: a busy store costs the token count, not the answer.
        log?.warn('llm usage not recorded', { ...fields, error: toEngramError(error).message });
      }
      const model = answer.model ?? choice.model;
      log?.info('llm call', {
        ...fields,
        model,
        ms,
        attempts: answer.attempts,
        prompt_tokens: usage.promptTokens,
        completion_tokens: usage.completionTokens,
        estimated: usage.estimated,
      });
      const response: LlmResponse = { text: answer.text, provider: choice.provider, model, usage, ms, attempts: answer.attempts };
      return response;
    },
  };
}

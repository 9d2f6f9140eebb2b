import type { Logger } from '../log.js';
import type { Store } from '../store/index.js';

/** One question to the LLM. Prompts are redacted (secrets, `<private>` spans) before they are sent, and never logged. */
export interface LlmRequest {
  /** Instructions sent as the system message (OpenAI) or before the prompt (command). */
  system?: string;
  /** The user message. Together with `system` at most `llm.max_prompt_chars`; longer is refused, never cut. */
  prompt: string;
  /** Most tokens the answer may use. @default 1024 */
  maxTokens?: number;
  /** Ask for one JSON object: `response_format: json_object` for OpenAI-compatible endpoints, an instruction for commands. */
  json?: boolean;
  /** The agent session this call is for, counted against `llm.max_calls_per_session` and `max_tokens_per_session`. */
  sessionId?: string;
  /** What the call is for, logged (`evaluate`, `extract`, …). */
  purpose: 'evaluate' | 'extract' | string;
  /** Command provider only: the folder the command runs in (an agent CLI edits files there). @default the process cwd */
  cwd?: string;
  /** Command provider only: aborting kills the command's process group, like a timeout. */
  signal?: AbortSignal;
  /** Command provider only: called with the command's pid (its process group) once it is running. */
  onSpawn?: (pid: number) => void;
}

/** Tokens a call used; `estimated` when the provider did not say and they were counted as characters / 4. */
export interface LlmUsage {
  promptTokens: number;
  completionTokens: number;
  estimated: boolean;
}

/** One answer. */
export interface LlmResponse {
  text: string;
  provider: 'openai' | 'command';
  /** The model that answered (as the endpoint reports it), or the configured one; null when unknown. */
  model: string | null;
  usage: LlmUsage;
  /** Wall time of the whole call, retries included. */
  ms: number;
  /** Requests made (1 without retries). */
  attempts: number;
}

/** The one LLM client evaluation and extraction use. */
export interface LlmClient {
  readonly provider: 'openai' | 'command' | 'none';
  /** Where calls go, without secrets (`openai http://127.0.0.1:11434/v1 model llama3.2`), or why there is no LLM. */
  readonly describe: string;
  /**
   * Answers one request. Throws EngramError: `LLM_UNAVAILABLE` (no LLM configured), `INVALID_INPUT` (prompt too long
   * or empty), `LLM_BUDGET` (a cap would be crossed), `LLM_FAILED` (timeout, retries exhausted, error status,
   * unusable answer), `STORE_LOCKED` (the usage ledger could not be written).
   */
  complete(request: LlmRequest): Promise<LlmResponse>;
}

/** Options for createLlmClient; all optional, most for tests. */
export interface LlmClientOptions {
  /** Where usage is counted across processes; without it the caps hold in memory for this process. */
  store?: Store;
  /** HTTP client. @default globalThis.fetch */
  fetch?: typeof fetch;
  /** Clock: decides the UTC day usage counts against. @default () => new Date() */
  now?: () => Date;
  /** Gets one line per call (provider, purpose, ms, attempts, tokens) — never prompts or keys. */
  log?: Logger;
  /** Variables the API key is read from (the name is `llm.api_key_env`). @default process.env */
  env?: Record<string, string | undefined>;
  /** First retry delay; doubles on each retry. Tests pass a few milliseconds. @default 500 */
  retryBaseMs?: number;
  /** Longest `Retry-After` honoured; a server asking for more fails the call at once. @default 30000 */
  maxRetryAfterMs?: number;
}

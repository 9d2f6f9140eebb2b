import * as z from 'zod';
import { EngramError } from '../errors.js';
import { redactText } from '../redact.js';

/** What one provider call produced, before usage accounting. `usage` is absent when the provider did not report it. */
export interface ProviderAnswer {
  text: string;
  model: string | null;
  usage: { promptTokens: number; completionTokens: number } | undefined;
  attempts: number;
}

/** Everything one OpenAI-compatible call needs. */
export interface OpenAiCall {
  baseUrl: string;
  model: string;
  apiKey: string | undefined;
  system: string | undefined;
  prompt: string;
  maxTokens: number;
  json: boolean;
  timeoutMs: number;
  maxRetries: number;
  retryBaseMs: number;
  maxRetryAfterMs: number;
  fetch: typeof fetch;
  sleep: (ms: number) => Promise<void>;
}

/** A chat completion answer larger than this is not an answer to our prompts; it is refused, not buffered. */
const MAX_RESPONSE_BYTES = 4 * 1024 * 1024;
/** Longest wait between two attempts, whatever the backoff says. */
const MAX_BACKOFF_MS = 8_000;
/** Characters of a server's error message kept in ours. */
const MAX_SERVER_MESSAGE = 300;

/** The parts of a chat completion we read; anything else is ignored. */
const ChatCompletionSchema = z.object({
  model: z.string().optional().catch(undefined),
  choices: z
    .array(z.object({ message: z.object({ content: z.string().nullish() }).nullish() }))
    .min(1, 'no choices'),
  usage: z
    .object({ prompt_tokens: z.number().int().nonnegative().optional(), completion_tokens: z.number().int().nonnegative().optional() })
    .nullish()
    .catch(undefined),
});

/** Error bodies as OpenAI, Ollama, vLLM and LM Studio write them. */
const ErrorBodySchema = z.union([
  z.object({ error: z.object({ message: z.string() }) }),
  z.object({ error: z.string() }),
  z.object({ message: z.string() }),
  z.object({ detail: z.string() }),
]);

/** Statuses worth another attempt: the request may succeed unchanged later. */
const retryableStatus = (status: number): boolean => status === 408 || status === 429 || status >= 500;

/** Exponential backoff with a little jitter, so several clients do not retry in step. */
const backoffMs = (base: number, retry: number): number =>
  Math.min(MAX_BACKOFF_MS, base * 2 ** (retry - 1)) * (1 + Math.random() * 0.2);

/** `Retry-After` as seconds or an HTTP date, in milliseconds; undefined when absent or unreadable. */
export function parseRetryAfter(header: string | null, now = Date.now()): number | undefined {
  if (header === null || header.trim() === '') return undefined;
  const seconds = Number(header.trim());
  if (Number.isFinite(seconds)) return Math.max(0, seconds * 1000);
  const at = Date.parse(header);
  return Number.isFinite(at) ? Math.max(0, at - now) : undefined;
}

/** A server's error message: one line, capped, secrets removed (including our own key, should it be echoed). */
function serverMessage(body: string, apiKey: string | undefined): string {
  let message = body;
  try {
    const parsed = ErrorBodySchema.safeParse(JSON.parse(body));
    if (parsed.success) {
      const data = parsed.data;
      message = 'error' in data ? (typeof data.error === 'string' ? data.error : data.error.message) : 'message' in data ? data.message : data.detail;
    }
  } catch {
    // Not JSON: the raw text is the message.
  }
  return scrubbed(message.replace(/\s+/g, ' ').trim().slice(0, MAX_SERVER_MESSAGE) || '(empty body)', apiKey);
}

/** Removes secrets, and the key itself even when it does not look like one. */
function scrubbed(text: string, apiKey: string | undefined): string {
  const withoutKey = apiKey ? text.split(apiKey).join('[REDACTED:api-key]') : text;
  return redactText(withoutKey);
}

/** Reads a body up to `maxBytes`; more is an error, so a misbehaving server cannot fill memory. */
async function readCapped(response: Response, maxBytes: number): Promise<string> {
  if (!response.body) return '';
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > maxBytes) {
      await reader.cancel().catch(() => undefined);
      throw new EngramError('LLM_FAILED', `the LLM endpoint sent more than ${maxBytes} bytes; refused`);
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks).toString('utf8');
}

const failed = (message: string, attempts: number, details: Record<string, unknown> = {}, cause?: unknown): EngramError =>
  new EngramError('LLM_FAILED', message, { cause, details: { provider: 'openai', attempts, ...details } });

/**
 * One chat completion from an OpenAI-compatible endpoint (OpenAI, Ollama, LM Studio, vLLM, llama.cpp, …).
 * Retries network errors, 408, 429 and 5xx up to `maxRetries` times with exponential backoff (a `Retry-After` up to
 * `maxRetryAfterMs` is waited out; a longer one fails at once). Other statuses fail at once with the server's
 * message. A timeout is not retried: `timeoutMs` is how long the caller is willing to wait for one call. Servers that
 * refuse `response_format: json_object` (LM Studio wants a schema) get the request again without it.
 */
export async function callOpenAi(call: OpenAiCall): Promise<ProviderAnswer> {
  const url = `${call.baseUrl}/chat/completions`;
  const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json' };
  if (call.apiKey) headers.authorization = `Bearer ${call.apiKey}`;
  const messages = [
    ...(call.system ? [{ role: 'system', content: call.system }] : []),
    { role: 'user', content: call.prompt },
  ];
  let askForJson = call.json;
  let retriesLeft = call.maxRetries;
  let attempts = 0;

  for (;;) {
    attempts += 1;
    const body = JSON.stringify({
      model: call.model,
      messages,
      max_tokens: call.maxTokens,
      temperature: 0,
      ...(askForJson ? { response_format: { type: 'json_object' } } : {}),
    });
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(), call.timeoutMs);
    let status: number;
    let retryAfter: string | null;
    let text: string;
    try {
      const response = await call.fetch(url, { method: 'POST', headers, body, signal: controller.signal });
      status = response.status;
      retryAfter = response.headers.get('retry-after');
      text = await readCapped(response, MAX_RESPONSE_BYTES);
    } catch (error) {
      if (controller.signal.aborted) {
        throw failed(`the LLM endpoint ${url} did not answer within ${call.timeoutMs} ms (llm.timeout_ms)`, attempts, { timeout_ms: call.timeoutMs }, error);
      }
      if (error instanceof EngramError) throw failed(error.message, attempts);
      const reason = scrubbed(describeNetworkError(error), call.apiKey);
      if (retriesLeft > 0) {
        retriesLeft -= 1;
        await call.sleep(backoffMs(call.retryBaseMs, call.maxRetries - retriesLeft));
        continue;
      }
      throw failed(`cannot reach the LLM endpoint ${url} after ${attempts} attempt(s): ${reason}`, attempts, {}, error);
    } finally {
      clearTimeout(timer);
    }

    if (status >= 200 && status < 300) return parseAnswer(text, attempts, call.apiKey);

    const message = serverMessage(text, call.apiKey);
    if (status === 400 && askForJson && /response_format|json_object|json_schema/i.test(message)) {
      askForJson = false;
      continue;
    }
    if (retryableStatus(status) && retriesLeft > 0) {
      const waitMs = parseRetryAfter(retryAfter);
      if (waitMs !== undefined && waitMs > call.maxRetryAfterMs) {
        throw failed(
          `the LLM endpoint ${url} answered ${status} and asks to wait ${Math.ceil(waitMs / 1000)} s before retrying; giving up: ${message}`,
          attempts,
          { status, retry_after_ms: waitMs },
        );
      }
      retriesLeft -= 1;
      await call.sleep(waitMs ?? backoffMs(call.retryBaseMs, call.maxRetries - retriesLeft));
      continue;
    }
    const tries = retryableStatus(status) ? ` after ${attempts} attempt(s)` : '';
    throw failed(`the LLM endpoint ${url} answered ${status}${tries}: ${message}`, attempts, { status });
  }
}

/** `fetch failed` says nothing; its cause (`ECONNREFUSED`, `ENOTFOUND`, …) does. */
function describeNetworkError(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const cause = error.cause as { code?: unknown; message?: unknown } | undefined;
  const detail = cause && (typeof cause.code === 'string' ? cause.code : typeof cause.message === 'string' ? cause.message : undefined);
  return detail ? `${error.message} (${detail})` : error.message;
}

/** Reads `choices[0].message.content` and the usage; anything else is a clear error. */
function parseAnswer(text: string, attempts: number, apiKey: string | undefined): ProviderAnswer {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    throw failed(`the LLM endpoint answered with something that is not JSON: ${serverMessage(text, apiKey)}`, attempts);
  }
  const parsed = ChatCompletionSchema.safeParse(raw);
  const content = parsed.success ? parsed.data.choices[0]?.message?.content : undefined;
  if (!parsed.success || typeof content !== 'string' || content.trim() === '') {
    throw failed('the LLM endpoint answered without text (no choices[0].message.content)', attempts);
  }
  const usage = parsed.data.usage;
  return {
    text: content,
    model: parsed.data.model ?? null,
    usage:
      usage?.prompt_tokens !== undefined && usage.completion_tokens !== undefined
        ? { promptTokens: usage.prompt_tokens, completionTokens: usage.completion_tokens }
        : undefined,
    attempts,
  };
}

import { createServer, type AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { createLlmClient, EngramError, type LlmClientOptions } from '../../../src/core/index.js';
import { parseRetryAfter } from '../../../src/core/llm/index.js';
import { tempStore } from '../../_helpers.js';
import { completion, fakeOpenAi, llmSettings, memoryLogger, type Reply } from './_fakes.js';

/** A client for the fake server with fast retries and its own store, so tests do not share caps. */
async function clientFor(replies: Reply[], llm: Record<string, unknown> = {}, options: LlmClientOptions = {}, vars: Record<string, string> = {}) {
  const server = await fakeOpenAi(replies);
  const settings = llmSettings({ base_url: `${server.baseUrl}/`, model: 'fake-model', ...llm }, vars);
  const client = createLlmClient(settings, { store: tempStore(), retryBaseMs: 5, ...options });
  return { client, server };
}

/** The rejection of a promise, as an EngramError. */
async function rejection(promise: Promise<unknown>): Promise<EngramError> {
  try {
    await promise;
  } catch (error) {
    return error as EngramError;
  }
  throw new Error('expected a rejection');
}

describe('OpenAI-compatible provider', () => {
  it('posts a chat completion to base_url/chat/completions and returns the text, model and real usage', async () => {
    const { client, server } = await clientFor([completion('Use pnpm here.')]);
    expect(client.provider).toBe('openai');
    expect(client.describe).toContain(server.baseUrl);
    const response = await client.complete({ system: 'You judge lessons.', prompt: 'Was it useful?', purpose: 'evaluate', maxTokens: 50 });
    expect(response).toMatchObject({
      text: 'Use pnpm here.',
      provider: 'openai',
      model: 'fake-model-served',
      usage: { promptTokens: 11, completionTokens: 7, estimated: false },
      attempts: 1,
    });
    expect(response.ms).toBeGreaterThanOrEqual(0);
    expect(server.requests).toHaveLength(1);
    const [request] = server.requests;
    expect(request?.method).toBe('POST');
    expect(request?.url).toBe('/v1/chat/completions');
    expect(request?.body).toEqual({
      model: 'fake-model',
      messages: [
        { role: 'system', content: 'You judge lessons.' },
        { role: 'user', content: 'Was it useful?' },
      ],
      max_tokens: 50,
      temperature: 0,
    });
    expect(request?.headers.authorization).toBeUndefined();
  });

  it('sends the key from the variable llm.api_key_env names, and asks for a JSON object when told', async () => {
    const { client, server } = await clientFor([completion('{"ok":true}')], { api_key_env: 'MY_LLM_KEY' }, { env: { MY_LLM_KEY: 'local-secret-1' } });
    await client.complete({ prompt: 'Answer in JSON.', json: true, purpose: 'extract' });
    expect(server.requests[0]?.headers.authorization).toBe('Bearer local-secret-1');
    expect(server.requests[0]?.body.response_format).toEqual({ type: 'json_object' });
    expect(server.requests[0]?.body.messages).toEqual([{ role: 'user', content: 'Answer in JSON.' }]);
    expect(server.requests[0]?.body.max_tokens).toBe(1024);
  });

  it('redacts secrets and private spans from what it sends', async () => {
    const { client, server } = await clientFor([completion('ok')]);
    await client.complete({
      system: 'token sk-ant-api03-abcdefghijklmnopqrstuvwxyz',
      prompt: 'deploy with ghp_abcdefghijklmnopqrstuvwxyz0123456789 <private>home address</private> done',
      purpose: 'extract',
    });
    const sent = JSON.stringify(server.requests[0]?.body);
    expect(sent).not.toContain('sk-ant-api03');
    expect(sent).not.toContain('ghp_abc');
    expect(sent).not.toContain('home address');
    expect(sent).toContain('[REDACTED:github-token]');
  });

  it('estimates tokens as characters / 4 when the server reports no usage', async () => {
    const { client } = await clientFor([completion('12345678', { usage: undefined })]);
    const response = await client.complete({ prompt: 'x'.repeat(40), purpose: 'evaluate' });
    expect(response.usage).toEqual({ promptTokens: 10, completionTokens: 2, estimated: true });
    expect(response.model).toBe('fake-model-served');
  });

  it('retries a 429, waiting out Retry-After, and then succeeds', async () => {
    const { client, server } = await clientFor([
      { status: 429, headers: { 'retry-after': '0' }, body: { error: { message: 'slow down' } } },
      completion('after the wait'),
    ]);
    const response = await client.complete({ prompt: 'hi', purpose: 'evaluate' });
    expect(response.text).toBe('after the wait');
    expect(response.attempts).toBe(2);
    expect(server.requests).toHaveLength(2);
  });

  it('gives up at once when Retry-After asks for longer than it is willing to wait', async () => {
    const { client, server } = await clientFor([{ status: 429, headers: { 'retry-after': '3600' }, body: { error: 'quota' } }, completion('never')]);
    const error = await rejection(client.complete({ prompt: 'hi', purpose: 'evaluate' }));
    expect(error.code).toBe('LLM_FAILED');
    expect(error.message).toContain('3600 s');
    expect(server.requests).toHaveLength(1);
  });

  it('retries 5xx a bounded number of times, then fails with the status and the server’s message', async () => {
    const { client, server } = await clientFor([{ status: 500, body: { error: { message: 'model crashed' } } }], { max_retries: 2 });
    const error = await rejection(client.complete({ prompt: 'hi', purpose: 'evaluate' }));
    expect(error).toBeInstanceOf(EngramError);
    expect(error.code).toBe('LLM_FAILED');
    expect(error.message).toContain('500');
    expect(error.message).toContain('model crashed');
    expect(error.message).toContain('after 3 attempt(s)');
    expect(error.details).toMatchObject({ status: 500, attempts: 3 });
    expect(server.requests).toHaveLength(3);
  });

  it('does not retry other 4xx, and redacts secrets (the key included) from the server’s message', async () => {
    const { client, server } = await clientFor(
      [{ status: 401, body: { error: { message: 'invalid key plain-key-123 (also sk-proj-abcdefghijklmnopqrstuvwx)' } } }],
      {},
      { env: { ENGRAM_LLM_API_KEY: 'plain-key-123' } },
    );
    const error = await rejection(client.complete({ prompt: 'hi', purpose: 'evaluate' }));
    expect(error.code).toBe('LLM_FAILED');
    expect(error.message).toContain('401');
    expect(error.message).not.toContain('plain-key-123');
    expect(error.message).not.toContain('sk-proj-abcdefghijklmnopqrstuvwx');
    expect(error.message).toContain('[REDACTED');
    expect(server.requests).toHaveLength(1);
  });

  it('sends the request again without response_format when the server refuses it (LM Studio)', async () => {
    const { client, server } = await clientFor([
      { status: 400, body: { error: "'response_format.type' must be 'json_schema' or 'text'" } },
      completion('{"a":1}'),
    ]);
    const response = await client.complete({ prompt: 'json please', json: true, purpose: 'extract' });
    expect(response.text).toBe('{"a":1}');
    expect(server.requests.map((r) => r.body.response_format)).toEqual([{ type: 'json_object' }, undefined]);
  });

  it('times out a server that never answers, without retrying', async () => {
    const { client, server } = await clientFor(['hang'], { timeout_ms: 1_000, max_retries: 2 });
    const error = await rejection(client.complete({ prompt: 'hi', purpose: 'evaluate' }));
    // The client's timeout ended it (named in the message), once: a timeout is not retried.
    expect(error.code).toBe('LLM_FAILED');
    expect(error.message).toContain('within 1000 ms');
    expect(server.requests).toHaveLength(1);
  });

  it('fails clearly on a body that is not JSON, and on JSON without choices[0].message.content', async () => {
    const { client } = await clientFor([{ raw: '{"choices": [' }]);
    const malformed = await rejection(client.complete({ prompt: 'hi', purpose: 'evaluate' }));
    expect(malformed.code).toBe('LLM_FAILED');
    expect(malformed.message).toContain('not JSON');

    for (const reply of [completion(null), { body: { choices: [] } }, { body: { result: 'hi' } }, completion('   ')]) {
      const { client: other } = await clientFor([reply]);
      const error = await rejection(other.complete({ prompt: 'hi', purpose: 'evaluate' }));
      expect(error.code).toBe('LLM_FAILED');
      expect(error.message).toContain('choices[0].message.content');
    }
  });

  it('retries network errors, then names the cause', async () => {
    // A port that was just free: nothing listens there.
    const probe = createServer();
    await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
    const port = (probe.address() as AddressInfo).port;
    await new Promise((resolve) => probe.close(resolve));

    const settings = llmSettings({ base_url: `http://127.0.0.1:${port}/v1`, model: 'm', max_retries: 1 });
    const log = memoryLogger();
    const client = createLlmClient(settings, { store: tempStore(), retryBaseMs: 5, log });
    const error = await rejection(client.complete({ prompt: 'hi', purpose: 'evaluate' }));
    expect(error.code).toBe('LLM_FAILED');
    expect(error.message).toContain('after 2 attempt(s)');
    expect(error.message).toContain('ECONNREFUSED');
    expect(log.lines).toEqual([
      expect.objectContaining({ level: 'warn', message: 'llm call failed', fields: expect.objectContaining({ attempts: 2, code: 'LLM_FAILED' }) }),
    ]);
  });

  it('logs one line per call with provider, purpose, time, attempts and tokens, and never the prompt or key', async () => {
    const log = memoryLogger();
    const { client } = await clientFor([completion('fine')], {}, { log, env: { ENGRAM_LLM_API_KEY: 'key-never-logged' } });
    await client.complete({ system: 'SYSTEM-TEXT', prompt: 'PROMPT-TEXT', purpose: 'extract', sessionId: 's-1' });
    expect(log.lines).toHaveLength(1);
    expect(log.lines[0]).toMatchObject({
      level: 'info',
      message: 'llm call',
      fields: { provider: 'openai', purpose: 'extract', session_id: 's-1', attempts: 1, prompt_tokens: 11, completion_tokens: 7, estimated: false },
    });
    const text = JSON.stringify(log.lines);
    for (const secret of ['SYSTEM-TEXT', 'PROMPT-TEXT', 'key-never-logged']) expect(text).not.toContain(secret);
  });
});

describe('parseRetryAfter', () => {
  it('reads seconds and HTTP dates, and ignores nonsense', () => {
    expect(parseRetryAfter('2')).toBe(2_000);
    expect(parseRetryAfter('0.5')).toBe(500);
    expect(parseRetryAfter('Wed, 21 Oct 2026 07:28:10 GMT', Date.parse('2026-10-21T07:28:00Z'))).toBe(10_000);
    expect(parseRetryAfter(null)).toBeUndefined();
    expect(parseRetryAfter('soon')).toBeUndefined();
  });
});

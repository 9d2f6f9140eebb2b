import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createLlmClient, openStore, readEnv, resolveLlm, type EngramError } from '../../../src/core/index.js';
import { splitCommand, llmApiKey } from '../../../src/core/env.js';
import { tempDir, tempStore } from '../../_helpers.js';
import { completion, fakeOpenAi, llmSettings, memoryLogger } from './_fakes.js';

async function rejection(promise: Promise<unknown>): Promise<EngramError> {
  try {
    await promise;
  } catch (error) {
    return error as EngramError;
  }
  throw new Error('expected a rejection');
}

const fixedClock = (iso: string) => () => new Date(iso);

describe('choosing the provider', () => {
  it('is none without configuration, and complete() throws LLM_UNAVAILABLE so callers fall back', async () => {
    const client = createLlmClient(llmSettings({}));
    expect(client.provider).toBe('none');
    expect(client.describe).toContain('no LLM configured');
    const error = await rejection(client.complete({ prompt: 'hi', purpose: 'evaluate' }));
    expect(error.code).toBe('LLM_UNAVAILABLE');
  });

  it('auto prefers a base_url over a command; an explicit provider wins; none switches both off', () => {
    const both = { base_url: 'http://127.0.0.1:1/v1', model: 'm', command: ['claude', '-p'] };
    expect(resolveLlm(llmSettings(both)).provider).toBe('openai');
    expect(resolveLlm(llmSettings({ command: ['claude', '-p'] })).provider).toBe('command');
    expect(resolveLlm(llmSettings({ ...both, provider: 'command' })).provider).toBe('command');
    const off = resolveLlm(llmSettings({ ...both, provider: 'none' }));
    expect(off).toMatchObject({ provider: 'none', reason: expect.stringContaining('switched off') });
  });

  it('treats an incomplete setup as none with a reason instead of failing', () => {
    expect(resolveLlm(llmSettings({ base_url: 'http://127.0.0.1:1/v1' }))).toMatchObject({
      provider: 'none',
      reason: expect.stringContaining('llm.model'),
    });
    expect(resolveLlm(llmSettings({ provider: 'openai', model: 'm' })).reason).toContain('llm.base_url');
    expect(resolveLlm(llmSettings({ provider: 'command' })).reason).toContain('llm.command');
  });

  it('takes ENGRAM_LLM_* from the environment over config.json, and strips a trailing slash', () => {
    const settings = llmSettings(
      { base_url: 'http://config-host/v1', model: 'config-model' },
      { ENGRAM_LLM_BASE_URL: 'http://127.0.0.1:11434/v1/', ENGRAM_LLM_MODEL: 'llama3.2', ENGRAM_LLM_COMMAND: 'claude -p --model "claude haiku"' },
    );
    expect(settings.config.llm).toMatchObject({
      base_url: 'http://127.0.0.1:11434/v1/',
      model: 'llama3.2',
      command: ['claude', '-p', '--model', 'claude haiku'],
    });
    expect(resolveLlm(settings)).toMatchObject({ provider: 'openai', baseUrl: 'http://127.0.0.1:11434/v1', model: 'llama3.2' });
    expect(resolveLlm(llmSettings({}, { ENGRAM_LLM_COMMAND: 'codex exec', ENGRAM_LLM_PROVIDER: 'Command' }))).toMatchObject({
      provider: 'command',
      argv: ['codex', 'exec'],
    });
  });

  it('rejects a bad ENGRAM_LLM_BASE_URL or ENGRAM_LLM_PROVIDER with CONFIG_INVALID, and bad config values too', () => {
    const attempt = (llm: Record<string, unknown>, vars: Record<string, string> = {}): string | undefined => {
      try {
        llmSettings(llm, vars);
        return undefined;
      } catch (error) {
        expect((error as EngramError).code).toBe('CONFIG_INVALID');
        return (error as Error).message;
      }
    };
    expect(attempt({}, { ENGRAM_LLM_BASE_URL: 'ftp://x' })).toContain('ENGRAM_LLM_BASE_URL must be an http(s) URL');
    expect(attempt({}, { ENGRAM_LLM_PROVIDER: 'gpt' })).toContain('ENGRAM_LLM_PROVIDER must be one of');
    expect(attempt({ base_url: 'https://user:pw@host/v1' })).toContain('must not carry credentials');
    expect(attempt({ api_key: 'sk-x' })).toContain('Unrecognized key');
    expect(attempt({ api_key_env: 'not a name' })).toContain('llm.api_key_env');
    expect(attempt({ timeout_ms: 10 })).toContain('llm.timeout_ms');
  });

  it('keeps the API key out of Settings: it is read at call time from the variable the config names', () => {
    const settings = llmSettings({ base_url: 'http://127.0.0.1:1/v1', model: 'm', api_key_env: 'OTHER_KEY' }, { OTHER_KEY: 'sk-secret-value-123456789012' });
    expect(JSON.stringify(settings)).not.toContain('sk-secret-value');
    expect(llmApiKey('OTHER_KEY', { OTHER_KEY: '  k1 ' })).toBe('k1');
    expect(llmApiKey('OTHER_KEY', { OTHER_KEY: ' ' })).toBeUndefined();
  });
});

describe('splitCommand', () => {
  it('splits on whitespace, honours quotes and backslashes, and expands nothing', () => {
    expect(splitCommand('claude -p --model haiku')).toEqual(['claude', '-p', '--model', 'haiku']);
    expect(splitCommand(`  codex   exec "a b" 'c "d"' e\\ f "" $HOME  `)).toEqual(['codex', 'exec', 'a b', 'c "d"', 'e f', '', '$HOME']);
    expect(splitCommand('say "unclosed quote')).toEqual(['say', 'unclosed quote']);
    expect(readEnv({ HOME: '/h', ENGRAM_LLM_COMMAND: '  ' }).llmCommand).toBeUndefined();
  });
});

describe('prompt limits and budgets', () => {
  it('refuses a prompt longer than max_prompt_chars with INVALID_INPUT, before anything is sent or counted', async () => {
    const server = await fakeOpenAi([completion('x')]);
    const store = tempStore();
    const client = createLlmClient(llmSettings({ base_url: server.baseUrl, model: 'm', max_prompt_chars: 1_000 }), { store });
    const error = await rejection(client.complete({ system: 's'.repeat(500), prompt: 'p'.repeat(501), purpose: 'extract' }));
    expect(error.code).toBe('INVALID_INPUT');
    expect(error.message).toContain('1001 characters');
    expect((await rejection(client.complete({ prompt: '  ', purpose: 'extract' }))).code).toBe('INVALID_INPUT');
    expect((await rejection(client.complete({ prompt: 'ok', maxTokens: 0, purpose: 'extract' }))).code).toBe('INVALID_INPUT');
    expect(server.requests).toHaveLength(0);
    expect(store.llmUsage.totals(new Date().toISOString().slice(0, 10)).calls).toBe(0);
  });

  it('caps calls per session, records usage per day and session, and names the cap it hit', async () => {
    const server = await fakeOpenAi([completion('fine')]);
    const store = tempStore();
    const log = memoryLogger();
    const settings = llmSettings({ base_url: server.baseUrl, model: 'm', max_calls_per_session: 2 });
    const client = createLlmClient(settings, { store, log, now: fixedClock('2026-11-01T23:59:00Z') });
    await client.complete({ prompt: 'one', purpose: 'evaluate', sessionId: 'sess-a' });
    await client.complete({ prompt: 'two', purpose: 'evaluate', sessionId: 'sess-a' });
    const error = await rejection(client.complete({ prompt: 'three', purpose: 'evaluate', sessionId: 'sess-a' }));
    expect(error.code).toBe('LLM_BUDGET');
    expect(error.message).toContain('llm.max_calls_per_session (2)');
    expect(error.details).toMatchObject({ cap: 'max_calls_per_session', limit: 2, used: 2, session_id: 'sess-a' });
    expect(log.lines.at(-1)).toMatchObject({ level: 'warn', message: 'llm call refused', fields: { cap: 'max_calls_per_session' } });
    // Another session, and calls outside any session, still go through.
    await client.complete({ prompt: 'other', purpose: 'evaluate', sessionId: 'sess-b' });
    await client.complete({ prompt: 'none', purpose: 'evaluate' });
    expect(server.requests).toHaveLength(4);
    expect(store.llmUsage.forSession('sess-a')).toEqual({ calls: 2, prompt_tokens: 22, completion_tokens: 14 });
    expect(store.llmUsage.totals('2026-11-01')).toEqual({ calls: 4, prompt_tokens: 44, completion_tokens: 28 });
    expect(store.llmUsage.totals('2026-11-02').calls).toBe(0);
  });

  it('caps calls per UTC day across clients and processes sharing the store; the next day starts afresh', async () => {
    const server = await fakeOpenAi([completion('fine')]);
    const path = join(tempDir(), 'engram.db');
    const settings = llmSettings({ base_url: server.baseUrl, model: 'm', max_calls_per_day: 2 });
    const first = openStore({ path });
    const second = openStore({ path });
    try {
      const day1 = fixedClock('2026-11-01T10:00:00Z');
      await createLlmClient(settings, { store: first, now: day1 }).complete({ prompt: 'a', purpose: 'evaluate' });
      await createLlmClient(settings, { store: second, now: day1 }).complete({ prompt: 'b', purpose: 'evaluate' });
      const error = await rejection(createLlmClient(settings, { store: first, now: day1 }).complete({ prompt: 'c', purpose: 'evaluate' }));
      expect(error.code).toBe('LLM_BUDGET');
      expect(error.details).toMatchObject({ cap: 'max_calls_per_day', day: '2026-11-01' });
      const day2 = fixedClock('2026-11-02T00:00:01Z');
      await createLlmClient(settings, { store: second, now: day2 }).complete({ prompt: 'd', purpose: 'evaluate' });
      expect(server.requests).toHaveLength(3);
    } finally {
      first.close();
      second.close();
    }
  });

  it('refuses a call that could take the day or the session over its token cap', async () => {
    const server = await fakeOpenAi([completion('fine')]);
    const store = tempStore();
    const now = fixedClock('2026-11-03T08:00:00Z');
    const daily = createLlmClient(llmSettings({ base_url: server.baseUrl, model: 'm', max_tokens_per_day: 1_200 }), { store, now });
    await daily.complete({ prompt: 'x', maxTokens: 1_000, purpose: 'extract' }); // 11 + 7 used
    const error = await rejection(daily.complete({ prompt: 'x'.repeat(400), maxTokens: 1_100, purpose: 'extract' }));
    expect(error.code).toBe('LLM_BUDGET');
    expect(error.details).toMatchObject({ cap: 'max_tokens_per_day', used: 18, expected: 1_200 });
    await daily.complete({ prompt: 'x', maxTokens: 100, purpose: 'extract' });

    const perSession = createLlmClient(llmSettings({ base_url: server.baseUrl, model: 'm', max_tokens_per_session: 500 }), { store: tempStore(), now });
    const sessionError = await rejection(perSession.complete({ prompt: 'x', maxTokens: 600, sessionId: 's', purpose: 'extract' }));
    expect(sessionError.details).toMatchObject({ cap: 'max_tokens_per_session', session_id: 's' });
  });

  it('counts a failed call against the call caps, so a broken endpoint cannot be called without end', async () => {
    const server = await fakeOpenAi([{ status: 503, body: { error: 'down' } }]);
    const store = tempStore();
    const now = fixedClock('2026-11-04T08:00:00Z');
    const client = createLlmClient(llmSettings({ base_url: server.baseUrl, model: 'm', max_retries: 0, max_calls_per_session: 1 }), {
      store,
      now,
    });
    expect((await rejection(client.complete({ prompt: 'x', sessionId: 's', purpose: 'evaluate' }))).code).toBe('LLM_FAILED');
    expect((await rejection(client.complete({ prompt: 'x', sessionId: 's', purpose: 'evaluate' }))).code).toBe('LLM_BUDGET');
    expect(store.llmUsage.forSession('s')).toEqual({ calls: 1, prompt_tokens: 0, completion_tokens: 0 });
  });

  it('without a store, enforces the caps in memory for the process, across clients', async () => {
    const server = await fakeOpenAi([completion('fine')]);
    const settings = llmSettings({ base_url: server.baseUrl, model: 'm', max_calls_per_day: 1 });
    const now = fixedClock('2031-05-05T12:00:00Z');
    await createLlmClient(settings, { now }).complete({ prompt: 'a', purpose: 'evaluate' });
    const error = await rejection(createLlmClient(settings, { now }).complete({ prompt: 'b', purpose: 'evaluate' }));
    expect(error.code).toBe('LLM_BUDGET');
    expect(server.requests).toHaveLength(1);
  });
});

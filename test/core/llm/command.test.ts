import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createLlmClient, type EngramError } from '../../../src/core/index.js';
import { tempDir, tempStore } from '../../_helpers.js';
import { alive } from '../../_helpers.js';
import { eventually, fakeCommand, llmSettings } from './_fakes.js';

/** A client whose command is `node <fake script> …args`. */
function commandClient(args: string[], llm: Record<string, unknown> = {}) {
  const settings = llmSettings({ command: [process.execPath, fakeCommand(), ...args], ...llm });
  return createLlmClient(settings, { store: tempStore() });
}

async function rejection(promise: Promise<unknown>): Promise<EngramError> {
  try {
    await promise;
  } catch (error) {
    return error as EngramError;
  }
  throw new Error('expected a rejection');
}

describe('command provider', () => {
  it('sends system, a blank line and the prompt on stdin, returns stdout, and marks the child as Engram’s own call', async () => {
    const client = commandClient(['echo']);
    expect(client.provider).toBe('command');
    expect(client.describe).toContain('fake-llm.cjs');
    const response = await client.complete({ system: 'Be brief.', prompt: 'What happened?', purpose: 'evaluate' });
    expect(JSON.parse(response.text)).toEqual({ input: 'Be brief.\n\nWhat happened?', child: '1' });
    expect(response).toMatchObject({ provider: 'command', model: null, attempts: 1 });
    expect(response.usage).toEqual({
      promptTokens: Math.ceil('Be brief.What happened?'.length / 4),
      completionTokens: Math.ceil(response.text.length / 4),
      estimated: true,
    });
  });

  it('adds a JSON instruction when asked for JSON, and reports the configured model', async () => {
    const client = commandClient(['echo'], { model: 'haiku' });
    const response = await client.complete({ prompt: 'List lessons.', json: true, purpose: 'extract' });
    expect(JSON.parse(response.text).input).toBe('Answer with one JSON object and nothing else.\n\nList lessons.');
    expect(response.model).toBe('haiku');
  });

  it('fails on a non-zero exit with the first lines of stderr, redacted', async () => {
    const error = await rejection(commandClient(['fail']).complete({ prompt: 'hi', purpose: 'evaluate' }));
    expect(error.code).toBe('LLM_FAILED');
    expect(error.message).toContain('exited with code 3');
    expect(error.message).toContain('Error: not logged in');
    expect(error.message).toContain('third line');
    expect(error.message).not.toContain('abcdefghijklmnop123456');
    expect(error.details).toMatchObject({ exit_code: 3 });
  });

  it('fails when the command prints nothing, prints too much, or does not exist', async () => {
    const empty = await rejection(commandClient(['empty']).complete({ prompt: 'hi', purpose: 'evaluate' }));
    expect(empty.message).toContain('printed nothing');
    const flood = await rejection(commandClient(['flood']).complete({ prompt: 'hi', purpose: 'evaluate' }));
    expect(flood.message).toContain('more than 1048576 bytes');
    const missing = createLlmClient(llmSettings({ command: ['engram-no-such-llm-command', '-p'] }), { store: tempStore() });
    const error = await rejection(missing.complete({ prompt: 'hi', purpose: 'evaluate' }));
    expect(error.code).toBe('LLM_FAILED');
    expect(error.message).toContain("'engram-no-such-llm-command': not found");
  });

  it.skipIf(process.platform === 'win32')(
    'kills the whole process group on timeout, grandchildren that ignore SIGTERM included',
    async () => {
      const pidFile = join(tempDir(), 'pids.json');
      const client = commandClient(['hang', pidFile], { timeout_ms: 1_000 });
      const error = await rejection(client.complete({ prompt: 'hi', purpose: 'evaluate' }));
      expect(error.code).toBe('LLM_FAILED');
      expect(error.message).toContain('did not finish within 1000 ms');
      expect(existsSync(pidFile)).toBe(true);
      const pids = JSON.parse(readFileSync(pidFile, 'utf8')) as number[];
      expect(pids).toHaveLength(2);
      expect(await eventually(() => pids.every((pid) => !alive(pid)))).toBe(true);
    },
    15_000,
  );
});

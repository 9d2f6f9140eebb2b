/**
 * Planted secrets never reach the database (file and WAL, byte for byte), exports or logs, whichever write path they
 * come through: CLI add and update, import (full and minimal lines), hook prompts, and errors that quote input.
 */
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { engramProcess, hookProcess, tempDir } from '../_helpers.js';

// Fabricated, correctly shaped secrets.
const SECRETS = {
  aws: 'AKIAQWERTYUIOPASDFGH',
  github: `ghp_${'Zx9Yw8Vu7T'.repeat(3)}s6r5q4`,
  openai: 'sk-proj-PLANTEDplantedPLANTED0123456789',
  anthropic: 'sk-ant-api03-PLANTEDplantedPLANTED012345',
  slack: 'xoxb-111122223333-444455556666-PLANTEDplantedXYZ',
  jwt: 'eyJhbGciOiJIUzI1NiJ9.eyJwbGFudGVkIjoidHJ1ZSJ9.c2lnbmF0dXJlLXBsYW50ZWQ',
  password: 'Plant3d-Passw0rd!',
  private: 'my-private-diary-entry-42',
  pem: 'MIIEplantedPEMbodyLINE0000000000',
};

const bytesOf = (file: string): string => {
  try {
    return readFileSync(file).toString('latin1');
  } catch {
    return '';
  }
};

describe('planted secrets', () => {
  it('never reach the store, its WAL, an export or a log, through any write path', async () => {
    const home = tempDir();
    const run = (args: string[], input?: string) => engramProcess(args, { home, ...(input === undefined ? {} : { input }) });

    // CLI add: text, title, content.
    expect(run(['add', `Deploy key ${SECRETS.aws} and token ${SECRETS.github}`, '--title', `uses ${SECRETS.openai}`, '--content', `-----BEGIN PRIVATE KEY-----\n${SECRETS.pem}\n-----END PRIVATE KEY-----`]).status).toBe(0);
    // CLI update and deprecate reason.
    expect(run(['update', '1', '--text', `Rotated to ${SECRETS.anthropic}`]).status).toBe(0);
    expect(run(['deprecate', '1', '--reason', `leaked DB_PASSWORD=${SECRETS.password}`]).status).toBe(0);
    // Import: minimal and full lines.
    const full = JSON.parse(run(['export', '--status', 'all']).stdout.trim());
    full.uid = '11111111-2222-4333-8444-555555555555';
    full.id = 50;
    full.text = `Slack ${SECRETS.slack} <private>${SECRETS.private}</private>`;
    const importFile = join(home, 'in.jsonl');
    writeFileSync(importFile, `${JSON.stringify({ text: `session cookie ${SECRETS.jwt}` })}\n${JSON.stringify(full)}\n`);
    expect(run(['import', importFile]).status).toBe(0);
    // An error that quotes the caller's input.
    const bad = run(['add', 'x', '--category', `oops ${SECRETS.github}`]);
    expect(bad.status).toBe(2);
    expect(bad.stderr).not.toContain(SECRETS.github);
    // Hook prompts, from both agents.
    const prompt = {
      session_id: 'sess-secret',
      transcript_path: '/home/u/.claude/projects/-p/sess-secret.jsonl',
      cwd: home,
      hook_event_name: 'UserPromptSubmit',
      prompt: `here is my password="${SECRETS.password}" and <private>${SECRETS.private}</private> and ${SECRETS.aws}`,
    };
    expect((await hookProcess('user-prompt-submit', JSON.stringify(prompt), { home })).code).toBe(0);
    expect((await hookProcess('user-prompt-submit', JSON.stringify({ ...prompt, session_id: 'codex-1', turn_id: 't1' }), { home, agent: 'codex' })).code).toBe(0);
    // A well-formed payload whose session id is a secret, and a malformed one carrying a secret.
    expect((await hookProcess('user-prompt-submit', JSON.stringify({ ...prompt, session_id: SECRETS.github }), { home })).code).toBe(0);
    expect((await hookProcess('user-prompt-submit', `{"session_id": "${SECRETS.github}", "prompt": `, { home })).code).toBe(0);

    const exported = run(['export', '--include-deleted', '--status', 'all']).stdout;
    expect(exported.split('\n').filter(Boolean)).toHaveLength(3);
    const logs = readdirSync(join(home, 'logs')).map((file) => bytesOf(join(home, 'logs', file))).join('\n');
    const places = {
      'engram.db': bytesOf(join(home, 'engram.db')),
      'engram.db-wal': bytesOf(join(home, 'engram.db-wal')),
      export: exported,
      logs,
      // The audit trail keeps every change's before and after, and reasons people typed.
      'audit.jsonl': bytesOf(join(home, 'audit.jsonl')),
    };
    expect(places['audit.jsonl']).toContain('"op":"deprecate"');
    // The store really holds the redacted records (so the scan is not vacuous).
    expect(places['engram.db'] + places['engram.db-wal']).toContain('[REDACTED:');
    for (const [where, content] of Object.entries(places)) {
      for (const [kind, secret] of Object.entries(SECRETS)) {
        expect(content.includes(secret), `${kind} secret found in ${where}`).toBe(false);
      }
    }
  }, 60_000);
});

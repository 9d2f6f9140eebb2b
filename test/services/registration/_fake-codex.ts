import { chmodSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * A stand-in for `codex app-server` (JSON-RPC, one object per line) that behaves like Codex 0.169.0 for what Engram
 * asks: `hooks/list` reports every handler of $CODEX_HOME/hooks.json with a key `<file>:<event_snake>:<g>:<h>`, a hash
 * of its definition and its trust (from $CODEX_HOME/fake-trust.json), and `config/batchWrite` records trust there.
 * `mode: 'silent'` never answers (to test the deadline); it writes its pid to $CODEX_HOME/fake-codex.pid either way.
 */
const SOURCE = String.raw`#!/usr/bin/env node
const fs = require('node:fs');
const path = require('node:path');
const crypto = require('node:crypto');
const home = process.env.CODEX_HOME;
const mode = process.env.FAKE_CODEX_MODE || 'normal';
fs.writeFileSync(path.join(home, 'fake-codex.pid'), String(process.pid));
fs.appendFileSync(path.join(home, 'fake-codex.log'), JSON.stringify(process.argv.slice(2)) + '\n');
const stateFile = path.join(home, 'fake-trust.json');
const readState = () => (fs.existsSync(stateFile) ? JSON.parse(fs.readFileSync(stateFile, 'utf8')) : {});
const snake = (e) => e.replace(/([a-z0-9])([A-Z])/g, '$1_$2').toLowerCase();
const camel = (e) => e[0].toLowerCase() + e.slice(1);
function list() {
  const file = path.join(home, 'hooks.json');
  const hooks = [];
  const state = readState();
  if (fs.existsSync(file)) {
    const config = JSON.parse(fs.readFileSync(file, 'utf8'));
    for (const [event, groups] of Object.entries(config.hooks || {})) {
      groups.forEach((group, g) => group.hooks.forEach((handler, h) => {
        const key = file + ':' + snake(event) + ':' + g + ':' + h;
        const hash = 'sha256:' + crypto.createHash('sha256').update(JSON.stringify([event, group.matcher || null, handler])).digest('hex');
        const trusted = state[key];
        hooks.push({ key, eventName: camel(event), handlerType: 'command', command: handler.command, matcher: group.matcher || null,
          sourcePath: file, source: 'user', pluginId: null, enabled: true, isManaged: false, currentHash: hash,
          trustStatus: !trusted ? 'untrusted' : trusted === hash ? 'trusted' : 'modified' });
      }));
    }
  }
  return { data: [{ cwd: process.cwd(), hooks, warnings: [], errors: [] }] };
}
let buffer = '';
process.stdin.on('data', (d) => {
  buffer += d;
  let nl;
  while ((nl = buffer.indexOf('\n')) >= 0) {
    const message = JSON.parse(buffer.slice(0, nl));
    buffer = buffer.slice(nl + 1);
    if (mode === 'silent' || message.id === undefined) continue;
    let result;
    if (message.method === 'initialize') result = { userAgent: 'fake', codexHome: home };
    else if (message.method === 'hooks/list') result = list();
    else if (message.method === 'config/batchWrite') {
      const state = readState();
      for (const edit of message.params.edits) for (const [key, value] of Object.entries(edit.value)) state[key] = value.trusted_hash;
      fs.writeFileSync(stateFile, JSON.stringify(state));
      result = { status: 'ok' };
    } else {
      process.stdout.write(JSON.stringify({ id: message.id, error: { code: -32601, message: 'unknown method' } }) + '\n');
      continue;
    }
    process.stdout.write(JSON.stringify({ method: 'configWarning', params: { summary: 'noise' } }) + '\n');
    process.stdout.write(JSON.stringify({ id: message.id, result }) + '\n');
  }
});
process.stdin.on('end', () => process.exit(0));
if (mode === 'silent') setInterval(() => {}, 1000);
`;

/** Writes the fake `codex` into `dir` and returns its path. */
export function writeFakeCodex(dir: string): string {
  const file = join(dir, 'codex');
  writeFileSync(file, SOURCE);
  chmodSync(file, 0o755);
  return file;
}

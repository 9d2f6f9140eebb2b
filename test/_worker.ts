/**
 * A child process for multi-process tests, bundled by `workerPath()`:
 *   open <db>                            open (and migrate) the store, print what migrate applied
 *   add <db> <count> <prefix>            add <count> engrams, one transaction each, print a JSON summary
 *   import <db> <file> <batch-size>      import a JSONL file in batches, print "batch <n>" after each commit
 *   crash-after-commit <db> <id>         pin engram <id> in an audited transaction, then die (SIGKILL) before the
 *                                        audit journal is appended: the crash audit.jsonl must recover from
 */
import { readFileSync } from 'node:fs';
import { openStore } from '../src/core/index.js';
import { addEngram, importEngrams } from '../src/services/index.js';
import { audited } from '../src/services/governance/index.js';

const [command, path, ...rest] = process.argv.slice(2);
const store = openStore({ path: path as string, busyTimeoutMs: 30_000 });
try {
  if (command === 'open') {
    process.stdout.write(JSON.stringify(store.migration.applied));
  } else if (command === 'add') {
    const [count, prefix] = rest;
    let created = 0;
    const errors: string[] = [];
    for (let i = 0; i < Number(count); i++) {
      try {
        if (addEngram(store, { text: `${prefix} lesson number ${i}: keep this exact text`, tags: [prefix as string] }).status === 'created') created++;
      } catch (error) {
        errors.push(`${(error as { code?: string }).code ?? ''} ${(error as Error).message}`);
      }
    }
    process.stdout.write(JSON.stringify({ created, errors }));
  } else if (command === 'import') {
    const [file, batchSize] = rest;
    const lines = readFileSync(file as string, 'utf8').split('\n');
    importEngrams(store, lines, {
      batchSize: Number(batchSize),
      onProgress: (done) => process.stdout.write(`batch ${done}\n`),
    });
  } else if (command === 'crash-after-commit') {
    const id = Number(rest[0]);
    const at = new Date().toISOString();
    audited(store, { actor: { by: 'user', via: 'test' }, op: 'pin' }, (changes) => {
      changes.engram(id);
      store.engrams.update(id, { pinned: true, updated_at: at });
    }, at);
    process.kill(process.pid, 'SIGKILL');
  } else {
    throw new Error(`unknown worker command ${command}`);
  }
} finally {
  store.close();
}

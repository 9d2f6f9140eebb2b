import { chmodSync, existsSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createLogger } from '../../src/core/index.js';
import { tempDir } from '../_helpers.js';

const lines = (file: string) => readFileSync(file, 'utf8').trim().split('\n').map((line) => JSON.parse(line));

describe('createLogger', () => {
  it('writes one redacted JSON line per call at or above the level', () => {
    const dir = tempDir();
    const log = createLogger({ dir, name: 'hooks', level: 'info', now: () => new Date('2026-11-01T00:00:00Z') });
    log.debug('hidden');
    log.warn('prompt had sk-ant-api03-abcdefghijklmnopqrstuvwxyz012345', {
      prompt: '<private>diary</private> and AKIAIOSFODNN7EXAMPLE',
      nested: { error: new Error('failed: token=hunter22abc in message') },
    });
    const [entry, ...rest] = lines(log.file);
    expect(rest).toEqual([]);
    expect(entry).toEqual({
      t: '2026-11-01T00:00:00.000Z',
      level: 'warn',
      msg: 'prompt had [REDACTED:anthropic-key]',
      prompt: '[REDACTED] and [REDACTED:aws-access-key]',
      nested: { error: { name: 'Error', message: 'failed: token=[REDACTED:secret-assignment] in message' } },
    });
    expect(statSync(log.file).mode & 0o777).toBe(0o600);
  });

  it('caps long fields and rotates a file past its size limit', () => {
    const dir = tempDir();
    const log = createLogger({ dir, name: 'x', maxBytes: 64 * 1024 });
    writeFileSync(join(dir, 'x.log'), 'y'.repeat(70 * 1024));
    log.info('after rotation', { big: 'z'.repeat(10_000) });
    expect(readFileSync(join(dir, 'x.log.1'), 'utf8')).toHaveLength(70 * 1024);
    const [entry] = lines(log.file);
    expect(entry.big).toMatch(/^z{2000}…\[10000 chars\]$/);
  });

  it('with `within`, writes nothing once that folder is removed, and does not make it again', () => {
    const home = tempDir();
    const log = createLogger({ dir: join(home, 'logs'), name: 'server', within: home });
    log.info('before');
    expect(lines(log.file).map((entry) => entry.msg)).toEqual(['before']);
    rmSync(home, { recursive: true, force: true });
    log.info('after the home was removed');
    expect(existsSync(home)).toBe(false);
  });

  it('never throws, even when the folder cannot be written', () => {
    const dir = tempDir();
    chmodSync(dir, 0o500);
    const log = createLogger({ dir: join(dir, 'logs'), name: 'x' });
    expect(() => log.error('cannot be written')).not.toThrow();
    chmodSync(dir, 0o700);
  });
});

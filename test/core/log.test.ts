import { appendFileSync, chmodSync, existsSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createLogger } from '../../src/core/index.js';
import { SIZE_LOOK_EVERY } from '../../src/core/log.js';
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

  it('rotates once its own lines fill the file, without looking at the size before every line', () => {
    const dir = tempDir();
    const log = createLogger({ dir, name: 'x', maxBytes: 4 * 1024 });
    log.info('first');
    // Another process fills the file: seen at the next look, not at the next line (a stat per line was most of a
    // line's file-system cost in the server).
    appendFileSync(join(dir, 'x.log'), `${'y'.repeat(8 * 1024)}\n`);
    for (let i = 1; i < SIZE_LOOK_EVERY; i++) log.info('small', { i });
    expect(existsSync(join(dir, 'x.log.1'))).toBe(false);
    log.info('looked');
    expect(existsSync(join(dir, 'x.log.1'))).toBe(true);
    expect(lines(log.file).map((entry) => entry.msg)).toEqual(['looked']);
    // Its own lines: as before, a line is written while the file is within the limit and the next one rotates it,
    // however few lines since the last look.
    const big = 'z'.repeat(1_500);
    for (let i = 0; i < 3; i++) log.info('big', { big });
    expect(lines(log.file).map((entry) => entry.msg)).toEqual(['looked', 'big', 'big', 'big']);
    expect(statSync(log.file).size).toBeGreaterThan(4 * 1024);
    log.info('big', { big });
    expect(lines(log.file).map((entry) => entry.msg)).toEqual(['big']);
  });

  it('makes its folder again when it is removed under a running logger (the home still there)', () => {
    const home = tempDir();
    const log = createLogger({ dir: join(home, 'logs'), name: 'server', within: home });
    log.info('before');
    rmSync(join(home, 'logs'), { recursive: true, force: true });
    log.info('after');
    expect(lines(log.file).map((entry) => entry.msg)).toEqual(['after']);
    expect(statSync(join(home, 'logs')).mode & 0o777).toBe(0o700);
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

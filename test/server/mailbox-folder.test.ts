/**
 * Where the mailbox's call files live (server/mailbox-server.ts): on Linux, a private folder on a tmpfs linked from
 * `run/hooks`, so hooks keep the paths they know and the server's claim (a file create) does not go through ext4's
 * journal. The folder mechanics run in process (no call is posted: the hook side is test/server/mailbox.test.ts);
 * the "tmpfs" of most tests is a temporary folder passed as the base, so they run the same on any file system.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, readlinkSync, realpathSync, rmSync, statfsSync, statSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { mailboxOf } from '../../hooks/run.cjs';
import { memoryFolderBase, openMailbox, type Mailbox } from '../../src/server/mailbox-server.js';
import { tempDir } from '../_helpers.js';

const opened: Mailbox[] = [];
afterEach(() => {
  for (const mailbox of opened.splice(0)) mailbox.close();
});

const handlers = { onCall: () => {}, onWithdrawn: () => {}, onError: (error: unknown) => { throw error; } };

/** A mailbox of a fresh home, its call folder made in `base`. */
function open(base: string | null, home = tempDir()) {
  const mailbox = mailboxOf(home);
  const result = openMailbox(mailbox, handlers, base);
  if ('error' in result) throw result.error;
  opened.push(result);
  return { mailbox, home, result };
}

const uid = process.getuid?.() ?? 0;

describe.skipIf(process.platform === 'win32')('the mailbox’s call folder', () => {
  it('is a private folder in the memory base, linked from run/hooks; closing removes both', () => {
    const base = tempDir();
    const { mailbox, result } = open(base);
    expect(lstatSync(mailbox.dir).isSymbolicLink()).toBe(true);
    const target = readlinkSync(mailbox.dir);
    expect(target.startsWith(join(base, `engram-${uid}-`))).toBe(true);
    expect(statSync(target).mode & 0o777).toBe(0o700);
    // What lets a later server find a folder whose link is gone.
    expect(readFileSync(join(target, '.link'), 'utf8')).toBe(mailbox.dir);
    // The hooks' paths reach it: a file made through run/hooks is in the folder.
    writeFileSync(join(mailbox.dir, 'x.rep'), '{}');
    expect(readdirSync(target).sort()).toEqual(['.link', 'x.rep']);
    opened.splice(opened.indexOf(result), 1);
    result.close();
    expect(existsSync(mailbox.dir)).toBe(false);
    expect(existsSync(target)).toBe(false);
  });

  it('is removed when the server closes after its home was removed (the link went with the home)', () => {
    const base = tempDir();
    const { mailbox, home, result } = open(base);
    const target = readlinkSync(mailbox.dir);
    rmSync(home, { recursive: true, force: true });
    opened.splice(opened.indexOf(result), 1);
    result.close();
    expect(existsSync(target)).toBe(false);
  });

  it('is a plain 0700 folder without a memory base', () => {
    const { mailbox } = open(null);
    expect(lstatSync(mailbox.dir).isDirectory()).toBe(true);
    expect(statSync(mailbox.dir).mode & 0o777).toBe(0o700);
  });

  it('falls back to a plain folder when the base cannot be written to', () => {
    const { mailbox } = open(join(tempDir(), 'missing'));
    expect(lstatSync(mailbox.dir).isDirectory()).toBe(true);
  });

  it('is made again when its folder is removed under the running server (someone cleaning /dev/shm)', () => {
    const base = tempDir();
    const { mailbox, result } = open(base);
    const first = readlinkSync(mailbox.dir);
    rmSync(first, { recursive: true, force: true });
    result.sweep();
    const second = readlinkSync(mailbox.dir);
    expect(second).not.toBe(first);
    expect(statSync(second).isDirectory()).toBe(true);
    // The sweep keeps the note: it is not a call.
    const old = (Date.now() - 3_600_000) / 1000;
    utimesSync(join(second, '.link'), old, old);
    result.sweep();
    expect(readdirSync(second)).toEqual(['.link']);
  });

  it('of a dead server (link left behind) is removed at start, and orphans whose link is gone once a minute old', () => {
    const base = tempDir();
    const home = tempDir();
    const mailbox = mailboxOf(home);
    // A dead server's: the link still there.
    const dead = join(base, `engram-${uid}-dead01`);
    mkdirSync(dead);
    writeFileSync(join(dead, '.link'), mailbox.dir);
    mkdirSync(join(home, 'run'));
    symlinkSync(dead, mailbox.dir);
    // A killed server's whose home was removed (a test's): nothing links to it.
    const orphan = join(base, `engram-${uid}-orph01`);
    mkdirSync(orphan);
    writeFileSync(join(orphan, '.link'), join(tempDir(), 'gone', 'run', 'hooks'));
    // The same, but just made: a server starting now has its folder before its link.
    const young = join(base, `engram-${uid}-young1`);
    mkdirSync(young);
    writeFileSync(join(young, '.link'), join(tempDir(), 'gone', 'run', 'hooks'));
    // Another live server's: its link names it.
    const other = open(base);
    const live = readlinkSync(other.mailbox.dir);
    // Not ours: another name.
    const foreign = join(base, 'something-else');
    mkdirSync(foreign);
    const old = (Date.now() - 120_000) / 1000;
    for (const folder of [orphan, live, foreign]) utimesSync(folder, old, old);

    open(base, home);
    expect(existsSync(dead)).toBe(false);
    expect(existsSync(orphan)).toBe(false);
    expect(existsSync(young)).toBe(true);
    expect(existsSync(live)).toBe(true);
    expect(existsSync(foreign)).toBe(true);
    expect(readlinkSync(mailbox.dir)).not.toBe(dead);
  });

  it('is on a tmpfs where Linux has one ($XDG_RUNTIME_DIR, else /dev/shm); a base that is not a tmpfs is not taken', () => {
    const base = memoryFolderBase({ XDG_RUNTIME_DIR: tempDir() });
    if (process.platform !== 'linux') {
      expect(base).toBeNull();
      return;
    }
    // This machine's /dev/shm is a tmpfs or there is none (then: a plain folder).
    const shm = (() => {
      try {
        return statfsSync('/dev/shm').type === 0x01021994;
      } catch {
        return false;
      }
    })();
    expect(base).toBe(shm ? '/dev/shm' : null);
    expect(memoryFolderBase({ XDG_RUNTIME_DIR: 'relative/dir' })).toBe(shm ? '/dev/shm' : null);
    if (!shm) return;
    // With the default base the folder is really on the tmpfs.
    const home = tempDir();
    const mailbox = mailboxOf(home);
    const result = openMailbox(mailbox, handlers);
    if ('error' in result) throw result.error;
    opened.push(result);
    const target = realpathSync(mailbox.dir);
    expect(basename(target)).toMatch(new RegExp(`^engram-${uid}-`));
    expect(statfsSync(target).type).toBe(0x01021994);
    // The pipe stays in the home (hooks of every version look for it there).
    expect(execFileSync('stat', ['-c', '%F', mailbox.fifo], { encoding: 'utf8' }).trim()).toBe('fifo');
  });
});

import { dirname, isAbsolute, join, resolve } from 'node:path';
import type { InputLog } from './inputs.js';

/** `.git` files, `commondir` and `.git/config` are small; anything bigger is not a git file we understand. */
const MAX_GIT_FILE_BYTES = 256 * 1024;
/** A repository with more remotes than this is unusual; the rest add nothing to tag detection. */
const MAX_REMOTES = 32;

/**
 * The git config file that holds a working tree's remotes, found without spawning git. A `.git` folder holds it
 * directly; a `.git` file (linked worktree, submodule) names a gitdir, and a linked worktree's gitdir names the
 * shared `.git` in `commondir`, whose config is the one with the remotes.
 */
export function gitConfigPath(root: string, log: InputLog): string | undefined {
  const dotGit = join(root, '.git');
  const stats = log.stat(dotGit);
  if (!stats) return undefined;
  if (stats.isDirectory()) return join(dotGit, 'config');
  const pointer = log.readText(dotGit, MAX_GIT_FILE_BYTES);
  const gitDirLine = pointer && /^gitdir:\s*(.+?)\s*$/m.exec(pointer.text)?.[1];
  if (!gitDirLine) {
    log.errors.push(`${dotGit} is a file without a gitdir line`);
    return undefined;
  }
  const gitDir = isAbsolute(gitDirLine) ? gitDirLine : resolve(dirname(dotGit), gitDirLine);
  const common = log.readText(join(gitDir, 'commondir'), MAX_GIT_FILE_BYTES)?.text.trim();
  const commonDir = common ? (isAbsolute(common) ? common : resolve(gitDir, common)) : gitDir;
  return join(commonDir, 'config');
}

/** Removes a value's quotes and trailing comment, as git does for `key = value` lines. */
function configValue(raw: string): string {
  let value = '';
  let quoted = false;
  for (let i = 0; i < raw.length; i++) {
    const char = raw[i] as string;
    if (char === '"') quoted = !quoted;
    else if (char === '\\' && i + 1 < raw.length) value += raw[++i];
    else if (!quoted && (char === '#' || char === ';')) break;
    else value += char;
  }
  return value.trim();
}

/** The `url` of every `[remote "<name>"]` section (and the old `[remote.<name>]` form), in file order. */
export function parseRemoteUrls(configText: string): string[] {
  const urls: string[] = [];
  let inRemote = false;
  for (const line of configText.split(/\r?\n/)) {
    const trimmed = line.trim();
    if (trimmed === '' || trimmed.startsWith('#') || trimmed.startsWith(';')) continue;
    const section = /^\[\s*([^\s\]"]+)\s*(?:"[^"]*")?\s*\]/.exec(trimmed);
    if (section) {
      const name = (section[1] as string).toLowerCase();
      inRemote = name === 'remote' ? trimmed.includes('"') : name.startsWith('remote.');
      continue;
    }
    if (!inRemote) continue;
    const entry = /^url\s*=\s*(.*)$/i.exec(trimmed);
    if (entry) {
      const url = configValue(entry[1] as string);
      if (url !== '' && !urls.includes(url)) urls.push(url);
    }
  }
  return urls.slice(0, MAX_REMOTES);
}

/**
 * Removes credentials from a remote URL (`https://user:token@host/x` → `https://host/x`). The scp-like form
 * `git@host:owner/repo` carries no secret and stays as it is.
 */
export function stripCredentials(url: string): string {
  return url.replace(/^([a-z][a-z0-9+.-]*:\/\/)[^@/?#]*@/i, '$1');
}

/** The remote URLs of the working tree at `root`, credentials removed. */
export function readRemotes(root: string, log: InputLog): string[] {
  const configPath = gitConfigPath(root, log);
  if (!configPath) return [];
  const config = log.readText(configPath, MAX_GIT_FILE_BYTES);
  if (!config) return [];
  return [...new Set(parseRemoteUrls(config.text).map(stripCredentials))];
}

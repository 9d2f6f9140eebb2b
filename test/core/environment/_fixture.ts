import { mkdirSync, mkdtempSync, readdirSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach } from 'vitest';
import {
  clearEnvironmentMemory,
  configSchema,
  detectEnvironment,
  readEnv,
  type DetectedEnvironment,
  type EngramEnv,
  type EnvironmentOptions,
  type TagRules,
} from '../../../src/core/index.js';

const cleanups: Array<() => void> = [];
afterEach(() => {
  while (cleanups.length) cleanups.pop()?.();
  clearEnvironmentMemory();
});

/** Writes a file, creating its folders. */
export function write(path: string, content: string): string {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, content);
  return path;
}

/** A `.git` folder with a config holding the given remotes (name → url). */
export function gitRepo(root: string, remotes: Record<string, string> = {}): void {
  const sections = Object.entries(remotes).map(([name, url]) => `[remote "${name}"]\n\turl = ${url}\n\tfetch = +refs/heads/*:refs/remotes/${name}/*\n`);
  write(join(root, '.git', 'HEAD'), 'ref: refs/heads/main\n');
  write(join(root, '.git', 'config'), `[core]\n\trepositoryformatversion = 0\n${sections.join('')}`);
}

/**
 * Moves every mtime under `root` an hour back. Detection does not cache results that read an input changed in the
 * last two seconds (mtimes can be coarse), so tests that expect a cache hit settle their files first.
 */
export function settle(root: string): void {
  const past = new Date(Date.now() - 3_600_000);
  for (const entry of readdirSync(root, { withFileTypes: true, recursive: true })) {
    utimesSync(join(entry.parentPath, entry.name), past, past);
  }
  utimesSync(root, past, past);
}

/** Parses a `tags` config section the way config.json is parsed. */
export const rules = (section: unknown = {}): TagRules => configSchema().parse({ tags: section }).tags;

/** A temporary world: a user home, an Engram cache folder and a project folder. */
export interface World {
  root: string;
  /** The user's home (`~`), holding `.claude.json` and `.codex/`. */
  home: string;
  project: string;
  cacheDir: string;
  env: EngramEnv;
  /** detectEnvironment with this world's defaults. */
  detect(options?: Partial<EnvironmentOptions>): DetectedEnvironment;
}

export function world(vars: Record<string, string> = {}): World {
  const root = mkdtempSync(join(tmpdir(), 'engram-env-'));
  cleanups.push(() => rmSync(root, { recursive: true, force: true }));
  const home = join(root, 'home');
  const project = join(root, 'work', 'shop');
  mkdirSync(home, { recursive: true });
  mkdirSync(project, { recursive: true });
  const env = readEnv({ HOME: home, ENGRAM_HOME: join(root, 'engram'), ...vars }, { cwd: root });
  const cacheDir = join(root, 'engram', 'cache', 'env');
  return {
    root,
    home,
    project,
    cacheDir,
    env,
    detect: (options = {}) => detectEnvironment({ cwd: project, agent: 'unknown', env, rules: rules(), cacheDir, ...options }),
  };
}

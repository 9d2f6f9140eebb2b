import type { Dirent } from 'node:fs';
import { join, relative } from 'node:path';
import type { Config } from '../config.js';
import type { InputLog } from './inputs.js';

/** The `tags` section of config.json. */
export type TagRules = Config['tags'];

/** Tag → why it was detected (`file marker tsconfig.json`, `dependency react`, …). */
export type TagReasons = Map<string, string[]>;

/** package.json is read whole up to this size; past it only its start is scanned for dependency sections. */
const MAX_PACKAGE_JSON_BYTES = 1024 * 1024;
/** Folder listings stop here: markers are looked up at the top of a folder, never in a tree walk. */
const MAX_LIST_ENTRIES = 2000;

/**
 * Built-in remote rules (source B). Case-insensitive: hosts are. Owner rules (`github\.com[:/]acme/` → acme) are
 * the user's, in `tags.remote_patterns`.
 */
export const BUILTIN_REMOTE_PATTERNS: ReadonlyArray<{ pattern: string; tags: string[] }> = [
  { pattern: 'github\\.com', tags: ['github'] },
  { pattern: 'gitlab', tags: ['gitlab'] },
  { pattern: 'bitbucket', tags: ['bitbucket'] },
  { pattern: 'dev\\.azure\\.com|visualstudio\\.com', tags: ['azure-devops'] },
];

/**
 * Built-in file markers (source C), looked for at the repository root and the cwd. `*` matches within one name;
 * two-segment markers (`.github/workflows`) are a file or folder one level down.
 */
export const BUILTIN_FILE_MARKERS: Readonly<Record<string, string[]>> = {
  'package.json': ['nodejs'],
  'tsconfig.json': ['typescript'],
  'deno.json': ['deno'],
  'deno.jsonc': ['deno'],
  'bun.lock': ['bun'],
  'bun.lockb': ['bun'],
  'pnpm-workspace.yaml': ['pnpm', 'monorepo'],
  'lerna.json': ['monorepo'],
  'nx.json': ['nx', 'monorepo'],
  'turbo.json': ['turborepo', 'monorepo'],
  'jest.config.*': ['jest'],
  'vitest.config.*': ['vitest'],
  'playwright.config.*': ['playwright'],
  'cypress.config.*': ['cypress'],
  'vite.config.*': ['vite'],
  'next.config.*': ['nextjs'],
  'tailwind.config.*': ['tailwind'],
  'eslint.config.*': ['eslint'],
  '.eslintrc*': ['eslint'],
  Gemfile: ['ruby'],
  'config/routes.rb': ['rails'],
  'pyproject.toml': ['python'],
  'requirements.txt': ['python'],
  'setup.py': ['python'],
  Pipfile: ['python'],
  'manage.py': ['django', 'python'],
  'go.mod': ['go'],
  'Cargo.toml': ['rust'],
  'pom.xml': ['java', 'maven'],
  'build.gradle': ['java', 'gradle'],
  'build.gradle.kts': ['kotlin', 'gradle'],
  'composer.json': ['php'],
  'mix.exs': ['elixir'],
  'Package.swift': ['swift'],
  'pubspec.yaml': ['dart'],
  '*.csproj': ['dotnet'],
  '*.sln': ['dotnet'],
  'CMakeLists.txt': ['cmake'],
  '*.tf': ['terraform'],
  'Chart.yaml': ['helm', 'kubernetes'],
  'flake.nix': ['nix'],
  Dockerfile: ['docker'],
  'docker-compose.yml': ['docker'],
  'docker-compose.yaml': ['docker'],
  'compose.yml': ['docker'],
  'compose.yaml': ['docker'],
  '.github/workflows': ['github-actions'],
  '.gitlab-ci.yml': ['gitlab-ci'],
  '.circleci/config.yml': ['circleci'],
};

/** Built-in dependency tags (source D): a package in dependencies, devDependencies or peerDependencies → tags. */
export const BUILTIN_DEPENDENCY_TAGS: Readonly<Record<string, string[]>> = {
  react: ['react', 'frontend'],
  'react-dom': ['react', 'frontend'],
  next: ['nextjs', 'react', 'frontend'],
  'react-native': ['react-native', 'mobile'],
  expo: ['expo', 'react-native', 'mobile'],
  vue: ['vue', 'frontend'],
  nuxt: ['nuxt', 'vue', 'frontend'],
  svelte: ['svelte', 'frontend'],
  '@sveltejs/kit': ['sveltekit', 'svelte', 'frontend'],
  '@angular/core': ['angular', 'frontend'],
  'solid-js': ['solid', 'frontend'],
  electron: ['electron', 'desktop'],
  express: ['express', 'backend'],
  fastify: ['fastify', 'backend'],
  koa: ['koa', 'backend'],
  hono: ['hono', 'backend'],
  '@nestjs/core': ['nestjs', 'backend'],
  tailwindcss: ['tailwind'],
  typescript: ['typescript'],
  vitest: ['vitest'],
  jest: ['jest'],
  mocha: ['mocha'],
  '@playwright/test': ['playwright'],
  cypress: ['cypress'],
  '@testing-library/*': ['testing-library'],
  '@storybook/*': ['storybook'],
  prisma: ['prisma'],
  '@prisma/client': ['prisma'],
  'drizzle-orm': ['drizzle'],
  graphql: ['graphql'],
  redux: ['redux'],
  '@reduxjs/toolkit': ['redux'],
  vite: ['vite'],
  webpack: ['webpack'],
  mongoose: ['mongodb'],
  pg: ['postgres'],
  'better-sqlite3': ['sqlite'],
};

/** Built-in directory patterns (source E): a folder at the repository root → tags. */
export const BUILTIN_DIR_PATTERNS: Readonly<Record<string, string[]>> = {
  'packages/': ['monorepo'],
  'apps/': ['monorepo'],
  'engines/': ['monorepo', 'rails-engines'],
  'components/': ['frontend'],
  'src/components/': ['frontend'],
  '.storybook/': ['storybook'],
  'terraform/': ['terraform'],
  'k8s/': ['kubernetes'],
  'ios/': ['mobile'],
  'android/': ['mobile'],
};

/** What the detectors look at. */
export interface TagInputs {
  cwd: string;
  repoRoot: string | null;
  remotes: readonly string[];
  rules: TagRules;
  platform: NodeJS.Platform;
  log: InputLog;
}

/** Collects tags with their reasons, reasons in the order found and without repeats. */
class Findings {
  readonly reasons: TagReasons = new Map();

  add(tags: readonly string[], reason: string): void {
    for (const tag of tags) {
      const list = this.reasons.get(tag);
      if (!list) this.reasons.set(tag, [reason]);
      else if (!list.includes(reason)) list.push(reason);
    }
  }
}

const escapeRegExp = (text: string): string => text.replace(/[.+?^${}()|[\]\\]/g, '\\$&');

/** `*` matches any run of characters (a file name or a package name); everything else is literal. */
const globRegExp = (glob: string): RegExp => new RegExp(`^${glob.split('*').map(escapeRegExp).join('.*')}$`);

/** Built-in entries first, then the user's: user rules add to the defaults (or stand alone with `builtin: false`). */
function merged<T>(builtin: Readonly<Record<string, T[]>>, user: Record<string, T[]>, useBuiltin: boolean): Array<[string, T[]]> {
  return [...(useBuiltin ? Object.entries(builtin) : []), ...Object.entries(user)];
}

/** Compiles a rule's pattern; a bad one (config.json is validated, so only from a caller) is an error, not a throw. */
function compile(pattern: string, flags: string, log: InputLog): RegExp | undefined {
  try {
    return new RegExp(pattern, flags);
  } catch (error) {
    log.errors.push(`tag pattern ${pattern} is not a valid regular expression: ${(error as Error).message}`);
    return undefined;
  }
}

/** A. Regexes on the cwd, with `/` separators on every OS so one pattern serves all. */
function pathTags({ cwd, rules, platform, log }: TagInputs, findings: Findings): void {
  const path = platform === 'win32' ? cwd.replace(/\\/g, '/') : cwd;
  for (const rule of rules.path_patterns) {
    if (compile(rule.pattern, '', log)?.test(path)) findings.add(rule.tags, `path pattern ${rule.pattern}`);
  }
}

/** B. Regexes on remote URLs: built-in hosts (case-insensitive), then the user's patterns as written. */
function remoteTags({ remotes, rules, log }: TagInputs, findings: Findings): void {
  const patterns = [
    ...(rules.builtin ? BUILTIN_REMOTE_PATTERNS.map((rule) => ({ ...rule, flags: 'i' })) : []),
    ...rules.remote_patterns.map((rule) => ({ ...rule, flags: '' })),
  ];
  for (const rule of patterns) {
    const regExp = compile(rule.pattern, rule.flags, log);
    if (regExp && remotes.some((url) => regExp.test(url))) findings.add(rule.tags, `remote pattern ${rule.pattern}`);
  }
}

/** One folder's top-level entries, listed once and shared by the marker and directory detectors. */
interface Listing {
  folder: string;
  entries: Dirent[];
}

/** True when a listed entry is a folder or a symbolic link to one. */
function isFolder(listing: Listing, entry: Dirent, log: InputLog): boolean {
  if (entry.isDirectory()) return true;
  return entry.isSymbolicLink() && Boolean(log.stat(join(listing.folder, entry.name))?.isDirectory());
}

/**
 * The entry a one- or two-segment path names in a listed folder (for a `*` pattern, the first entry it matches), or
 * undefined. A second segment costs one stat.
 */
function find(listing: Listing, path: string, wantFolder: boolean, log: InputLog): string | undefined {
  const [first, second] = path.replace(/\/$/, '').split('/') as [string, string | undefined];
  if (second === undefined) {
    const glob = first.includes('*') ? globRegExp(first) : undefined;
    const matches = (name: string): boolean => (glob ? glob.test(name) : name === first);
    return listing.entries.find((entry) => matches(entry.name) && (!wantFolder || isFolder(listing, entry, log)))?.name;
  }
  const parent = listing.entries.find((entry) => entry.name === first);
  if (!parent || !isFolder(listing, parent, log)) return undefined;
  const stats = log.stat(join(listing.folder, first, second));
  return stats && (!wantFolder || stats.isDirectory()) ? `${first}/${second}` : undefined;
}

/** C. Files (or folders) that mark a language, tool or platform, at the repository root and the cwd. */
function markerTags(listings: readonly Listing[], inputs: TagInputs, findings: Findings): void {
  const root = listings[0]?.folder ?? inputs.cwd;
  for (const [marker, tags] of merged(BUILTIN_FILE_MARKERS, inputs.rules.file_markers, inputs.rules.builtin)) {
    for (const listing of listings) {
      const name = find(listing, marker, false, inputs.log);
      if (name === undefined) continue;
      const where = relative(root, listing.folder).replace(/\\/g, '/');
      findings.add(tags, `file marker ${where ? `${where}/` : ''}${name}`);
    }
  }
}

/** Dependency names from a package.json's dependencies, devDependencies and peerDependencies. */
function dependencyNames(folder: string, log: InputLog): string[] {
  const path = join(folder, 'package.json');
  const file = log.readText(path, MAX_PACKAGE_JSON_BYTES);
  if (!file) return [];
  const sections: unknown[] = [];
  if (!file.truncated) {
    try {
      const raw = JSON.parse(file.text) as Record<string, unknown> | null;
      if (raw && typeof raw === 'object') sections.push(raw.dependencies, raw.devDependencies, raw.peerDependencies);
    } catch (error) {
      log.errors.push(`${path} is not valid JSON: ${(error as Error).message}`);
    }
  } else {
    // Too big to parse whole: dependency sections are flat objects, so find them in the part that was read.
    log.errors.push(`${path} is ${file.size} bytes; only its first ${MAX_PACKAGE_JSON_BYTES} were scanned for dependencies`);
    for (const match of file.text.matchAll(/"(?:dependencies|devDependencies|peerDependencies)"\s*:\s*(\{[^{}]*\})/g)) {
      try {
        sections.push(JSON.parse(match[1] as string));
      } catch {
        // A section cut off by the cap or malformed: skip it.
      }
    }
  }
  const isMap = (section: unknown): section is object => typeof section === 'object' && section !== null && !Array.isArray(section);
  return sections.flatMap((section) => (isMap(section) ? Object.keys(section) : []));
}

/** D. Packages the project depends on, from package.json at the repository root and the cwd. */
function dependencyTags(folders: readonly string[], inputs: TagInputs, findings: Findings): void {
  const names = new Set(folders.flatMap((folder) => dependencyNames(folder, inputs.log)));
  if (names.size === 0) return;
  for (const [key, tags] of merged(BUILTIN_DEPENDENCY_TAGS, inputs.rules.dependency_tags, inputs.rules.builtin)) {
    if (!key.includes('*')) {
      if (names.has(key)) findings.add(tags, `dependency ${key}`);
      continue;
    }
    const regExp = globRegExp(key);
    const match = [...names].find((name) => regExp.test(name));
    if (match) findings.add(tags, `dependency ${match}`);
  }
}

/** E. Top-level folders of the repository root that say how the project is organised. */
function directoryTags(rootListing: Listing | undefined, inputs: TagInputs, findings: Findings): void {
  if (!rootListing) return;
  for (const [pattern, tags] of merged(BUILTIN_DIR_PATTERNS, inputs.rules.dir_patterns, inputs.rules.builtin)) {
    const name = find(rootListing, pattern, true, inputs.log);
    if (name !== undefined) findings.add(tags, `directory ${name}/`);
  }
}

/**
 * Runs the five detectors. Bounded by design: two folder listings (repository root and cwd), one stat per
 * two-segment rule whose first segment exists, and two package.json reads.
 */
export function detectTags(inputs: TagInputs): TagReasons {
  const findings = new Findings();
  const folders = inputs.repoRoot && inputs.repoRoot !== inputs.cwd ? [inputs.repoRoot, inputs.cwd] : [inputs.cwd];
  const listings = folders.flatMap((folder) => {
    const entries = inputs.log.list(folder, MAX_LIST_ENTRIES);
    return entries ? [{ folder, entries }] : [];
  });
  pathTags(inputs, findings);
  remoteTags(inputs, findings);
  markerTags(listings, inputs, findings);
  dependencyTags(folders, inputs, findings);
  directoryTags(listings.find((listing) => listing.folder === folders[0]), inputs, findings);
  return findings.reasons;
}

import { existsSync, readFileSync, statSync } from 'node:fs';
import { posix, resolve } from 'node:path';
import type { KnowledgeConfig } from './config.js';
import { gitOutput } from './_git.js';
import { findField, type Entry, type ParsedDoc } from './parse.js';

/**
 * A concept's `Code:` pointers checked against the repository (seed 002: concept liveness is "derived from repo
 * state (partially automatable)"): a path must exist (a bare file name anywhere in the tree), a symbol must occur as
 * a word somewhere outside the knowledge docs. A pointer that no longer does makes the concept an orphan, flagged
 * for the next triage chunk. Two git processes per check, whatever the number of concepts.
 */

/** One pointer of a `Code:` field. */
export interface CodePointer {
  /** As written, e.g. `SignalDetector.check_level_hits()`. */
  text: string;
  /** A file path (possibly with a line), or a symbol. */
  kind: 'file' | 'symbol';
  /** The path for a file pointer. */
  path: string | null;
  /** The identifier looked up for a symbol (`check_level_hits`). */
  symbol: string | null;
  /** Lines named by the pointer (`file.ts:10-20`), or null. */
  lines: { start: number; end: number } | null;
}

/** Where a pointer was found. */
export interface PointerLocation {
  file: string;
  line: number;
}

/** A pointer and what the repository says about it. */
export interface CheckedPointer extends CodePointer {
  found: boolean;
  locations: PointerLocation[];
}

/** One concept's liveness. */
export interface ConceptLiveness {
  id: string;
  name: string;
  pointers: CheckedPointer[];
  /** True when a pointer is missing: the concept is flagged for triage. */
  orphan: boolean;
}

/** Extensions that make a bare `name.ext` a file rather than `Object.member`. */
const FILE_EXTENSIONS =
  'py|pyi|ts|tsx|mts|cts|js|jsx|mjs|cjs|go|rs|rb|java|kt|kts|scala|swift|c|h|cc|cpp|cxx|hpp|hh|cs|fs|php|lua|pl|r|jl|ex|exs|erl|hs|ml|clj|dart|zig|nim|' +
  'md|mdx|rst|txt|json|jsonl|ya?ml|toml|ini|cfg|conf|env|sql|sh|bash|zsh|ps1|bat|css|scss|sass|less|html?|vue|svelte|astro|proto|graphql|gql|tf|nix|' +
  'lock|xml|csv|ipynb|dockerfile|gradle|cmake|mk';
const FILE_LIKE = new RegExp(`(^|[\\\\/])[^\\s/]*\\.(${FILE_EXTENSIONS})(:\\d+(-\\d+)?)?$|/`, 'i');

/** Reads the pointers of a `Code:` field: backticked spans, else comma-separated words. */
export function parsePointers(value: string): CodePointer[] {
  const spans = [...value.matchAll(/`([^`]+)`/g)].map((match) => match[1]!.trim());
  const tokens = spans.length > 0 ? spans : value.split(/[,;]/).map((token) => token.trim().replace(/^\*+|\*+$/g, ''));
  const pointers: CodePointer[] = [];
  for (const token of tokens) {
    if (token === '' || /^(none|n\/a|-)$/i.test(token)) continue;
    // `path/file.py::Class.method` names both.
    const [pathPart, symbolPart] = token.includes('::') && FILE_LIKE.test(token.split('::')[0]!) ? token.split('::') : [token, undefined];
    const looksLikeFile = FILE_LIKE.test(pathPart!) && !/\)\s*$/.test(pathPart!);
    if (looksLikeFile) {
      const lines = /:(\d+)(?:-(\d+))?$/.exec(pathPart!);
      const path = pathPart!.replace(/:(\d+)(?:-(\d+))?$/, '').replace(/^\.\//, '');
      pointers.push({ text: token, kind: 'file', path, symbol: null, lines: lines ? { start: Number(lines[1]), end: Number(lines[2] ?? lines[1]) } : null });
      if (symbolPart) pointers.push({ text: token, kind: 'symbol', path, symbol: lastIdentifier(symbolPart), lines: null });
    } else {
      const symbol = lastIdentifier(token);
      if (symbol) pointers.push({ text: token, kind: 'symbol', path: null, symbol, lines: null });
    }
  }
  return pointers;
}

/** `SignalDetector.check_level_hits()` → `check_level_hits`. */
function lastIdentifier(text: string): string | null {
  const parts = text.replace(/\(.*\)\s*$/, '').split(/\.|::|#|->/).map((part) => part.trim()).filter(Boolean);
  const last = parts.at(-1);
  return last && /^[A-Za-z_$][\w$]*$/.test(last) ? last : null;
}

/** The ACTIVE concepts of a registry with their pointers. */
export function conceptPointers(doc: ParsedDoc): Array<{ entry: Entry; pointers: CodePointer[] }> {
  return doc.entries
    .filter((entry) => entry.correction === null && entry.statusKey === 'ACTIVE')
    .map((entry) => {
      const field = findField(entry, 'Code');
      const value = field ? [field.value, ...field.continuation].join(' ') : '';
      return { entry, pointers: parsePointers(value) };
    });
}

/** Files of the repository (tracked and untracked, not ignored), or null outside git. */
function repositoryFiles(root: string): string[] | null {
  const out = gitOutput(root, ['ls-files', '--cached', '--others', '--exclude-standard', '-z']);
  return out === null ? null : out.split('\0').filter(Boolean);
}

/**
 * Checks every pointer of the registry's ACTIVE concepts. Symbols are searched in one `git grep` over the tree
 * (word match, fixed strings), leaving out the knowledge docs and the briefing, which mention every symbol.
 */
export function checkPointers(root: string, config: KnowledgeConfig, registry: ParsedDoc): ConceptLiveness[] {
  const concepts = conceptPointers(registry);
  const files = repositoryFiles(root);
  const byBase = new Map<string, string[]>();
  for (const file of files ?? []) {
    const base = posix.basename(file);
    byBase.set(base, [...(byBase.get(base) ?? []), file]);
  }
  const symbols = [...new Set(concepts.flatMap((concept) => concept.pointers.map((pointer) => pointer.symbol).filter((symbol): symbol is string => symbol !== null)))];
  const occurrences = new Map<string, PointerLocation[]>();
  if (symbols.length > 0 && files !== null) {
    const excluded = [...Object.values(config.living_docs), ...Object.values(config.graveyard), config.briefing.file].map((path) => `:(exclude)${path}`);
    const args = ['grep', '-n', '-w', '-F', '-I', '--untracked', '--no-color', ...symbols.flatMap((symbol) => ['-e', symbol]), '--', '.', ...excluded];
    const out = gitOutput(root, args) ?? '';
    for (const line of out.split('\n')) {
      const match = /^(.*?):(\d+):(.*)$/.exec(line);
      if (!match) continue;
      for (const symbol of symbols) {
        if (!new RegExp(`(^|[^\\w$])${symbol.replace(/[$]/g, '\\$')}($|[^\\w$])`).test(match[3]!)) continue;
        const list = occurrences.get(symbol) ?? [];
        if (list.length < 20) list.push({ file: match[1]!, line: Number(match[2]) });
        occurrences.set(symbol, list);
      }
    }
  }
  return concepts.map(({ entry, pointers }) => {
    const checked = pointers.map((pointer): CheckedPointer => {
      if (pointer.kind === 'file') {
        const path = pointer.path!;
        const exact = existsSync(resolve(root, path)) && statSync(resolve(root, path)).isFile();
        const located = exact ? [path] : path.includes('/') ? [] : (byBase.get(path) ?? []);
        return { ...pointer, found: located.length > 0, locations: located.slice(0, 10).map((file) => ({ file, line: pointer.lines?.start ?? 1 })) };
      }
      let locations = occurrences.get(pointer.symbol!) ?? [];
      // A symbol named together with a file is looked for in that file first.
      const siblingFiles = pointers.filter((other) => other.kind === 'file').map((other) => other.path!);
      const preferred = locations.filter((location) => siblingFiles.some((file) => location.file === file || location.file.endsWith(`/${file}`)));
      if (preferred.length > 0) locations = [...preferred, ...locations.filter((location) => !preferred.includes(location))];
      return { ...pointer, found: locations.length > 0, locations: locations.slice(0, 10) };
    });
    return { id: entry.id, name: entry.name, pointers: checked, orphan: checked.length === 0 || checked.some((pointer) => !pointer.found) };
  });
}

/** The number of lines of a file, or 0 when it cannot be read. */
export function lineCount(path: string): number {
  try {
    const text = readFileSync(path, 'utf8');
    return text === '' ? 0 : text.split('\n').length - (text.endsWith('\n') ? 1 : 0);
  } catch {
    return 0;
  }
}

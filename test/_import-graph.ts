/**
 * The static import graph of TypeScript sources: for each file, the files it imports or re-exports through relative
 * specifiers (`import … from`, `import type … from`, `export … from`, `export * from`, side-effect `import '…'`,
 * dynamic `import('…')`, `require('…')`), found by the TypeScript compiler's own pre-processor (so comments, strings
 * and multi-line statements are read correctly), followed transitively. Package and `node:` imports are outside the
 * graph. Used by the structural tests that prove a module cannot reach another (the human gate).
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import ts from 'typescript';

/** Where a relative specifier points: `./x.js` → `./x.ts`, `./dir` → `./dir/index.ts`; null when nothing is there. */
export function resolveSpecifier(from: string, specifier: string): string | null {
  if (!specifier.startsWith('.')) return null;
  const base = resolve(dirname(from), specifier);
  const candidates = [
    base.replace(/\.(m|c)?js$/, '.$1ts').replace(/\.ts$/, '.ts'),
    base,
    `${base}.ts`,
    `${base}.tsx`,
    join(base, 'index.ts'),
  ];
  for (const candidate of candidates) {
    if (existsSync(candidate) && statSync(candidate).isFile()) return candidate;
  }
  return null;
}

/** The files one file imports or re-exports (resolved), and the relative specifiers that did not resolve. */
export function importsOf(file: string): { files: string[]; unresolved: string[] } {
  const info = ts.preProcessFile(readFileSync(file, 'utf8'), true, true);
  const files: string[] = [];
  const unresolved: string[] = [];
  for (const { fileName } of info.importedFiles) {
    if (!fileName.startsWith('.')) continue;
    const target = resolveSpecifier(file, fileName);
    if (target) files.push(target);
    else unresolved.push(fileName);
  }
  return { files: [...new Set(files)], unresolved };
}

/**
 * Every file reachable from the entries, each with the path that first reached it (for error messages). Files under
 * a folder in `walls` are not entered (a walk that asks "is X reachable other than through W?").
 */
export function reachable(entries: readonly string[], walls: readonly string[] = []): Map<string, string[]> {
  const blocked = walls.map((wall) => resolve(wall));
  const walled = (file: string): boolean => blocked.some((wall) => file === wall || file.startsWith(`${wall}/`));
  const paths = new Map<string, string[]>();
  const queue: string[] = [];
  for (const entry of entries) {
    const file = resolve(entry);
    if (!paths.has(file)) {
      paths.set(file, [file]);
      queue.push(file);
    }
  }
  while (queue.length > 0) {
    const file = queue.shift() as string;
    for (const next of importsOf(file).files) {
      if (paths.has(next) || walled(next)) continue;
      paths.set(next, [...(paths.get(file) as string[]), next]);
      queue.push(next);
    }
  }
  return paths;
}

/** The first path from `entries` into any file under `forbidden` (a file or a folder), or null. */
export function pathInto(entries: readonly string[], forbidden: string, walls: readonly string[] = []): string[] | null {
  const target = resolve(forbidden);
  for (const [file, path] of reachable(entries, walls)) {
    if (file === target || file.startsWith(`${target}/`)) return path;
  }
  return null;
}

/** Every .ts file under a folder (recursively). */
export function sourceFiles(folder: string): string[] {
  if (!existsSync(folder)) return [];
  const out: string[] = [];
  for (const name of readdirSync(folder)) {
    const path = join(folder, name);
    if (statSync(path).isDirectory()) out.push(...sourceFiles(path));
    else if (/\.tsx?$/.test(name) && !name.endsWith('.d.ts')) out.push(path);
  }
  return out.sort();
}

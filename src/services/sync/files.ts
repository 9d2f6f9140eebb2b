/**
 * The files `engram sync` shares through git, in the Go engram's layout: `.engram/chunks/<id>.jsonl.gz` (one gzipped
 * JSON object `{sessions, observations, prompts}`; the id is the first 8 hex of the SHA-256 of that JSON) and
 * `.engram/manifest.json` listing them. Written so two people syncing at once produce files git merges without a
 * conflict: chunks are new files named by their content, and the manifest is one entry per line, each new one added
 * as its own last line (`,{…}`), with `manifest.json merge=union` in `.engram/.gitattributes`; an empty chunk every
 * clone writes identically is its first entry, so even two first syncs merge. Read leniently: entries deduped, a
 * mangled manifest read entry by entry, and chunk files the manifest misses found on disk.
 * @module
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync, gzipSync } from 'node:zlib';
import { EngramError } from '../../core/index.js';

/** One manifest entry (the Go engram's `ChunkEntry`). */
export interface ChunkEntry {
  id: string;
  created_by: string;
  created_at: string;
  sessions: number;
  memories: number;
  prompts: number;
}

/** A chunk's JSON (the Go engram's `ChunkData`). */
export interface ChunkBody {
  sessions: unknown[];
  observations: unknown[];
  prompts: unknown[];
}

const CHUNK_ID = /^[0-9a-f]{8}$/;
/** A chunk larger than this once decompressed is refused (a bomb, not memory). */
export const CHUNK_MAX_BYTES = 64 * 1024 * 1024;
const HEADER = '{"version":1,"chunks":[';
const FOOTER = ']}';
/** The empty chunk every clone writes byte for byte the same, as the manifest's first entry. */
const EMPTY: ChunkBody = { sessions: [], observations: [], prompts: [] };
const GITATTRIBUTES = '# Written by engram sync: both sides of a merge keep their manifest entries (one per line).\nmanifest.json merge=union\n';

/** The paths of a repository's sync files. */
export const syncPaths = (engramDir: string) => ({
  dir: engramDir,
  chunks: join(engramDir, 'chunks'),
  manifest: join(engramDir, 'manifest.json'),
  gitattributes: join(engramDir, '.gitattributes'),
});

/** A chunk's JSON text and id. */
export function encodeChunk(body: ChunkBody): { id: string; json: string } {
  const json = JSON.stringify({ sessions: body.sessions, observations: body.observations, prompts: body.prompts });
  return { id: createHash('sha256').update(json).digest('hex').slice(0, 8), json };
}

/** Writes a file through a temporary name (a reader never sees half of it). */
function writeAtomic(path: string, data: string | Buffer): void {
  const temporary = `${path}.${process.pid}.tmp`;
  writeFileSync(temporary, data);
  renameSync(temporary, path);
}

/** Writes a chunk file (gzip with a fixed header, so the same chunk is the same bytes on every machine). */
export function writeChunk(engramDir: string, body: ChunkBody): { id: string; path: string; bytes: number } {
  const paths = syncPaths(engramDir);
  mkdirSync(paths.chunks, { recursive: true });
  const { id, json } = encodeChunk(body);
  const path = join(paths.chunks, `${id}.jsonl.gz`);
  const bytes = gzipSync(json, { level: 9 });
  if (!existsSync(path)) writeAtomic(path, bytes);
  return { id, path, bytes: bytes.length };
}

/** Reads and parses a chunk file; a specific INVALID_INPUT when it is not one. */
export function readChunk(engramDir: string, id: string): unknown {
  const path = join(syncPaths(engramDir).chunks, `${id}.jsonl.gz`);
  let text: string;
  try {
    if (statSync(path).size > CHUNK_MAX_BYTES) throw new EngramError('INVALID_INPUT', `chunk ${id} is larger than ${CHUNK_MAX_BYTES} bytes`);
    text = gunzipSync(readFileSync(path), { maxOutputLength: CHUNK_MAX_BYTES }).toString('utf8');
  } catch (error) {
    if (error instanceof EngramError) throw error;
    const code = (error as NodeJS.ErrnoException).code;
    throw new EngramError(code === 'ENOENT' ? 'NOT_FOUND' : 'INVALID_INPUT', `chunk ${id} cannot be read: ${(error as Error).message}`, { cause: error });
  }
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new EngramError('INVALID_INPUT', `chunk ${id} is not JSON: ${(error as Error).message}`, { cause: error });
  }
}

const isEntry = (value: unknown): value is ChunkEntry =>
  typeof value === 'object' && value !== null && typeof (value as ChunkEntry).id === 'string' && CHUNK_ID.test((value as ChunkEntry).id);

/** The manifest's entries, deduped by id, in order; a manifest a merge mangled is read entry by entry. */
export function readManifest(engramDir: string): ChunkEntry[] {
  const path = syncPaths(engramDir).manifest;
  if (!existsSync(path)) return [];
  const text = readFileSync(path, 'utf8');
  let entries: unknown[];
  try {
    const parsed = JSON.parse(text) as { chunks?: unknown };
    entries = Array.isArray(parsed.chunks) ? parsed.chunks : [];
  } catch {
    entries = [...text.matchAll(/\{[^{}]*"id"\s*:\s*"[0-9a-f]{8}"[^{}]*\}/g)].flatMap((match) => {
      try {
        return [JSON.parse(match[0]) as unknown];
      } catch {
        return [];
      }
    });
  }
  const seen = new Set<string>();
  return entries.filter(isEntry).filter((entry) => !seen.has(entry.id) && seen.add(entry.id) !== undefined);
}

/** Chunk ids present as files (a manifest entry lost in a bad merge still gets read). */
export function chunkFiles(engramDir: string): string[] {
  const dir = syncPaths(engramDir).chunks;
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .map((name) => /^([0-9a-f]{8})\.jsonl\.gz$/.exec(name)?.[1])
    .filter((id): id is string => id !== undefined)
    .sort();
}

const line = (entry: ChunkEntry): string =>
  JSON.stringify({ id: entry.id, created_by: entry.created_by, created_at: entry.created_at, sessions: entry.sessions, memories: entry.memories, prompts: entry.prompts });

/** Prepares `.engram/` for sharing: the chunks folder, the empty first chunk, the manifest and its merge rule. */
export function prepareSyncFiles(engramDir: string): void {
  const paths = syncPaths(engramDir);
  mkdirSync(paths.chunks, { recursive: true });
  const empty = writeChunk(engramDir, EMPTY);
  if (!existsSync(paths.gitattributes) || !readFileSync(paths.gitattributes, 'utf8').includes('manifest.json merge=union')) {
    const existing = existsSync(paths.gitattributes) ? readFileSync(paths.gitattributes, 'utf8') : '';
    writeAtomic(paths.gitattributes, `${existing}${existing && !existing.endsWith('\n') ? '\n' : ''}${GITATTRIBUTES}`);
  }
  if (!existsSync(paths.manifest)) {
    const first: ChunkEntry = { id: empty.id, created_by: 'engram', created_at: '1970-01-01T00:00:00Z', sessions: 0, memories: 0, prompts: 0 };
    writeAtomic(paths.manifest, `${HEADER}\n${line(first)}\n${FOOTER}\n`);
  }
}

/**
 * Adds an entry as the manifest's last line (`,{…}`), so concurrent additions on two clones are two different lines
 * at the same place, which the union merge keeps both of. A manifest in another layout (the Go engram's indented
 * one) is rewritten once in ours.
 */
export function appendManifest(engramDir: string, entry: ChunkEntry): void {
  prepareSyncFiles(engramDir);
  const path = syncPaths(engramDir).manifest;
  const text = readFileSync(path, 'utf8');
  const lines = text.replace(/\n$/, '').split('\n');
  if (lines[0] === HEADER && lines.at(-1) === FOOTER && lines.length >= 3) {
    if (readManifest(engramDir).some((known) => known.id === entry.id)) return;
    lines.splice(lines.length - 1, 0, `,${line(entry)}`);
    writeAtomic(path, `${lines.join('\n')}\n`);
    return;
  }
  const entries = [...readManifest(engramDir).filter((known) => known.id !== entry.id), entry];
  writeAtomic(path, `${HEADER}\n${entries.map((known, index) => `${index === 0 ? '' : ','}${line(known)}`).join('\n')}\n${FOOTER}\n`);
}

import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, realpathSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import * as z from 'zod';
import { EngramError, formatIssues } from '../../core/index.js';
import type { HookGroup } from '../../../scripts/hook-registry.d.mts';
import { isEngramCommand } from './plugin.js';

/**
 * The part of a hooks settings file we touch: `hooks` is event → matcher groups → handlers (the same shape in Claude
 * Code's settings.json and Codex's hooks.json). Loose objects: every key we do not know is kept as it is.
 */
const HandlerSchema = z.looseObject({});
const GroupSchema = z.looseObject({ hooks: z.array(HandlerSchema) });
const HooksSchema = z.record(z.string(), z.array(GroupSchema));
const SettingsSchema = z.looseObject({ hooks: HooksSchema.optional() });

type Handler = Record<string, unknown>;
type Group = Record<string, unknown> & { hooks: Handler[] };
type Hooks = Record<string, Group[]>;
export type SettingsData = Record<string, unknown> & { hooks?: Hooks };

/** One Engram handler in a settings file, as reported to the user. */
export interface HookEntry {
  event: string;
  /** The group's matcher; null when the group matches everything. */
  matcher: string | null;
  command: string;
  timeout: number | null;
}

/** An Engram handler with its position: Codex keys trust by `<file>:<event>:<group>:<handler>`. */
export interface LocatedHookEntry extends HookEntry {
  group: number;
  handler: number;
}

/** A settings file as read: its parsed content and the text it was parsed from (to detect concurrent writers). */
export interface SettingsFile {
  file: string;
  exists: boolean;
  data: SettingsData;
  text: string | undefined;
}

/**
 * Reads a JSON hooks settings file. A missing or blank file reads as `{}`; a file that is not JSON, not an object, or
 * whose `hooks` is not event → groups → handlers throws INVALID_INPUT naming the file, so nothing is ever written over
 * a file we could not understand.
 */
export function readSettingsFile(file: string): SettingsFile {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { file, exists: false, data: {}, text: undefined };
    throw new EngramError('IO', `cannot read ${file}: ${(error as Error).message}`, { cause: error });
  }
  if (text.trim() === '') return { file, exists: true, data: {}, text };
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (error) {
    throw new EngramError('INVALID_INPUT', `${file} is not valid JSON (${(error as Error).message}); fix it by hand first, nothing was changed`, {
      details: { file },
    });
  }
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) {
    throw new EngramError('INVALID_INPUT', `${file} does not hold a JSON object; nothing was changed`, { details: { file } });
  }
  const parsed = SettingsSchema.safeParse(raw);
  if (!parsed.success) {
    throw new EngramError(
      'INVALID_INPUT',
      `${file}: "hooks" is not in the event → [{ matcher?, hooks: [handler] }] shape (${formatIssues(parsed.error)}); nothing was changed`,
      { details: { file } },
    );
  }
  // The parsed value, not zod's output: zod moves the keys it knows first, and key order is the user's.
  return { file, exists: true, data: raw as SettingsData, text };
}

const entryOf = (event: string, group: Group, handler: Handler): HookEntry => ({
  event,
  matcher: typeof group.matcher === 'string' ? group.matcher : null,
  command: handler.command as string,
  timeout: typeof handler.timeout === 'number' ? handler.timeout : null,
});

/** Engram's handlers in a settings file's data, in file order, with their positions. */
export function engramEntries(data: SettingsData): LocatedHookEntry[] {
  const entries: LocatedHookEntry[] = [];
  for (const [event, groups] of Object.entries(data.hooks ?? {})) {
    groups.forEach((group, groupIndex) => {
      group.hooks.forEach((handler, handlerIndex) => {
        if (isEngramCommand(handler.command)) entries.push({ ...entryOf(event, group, handler), group: groupIndex, handler: handlerIndex });
      });
    });
  }
  return entries;
}

/** What {@link mergeEngramHooks} did. */
export interface MergeResult {
  data: SettingsData;
  changed: boolean;
  added: HookEntry[];
  removed: HookEntry[];
  /**
   * Events where someone else's group or handler moved to another position. Codex keys trust by position, so those
   * hooks need trusting again.
   */
  shifted: string[];
}

const sameHandler = (a: unknown, b: unknown): boolean => JSON.stringify(a) === JSON.stringify(b);

/**
 * Replaces Engram's handlers in `data` with `wanted` (Engram's groups per event; `{}` removes them all). Everyone
 * else's events, groups, handlers and top-level keys stay as they are. Engram's new group takes the place of the first
 * group that held only Engram handlers (so other groups keep their index), or goes last; groups that held only Engram
 * handlers are dropped, groups shared with other handlers lose just ours; an event left empty is dropped only when it
 * held Engram's handlers. Pure: `data` is not modified.
 */
export function mergeEngramHooks(data: SettingsData, wanted: Record<string, HookGroup[]>): MergeResult {
  const before = data.hooks ?? {};
  const after: Hooks = {};
  const shifted = new Set<string>();
  const events = [...Object.keys(before), ...Object.keys(wanted).filter((event) => !(event in before))];
  for (const event of events) {
    const existing = before[event];
    const ours = (wanted[event] ?? []) as unknown as Group[];
    if (!existing) {
      if (ours.length) after[event] = ours;
      continue;
    }
    const next: Group[] = [];
    // Where each of someone else's groups was, to tell whether it moved.
    const origin = new Map<Group, number>();
    let slot = -1;
    let heldOurs = false;
    existing.forEach((group, index) => {
      const others = group.hooks.filter((handler) => !isEngramCommand(handler.command));
      if (others.length === group.hooks.length) {
        origin.set(group, index);
        next.push(group);
        return;
      }
      heldOurs = true;
      if (others.length) {
        // A group shared with someone else's handlers keeps theirs, in their order.
        if (others.some((handler, position) => group.hooks.indexOf(handler) !== position)) shifted.add(event);
        const kept = { ...group, hooks: others };
        origin.set(kept, index);
        next.push(kept);
      } else if (slot < 0) {
        slot = next.length;
      }
    });
    if (slot >= 0) next.splice(slot, 0, ...ours);
    else next.push(...ours);
    next.forEach((group, index) => {
      const from = origin.get(group);
      if (from !== undefined && from !== index) shifted.add(event);
    });
    if (next.length || !heldOurs) after[event] = next;
  }

  const hooksEmptied = Object.keys(after).length === 0 && data.hooks !== undefined && Object.keys(data.hooks).length > 0;
  const changed = !sameHandler(before, after);
  const result: SettingsData = { ...data };
  if (hooksEmptied) delete result.hooks;
  else if (data.hooks !== undefined || Object.keys(after).length) result.hooks = after;

  const keyOf = (entry: HookEntry): string => JSON.stringify(entry);
  const oldEntries = engramEntries(data).map(({ group: _g, handler: _h, ...entry }) => entry);
  const newEntries = engramEntries(result).map(({ group: _g, handler: _h, ...entry }) => entry);
  const difference = (from: HookEntry[], minus: HookEntry[]): HookEntry[] => {
    const left = minus.map(keyOf);
    return from.filter((entry) => {
      const at = left.indexOf(keyOf(entry));
      if (at < 0) return true;
      left.splice(at, 1);
      return false;
    });
  };
  return { data: result, changed, added: difference(newEntries, oldEntries), removed: difference(oldEntries, newEntries), shifted: [...shifted] };
}

/**
 * Writes `data` as 2-space JSON, atomically (a temp file in the same folder, then rename), creating the folder when
 * needed. A symlinked settings file (dotfile managers) is written through to its target, and the file keeps its mode.
 * `expectedText` is what the file held when it was read: if another program wrote it since, nothing is written.
 */
export function writeSettingsFile(file: string, data: SettingsData, expectedText: string | undefined): void {
  const target = existsSync(file) ? realpathSync(file) : file;
  let current: string | undefined;
  try {
    current = readFileSync(target, 'utf8');
  } catch {
    current = undefined;
  }
  if (current !== expectedText) {
    throw new EngramError('IO', `${file} changed while Engram was updating it; nothing was written, run the command again`);
  }
  const mode = current === undefined ? 0o644 : statSync(target).mode & 0o777;
  const temp = join(dirname(target), `.${basename(target)}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`);
  try {
    mkdirSync(dirname(target), { recursive: true });
    writeFileSync(temp, `${JSON.stringify(data, null, 2)}\n`, { mode });
    renameSync(temp, target);
  } catch (error) {
    rmSync(temp, { force: true });
    throw new EngramError('IO', `cannot write ${file}: ${(error as Error).message}`, { cause: error });
  }
}

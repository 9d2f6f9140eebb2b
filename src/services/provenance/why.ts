/**
 * `engram why ID`: where an engram came from — the session, the tape and the moment (its events, as text), the files
 * touched then, whether the code it names still lives, and its audit history. The same answer serves the MCP
 * `engram_explain` tool and the viewer.
 * @module
 */
import type { Engram, Store } from '../../core/index.js';
import { listAudit, sourcesOf, type StoredSource } from '../governance/index.js';
import type { EngramRef } from '../memory/index.js';
import { engramHistory, type HistoryStep } from '../review/index.js';
import { listTapes, readTape, tapeLocation, type LoadedTape, type TapeEvent } from '../tape/index.js';

/** Characters of each event's text shown in a moment. */
const EVENT_CHARS = 400;

/** One event of the moment, as text. */
export interface MomentEvent {
  offset: number;
  kind: TapeEvent['k'];
  time: string | null;
  text: string;
}

/** One source, with its moment read from the tape when the tape is here. */
export interface WhySource extends StoredSource {
  /** The tape file was found in the folder's tape location. */
  tape_found: boolean;
  moment: MomentEvent[];
}

/** The answer to `engram why`. */
export interface WhyReport {
  engram: Engram | null;
  id: number;
  /** How it was learned, in one line. */
  summary: string;
  sources: WhySource[];
  /** The agent sessions it was learned from, as the hooks recorded them. */
  sessions: Array<{ id: string; agent: string; project: string | null; cwd: string | null; started_at: string | null; ended_at: string | null }>;
  /** Liveness of the code it names, and the deletions that killed it when gone. */
  liveness: { state: string; at: string | null; deaths: unknown[] };
  history: HistoryStep[];
}

const cut = (text: string, limit = EVENT_CHARS): string => {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > limit ? `${flat.slice(0, limit - 1)}…` : flat;
};

/** One line for a tape event. */
export function describeEvent(event: TapeEvent): string {
  switch (event.k) {
    case 'msg.in':
      return `person: ${cut(event.text)}`;
    case 'msg.out':
      return `agent: ${cut(event.text)}`;
    case 'tool.call':
      return `tool ${event.tool}: ${cut(JSON.stringify(event.args ?? {}), 200)}`;
    case 'tool.result':
      return `${event.tool} ${event.is_error ? 'failed' : 'returned'}${event.exit != null ? ` (exit ${event.exit})` : ''}: ${cut(event.stdout || event.stderr || '', 200)}`;
    case 'code.read':
      return `read ${event.file}${event.range ? `:${event.range[0]}-${event.range[1]}` : ''}`;
    case 'code.edit': {
      const range = event.after_range ?? event.before_range;
      return `${event.op} ${event.file}${range ? `:${range[0]}-${range[1]}` : ''}`;
    }
    case 'span.link':
      return `linked ${event.from_file}:${event.from_range[0]}-${event.from_range[1]} → ${event.to_file}:${event.to_range[0]}-${event.to_range[1]}`;
    case 'meta':
      return event.label === 'compaction' ? `context compacted${event.summary ? `: ${cut(event.summary)}` : ''}` : 'session start';
  }
}

function readMoment(source: StoredSource, home: string): { found: boolean; moment: MomentEvent[] } {
  if (!source.tape_id || !source.cwd) return { found: false, moment: [] };
  const file = listTapes(tapeLocation(source.cwd, home).tapes_dir).find((item) => item.tape_id === source.tape_id);
  if (!file) return { found: false, moment: [] };
  let tape: LoadedTape;
  try {
    tape = readTape(file.path);
  } catch {
    return { found: false, moment: [] };
  }
  const from = source.event_from ?? 0;
  const to = Math.min(source.event_to ?? from, tape.events.length - 1);
  const moment: MomentEvent[] = [];
  for (let offset = from; offset <= to; offset++) {
    const event = tape.events[offset] as TapeEvent;
    moment.push({ offset, kind: event.k, time: event.t, text: describeEvent(event) });
  }
  return { found: true, moment };
}

/** Where an engram came from (see the module comment). Works for a forgotten engram from its history. */
export function whyEngram(store: Store, ref: EngramRef, options: { home: string }): WhyReport {
  const { id, engram, steps } = engramHistory(store, ref);
  const sources = store.read(() => sourcesOf(store, id)).map((source): WhySource => {
    const { found, moment } = readMoment(source, options.home);
    return { ...source, tape_found: found, moment };
  });
  const sessionIds = [...new Set([...(engram?.source_sessions ?? []), ...sources.map((source) => source.session_id).filter((value): value is string => !!value)])];
  const sessions = store.read(() =>
    sessionIds.flatMap((sessionId) => {
      const session = store.sessions.get(sessionId);
      return session
        ? [{ id: session.id, agent: session.agent, project: session.project, cwd: session.cwd, started_at: session.started_at, ended_at: session.ended_at }]
        : [];
    }),
  );
  const lastLiveness = store.read(() => listAudit(store, { engramId: id, ops: ['liveness'], limit: 1 })[0]);
  const gone = (lastLiveness?.detail?.gone as Array<{ id: number; deaths: unknown[] }> | undefined)?.find((item) => item.id === id);
  const learned = steps[0];
  const summary = engram
    ? `${engram.learned_by === 'harvest' ? 'extracted from' : engram.learned_by === 'agent' ? 'saved by the agent in' : `added by ${engram.learned_by}`}${
        engram.learned_by === 'harvest' || engram.learned_by === 'agent'
          ? ` ${sessionIds.length ? `session ${sessionIds.join(', ')}` : 'a session'}${sources[0]?.tape_id ? ` (tape ${sources[0].tape_id.slice(0, 16)})` : ''}`
          : ''
      }${learned ? ` on ${learned.at}` : ` on ${engram.created_at}`}; now ${engram.status}${engram.liveness === 'gone' ? ', code gone' : ''}`
    : `forgotten; ${steps.length} recorded operations`;
  return {
    engram,
    id,
    summary,
    sources,
    sessions,
    liveness: { state: engram?.liveness ?? 'unknown', at: engram?.liveness_at ?? null, deaths: gone?.deaths ?? [] },
    history: steps,
  };
}

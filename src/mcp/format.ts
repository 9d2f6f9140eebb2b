/**
 * The Go engram's reply texts (internal/mcp/mcp.go), kept word for word: agents and scripts written for it parse
 * them ("Memory saved: …", "Found N memories:", "[i] #id (type) — title", "No memories found for: …"). What we add
 * comes after its lines, never inside them.
 * @module
 */
import type {
  MergeProjectsResult,
  ObservationHit,
  ObservationView,
  PassiveCaptureResult,
  SaveObservationResult,
  TimelineResult,
} from '../services/ops/index.js';

/** Go's `%q` for the strings we print: a double-quoted, escaped string. */
export const quote = (text: string): string => JSON.stringify(text);

/** The Go engram's `truncate`: at most `max` characters, then `...`. */
export function truncate(text: string, max: number): string {
  const chars = [...text];
  return chars.length <= max ? text : `${chars.slice(0, max).join('')}...`;
}

const PREVIEW = 300;

/** A review status as the texts show it. */
const label = (status: string): string => (status === 'pending' ? 'pending review' : status);

/**
 * One line on an engram that is not active (docs/GOVERNANCE.md), or null for an active one. It names no command: the
 * agent is told what happens, not how to approve its own saves.
 */
export function statusNote(review: { status: string; reason: string | null }): string | null {
  switch (review.status) {
    case 'active':
      return null;
    case 'pending':
      return `Status: pending review${review.reason ? ` — ${review.reason}` : ''}. Later sessions are shown it only after a person approves it; your own searches find it now.`;
    case 'rejected':
      return `Status: rejected${review.reason ? ` — ${review.reason}` : ''}. A person refused this memory; later sessions are not shown it.`;
    default:
      return `Status: ${review.status}${review.reason ? ` — ${review.reason}` : ''}. Later sessions are not shown it.`;
  }
}

export function formatSaved(result: SaveObservationResult, title: string, type: string): string {
  const lines = [`Memory saved: ${quote(title)} (${type})`];
  if (result.suggested_topic_key) lines.push(`Suggested topic_key: ${result.suggested_topic_key}`);
  lines.push(...result.warnings);
  if (result.status === 'revised') lines.push(`Updated the observation with this topic_key in place (revision ${result.observation.revision_count}).`);
  if (result.status === 'duplicate') {
    lines.push(`Already saved in the last 15 minutes: counted as a duplicate (${result.observation.duplicate_count} times).`);
  }
  if (result.redacted.length > 0) lines.push(`Redacted before saving: ${result.redacted.join(', ')}.`);
  const note = statusNote(result.review);
  if (note) lines.push(note);
  lines.push(`ID: ${result.id}`);
  return lines.join('\n');
}

export function formatSearch(query: string, results: ObservationHit[], abstained: string | null): string {
  if (results.length === 0) {
    const why = abstained === 'no-content' ? '\n(The query has no words to search by, only conversational ones; nothing was searched.)' : '';
    return `No memories found for: ${quote(query)}${why}`;
  }
  let text = `Found ${results.length} memories:\n\n`;
  let truncated = false;
  results.forEach((hit, index) => {
    let preview = truncate(hit.content, PREVIEW);
    if ([...hit.content].length > PREVIEW) {
      truncated = true;
      preview += ' [preview]';
    }
    const project = hit.project ? ` | project: ${hit.project}` : '';
    // Ours, after the Go engram's three lines of a hit: a memory that waits for review (the agent's own save).
    const status = hit.status === 'active' ? '' : `    status: ${label(hit.status)}\n`;
    text += `[${index + 1}] #${hit.id} (${hit.type}) — ${hit.title}\n    ${preview}\n    ${hit.created_at}${project} | scope: ${hit.scope}\n${status}\n`;
  });
  if (truncated) {
    text += '---\nResults above are previews (300 chars). To read the full content of a specific memory, call mem_get_observation(id: <ID>).\n';
  }
  return text;
}

export function formatObservation(observation: ObservationView): string {
  const extra = [
    observation.project !== null ? `\nProject: ${observation.project}` : '',
    `\nScope: ${observation.scope}`,
    observation.topic_key !== null ? `\nTopic: ${observation.topic_key}` : '',
    observation.tool_name !== null ? `\nTool: ${observation.tool_name}` : '',
    `\nDuplicates: ${observation.duplicate_count}`,
    `\nRevisions: ${observation.revision_count}`,
  ].join('');
  const note = statusNote({ status: observation.status, reason: null });
  return `#${observation.id} [${observation.type}] ${observation.title}\n${observation.content}\nSession: ${observation.session_id}${extra}\nCreated: ${observation.created_at}${note ? `\n${note}` : ''}`;
}

export function formatContext(context: string, stats: { total_sessions: number; total_observations: number; projects: string[] }): string {
  if (context === '') return 'No previous session memories found.';
  const projects = stats.projects.length > 0 ? stats.projects.join(', ') : 'none';
  return `${context}\n---\nMemory stats: ${stats.total_sessions} sessions, ${stats.total_observations} observations across projects: ${projects}`;
}

export function formatStats(stats: { total_sessions: number; total_observations: number; total_prompts: number; projects: string[] }): string {
  const projects = stats.projects.length > 0 ? stats.projects.join(', ') : 'none yet';
  return `Memory System Stats:\n- Sessions: ${stats.total_sessions}\n- Observations: ${stats.total_observations}\n- Prompts: ${stats.total_prompts}\n- Projects: ${projects}`;
}

export function formatTimeline(result: TimelineResult): string {
  let text = '';
  if (result.session_info) {
    const summary = result.session_info.summary ? ` — ${truncate(result.session_info.summary, 100)}` : '';
    text += `Session: ${result.session_info.project ?? ''} (${result.session_info.started_at})${summary}\n`;
    text += `Total observations in session: ${result.total_in_range}\n\n`;
  }
  const mark = (o: ObservationView): string => (o.status === 'active' ? '' : ` [${label(o.status)}]`);
  const entry = (o: ObservationView): string => `  #${o.id} [${o.type}] ${o.title} — ${truncate(o.content, 150)}${mark(o)}\n`;
  if (result.before.length > 0) text += `─── Before ───\n${result.before.map(entry).join('')}\n`;
  text += `>>> #${result.focus.id} [${result.focus.type}] ${result.focus.title} <<<${mark(result.focus)}\n`;
  text += `    ${truncate(result.focus.content, 500)}\n`;
  text += `    ${result.focus.created_at}\n\n`;
  if (result.after.length > 0) text += `─── After ───\n${result.after.map(entry).join('')}`;
  return text;
}

export function formatPassive(result: PassiveCaptureResult): string {
  const line = `Passive capture complete: extracted=${result.extracted} saved=${result.saved} duplicates=${result.duplicates}`;
  if (result.pending === 0) return line;
  const them = result.pending === 1 ? 'it' : 'them';
  return `${line}\n${result.pending} of the ${result.saved} saved ${result.pending === 1 ? 'waits' : 'wait'} for review: later sessions are shown ${them} only after a person approves ${them}; your own searches find ${them} now.`;
}

export function formatMerge(result: MergeProjectsResult): string {
  return (
    `Merged ${result.sources_merged.length} source(s) into ${quote(result.canonical)}:\n` +
    `  Observations moved: ${result.observations_updated}\n` +
    `  Sessions moved:     ${result.sessions_updated}\n` +
    `  Prompts moved:      ${result.prompts_updated}\n`
  );
}

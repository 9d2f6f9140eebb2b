/**
 * The Sessions screen: agent sessions newest first (paged on the server by cursor, filtered by project and agent), and
 * one session — what the hooks injected at each event, the tool calls they saw, what the evaluator judged, what was
 * learned from it and where review has it, its prompts and its tapes.
 */
import { api, href, main, markSelected, navRow, pager, say, showError } from './api.js';
import { el, fmtDate, fmtNum, short, statusChip } from './dom.js';
import type { ActivityPage, EngramRefView, PromptView, SessionDetail, SessionFacets, SessionPage, ToolEventView } from './types.js';

interface SessionsState {
  filters: Record<string, string>;
  /** Cursors of the pages before this one (the first page's is ''), and this page's. */
  trail: string[];
  cursor: string;
  position: number;
  selected: string | null;
}
const state: SessionsState = { filters: {}, trail: [], cursor: '', position: 0, selected: null };
const LIMIT = 50;

export async function renderSessions(params: URLSearchParams): Promise<void> {
  const filters = el('div', { id: 'session-filters' });
  const list = el('section', { id: 'session-list', 'aria-label': 'Sessions' });
  const detail = el('section', { id: 'session-detail', 'aria-label': 'Session detail', 'aria-live': 'polite' }, el('p', { class: 'muted' }, 'Select a session (↑/↓ or j/k, Enter).'));
  main.replaceChildren(filters, el('div', { class: 'split' }, list, detail));
  const facets = api<SessionFacets>('GET', '/session-facets');
  const wanted = params.get('id');
  if (wanted) state.selected = wanted;
  await loadSessions();
  filters.replaceWith(filterForm(await facets));
  if (state.selected) await loadSession(state.selected);
}

function filterForm(facets: SessionFacets): HTMLElement {
  const option = (value: string, text: string, current: string | undefined) => el('option', { value, ...(value === (current ?? '') ? { selected: '' } : {}) }, text);
  const project = el('select', { name: 'project', 'aria-label': 'Project' }, option('', 'any', state.filters.project), ...facets.projects.map((p) => option(p.value ?? '(none)', `${p.value ?? '(none)'} (${p.count})`, state.filters.project)));
  const agent = el('select', { name: 'agent', 'aria-label': 'Agent' }, option('', 'any', state.filters.agent), ...facets.agents.map((a) => option(a.value, `${a.value} (${a.count})`, state.filters.agent)));
  const form = el('form', { class: 'filters', role: 'search', 'aria-label': 'Filter sessions' }, el('label', {}, 'Project', project), el('label', {}, 'Agent', agent));
  form.addEventListener('change', () => {
    const data = new FormData(form);
    state.filters = Object.fromEntries([...data.entries()].filter(([, v]) => v !== '').map(([k, v]) => [k, String(v)]));
    state.trail = [];
    state.cursor = '';
    state.position = 0;
    void loadSessions();
  });
  return form;
}

async function loadSessions(): Promise<void> {
  const list = document.getElementById('session-list');
  if (!list) return;
  const query = new URLSearchParams({ ...state.filters, limit: String(LIMIT), ...(state.cursor ? { after: state.cursor } : {}) });
  const started = performance.now();
  let page: SessionPage;
  try {
    page = await api<SessionPage>('GET', `/sessions?${query}`);
  } catch (error) {
    return showError(error, list);
  }
  say(`${fmtNum(page.total)} ${page.total === 1 ? 'session' : 'sessions'} · page in ${Math.round(performance.now() - started)} ms`);
  const rows = page.sessions.map((s) =>
    navRow(
      s.id,
      () => void loadSession(s.id),
      el('td', { class: 'nowrap' }, fmtDate(s.started_at)),
      el('td', {}, el('span', { class: 'chip' }, s.agent), s.project ?? el('span', { class: 'muted' }, '(no project)'), el('div', { class: 'muted mono' }, short(s.id, 40))),
      el('td', { class: 'num' }, String(s.turns)),
      el('td', { class: 'num' }, String(s.shown)),
      el('td', { class: 'num' }, String(s.judged)),
      el('td', { class: 'num' }, String(s.tools)),
      el('td', {}, s.eval_status ? el('span', { class: `chip ev-${s.eval_status}` }, s.eval_status) : el('span', { class: 'muted' }, '—')),
    ),
  );
  const first = state.position + 1;
  const last = state.position + page.sessions.length;
  list.replaceChildren(
    el(
      'table',
      { id: 'sessions-table' },
      el('thead', {}, el('tr', {}, el('th', {}, 'started'), el('th', {}, 'agent · project · id'), el('th', { class: 'num' }, 'turns'), el('th', { class: 'num' }, 'injected'), el('th', { class: 'num' }, 'judged'), el('th', { class: 'num' }, 'tools'), el('th', {}, 'evaluation'))),
      el('tbody', {}, ...(rows.length ? rows : [el('tr', {}, el('td', { colspan: '7', class: 'muted' }, 'No sessions match these filters.'))])),
    ),
    pager(
      page.total ? `${fmtNum(first)}–${fmtNum(last)} of ${fmtNum(page.total)}` : '0',
      state.trail.length
        ? () => {
            state.cursor = state.trail.pop() ?? '';
            state.position = Math.max(0, state.position - LIMIT);
            void loadSessions();
          }
        : null,
      page.next
        ? () => {
            state.trail.push(state.cursor);
            state.cursor = page.next as string;
            state.position += LIMIT;
            void loadSessions();
          }
        : null,
      'sessions-pager',
    ),
  );
  if (state.selected) markSelected(list, state.selected);
}

const engramLink = (engram: EngramRefView): HTMLElement =>
  el('a', { href: href('engrams', { id: engram.id }), class: 'engram-link', 'data-id': String(engram.id) }, `#${engram.id}`);

const engramText = (engram: EngramRefView): HTMLElement =>
  el('span', { class: 'text' }, engram.text === null ? el('span', { class: 'muted' }, '(forgotten)') : short(engram.text, 200), ' ', engram.status ? statusChip(engram.status) : '');

async function loadSession(id: string): Promise<void> {
  state.selected = id;
  const list = document.getElementById('session-list');
  if (list) markSelected(list, id);
  const pane = document.getElementById('session-detail');
  if (!pane) return;
  let detail: SessionDetail;
  try {
    detail = await api<SessionDetail>('GET', `/sessions/${encodeURIComponent(id)}`);
  } catch (error) {
    return showError(error, pane);
  }
  const s = detail.session;
  const kv = (key: string, value: string | HTMLElement): HTMLElement[] => [el('dt', {}, key), el('dd', {}, value)];
  const injections = detail.injections.map((injection) =>
    el(
      'div',
      { class: 'card injection', 'data-event': injection.event },
      el('div', {}, el('strong', {}, injection.event), el('span', { class: 'muted' }, ` · ${fmtDate(injection.at)}${injection.answered_by ? ` · answered by ${injection.answered_by}` : ''}${injection.context_epoch ? ` · context ${injection.context_epoch}` : ''}`)),
      injection.query ? el('div', { class: 'muted' }, 'query: ', el('q', {}, injection.query)) : el('div', { class: 'muted' }, 'the session-start selection'),
      el(
        'table',
        { class: 'compact' },
        el('thead', {}, el('tr', {}, el('th', { class: 'num' }, 'rank'), el('th', {}, 'engram'), el('th', { class: 'num' }, 'score'), el('th', { class: 'num' }, 'chars'))),
        el(
          'tbody',
          {},
          ...injection.engrams.map((engram) =>
            el('tr', { 'data-id': String(engram.id) }, el('td', { class: 'num' }, engram.rank === null ? '–' : String(engram.rank)), el('td', {}, engramLink(engram), ' ', engramText(engram), engram.times > 1 ? el('span', { class: 'muted' }, ` (shown ${engram.times}×)`) : ''), el('td', { class: 'num' }, engram.score === null ? '–' : engram.score.toFixed(3)), el('td', { class: 'num' }, String(engram.chars))),
          ),
        ),
      ),
    ),
  );
  const judgements = detail.judgements.map((j) =>
    el(
      'li',
      { 'data-id': String(j.engram.id) },
      engramLink(j.engram),
      ' ',
      el('span', { class: `chip ${j.score === null ? '' : j.score > 0 ? 'st-active' : j.score < 0 ? 'st-rejected' : ''}` }, j.score === null ? 'not judged' : `${j.score > 0 ? '+' : ''}${j.score}`),
      ` ${j.source} by ${j.judged_by} · ${fmtDate(j.at)} `,
      engramText(j.engram),
      j.evidence ? el('blockquote', {}, j.evidence) : '',
    ),
  );
  const extracted = detail.extracted.map((e) =>
    el(
      'li',
      { 'data-id': String(e.id) },
      engramLink(e),
      ' ',
      engramText(e),
      el('span', { class: 'muted' }, ` learned by ${e.learned_by} · ${fmtDate(e.created_at)}${e.status_reason ? ` · ${e.status_reason}` : ''} `),
      e.tape_id && e.event_from !== null ? el('a', { href: href('tapes', { tape: e.tape_id, at: e.event_from, to: e.event_to ?? e.event_from }), class: 'moment-link' }, 'the moment in the tape') : '',
    ),
  );
  const tools = el('div', { id: 'session-tools' });
  const prompts = el('div', { id: 'session-prompts' });
  pane.replaceChildren(
    el(
      'article',
      { class: 'panel' },
      el('h2', {}, el('span', { class: 'chip' }, s.agent), ' ', s.project ?? '(no project)', ' ', el('span', { class: 'muted mono', id: 'session-id' }, s.id)),
      el(
        'dl',
        { class: 'kv' },
        ...kv('folder', s.repo_root ?? s.cwd ?? '—'),
        ...kv('model', s.model ?? '—'),
        ...kv('started', `${fmtDate(s.started_at)} (${s.start_source ?? 'unknown'})`),
        ...kv('ended', s.ended_at ? `${fmtDate(s.ended_at)}${s.end_reason ? ` (${s.end_reason})` : ''}` : 'not ended'),
        ...kv('turns', String(s.turns)),
        ...kv('environment', detail.audit?.env_tags.join(', ') || '—'),
        ...kv('evaluation', detail.audit ? `${detail.audit.eval_status}${detail.audit.evaluated_at ? ` at ${fmtDate(detail.audit.evaluated_at)}` : ''}${detail.audit.eval_error ? ` — ${detail.audit.eval_error}` : ''}` : 'none recorded'),
        ...kv('extraction', detail.extraction ? `${detail.extraction.status}: ${detail.extraction.created} new, ${detail.extraction.merged} merged, ${detail.extraction.rejected} rejected${detail.extraction.error ? ` — ${detail.extraction.error}` : ''}` : 'not run'),
      ),
      el('h3', {}, `Injected by the hooks (${detail.injections.length})`),
      ...(injections.length ? injections : [el('p', { class: 'muted' }, 'Nothing was injected.')]),
      el('h3', {}, `Judged by the evaluator (${detail.judgements.length})`),
      judgements.length ? el('ul', { class: 'steps', id: 'judgements' }, ...judgements) : el('p', { class: 'muted' }, 'No judgements.'),
      el('h3', {}, `Learned from it (${detail.extracted.length})`),
      extracted.length ? el('ul', { class: 'steps', id: 'extracted' }, ...extracted) : el('p', { class: 'muted' }, 'Nothing was learned from it.'),
      el('h3', {}, `Tapes (${detail.tapes.length})`),
      detail.tapes.length
        ? el('ul', { class: 'steps', id: 'session-tapes' }, ...detail.tapes.map((tape) => el('li', {}, el('a', { href: href('tapes', { tape: tape.tape_id }), class: 'tape-link', 'data-tape': tape.tape_id }, tape.tape_id.slice(0, 16)), ` ${fmtDate(tape.time)}${tape.agent ? ` · subagent ${tape.agent}` : ''}${tape.lines ? ` · lines ${tape.lines[0]}–${tape.lines[1]}` : ''}`)))
        : el('p', { class: 'muted' }, 'No tape of this session on this machine.'),
      el('h3', {}, `Prompts (${detail.prompts.total})`),
      prompts,
      el('h3', {}, `Tool calls (${detail.tools.total})`),
      tools,
    ),
  );
  renderPrompts(prompts, id, detail.prompts);
  renderTools(tools, id, detail.tools);
}

function renderPrompts(into: HTMLElement, id: string, page: ActivityPage<PromptView>): void {
  const more = (offset: number) => () =>
    void api<ActivityPage<PromptView>>('GET', `/sessions/${encodeURIComponent(id)}/prompts?offset=${offset}`).then((next) => renderPrompts(into, id, next), (error) => showError(error, into));
  into.replaceChildren(
    page.items.length ? el('ol', { class: 'steps', start: String(page.offset + 1) }, ...page.items.map((p) => el('li', {}, el('span', { class: 'muted' }, `${fmtDate(p.created_at)} `), el('span', { class: 'text prompt' }, p.content)))) : el('p', { class: 'muted' }, 'No prompts stored.'),
    page.total > page.limit ? pager(`${page.offset + 1}–${page.offset + page.items.length} of ${page.total}`, page.offset > 0 ? more(Math.max(0, page.offset - page.limit)) : null, page.offset + page.limit < page.total ? more(page.offset + page.limit) : null) : '',
  );
}

function renderTools(into: HTMLElement, id: string, page: ActivityPage<ToolEventView>): void {
  const more = (offset: number) => () =>
    void api<ActivityPage<ToolEventView>>('GET', `/sessions/${encodeURIComponent(id)}/tools?offset=${offset}`).then((next) => renderTools(into, id, next), (error) => showError(error, into));
  into.replaceChildren(
    page.items.length
      ? el(
          'table',
          { class: 'compact', id: 'tools-table' },
          el('thead', {}, el('tr', {}, el('th', {}, 'at'), el('th', {}, 'tool'), el('th', {}, 'target'), el('th', {}, 'result'), el('th', { class: 'num' }, 'ms'))),
          el('tbody', {}, ...page.items.map((t) => el('tr', {}, el('td', { class: 'nowrap' }, fmtDate(t.at)), el('td', {}, t.tool_name), el('td', { class: 'text mono' }, short(t.target, 160)), el('td', { class: t.ok ? 'check-ok' : 'check-fail' }, t.ok ? 'ok' : short(t.error ?? 'failed', 160)), el('td', { class: 'num' }, t.duration_ms === null ? '–' : String(t.duration_ms))))),
        )
      : el('p', { class: 'muted' }, 'No tool calls seen.'),
    page.total > page.limit ? pager(`${page.offset + 1}–${page.offset + page.items.length} of ${page.total}`, page.offset > 0 ? more(Math.max(0, page.offset - page.limit)) : null, page.offset + page.limit < page.total ? more(page.offset + page.limit) : null) : '',
  );
}

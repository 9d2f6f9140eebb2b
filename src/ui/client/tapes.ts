/**
 * The Tapes screen: an explain box (`file:start-end` in a known working tree, the service `engram explain` uses) whose
 * answers open the tape at the moment an edit happened; the tapes of every known folder (paged on the server, newest
 * first); and one tape's timeline a page at a time — messages, tool calls and results, reads, edits with their ranges
 * — opened at an event (`#tapes?tape=<id>&at=<offset>[&to=<offset>]`), scrolled to and highlighted.
 */
import { api, href, main, markSelected, navRow, pager, route, say, showError } from './api.js';
import { el, fmtBytes, fmtDate, fmtNum, short } from './dom.js';
import type { ExplainView, TapeFolder, TapeList, TimelineEvent, TimelinePage } from './types.js';

const LIST_LIMIT = 50;
const TIMELINE_LIMIT = 200;
const state = { project: '', offset: 0, root: '', span: '' };

export async function renderTapes(params: URLSearchParams): Promise<void> {
  const tape = params.get('tape');
  // Opening another moment of the tape already shown only moves the timeline.
  const timeline = document.getElementById('timeline');
  if (tape && timeline && document.body.dataset.screen === 'tapes' && document.getElementById('tape-list')) {
    await loadTimeline(tape, params);
    return;
  }
  const explain = el('section', { id: 'explain', 'aria-label': 'Explain a span of code' });
  const list = el('section', { id: 'tape-list', 'aria-label': 'Tapes' });
  const view = el('section', { id: 'timeline', 'aria-label': 'Tape timeline', 'aria-live': 'polite' }, el('p', { class: 'muted' }, 'Select a tape (↑/↓ or j/k, Enter), or explain a span of code.'));
  main.replaceChildren(el('div', { class: 'split' }, el('div', {}, explain, el('div', { id: 'tape-folders' }), list), view));
  let folders: TapeFolder[] = [];
  try {
    folders = (await api<{ folders: TapeFolder[] }>('GET', '/tape-folders')).folders;
  } catch (error) {
    return showError(error);
  }
  explain.replaceChildren(explainForm(folders));
  (document.getElementById('tape-folders') as HTMLElement).replaceWith(folderForm(folders));
  await loadTapes();
  if (tape) await loadTimeline(tape, params);
}

function folderForm(folders: TapeFolder[]): HTMLElement {
  const select = el(
    'select',
    { name: 'project', 'aria-label': 'Tape folder' },
    el('option', { value: '' }, `every folder (${folders.length})`),
    ...folders.map((folder) => el('option', { value: folder.project, ...(folder.project === state.project ? { selected: '' } : {}) }, `${folder.root ?? folder.project}${folder.opted_in ? ' (.engram/tapes)' : ''}`)),
  );
  select.addEventListener('change', () => {
    state.project = select.value;
    state.offset = 0;
    void loadTapes();
  });
  return el('div', { class: 'filters', id: 'tape-folders' }, el('label', {}, 'Folder', select));
}

function explainForm(folders: TapeFolder[]): HTMLElement {
  const roots = folders.filter((folder) => folder.root !== null);
  if (!state.root && roots[0]) state.root = roots[0].root as string;
  const root = el('select', { name: 'root', 'aria-label': 'Working tree' }, ...roots.map((folder) => el('option', { value: folder.root as string, ...(folder.root === state.root ? { selected: '' } : {}) }, folder.root as string)));
  const span = el('input', { name: 'span', id: 'span', placeholder: 'src/app.ts:10-24', value: state.span, size: '32', 'aria-label': 'Span (file:start-end)', required: '' }) as HTMLInputElement;
  const out = el('div', { id: 'explain-results', 'aria-live': 'polite' });
  const form = el('form', { class: 'filters', role: 'search', 'aria-label': 'Explain' }, el('label', {}, 'Working tree', root), el('label', {}, 'Span (file:start-end)', span), el('button', { type: 'submit', class: 'primary', ...(roots.length ? {} : { disabled: '' }) }, 'Explain'));
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    state.root = root.value;
    state.span = span.value.trim();
    void runExplain(out, { root: root.value, span: span.value.trim() });
  });
  return el('div', { class: 'panel' }, el('h2', {}, 'Why does this code exist?'), roots.length ? form : el('p', { class: 'muted' }, 'No tape folder with a known working tree yet: tapes are recorded when sessions end.'), out);
}

async function runExplain(out: HTMLElement, request: { root: string; span: string }): Promise<void> {
  out.replaceChildren(el('p', { class: 'muted' }, 'Explaining…'));
  let answer: ExplainView;
  const started = performance.now();
  try {
    answer = await api<ExplainView>('POST', '/explain', request);
  } catch (error) {
    return showError(error, out);
  }
  say(`explain: ${answer.total} tapes in ${Math.round(performance.now() - started)} ms`);
  if (answer.results.length === 0) {
    out.replaceChildren(el('p', { class: 'muted', id: 'explain-none' }, `No tape touched ${answer.span.file}:${answer.span.start}-${answer.span.end}.`));
    return;
  }
  out.replaceChildren(
    el('p', { class: 'muted' }, `${answer.total} ${answer.total === 1 ? 'tape' : 'tapes'} touched ${answer.span.file}:${answer.span.start}-${answer.span.end}, most touches first.`),
    el(
      'ol',
      { class: 'explain-list' },
      ...answer.results.map((result) => {
        // An edit is the moment the code was written: link it first.
        const touches = [...result.touches].sort((a, b) => Number(b.kind === 'code.edit') - Number(a.kind === 'code.edit') || a.offset - b.offset).slice(0, 8);
        return el(
          'li',
          { 'data-tape': result.tape_id },
          el('strong', {}, result.tape_id.slice(0, 16)),
          el('span', { class: 'muted' }, ` ${result.session.agent} session ${short(result.session.id, 40)} · ${result.via}${result.depth ? ` depth ${result.depth}` : ''} · confidence ${result.confidence.toFixed(2)}${result.continuation ? ` · continues into ${result.continuation.continues_into.slice(0, 12)}` : ''}`),
          el(
            'ul',
            {},
            ...touches.map((touch) =>
              el('li', {}, el('a', { href: href('tapes', { tape: result.tape_id, at: touch.offset }), class: `touch-link${touch.kind === 'code.edit' ? ' edit' : ''}`, 'data-offset': String(touch.offset) }, `event ${touch.offset}: ${touch.kind === 'code.edit' ? 'edit' : touch.kind}${touch.file ? ` of ${touch.file}` : ''}`), el('span', { class: 'muted' }, ` ${touch.part} · ${touch.via} · ${touch.confidence.toFixed(2)}${touch.time ? ` · ${fmtDate(touch.time)}` : ''}`)),
            ),
          ),
        );
      }),
    ),
  );
}

async function loadTapes(): Promise<void> {
  const list = document.getElementById('tape-list');
  if (!list) return;
  const query = new URLSearchParams({ limit: String(LIST_LIMIT), offset: String(state.offset), ...(state.project ? { project: state.project } : {}) });
  const started = performance.now();
  let page: TapeList;
  try {
    page = await api<TapeList>('GET', `/tapes?${query}`);
  } catch (error) {
    return showError(error, list);
  }
  say(`${fmtNum(page.total)} ${page.total === 1 ? 'tape' : 'tapes'} · page in ${Math.round(performance.now() - started)} ms`);
  const rows = page.tapes.map((tape) =>
    navRow(
      tape.tape_id,
      () => {
        location.hash = href('tapes', { tape: tape.tape_id });
      },
      el('td', { class: 'nowrap' }, fmtDate(tape.time ?? tape.written_at)),
      el('td', {}, el('span', { class: 'chip' }, tape.harness ?? '?'), el('span', { class: 'mono' }, tape.tape_id.slice(0, 12)), tape.agent ? el('span', { class: 'chip' }, `subagent ${short(tape.agent, 12)}`) : '', el('div', { class: 'muted mono' }, short(tape.session_id, 40))),
      el('td', { class: 'num' }, tape.lines ? `${tape.lines[0]}–${tape.lines[1]}` : '–'),
      el('td', { class: 'num' }, fmtBytes(tape.size)),
    ),
  );
  const last = page.offset + page.tapes.length;
  list.replaceChildren(
    el(
      'table',
      { id: 'tapes-table' },
      el('thead', {}, el('tr', {}, el('th', {}, 'recorded'), el('th', {}, 'tape · session'), el('th', { class: 'num' }, 'lines'), el('th', { class: 'num' }, 'size'))),
      el('tbody', {}, ...(rows.length ? rows : [el('tr', {}, el('td', { colspan: '4', class: 'muted' }, 'No tapes recorded yet.'))])),
    ),
    pager(
      page.total ? `${fmtNum(page.offset + 1)}–${fmtNum(last)} of ${fmtNum(page.total)}` : '0',
      page.offset > 0
        ? () => {
            state.offset = Math.max(0, state.offset - LIST_LIMIT);
            void loadTapes();
          }
        : null,
      last < page.total
        ? () => {
            state.offset += LIST_LIMIT;
            void loadTapes();
          }
        : null,
      'tapes-pager',
    ),
  );
  const current = route().params.get('tape');
  if (current) markSelected(list, current);
}

function eventBody(event: TimelineEvent): Array<HTMLElement | string> {
  const range = (r: [number, number] | null): string => (r ? `:${r[0]}-${r[1]}` : '');
  const block = (text: string | null, cls = ''): HTMLElement | '' => (text ? el('pre', { class: `event-text ${cls}` }, text) : '');
  switch (event.k) {
    case 'msg.in':
      return [el('span', { class: 'who' }, 'person'), block(event.text) as HTMLElement];
    case 'msg.out':
      return [el('span', { class: 'who' }, 'agent'), block(event.text) as HTMLElement];
    case 'tool.call':
      return [el('span', { class: 'who' }, `tool call ${event.tool ?? ''}`), el('code', { class: 'args' }, short(event.args, 600))];
    case 'tool.result':
      return [
        el('span', { class: event.is_error ? 'who check-fail' : 'who' }, `${event.tool ?? ''} ${event.is_error ? 'failed' : 'returned'}${event.exit !== null ? ` (exit ${event.exit})` : ''}`),
        event.text ? el('details', {}, el('summary', {}, short(event.text.split('\n')[0], 120) || '(empty)'), block(event.text)) : el('span', { class: 'muted' }, ' (no output)'),
      ];
    case 'code.read':
      return [el('span', { class: 'who' }, 'read'), el('code', {}, `${event.file ?? ''}${range(event.range)}`)];
    case 'code.edit':
      return [
        el('span', { class: 'who' }, event.op ?? 'edit'),
        el('code', { class: 'edit-file' }, `${event.file ?? ''}${range(event.range)}`),
        event.before_range && event.op === 'edit' ? el('span', { class: 'muted' }, ` (was ${event.before_range[0]}-${event.before_range[1]})`) : '',
        el('details', { class: 'diff' }, el('summary', {}, 'the change'), block(event.before_text, 'removed'), block(event.after_text, 'added')),
      ];
    case 'span.link':
      return [el('span', { class: 'who' }, 'linked'), el('code', {}, `${event.file ?? ''}${range(event.range)} → ${event.to_file ?? ''}${range(event.to_range)}`), block(event.text)];
    default:
      return [el('span', { class: 'who' }, event.text?.startsWith('session start') ? 'session' : 'compaction'), block(event.text) as HTMLElement];
  }
}

async function loadTimeline(tapeId: string, params: URLSearchParams, offset?: number): Promise<void> {
  const view = document.getElementById('timeline');
  if (!view) return;
  const list = document.getElementById('tape-list');
  if (list) markSelected(list, tapeId);
  const at = params.get('at');
  const to = params.get('to');
  const from = at !== null && /^\d+$/.test(at) ? Number(at) : null;
  const until = to !== null && /^\d+$/.test(to) ? Math.max(Number(to), from ?? 0) : from;
  const query = new URLSearchParams({ limit: String(TIMELINE_LIMIT), ...(offset !== undefined ? { offset: String(offset) } : from !== null ? { around: String(from) } : {}) });
  let page: TimelinePage;
  try {
    page = await api<TimelinePage>('GET', `/tapes/${encodeURIComponent(tapeId)}?${query}`);
  } catch (error) {
    return showError(error, view);
  }
  const tape = page.tape;
  const highlighted = (offset: number): boolean => from !== null && until !== null && offset >= from && offset <= until;
  const items = page.events.map((event) => {
    const item = el(
      'li',
      { id: `ev-${event.offset}`, class: `event k-${event.k.replace('.', '-')}${highlighted(event.offset) ? ' hl' : ''}`, 'data-offset': String(event.offset), 'data-kind': event.k, tabindex: '-1' },
      el('span', { class: 'offset mono' }, String(event.offset)),
      el('span', { class: 'muted when' }, event.t ? fmtDate(event.t).slice(11) : ''),
      el('div', { class: 'body' }, ...eventBody(event), event.agent ? el('span', { class: 'chip' }, `subagent ${short(event.agent, 12)}`) : '', event.truncated ? el('span', { class: 'muted' }, ' (cut; the whole event is in the tape)') : ''),
    );
    // The moment asked for shows its change and output unfolded.
    if (highlighted(event.offset)) item.querySelectorAll('details').forEach((details) => (details.open = true));
    return item;
  });
  const move = (next: number) => () => void loadTimeline(tapeId, params, next);
  const last = page.offset + page.events.length;
  view.replaceChildren(
    el(
      'article',
      { class: 'panel' },
      el('h2', {}, 'Tape ', el('span', { class: 'mono', id: 'tape-id' }, tape.tape_id.slice(0, 16))),
      el(
        'p',
        { class: 'muted' },
        `${tape.harness ?? '?'} session `,
        tape.session_id ? el('a', { href: href('sessions', { id: tape.session_id }) }, short(tape.session_id, 40)) : '—',
        ` · ${fmtDate(tape.time)}${tape.model ? ` · ${tape.model}` : ''}${tape.cwd ? ` · ${tape.cwd}` : ''}${tape.coverage ? ` · coverage ${tape.coverage}` : ''}${tape.previous_tape ? ` · continues ${tape.previous_tape.slice(0, 12)}` : ''}`,
      ),
      el('p', { class: 'muted', id: 'tape-kinds' }, `${fmtNum(page.total)} events: ${Object.entries(page.kinds).map(([kind, n]) => `${kind} ${n}`).join(' · ')}`),
      pager(`events ${page.offset}–${last - 1} of ${page.total}`, page.offset > 0 ? move(Math.max(0, page.offset - page.limit)) : null, last < page.total ? move(page.offset + page.limit) : null, 'timeline-pager'),
      el('ol', { class: 'timeline', id: 'events' }, ...items),
    ),
  );
  const target = from !== null ? document.getElementById(`ev-${from}`) : null;
  if (target) {
    // On a wide window the timeline scrolls in its own box (explain and the list stay where they are); on a narrow
    // one the page scrolls.
    const box = document.getElementById('events') as HTMLElement;
    if (getComputedStyle(box).overflowY === 'auto' && box.scrollHeight > box.clientHeight) {
      box.scrollTop = Math.max(0, target.offsetTop - box.clientHeight / 2 + target.offsetHeight / 2);
      view.scrollIntoView({ block: 'nearest' });
    } else {
      target.scrollIntoView({ block: 'center' });
    }
    target.focus({ preventScroll: true });
    say(`tape ${tape.tape_id.slice(0, 12)}: event ${from}${until !== null && until !== from ? `–${until}` : ''} (${target.dataset.kind})`);
  }
}

/**
 * The viewer page (`engram ui`): plain DOM, no framework, no network beyond its own server. The launch URL carries
 * the per-launch secret in its fragment; the page keeps it in sessionStorage (this tab only) and sends it in the
 * x-engram-ui header of every API call (api.ts). Screens: Engrams, Search, Review, Sessions (sessions.ts), Tapes and
 * explain (tapes.ts), Health — hash routes with parameters (`#tapes?tape=…&at=…`).
 */
import { api, main, pager, route as currentRoute, say, SCREENS, showError, href } from './api.js';
import { pinPanel, relevancePanel } from './chart.js';
import { el, fmtDate, fmtNum, statusChip } from './dom.js';
import { renderSessions } from './sessions.js';
import { renderTapes } from './tapes.js';
import type { DecisionResult, Detail, DoctorReport, Facets, Page, ReviewQueueView, SearchView, UndoView } from './types.js';

// ---------------------------------------------------------------------------------------------------- Engrams

interface ListState {
  filters: Record<string, string>;
  /** Position of the page (for "x–y of n"); the page itself is found by keyset: after or before an id. */
  offset: number;
  cursor: { after?: number; before?: number };
  limit: number;
  selected: number | null;
}
const listState: ListState = { filters: { status: 'active,pending' }, offset: 0, cursor: {}, limit: 50, selected: null };
let facets: Facets | null = null;

function select(name: string, label: string, options: Array<[string, string]>, value: string): HTMLElement {
  const input = el('select', { name, 'aria-label': label }, ...options.map(([v, text]) => el('option', { value: v, ...(v === value ? { selected: '' } : {}) }, text)));
  return el('label', {}, label, input);
}

async function renderEngrams(params: URLSearchParams): Promise<void> {
  const wanted = Number(params.get('id'));
  if (Number.isInteger(wanted) && wanted > 0) listState.selected = wanted;
  const list = el('section', { id: 'engram-list', 'aria-label': 'Engrams' });
  const detail = el('section', { id: 'engram-detail', 'aria-label': 'Engram detail', 'aria-live': 'polite' }, el('p', { class: 'muted' }, 'Select an engram (↑/↓ or j/k, Enter).'));
  const filters = el('div', { id: 'filters' });
  main.replaceChildren(filters, el('div', { class: 'split' }, list, detail));
  // The first page does not wait for the filter choices (counting them is the slower query on a big store).
  const counted = facets ? Promise.resolve(facets) : api<Facets>('GET', '/facets');
  await loadList();
  facets = await counted;
  filters.replaceWith(filterForm(facets));
  if (listState.selected !== null) await loadDetail(listState.selected);
}

function filterForm(facets: Facets): HTMLElement {
  const f = listState.filters;
  const form = el(
    'form',
    { class: 'filters', role: 'search', 'aria-label': 'Filter engrams' },
    select('status', 'Status', [['active,pending', 'active + pending'], ['active', 'active'], ['pending', 'pending'], ['rejected', 'rejected'], ['deprecated', 'deprecated'], ['pending,active,rejected,deprecated', 'all']], f.status ?? ''),
    select('category', 'Category', [['', 'any'], ...facets.categories.map((c): [string, string] => [c.value, `${c.value} (${c.count})`])], f.category ?? ''),
    select('tag', 'Tag', [['', 'any'], ...facets.tags.map((t): [string, string] => [t.value, `${t.value} (${t.count})`])], f.tag ?? ''),
    select('project', 'Project', [['', 'any'], ...facets.projects.map((p): [string, string] => [p.value ?? '(none)', `${p.value ?? '(none)'} (${p.count})`])], f.project ?? ''),
    select('pinned', 'Pinned', [['', 'any'], ['true', 'pinned'], ['false', 'not pinned']], f.pinned ?? ''),
    select('stale', 'Freshness', [['', 'any'], ['true', 'stale']], f.stale ?? ''),
    select('liveness', 'Code', [['', 'any'], ['gone', 'code gone'], ['alive', 'alive'], ['kept', 'kept'], ['unknown', 'unknown']], f.liveness ?? ''),
    select('learned_by', 'Learned by', [['', 'any'], ['user', 'user'], ['agent', 'agent'], ['harvest', 'harvest'], ['import', 'import'], ['sync', 'sync']], f.learned_by ?? ''),
  );
  form.addEventListener('change', () => {
    const data = new FormData(form);
    listState.filters = Object.fromEntries([...data.entries()].filter(([, v]) => v !== '').map(([k, v]) => [k, String(v)]));
    listState.offset = 0;
    listState.cursor = {};
    void loadList();
  });
  return form;
}

async function loadList(): Promise<void> {
  const list = document.getElementById('engram-list');
  if (!list) return;
  const cursor: Record<string, string> = listState.cursor.after !== undefined ? { after: String(listState.cursor.after) } : listState.cursor.before !== undefined ? { before: String(listState.cursor.before) } : {};
  const query = new URLSearchParams({ ...listState.filters, limit: String(listState.limit), ...cursor });
  const started = performance.now();
  let page: Page;
  try {
    page = await api<Page>('GET', `/engrams?${query}`);
  } catch (error) {
    return showError(error, list);
  }
  say(`${fmtNum(page.total)} engrams · page in ${Math.round(performance.now() - started)} ms`);
  const rows = page.engrams.map((engram) => {
    const row = el(
      'tr',
      { 'data-id': String(engram.id), tabindex: '0', 'aria-selected': String(engram.id === listState.selected) },
      el('td', { class: 'num' }, `#${engram.id}`),
      el('td', { class: 'text' }, engram.pinned ? el('span', { class: 'chip' }, 'pinned') : '', engram.title ? el('strong', {}, `${engram.title} — `) : '', engram.text.length > 160 ? `${engram.text.slice(0, 159)}…` : engram.text),
      el('td', {}, el('span', { class: 'chip' }, engram.category), ...engram.tags.slice(0, 4).map((tag) => el('span', { class: 'chip' }, tag))),
      el('td', {}, statusChip(engram.status)),
      el('td', { class: 'num' }, String(engram.times_matched)),
    );
    row.addEventListener('click', () => void loadDetail(engram.id));
    row.addEventListener('keydown', (event) => {
      if (event.key === 'Enter') void loadDetail(engram.id);
    });
    return row;
  });
  // A keyset page says nothing of its position: the page keeps it (clamped when rows came or went meanwhile).
  const first = page.engrams[0]?.id;
  const lastId = page.engrams.at(-1)?.id;
  if (listState.cursor.before !== undefined && page.engrams.length < listState.limit) listState.offset = 0;
  const last = Math.min(page.total, listState.offset + page.engrams.length);
  const atStart = listState.offset === 0 || (listState.cursor.before !== undefined && page.engrams.length < listState.limit);
  list.replaceChildren(
    el(
      'table',
      {},
      el('thead', {}, el('tr', {}, el('th', {}, 'id'), el('th', {}, 'text'), el('th', {}, 'category · tags'), el('th', {}, 'status'), el('th', { class: 'num' }, 'matched'))),
      el('tbody', {}, ...(rows.length ? rows : [el('tr', {}, el('td', { colspan: '5', class: 'muted' }, 'No engrams match these filters.'))])),
    ),
    pager(
      page.total ? `${fmtNum(listState.offset + 1)}–${fmtNum(last)} of ${fmtNum(page.total)}` : '0',
      !atStart && first !== undefined
        ? () => {
            listState.offset = Math.max(0, listState.offset - listState.limit);
            listState.cursor = listState.offset === 0 ? {} : { before: first };
            void loadList();
          }
        : null,
      last < page.total && lastId !== undefined
        ? () => {
            listState.offset += listState.limit;
            listState.cursor = { after: lastId };
            void loadList();
          }
        : null,
      'page-info-pager',
    ),
  );
}

function bars(rows: Array<{ tag: string; score: number; positive_evals: number; negative_evals: number }>): HTMLElement {
  if (rows.length === 0) return el('p', { class: 'muted' }, 'Not evaluated in any tag yet.');
  return el(
    'div',
    { class: 'bars', role: 'list', 'aria-label': 'Tag relevance' },
    ...rows.flatMap((row) => {
      const width = `${(Math.min(3, Math.abs(row.score)) / 3) * 50}%`;
      return [
        el('span', { role: 'listitem' }, row.tag),
        el('span', { class: 'bar-track', title: `score ${row.score.toFixed(2)}` }, el('span', { class: `bar-fill ${row.score >= 0 ? 'pos' : 'neg'}`, style: `width:${width}` })),
        el('span', { class: 'muted' }, `${row.score.toFixed(2)} (+${row.positive_evals} / −${row.negative_evals})`),
      ];
    }),
  );
}

async function loadDetail(id: number): Promise<void> {
  listState.selected = id;
  document.querySelectorAll<HTMLElement>('#engram-list tr[data-id]').forEach((row) => row.setAttribute('aria-selected', String(row.dataset.id === String(id))));
  const pane = document.getElementById('engram-detail');
  if (!pane) return;
  let detail: Detail;
  try {
    detail = await api<Detail>('GET', `/engrams/${id}`);
  } catch (error) {
    return showError(error, pane);
  }
  const engram = detail.engram;
  if (!engram) {
    pane.replaceChildren(el('div', { class: 'panel' }, el('h2', {}, `#${id}`), el('p', {}, detail.summary)));
    return;
  }
  const act = async (label: string, run: () => Promise<unknown>): Promise<void> => {
    try {
      say(`${label}…`);
      await run();
      say(`${label}: done`);
      await Promise.all([loadList(), loadDetail(id)]);
    } catch (error) {
      say(`${label} failed: ${(error as Error).message}`);
    }
  };
  const pin = el('button', { type: 'button', id: 'pin' }, engram.pinned ? 'Unpin' : 'Pin');
  pin.addEventListener('click', () => void act(engram.pinned ? 'Unpin' : 'Pin', () => api('POST', `/engrams/${id}/pin`, { pinned: !engram.pinned })));
  const deprecate = el('button', { type: 'button', id: 'deprecate', class: engram.status === 'deprecated' ? '' : 'danger' }, engram.status === 'deprecated' ? 'Undeprecate (to review)' : 'Deprecate');
  deprecate.addEventListener('click', () => {
    if (engram.status === 'deprecated') return void act('Undeprecate', () => api('POST', `/engrams/${id}/deprecate`, { undo: true }));
    const reason = prompt('Why is it deprecated? (optional)') ?? undefined;
    void act('Deprecate', () => api('POST', `/engrams/${id}/deprecate`, reason ? { reason } : {}));
  });
  const edit = el('button', { type: 'button', id: 'edit' }, 'Edit');
  const editor = el('form', { id: 'editor', hidden: '' });
  const text = el('textarea', { name: 'text', 'aria-label': 'Text' }, engram.text) as HTMLTextAreaElement;
  const tags = el('input', { name: 'tags', value: engram.tags.join(', '), 'aria-label': 'Tags (comma-separated)' }) as HTMLInputElement;
  const category = el('input', { name: 'category', value: engram.category, 'aria-label': 'Category' }) as HTMLInputElement;
  editor.append(el('label', {}, 'Text', text), el('label', {}, 'Tags ', tags), el('label', {}, ' Category ', category), el('div', { class: 'actions' }, el('button', { type: 'submit', class: 'primary' }, 'Save'), el('button', { type: 'button', id: 'cancel-edit' }, 'Cancel')));
  edit.addEventListener('click', () => {
    editor.hidden = false;
    text.focus();
  });
  editor.querySelector('#cancel-edit')?.addEventListener('click', () => {
    editor.hidden = true;
  });
  editor.addEventListener('submit', (event) => {
    event.preventDefault();
    const patch: Record<string, unknown> = {};
    if (text.value.trim() !== engram.text) patch.text = text.value.trim();
    const newTags = tags.value.split(',').map((t) => t.trim()).filter(Boolean);
    if (newTags.join(',') !== engram.tags.join(',')) patch.tags = newTags;
    if (category.value.trim() !== engram.category) patch.category = category.value.trim();
    if (Object.keys(patch).length === 0) {
      editor.hidden = true;
      return;
    }
    void act('Save', () => api('PATCH', `/engrams/${id}`, patch));
  });
  const stats = detail.stats;
  pane.replaceChildren(
    el(
      'article',
      { class: 'panel' },
      el('h2', {}, `#${engram.id} `, statusChip(engram.status), engram.pinned ? el('span', { class: 'chip' }, engram.auto_pinned ? 'auto-pinned' : 'pinned') : '', detail.stale ? el('span', { class: 'chip st-pending' }, 'stale') : ''),
      engram.title ? el('p', {}, el('strong', {}, engram.title)) : '',
      el('p', { class: 'text', id: 'detail-text' }, engram.text),
      engram.content ? el('p', { class: 'text muted' }, engram.content) : '',
      el('div', { class: 'actions' }, edit, pin, deprecate),
      editor,
      el(
        'dl',
        { class: 'kv' },
        ...kv('category', engram.category),
        ...kv('tags', engram.tags.join(', ') || '—'),
        ...kv('project', engram.project ?? '(none)'),
        ...kv('learned by', `${engram.learned_by} (${engram.source})`),
        ...kv('status reason', engram.status_reason ?? '—'),
        ...kv('prerequisites', engram.prerequisites ? JSON.stringify(engram.prerequisites) : '—'),
        ...kv('matched', `${engram.times_matched} times, last ${fmtDate(engram.last_matched_at)}`),
        ...kv('code', `${engram.liveness}${engram.liveness_at ? ` (${fmtDate(engram.liveness_at)})` : ''}`),
        ...kv('fresh until', detail.stale_after ? fmtDate(detail.stale_after) : 'never stale'),
        ...kv('created', fmtDate(engram.created_at)),
        ...kv('updated', `${fmtDate(engram.updated_at)} (${engram.revision_count} revisions)`),
      ),
      el('h3', {}, 'Tag relevance'),
      bars(stats?.tag_relevance ?? []),
      el('h3', {}, 'Tag relevance over time'),
      relevancePanel(detail.relevance_history),
      el('h3', {}, 'Pin history'),
      pinPanel(detail.pin_history),
      stats && stats.repos.length ? el('p', { class: 'muted' }, `Matched in: ${stats.repos.map((r) => `${r.repo} ×${r.times_matched}`).join(', ')}`) : '',
      el('h3', {}, 'Provenance'),
      el('p', {}, detail.summary),
      ...detail.sources.map((source) =>
        el(
          'div',
          { class: 'card' },
          el('div', { class: 'muted' }, 'session ', source.session_id ? el('a', { href: href('sessions', { id: source.session_id }), class: 'session-link' }, source.session_id) : '—', ` · tape ${source.tape_id ?? '—'}${source.event_from !== null ? ` · events ${source.event_from}–${source.event_to}` : ''}${source.tape_found ? '' : ' (tape not on this machine)'}`),
          source.tape_id && source.tape_found && source.event_from !== null
            ? el('p', {}, el('a', { href: href('tapes', { tape: source.tape_id, at: source.event_from, to: source.event_to ?? source.event_from }), class: 'moment-link', id: `moment-${source.tape_id.slice(0, 12)}` }, 'Open this moment in the tape →'))
            : '',
          source.quote ? el('blockquote', {}, source.quote) : '',
          source.moment.length ? el('ol', { class: 'steps' }, ...source.moment.map((m) => el('li', {}, `[${m.kind}] ${m.text}`))) : '',
        ),
      ),
      detail.conflicts.length ? el('h3', {}, 'Conflicts') : '',
      ...detail.conflicts.map((c) => el('p', {}, `${c.status} · with #${c.other_id} (${c.other_status ?? 'forgotten'}): ${c.other_text} — ${c.reason}`)),
      el('h3', {}, 'History'),
      el('ol', { class: 'steps', id: 'history' }, ...detail.history.map((step) => el('li', {}, `${fmtDate(step.at)} · ${step.op} by ${step.actor} via ${step.via}${step.reason ? ` — ${step.reason}` : ''}${Object.keys(step.fields).length ? ` (${Object.keys(step.fields).join(', ')})` : ''}${step.undone_by ? ' · undone' : ''}`))),
    ),
  );
}

function kv(key: string, value: string): HTMLElement[] {
  return [el('dt', {}, key), el('dd', {}, value)];
}

// ---------------------------------------------------------------------------------------------------- Search

let lastQuery = '';

function renderSearch(): void {
  const input = el('input', { type: 'search', name: 'q', id: 'q', placeholder: 'What would the agent look for?', value: lastQuery, size: '50', 'aria-label': 'Query' }) as HTMLInputElement;
  const mode = select('mode', 'Mode', [['hybrid', 'hybrid'], ['bm25', 'BM25 only'], ['vector', 'vectors only']], 'hybrid');
  const tags = el('input', { name: 'env_tags', placeholder: 'e.g. typescript, linux', 'aria-label': 'Environment tags' });
  const form = el('form', { class: 'filters', role: 'search' }, el('label', {}, 'Query', input), mode, el('label', {}, 'Environment tags', tags), el('button', { type: 'submit', class: 'primary' }, 'Search'));
  const out = el('section', { id: 'search-results', 'aria-live': 'polite' });
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    lastQuery = input.value;
    const data = new FormData(form);
    const envTags = String(data.get('env_tags') ?? '').split(',').map((t) => t.trim()).filter(Boolean);
    void runSearch(out, { query: input.value, mode: String(data.get('mode')), ...(envTags.length ? { env_tags: envTags } : {}) });
  });
  main.replaceChildren(form, out);
  input.focus();
}

async function runSearch(out: HTMLElement, request: Record<string, unknown>): Promise<void> {
  if (!String(request.query).trim()) return;
  let response: SearchView;
  try {
    response = await api<SearchView>('POST', '/search', request);
  } catch (error) {
    return showError(error, out);
  }
  say(`${response.results.length} results · ${response.mode}${response.model ? ` (${response.model})` : ''} · ${response.timings.total_ms} ms`);
  const abstain = response.explain?.abstain;
  const silent = response.abstained ?? response.weak ?? (response.results.length === 0 ? 'nothing matched the query' : null);
  const verdict = el(
    'div',
    { class: `verdict ${silent ? 'silent' : 'answer'}`, id: 'verdict' },
    el('strong', {}, silent ? 'The hooks would stay silent: ' : 'The hooks would answer. '),
    silent ?? '',
    abstain ? el('div', { class: 'muted' }, `Rule: ${abstain.rule}`) : '',
    abstain ? el('div', { class: 'muted' }, `Query terms (IDF weight): ${abstain.terms.map((t) => `${t.term} ${t.weight.toFixed(2)}`).join(', ') || '—'}`) : '',
    abstain?.unknown.terms.length ? el('div', { class: 'muted' }, `Words no memory holds: ${abstain.unknown.terms.join(', ')} (${Math.round(abstain.unknown.share * 100)} % of the weight)`) : '',
    abstain?.best ? el('div', { class: 'muted' }, `Best coverage: #${abstain.best.id} covers ${Math.round(abstain.best.coverage * 100)} % of the weight of the words the store holds (${abstain.best.matched.join(', ') || 'no terms'})${abstain.best.agreed ? '; both lists rank it top 3' : ''}`) : '',
    response.degraded ? el('div', { class: 'muted' }, `Degraded: ${response.degraded}`) : '',
  );
  const fusion = response.explain?.fusion;
  const factor = (value: number): string => (value === 1 ? '—' : `×${value.toFixed(3)}`);
  out.replaceChildren(
    verdict,
    fusion ? el('p', { class: 'muted' }, `RRF k=${fusion.k}; weights BM25 ${fusion.weights.bm25}, vector ${fusion.weights.vector}, anchor ${fusion.weights.anchor}; candidates BM25 ${fusion.lists.bm25}, vector ${fusion.lists.vector}, anchor ${fusion.lists.anchor}`) : '',
    el(
      'table',
      { id: 'search-table' },
      el('thead', {}, el('tr', {}, el('th', {}, 'id'), el('th', {}, 'text'), el('th', { class: 'num' }, 'BM25 rank'), el('th', { class: 'num' }, 'vector rank'), el('th', { class: 'num' }, 'fused'), el('th', { class: 'num' }, 'tag relevance'), el('th', { class: 'num' }, 'pin'), el('th', { class: 'num' }, 'recency'), el('th', { class: 'num' }, 'score'))),
      el(
        'tbody',
        {},
        ...response.results.map((hit) =>
          el(
            'tr',
            { 'data-id': String(hit.id) },
            el('td', { class: 'num' }, `#${hit.id}`),
            el('td', { class: 'text' }, hit.engram.text.length > 140 ? `${hit.engram.text.slice(0, 139)}…` : hit.engram.text, ' ', statusChip(hit.engram.status)),
            el('td', { class: 'num' }, hit.ranks.bm25 === null ? '–' : `${hit.ranks.bm25}${hit.signals.bm25 !== null ? ` (${hit.signals.bm25.toFixed(2)})` : ''}`),
            el('td', { class: 'num' }, hit.ranks.vector === null ? '–' : `${hit.ranks.vector}${hit.signals.vector !== null ? ` (${hit.signals.vector.toFixed(3)})` : ''}`),
            el('td', { class: 'num' }, hit.adjustments ? hit.adjustments.fused.toFixed(4) : '–'),
            el('td', { class: 'num' }, hit.adjustments?.tag_relevance ? `${factor(hit.adjustments.tag_relevance.factor)} (avg ${hit.adjustments.tag_relevance.average.toFixed(2)}, ${hit.adjustments.tag_relevance.evals} evals)` : '—'),
            el('td', { class: 'num' }, hit.adjustments ? factor(hit.adjustments.pinned) : '–'),
            el('td', { class: 'num' }, hit.adjustments ? factor(hit.adjustments.recency) : '–'),
            el('td', { class: 'num' }, hit.score.toFixed(4)),
          ),
        ),
      ),
    ),
  );
}

// ---------------------------------------------------------------------------------------------------- Review

let lastUndo: string | null = null;
const REVIEW_PAGE = 50;
let reviewOffset = 0;

async function renderReview(): Promise<void> {
  let queue: ReviewQueueView;
  try {
    queue = await api<ReviewQueueView>('GET', `/review?limit=${REVIEW_PAGE}&offset=${reviewOffset}`);
    // A decision on the last item of the last page leaves it empty: show the page before.
    if (queue.items.length === 0 && reviewOffset > 0 && queue.total > 0) {
      reviewOffset = Math.max(0, Math.floor((queue.total - 1) / REVIEW_PAGE) * REVIEW_PAGE);
      queue = await api<ReviewQueueView>('GET', `/review?limit=${REVIEW_PAGE}&offset=${reviewOffset}`);
    }
  } catch (error) {
    return showError(error);
  }
  setReviewCount(queue.total);
  const undo = el('button', { type: 'button', id: 'undo', ...(lastUndo ? {} : { disabled: '' }) }, 'Undo last action');
  undo.addEventListener('click', () => {
    void (async () => {
      try {
        const result = await api<UndoView>('POST', '/undo', lastUndo ? { token: lastUndo } : {});
        lastUndo = null;
        say(`Undid ${result.undid.map((u) => `${u.op} of #${u.engram_ids.join(', #')}`).join('; ')}`);
        await renderReview();
      } catch (error) {
        say(`Undo failed: ${(error as Error).message}`);
      }
    })();
  });
  const decide = (kind: 'approve' | 'reject' | 'forget', id: number, extra: Record<string, unknown> = {}) => async (): Promise<void> => {
    try {
      const result = await api<DecisionResult>('POST', `/review/${kind}`, { ids: [id], ...extra });
      lastUndo = result.undo_token;
      say(result.decisions.map((d) => `#${d.id}: ${d.action} (${d.from} → ${d.to})`).join('; '));
      await renderReview();
    } catch (error) {
      say(`${kind} failed: ${(error as Error).message}`);
    }
  };
  const cards = queue.items.map((item) => {
    const e = item.engram;
    const button = (label: string, kind: 'approve' | 'reject' | 'forget', cls = '', settle?: 'supersede' | 'keep-both') => {
      const b = el('button', { type: 'button', class: cls, 'data-action': settle ? `${kind}-${settle}` : kind, 'data-id': String(e.id) }, label);
      b.addEventListener('click', () => void decide(kind, e.id, settle ? { settle } : {})());
      return b;
    };
    const open = item.conflicts.some((c) => c.status === 'open');
    return el(
      'article',
      { class: 'card', 'data-id': String(e.id) },
      el('div', {}, el('strong', {}, `#${e.id} `), statusChip(e.status), ' ', ...item.reasons.map((r) => el('span', { class: 'chip' }, r)), el('span', { class: 'muted' }, ` ${e.learned_by} · ${e.category} · ${fmtDate(e.created_at)}`)),
      el('p', { class: 'text' }, e.text),
      e.status_reason ? el('p', { class: 'muted' }, e.status_reason) : '',
      el(
        'div',
        { class: 'side' },
        el(
          'div',
          {},
          el('h3', {}, 'Evidence'),
          ...(item.evidence.length
            ? item.evidence.map((ev) => el('div', {}, ev.quote ? el('blockquote', {}, ev.quote) : '', el('div', { class: 'muted' }, `session ${ev.session_id ?? '—'}${ev.files.length ? ` · files ${ev.files.join(', ')}` : ''}`)))
            : [el('p', { class: 'muted' }, 'No recorded evidence.')]),
        ),
        el(
          'div',
          {},
          el('h3', {}, 'Conflicts and near-duplicates'),
          ...item.conflicts.map((c) => el('p', {}, el('span', { class: 'chip st-rejected' }, 'conflict'), ` #${c.other_id} (${c.other_status ?? 'forgotten'}): ${c.other_text}`, el('div', { class: 'muted' }, c.reason))),
          ...item.near_duplicates.map((d) => el('p', {}, el('span', { class: 'chip' }, `${Math.round(d.similarity * 100)} % alike`), ` #${d.id} (${d.status}): ${d.text}`)),
          item.conflicts.length || item.near_duplicates.length ? '' : el('p', { class: 'muted' }, 'None.'),
        ),
      ),
      el(
        'div',
        { class: 'actions' },
        ...(open
          ? [button('Approve, retire the other', 'approve', 'primary', 'supersede'), button('Approve, keep both', 'approve', '', 'keep-both')]
          : [button(e.status === 'active' ? 'Confirm' : 'Approve', 'approve', 'primary')]),
        button(e.status === 'active' ? 'Retire' : 'Reject', 'reject', 'danger'), button('Forget', 'forget', 'danger')),
    );
  });
  const last = queue.offset + queue.items.length;
  const reviewPager = (id: string): HTMLElement =>
    pager(
      queue.total ? `${fmtNum(queue.offset + 1)}–${fmtNum(last)} of ${fmtNum(queue.total)}` : '0',
      queue.offset > 0
        ? () => {
            reviewOffset = Math.max(0, reviewOffset - REVIEW_PAGE);
            void renderReview();
          }
        : null,
      last < queue.total
        ? () => {
            reviewOffset += REVIEW_PAGE;
            void renderReview();
          }
        : null,
      id,
    );
  main.replaceChildren(
    el('div', { class: 'actions' }, el('span', {}, `${queue.total} waiting · ${Object.entries(queue.counts).map(([k, v]) => `${k} ${v}`).join(' · ')}`), undo),
    queue.total > REVIEW_PAGE ? reviewPager('review-pager') : '',
    ...(cards.length ? cards : [el('p', { class: 'muted', id: 'queue-empty' }, 'Nothing waits for review.')]),
    queue.total > REVIEW_PAGE ? reviewPager('review-pager-bottom') : '',
  );
  if (queue.offset > 0) window.scrollTo(0, 0);
}

function setReviewCount(total: number): void {
  (document.getElementById('review-count') as HTMLElement).textContent = total ? String(total) : '';
}

// ---------------------------------------------------------------------------------------------------- Health

async function renderHealth(): Promise<void> {
  main.replaceChildren(el('p', { class: 'muted' }, 'Running engram doctor…'));
  let report: DoctorReport;
  try {
    report = await api<DoctorReport>('GET', '/doctor');
  } catch (error) {
    return showError(error);
  }
  const cls = (status: string): string => (status === 'ok' ? 'check-ok' : status === 'error' ? 'check-fail' : status === 'degraded' ? 'check-warn' : 'muted');
  main.replaceChildren(
    el('h2', {}, 'Health: ', el('span', { class: cls(report.status), id: 'health-status' }, report.status)),
    el(
      'table',
      { id: 'checks' },
      el('thead', {}, el('tr', {}, el('th', {}, 'check'), el('th', {}, 'status'), el('th', {}, 'detail'), el('th', {}, 'fix'))),
      el('tbody', {}, ...report.checks.map((check) => el('tr', {}, el('td', {}, check.name), el('td', { class: cls(check.status) }, check.status), el('td', { class: 'text' }, check.detail), el('td', { class: 'text' }, check.fix ?? '')))),
    ),
  );
}

// ---------------------------------------------------------------------------------------------------- Routing

async function route(): Promise<void> {
  const { screen, params } = currentRoute();
  document.querySelectorAll<HTMLAnchorElement>('nav a').forEach((a) => (a.dataset.screen === screen ? a.setAttribute('aria-current', 'page') : a.removeAttribute('aria-current')));
  document.title = `Engram · ${screen[0]?.toUpperCase()}${screen.slice(1)}`;
  const from = document.body.dataset.screen;
  document.body.dataset.screen = screen;
  if (from !== screen) delete document.body.dataset.ready;
  try {
    if (screen === 'engrams') await renderEngrams(params);
    else if (screen === 'search') renderSearch();
    else if (screen === 'review') await renderReview();
    else if (screen === 'sessions') await renderSessions(params);
    else if (screen === 'tapes') await renderTapes(params);
    else await renderHealth();
    document.body.dataset.ready = screen;
  } catch (error) {
    showError(error);
  }
}

document.addEventListener('keydown', (event) => {
  const target = event.target as HTMLElement;
  if (target.closest('input, textarea, select') || event.ctrlKey || event.metaKey || event.altKey) return;
  if (event.key === '/') {
    event.preventDefault();
    location.hash = 'search';
    return;
  }
  const digit = Number(event.key);
  if (digit >= 1 && digit <= SCREENS.length) {
    location.hash = SCREENS[digit - 1] as string;
    return;
  }
  if (['j', 'k', 'ArrowDown', 'ArrowUp'].includes(event.key)) {
    // The list of the screen: its rows are focusable and open on Enter.
    const rows = [...document.querySelectorAll<HTMLElement>('#engram-list tr[data-id], #main tr.nav-row')];
    if (rows.length === 0) return;
    event.preventDefault();
    const at = rows.findIndex((row) => row === document.activeElement);
    const next = rows[Math.max(0, Math.min(rows.length - 1, at + (event.key === 'j' || event.key === 'ArrowDown' ? 1 : -1)))] as HTMLElement;
    next.focus();
  }
});

window.addEventListener('hashchange', () => void route());
// An open page keeps the background server from stopping idle.
setInterval(() => {
  if (document.visibilityState === 'visible') void api('GET', '/ping').catch(() => say('The Engram server does not answer: run engram ui again.'));
}, 60_000);
void route();
void api<ReviewQueueView>('GET', '/review?limit=1').then((queue) => setReviewCount(queue.total), () => undefined);

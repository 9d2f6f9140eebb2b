/** Small inline SVG charts: a tag's learned relevance over time (no chart library; the page's CSS colours them). */
import { el, fmtDate, svg } from './dom.js';
import type { PinStep, RelevanceSeries } from './types.js';

const WIDTH = 240;
const HEIGHT = 56;
const PAD = 5;

const pointLabel = (point: RelevanceSeries['points'][number]): string =>
  `${fmtDate(point.at)} · ${point.score_before === null ? '' : `${point.score_before.toFixed(2)} → `}${point.score.toFixed(2)} · ${
    point.cause === 'baseline' ? 'value when its history began' : `${point.cause}${point.judgement_score !== null ? ` ${point.judgement_score > 0 ? '+' : ''}${point.judgement_score}` : ''}${point.judged_by ? ` by ${point.judged_by}` : ''}`
  }${point.session_id ? ` in session ${point.session_id}` : ''}${point.evidence ? ` — “${point.evidence}”` : ''}`;

/** One tag's relevance (−3 … 3) over time: a line through each move, zero dashed, each point titled with its judgement. */
export function relevanceChart(series: RelevanceSeries): SVGSVGElement {
  const points = series.points;
  const times = points.map((point) => Date.parse(point.at));
  const first = Math.min(...times);
  const last = Math.max(...times);
  const x = (time: number): number => (last === first ? WIDTH / 2 : PAD + ((time - first) / (last - first)) * (WIDTH - 2 * PAD));
  const y = (score: number): number => PAD + ((3 - Math.max(-3, Math.min(3, score))) / 6) * (HEIGHT - 2 * PAD);
  const label = `Relevance in ${series.tag} over time: ${points.length} ${points.length === 1 ? 'value' : 'moves'}${points.length ? `, from ${points[0]?.score.toFixed(2)} to ${points.at(-1)?.score.toFixed(2)}` : ''}`;
  const chart = svg('svg', { class: 'spark', viewBox: `0 0 ${WIDTH} ${HEIGHT}`, width: WIDTH, height: HEIGHT, role: 'img', 'aria-label': label, 'data-tag': series.tag }, svg('title', {}, label));
  chart.append(svg('line', { class: 'zero', x1: 0, x2: WIDTH, y1: y(0), y2: y(0) }));
  for (const value of [3, 0, -3]) chart.append(svg('text', { class: 'axis', x: WIDTH - 2, y: Math.min(HEIGHT - 2, Math.max(8, y(value) + 3)), 'text-anchor': 'end' }, value > 0 ? '+3' : value < 0 ? '−3' : '0'));
  if (points.length > 1) chart.append(svg('polyline', { class: 'line', fill: 'none', points: points.map((point, i) => `${x(times[i] as number).toFixed(1)},${y(point.score).toFixed(1)}`).join(' ') }));
  points.forEach((point, i) => {
    chart.append(svg('circle', { class: `dot ${point.score >= 0 ? 'pos' : 'neg'}`, cx: x(times[i] as number).toFixed(1), cy: y(point.score).toFixed(1), r: 2.6, 'data-cause': point.cause }, svg('title', {}, pointLabel(point))));
  });
  return chart;
}

/** Every tag's chart with its current value; the last moves listed for keyboard and screen-reader users. */
export function relevancePanel(all: RelevanceSeries[]): HTMLElement {
  if (all.length === 0) return el('p', { class: 'muted' }, 'Not evaluated in any tag yet.');
  return el(
    'div',
    { class: 'charts', id: 'relevance' },
    ...all.map((series) =>
      el(
        'figure',
        { class: 'chart', 'data-tag': series.tag },
        el('figcaption', {}, el('strong', {}, series.tag), ' ', el('span', { class: 'muted' }, series.current === null ? '(no current value)' : `now ${series.current.toFixed(2)}`)),
        series.points.length ? relevanceChart(series) : el('span', { class: 'muted' }, 'no recorded moves'),
        series.points.length ? el('div', { class: 'muted axis-dates' }, `${fmtDate(series.points[0]?.at).slice(0, 10)} → ${fmtDate(series.points.at(-1)?.at).slice(0, 10)}`) : '',
        series.points.length
          ? el('details', {}, el('summary', {}, `${series.points.length} ${series.points.length === 1 ? 'value' : 'moves'}`), el('ol', { class: 'steps' }, ...series.points.slice(-20).map((point) => el('li', {}, pointLabel(point)))))
          : '',
      ),
    ),
  );
}

/** Pin and unpin, by whom and when, newest last. */
export function pinPanel(steps: PinStep[]): HTMLElement {
  if (steps.length === 0) return el('p', { class: 'muted' }, 'Never pinned.');
  const who = (step: PinStep): string => (step.actor === 'system' ? 'Engram (auto)' : step.actor === 'user' ? 'a person' : step.actor);
  return el(
    'ol',
    { class: 'steps', id: 'pin-history' },
    ...steps.map((step) =>
      el('li', { 'data-pinned': String(step.pinned), 'data-actor': step.actor }, `${fmtDate(step.at)} · ${step.pinned ? (step.auto ? 'auto-pinned' : 'pinned') : 'unpinned'} by ${who(step)} via ${step.via}${step.op.startsWith('undo') ? ' (undo)' : ''}${step.reason ? ` — ${step.reason}` : ''}${step.undone_by ? ' · undone' : ''}`),
    ),
  );
}

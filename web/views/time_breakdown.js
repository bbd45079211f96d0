// Step-time breakdown: one stacked bar of the core's per-part seconds (the
// critical stage's), and the parts with their values in one unit; parts that
// are zero are listed together, greyed. Hidden while the core reports no time.
import { h, s } from '../lib/dom.js';
import { formatSecondsIn, formatStep, secondsUnit } from '../lib/format.js';
import { hatchDefs, hatchRect, swatch } from '../lib/patterns.js';
import { attachTooltip } from './tooltip.js';
import { chartWidth, onResize } from '../lib/axis.js';
import { isStale, markStale } from './stale.js';

export const TIME_PARTS = [
  { key: 'forward_s', label: 'Forward', css: 'forward' },
  { key: 'backward_s', label: 'Backward', css: 'backward' },
  { key: 'recompute_s', label: 'Recompute', css: 'recompute' },
  { key: 'optimizer_s', label: 'Optimizer', css: 'optimizer' },
  { key: 'tp_comm_exposed_s', label: 'TP comm (exposed)', css: 'tp' },
  { key: 'cp_comm_exposed_s', label: 'CP comm (exposed)', css: 'cp' },
  { key: 'ep_comm_exposed_s', label: 'EP comm (exposed)', css: 'ep' },
  { key: 'pp_comm_exposed_s', label: 'PP comm (exposed)', css: 'pp' },
  { key: 'dp_comm_exposed_s', label: 'DP comm (exposed)', css: 'dp' },
  { key: 'bubble_s', label: 'Pipeline bubble', css: 'bubble' },
  { key: 'straggler_s', label: 'Straggler', css: 'straggler' },
];

// Parts the core reports that this page does not know yet are shown too.
export function partsOf(breakdown) {
  const known = TIME_PARTS.filter((p) => Number.isFinite(breakdown[p.key]));
  const extra = Object.keys(breakdown)
    .filter((key) => key.endsWith('_s') && Number.isFinite(breakdown[key]) && !TIME_PARTS.some((p) => p.key === key))
    .map((key) => ({ key, label: key.slice(0, -2).replace(/_/g, ' '), css: 'other' }));
  return [...known, ...extra];
}

export function mount(root, store, actions) {
  const headline = h('p', { class: 'headline', id: 'iteration-time' });
  const chart = h('div', { class: 'chart' });
  const list = h('ul', { class: 'legend legend-values', id: 'time-parts' });
  const zeros = h('p', { class: 'note zero-parts', id: 'time-zero-parts' });
  root.append(headline, chart, list, zeros);

  const render = () => {
    const state = store.get();
    const time = state.result?.time;
    root.hidden = !time;
    if (!time) return;
    markStale(root, isStale(state));
    const critical = Number.isInteger(time.critical_stage) && (time.stages?.length ?? 0) > 1 ? ` (critical stage ${time.critical_stage})` : '';
    headline.replaceChildren('Step: ', h('strong', { dataset: { seconds: String(time.iteration_s) }, text: formatStep(time.iteration_s) }), critical);
    const breakdown = time.breakdown ?? {};
    const parts = partsOf(breakdown);
    const shown = parts.filter((p) => breakdown[p.key] > 0);
    const unit = secondsUnit(Math.max(0, ...shown.map((p) => breakdown[p.key])));
    const explained = new Set((state.result.explanations ?? []).map((x) => x.part));
    draw(chart, shown, breakdown, unit, explained);
    list.replaceChildren(...shown.map((p) => h('li', {
      dataset: { key: p.key, seconds: String(breakdown[p.key]), ...(explained.has(`/time/breakdown/${p.key}`) ? { explain: `/time/breakdown/${p.key}` } : {}) },
      class: explained.has(`/time/breakdown/${p.key}`) ? 'explainable' : '', tabindex: explained.has(`/time/breakdown/${p.key}`) ? '0' : undefined,
      role: explained.has(`/time/breakdown/${p.key}`) ? 'button' : undefined,
      title: explained.has(`/time/breakdown/${p.key}`) ? 'Click for the formula and its source' : undefined },
      swatch(`t-${p.css}`, p.css),
      `${p.label} `,
      h('span', { class: 'value', text: formatSecondsIn(breakdown[p.key], unit) }))));
    const none = parts.filter((p) => !(breakdown[p.key] > 0));
    zeros.replaceChildren(...(none.length ? [`Zero in this plan: ${none.map((p) => p.label).join(', ')}.`] : []));
    zeros.dataset.keys = none.map((p) => p.key).join(' ');
  };
  onResize(chart, render);
  store.subscribe((state, previous) => {
    if (state.result !== previous.result || state.errors !== previous.errors || state.localErrors !== previous.localErrors) render();
  });
}

function draw(container, parts, breakdown, unit, explained) {
  const width = chartWidth(container);
  const height = 34;
  const total = parts.reduce((sum, p) => sum + breakdown[p.key], 0);
  const svg = s('svg', { viewBox: `0 0 ${width} ${height}`, width, height, role: 'img', 'aria-label': 'Step time breakdown' });
  svg.append(hatchDefs('th'));
  let x = 0;
  for (const p of parts) {
    const w = total > 0 ? (breakdown[p.key] / total) * width : 0;
    if (w <= 0) continue;
    const box = { x, y: 2, width: w, height: height - 4 };
    const rect = s('rect', { ...box, class: `seg t-${p.css}`, tabindex: '0', role: 'img', 'aria-label': `${p.label}: ${formatSecondsIn(breakdown[p.key], unit)}`,
      dataset: explained.has(`/time/breakdown/${p.key}`) ? { explain: `/time/breakdown/${p.key}` } : {} },
      s('title', { text: `${p.label}: ${formatSecondsIn(breakdown[p.key], unit)}` }));
    attachTooltip(rect, () => [p.label, formatSecondsIn(breakdown[p.key], unit)]);
    svg.append(rect);
    const hatch = hatchRect('th', p.css, box);
    if (hatch) svg.append(hatch);
    x += w;
  }
  container.replaceChildren(svg);
}

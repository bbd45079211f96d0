// Step-time breakdown: one stacked bar of the core's per-part seconds, and
// the parts listed with their values. Hidden while the core reports no time.
import { h, s } from '../lib/dom.js';
import { formatSeconds } from '../lib/format.js';
import { attachTooltip } from './tooltip.js';
import { chartWidth, onResize } from '../lib/axis.js';

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
function partsOf(breakdown) {
  const known = TIME_PARTS.filter((p) => Number.isFinite(breakdown[p.key]));
  const extra = Object.keys(breakdown)
    .filter((key) => key.endsWith('_s') && Number.isFinite(breakdown[key]) && !TIME_PARTS.some((p) => p.key === key))
    .map((key) => ({ key, label: key.slice(0, -2).replace(/_/g, ' '), css: 'other' }));
  return [...known, ...extra];
}

export function mount(root, store) {
  const headline = h('p', { class: 'headline', id: 'iteration-time' });
  const chart = h('div', { class: 'chart' });
  const list = h('ul', { class: 'legend legend-values', id: 'time-parts' });
  root.append(headline, chart, list);

  const render = () => {
    const time = store.get().result?.time;
    root.hidden = !time;
    if (!time) return;
    headline.replaceChildren('Iteration: ', h('strong', { dataset: { seconds: String(time.iteration_s) }, text: formatSeconds(time.iteration_s) }),
      Number.isInteger(time.critical_stage) && (time.stages?.length ?? 0) > 1 ? ` (critical stage ${time.critical_stage})` : '');
    const breakdown = time.breakdown ?? {};
    const parts = partsOf(breakdown);
    draw(chart, parts, breakdown);
    list.replaceChildren(...parts.map((p) => h('li', { class: breakdown[p.key] > 0 ? '' : 'zero', dataset: { key: p.key, seconds: String(breakdown[p.key]) } },
      h('span', { class: `swatch t-${p.css}` }), `${p.label} `, h('span', { class: 'value', text: formatSeconds(breakdown[p.key]) }))));
  };
  onResize(chart, render);
  store.subscribe((state, previous) => { if (state.result !== previous.result) render(); });
}

function draw(container, parts, breakdown) {
  const width = chartWidth(container);
  const height = 34;
  const total = parts.reduce((sum, p) => sum + Math.max(0, breakdown[p.key]), 0);
  const svg = s('svg', { viewBox: `0 0 ${width} ${height}`, width, height, role: 'img', 'aria-label': 'Step time breakdown' });
  let x = 0;
  for (const p of parts) {
    const w = total > 0 ? (Math.max(0, breakdown[p.key]) / total) * width : 0;
    if (w <= 0) continue;
    const rect = s('rect', { x, y: 2, width: w, height: height - 4, class: `seg t-${p.css}`, tabindex: '0' },
      s('title', { text: `${p.label}: ${formatSeconds(breakdown[p.key])}` }));
    attachTooltip(rect, () => [p.label, formatSeconds(breakdown[p.key])]);
    svg.append(rect);
    x += w;
  }
  container.replaceChildren(svg);
}

// The pipeline timeline: one row per stage, a bar per forward, backward,
// recompute or communication event (result.timeline). Hidden when absent.
import { h, s } from '../dom.js';
import { formatMs, formatSeconds } from '../format.js';
import { attachTooltip } from './tooltip.js';
import { chartWidth, niceTicks, onResize } from './axis.js';

const KINDS = ['forward', 'backward', 'recompute', 'comm'];
const MAX_EVENTS = 6000;
const ROW = 22;
const M = { top: 8, right: 10, bottom: 26, left: 56 };

export function mount(root, store) {
  const chart = h('div', { class: 'chart chart-scroll', id: 'timeline-chart' });
  const note = h('p', { class: 'note' });
  const legend = h('ul', { class: 'legend' }, KINDS.map((k) => h('li', {}, h('span', { class: `swatch k-${k}` }), k)));
  root.append(chart, legend, note);
  const render = () => {
    const timeline = store.get().result?.timeline;
    const stages = timeline?.stages ?? [];
    root.hidden = stages.length === 0;
    if (stages.length === 0) return;
    const count = stages.reduce((n, st) => n + (st.events?.length ?? 0), 0);
    note.textContent = count > MAX_EVENTS ? `Showing the first ${MAX_EVENTS} of ${count} events.` : '';
    draw(chart, stages);
  };
  onResize(chart, render);
  store.subscribe((state, previous) => { if (state.result !== previous.result) render(); });
}

function draw(container, stages) {
  const width = chartWidth(container);
  const height = M.top + M.bottom + ROW * stages.length;
  const end = Math.max(1e-9, ...stages.flatMap((st) => (st.events ?? []).map((e) => e.end_s)));
  const x = (t) => M.left + (t / end) * (width - M.left - M.right);
  const svg = s('svg', { viewBox: `0 0 ${width} ${height}`, width, height, role: 'img', 'aria-label': 'Pipeline timeline' });
  const ticks = niceTicks(end * 1e3, Math.max(2, Math.floor(width / 110)));
  for (const tick of ticks) {
    const tx = x(tick / 1e3);
    svg.append(s('line', { x1: tx, x2: tx, y1: M.top, y2: height - M.bottom, class: 'grid-line' }),
      s('text', { x: tx, y: height - 8, class: 'tick', 'text-anchor': 'middle', text: formatMs(tick / 1e3) }));
  }
  let drawn = 0;
  stages.forEach((stage, row) => {
    const y = M.top + row * ROW;
    svg.append(s('text', { x: M.left - 6, y: y + ROW / 2 + 4, class: 'tick', 'text-anchor': 'end', text: `stage ${stage.stage}` }));
    for (const event of stage.events ?? []) {
      if (drawn++ >= MAX_EVENTS) return;
      const kind = KINDS.includes(event.kind) ? event.kind : 'comm';
      const rect = s('rect', {
        x: x(event.start_s), y: y + 3, width: Math.max(0.5, x(event.end_s) - x(event.start_s)), height: ROW - 6,
        class: `ev k-${kind}`, dataset: { kind, mb: String(event.micro_batch) },
      });
      attachTooltip(rect, () => [
        `Stage ${stage.stage}: ${event.kind}, micro-batch ${event.micro_batch}${event.chunk ? `, chunk ${event.chunk}` : ''}`,
        `${formatSeconds(event.start_s)} to ${formatSeconds(event.end_s)} (${formatSeconds(event.end_s - event.start_s)})`,
      ]);
      svg.append(rect);
    }
  });
  container.replaceChildren(svg);
}

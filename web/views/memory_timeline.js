// Memory over the step, per stage: the allocated and reserved bytes of the
// core's allocator replay (result.memory.timeline: points in event order,
// each [event, allocated_bytes, reserved_bytes, pass]) for the stage picked
// (the peak stage at first), against the capacity. Hidden when the core
// does not report it.
import { h, s } from '../lib/dom.js';
import { bytesUnit, formatBytesIn } from '../lib/format.js';
import { verdictOf } from '../state/verdict.js';
import { hideTooltip, showTooltip } from './tooltip.js';
import { chartWidth, niceTicks, onResize } from '../lib/axis.js';
import { isStale, markStale } from './stale.js';

const HEIGHT = 220;
const M = { top: 14, right: 12, bottom: 30, left: 64 };

// [{stage, points: [{event, allocated, reserved, pass}]}] from either layout.
export function readMemoryTimeline(timeline) {
  const columns = Array.isArray(timeline?.columns) ? timeline.columns : ['event', 'allocated_bytes', 'reserved_bytes', 'pass'];
  const at = (name) => columns.indexOf(name);
  return (timeline?.stages ?? []).map((stage, i) => ({
    stage: stage.stage ?? i,
    points: (stage.points ?? []).map((p) => (Array.isArray(p)
      ? { event: p[at('event')], allocated: p[at('allocated_bytes')], reserved: p[at('reserved_bytes')], pass: p[at('pass')] }
      : { event: p.event, allocated: p.allocated_bytes, reserved: p.reserved_bytes, pass: p.pass }))
      .filter((p) => Number.isFinite(p.event) && Number.isFinite(p.allocated)),
  })).filter((st) => st.points.length > 0);
}

export function mount(root, store) {
  const picker = h('select', { id: 'memory-timeline-stage', 'aria-label': 'Pipeline stage' });
  const chart = h('div', { class: 'chart', id: 'memory-timeline-chart' });
  const legend = h('ul', { class: 'legend' },
    h('li', {}, h('span', { class: 'swatch line-allocated' }), 'allocated'),
    h('li', {}, h('span', { class: 'swatch line-reserved' }), 'reserved (allocator)'),
    h('li', {}, h('span', { class: 'swatch s-capacity' }), 'capacity'));
  root.append(h('label', { class: 'inline-label', for: 'memory-timeline-stage', text: 'Stage ' }), picker, chart, legend);
  let shownResult = null;

  const render = () => {
    const state = store.get();
    const stages = readMemoryTimeline(state.result?.memory?.timeline);
    root.hidden = stages.length === 0;
    if (root.hidden) return;
    markStale(root, isStale(state));
    if (shownResult !== state.result) {
      shownResult = state.result;
      picker.replaceChildren(...stages.map((st) => h('option', { value: String(st.stage), text: `stage ${st.stage}` })));
      const peak = stages.find((st) => st.stage === state.result.memory.peak_stage) ?? stages[0];
      picker.value = String(peak.stage);
    }
    const stage = stages.find((st) => String(st.stage) === picker.value) ?? stages[0];
    draw(chart, stage, verdictOf(state.result).usable, state.result.memory.capacity_bytes);
  };
  picker.addEventListener('change', render);
  onResize(chart, render);
  store.subscribe((state, previous) => {
    if (state.result !== previous.result || state.errors !== previous.errors || state.localErrors !== previous.localErrors) render();
  });
}

function draw(container, stage, usable, capacity) {
  const width = chartWidth(container);
  const plotW = width - M.left - M.right;
  const plotH = HEIGHT - M.top - M.bottom;
  const points = stage.points;
  const first = points[0].event;
  const last = Math.max(first + 1, points[points.length - 1].event);
  const top = Math.max(capacity, usable, ...points.map((p) => Math.max(p.allocated, p.reserved ?? 0))) * 1.06;
  const unit = bytesUnit(top);
  const x = (event) => M.left + ((event - first) / (last - first)) * plotW;
  const y = (bytes) => M.top + plotH - (bytes / top) * plotH;
  const svg = s('svg', { viewBox: `0 0 ${width} ${HEIGHT}`, width, height: HEIGHT, role: 'img', class: 'memory-timeline-svg',
    'aria-label': `Allocated and reserved memory of stage ${stage.stage} through the step, in ${unit.name}` });
  for (const tick of niceTicks(top / unit.size, 4)) {
    const ty = y(tick * unit.size);
    svg.append(s('line', { x1: M.left, x2: width - M.right, y1: ty, y2: ty, class: 'grid-line' }),
      s('text', { x: M.left - 6, y: ty + 4, class: 'tick', 'text-anchor': 'end', text: `${Number(tick.toPrecision(6))} ${unit.name}` }));
  }
  svg.append(s('text', { x: M.left + plotW / 2, y: HEIGHT - 6, class: 'axis-label', 'text-anchor': 'middle', text: 'through the step (allocator events) →' }));
  // Steps: a value holds until the next event.
  const stepPath = (value) => points.map((p, i) => (i === 0
    ? `M${x(p.event).toFixed(1)} ${y(value(p)).toFixed(1)}`
    : `H${x(p.event).toFixed(1)}V${y(value(p)).toFixed(1)}`)).join('');
  if (points.some((p) => Number.isFinite(p.reserved))) svg.append(s('path', { d: stepPath((p) => p.reserved ?? p.allocated), class: 'line-reserved' }));
  svg.append(s('path', { d: stepPath((p) => p.allocated), class: 'line-allocated' }));
  const cy = y(capacity);
  svg.append(s('line', { x1: M.left, x2: width - M.right, y1: cy, y2: cy, class: 'capacity-line' }));
  if (Math.abs(usable - capacity) > 1) svg.append(s('line', { x1: M.left, x2: width - M.right, y1: y(usable), y2: y(usable), class: 'usable-line' }));
  svg.addEventListener('pointermove', (event) => {
    const box = svg.getBoundingClientRect();
    const px = (event.clientX - box.left) * (width / box.width);
    const target = first + ((px - M.left) / plotW) * (last - first);
    let hit = null;
    for (const p of points) if (p.event <= target) hit = p;
    if (!hit) { hideTooltip(); return; }
    showTooltip(event.clientX, event.clientY, [`Stage ${stage.stage}, event ${hit.event}${hit.pass ? ` (${hit.pass})` : ''}`,
      `allocated ${formatBytesIn(hit.allocated, unit)}`, Number.isFinite(hit.reserved) ? `reserved ${formatBytesIn(hit.reserved, unit)}` : '']);
  });
  svg.addEventListener('pointerleave', hideTooltip);
  container.replaceChildren(svg);
}

// The pipeline timeline: one row per stage, a bar per event the core reports
// (result.timeline: forward, backward, send/recv, DP comm, optimizer, and
// any kind a newer core adds, drawn generically under its own name). The
// step fits the panel's width; zoom in to see single passes (the chart then
// scrolls sideways, and the scroller takes keyboard focus). Each stage's
// warm-up (before its first backward) and cool-down (after its last
// forward) are shaded.
import { h, s } from '../lib/dom.js';
import { formatSecondsIn, secondsUnit } from '../lib/format.js';
import { hideTooltip, showTooltip } from './tooltip.js';
import { chartWidth, niceTicks, onResize } from '../lib/axis.js';
import { isStale, markStale } from './stale.js';

// Kinds with their own colour and label; any other kind is drawn with one of
// the generic colours and its own name.
const KINDS = {
  forward: 'forward', backward: 'backward', recompute: 'recompute', weight: 'weight gradient (W)',
  forward_backward: 'forward + backward (overlapped)', send: 'send (PP)', recv: 'recv (PP)',
  comm: 'comm', dp_comm: 'DP comm', optimizer: 'optimizer',
};
const GENERIC = 4;
// Pipeline transfers may run beside compute (the interleaved schedule's overlapped p2p):
// they are drawn as a thin band at the foot of the row, so the passes they overlap stay visible.
const THIN = new Set(['send', 'recv']);
const MAX_EVENTS = 200000;
const ROW = 22;
const M = { top: 8, right: 10, bottom: 26, left: 56 };
const ZOOMS = [1, 2, 4, 8, 16, 32, 64];
const MAX_WIDTH = 32000;

export function labelOf(kind) {
  return KINDS[kind] ?? String(kind).replace(/_/g, ' ');
}

export function mount(root, store) {
  const chart = h('div', { class: 'chart chart-scroll', id: 'timeline-chart', tabindex: '0', role: 'region',
    'aria-label': 'Pipeline timeline: scroll sideways with the arrow keys (Home and End: the step\'s start and end) when zoomed in' });
  // The arrows scroll natively; Home and End go to the step's start and end.
  chart.addEventListener('keydown', (event) => {
    if (event.key !== 'Home' && event.key !== 'End') return;
    event.preventDefault();
    chart.scrollLeft = event.key === 'Home' ? 0 : chart.scrollWidth;
  });
  let zoom = 0;  // index into ZOOMS
  const zoomLabel = h('span', { class: 'zoom-label', id: 'timeline-zoom', text: 'fit' });
  const setZoom = (next) => {
    zoom = Math.max(0, Math.min(ZOOMS.length - 1, next));
    later();
  };
  const controls = h('div', { class: 'zoom-controls', role: 'group', 'aria-label': 'Zoom' },
    h('button', { type: 'button', id: 'timeline-zoom-out', text: '−', 'aria-label': 'Zoom out', onclick: () => setZoom(zoom - 1) }),
    zoomLabel,
    h('button', { type: 'button', id: 'timeline-zoom-in', text: '+', 'aria-label': 'Zoom in', onclick: () => setZoom(zoom + 1) }),
    h('button', { type: 'button', id: 'timeline-fit', text: 'Fit the step', onclick: () => setZoom(0) }));
  const note = h('p', { class: 'note' });
  const legend = h('ul', { class: 'legend', id: 'timeline-legend' });
  root.append(controls, chart, legend, note);
  const render = () => {
    const state = store.get();
    const timeline = state.result?.timeline;
    const stages = readStages(timeline);
    const omitted = timeline?.included === false;
    root.hidden = !timeline || (stages.length === 0 && !omitted);
    if (root.hidden) return;
    markStale(root, isStale(state));
    const count = stages.reduce((n, st) => n + st.events.length, 0);
    note.textContent = omitted ? 'The core leaves the timeline out for this many pipeline passes.'
      : count > MAX_EVENTS ? `Showing the first ${MAX_EVENTS} of ${count} events.` : '';
    chart.hidden = stages.length === 0;
    controls.hidden = stages.length === 0;
    const kinds = [...new Set(stages.flatMap((st) => st.events.map((e) => e.kind)))];
    const css = classes(kinds);
    legend.replaceChildren(...kinds.map((k) => h('li', { dataset: { kind: k } }, h('span', { class: `swatch ${css.get(k)}` }), labelOf(k))),
      h('li', {}, h('span', { class: 'swatch phase-warmup' }), 'warm-up'), h('li', {}, h('span', { class: 'swatch phase-cooldown' }), 'cool-down'));
    zoomLabel.textContent = ZOOMS[zoom] === 1 ? 'fit' : `×${ZOOMS[zoom]}`;
    if (stages.length) draw(chart, stages, css, ZOOMS[zoom]);
  };
  // Drawn after the verdict and the other charts are on screen (it is the
  // heaviest view and the least urgent); a newer result replaces a pending draw.
  let scheduled = 0;
  const later = () => {
    clearTimeout(scheduled);
    scheduled = setTimeout(render, 0);
  };
  onResize(chart, later);
  store.subscribe((state, previous) => {
    if (state.result !== previous.result || state.errors !== previous.errors || state.localErrors !== previous.localErrors) later();
  });
}

function classes(kinds) {
  const out = new Map();
  let generic = 0;
  for (const kind of kinds) out.set(kind, KINDS[kind] ? `k-${kind}` : `k-gen-${generic++ % GENERIC}`);
  return out;
}

// Events as objects, whether the core writes objects or arrays named by
// timeline.columns (["kind", "micro_batch", "chunk", "start_s", "end_s"]).
function readStages(timeline) {
  const columns = Array.isArray(timeline?.columns) ? timeline.columns : null;
  return (timeline?.stages ?? []).map((stage, i) => ({
    stage: stage.stage ?? i,
    events: (stage.events ?? []).map((e) => {
      const event = Array.isArray(e) && columns ? Object.fromEntries(columns.map((c, k) => [c, e[k]])) : e;
      return { ...event, kind: typeof event.kind === 'string' && event.kind ? event.kind : 'other' };
    }).filter((e) => Number.isFinite(e.start_s) && Number.isFinite(e.end_s)),
  }));
}

// Warm-up: start to the first backward; cool-down: last forward to the last backward.
function phases(events) {
  const backward = events.filter((e) => e.kind === 'backward' || e.kind === 'forward_backward');
  const forward = events.filter((e) => e.kind === 'forward' || e.kind === 'forward_backward');
  if (!backward.length || !forward.length) return null;
  const start = Math.min(...events.map((e) => e.start_s));
  const firstBackward = Math.min(...backward.map((e) => e.start_s));
  const lastForward = Math.max(...forward.map((e) => e.end_s));
  const lastBackward = Math.max(...backward.map((e) => e.end_s));
  return { warmup: [start, firstBackward], cooldown: [lastForward, lastBackward] };
}

function draw(container, stages, css, factor) {
  const end = stages.reduce((m, st) => st.events.reduce((n, e) => Math.max(n, e.end_s), m), 1e-9);
  const fit = chartWidth(container) - M.left - M.right;
  const plotW = Math.round(Math.min(MAX_WIDTH, fit * factor));
  const width = plotW + M.left + M.right;
  const height = M.top + M.bottom + ROW * stages.length;
  const x = (t) => M.left + (t / end) * plotW;
  const unit = secondsUnit(end);
  const svg = s('svg', { viewBox: `0 0 ${width} ${height}`, width, height, role: 'img', 'aria-label': `Pipeline timeline, ${formatSecondsIn(end, unit)}`, class: 'timeline-svg' });
  for (const tick of niceTicks(end / unit.size, Math.max(2, Math.floor(width / 110)))) {
    const tx = x(tick * unit.size);
    svg.append(s('line', { x1: tx, x2: tx, y1: M.top, y2: height - M.bottom, class: 'grid-line' }),
      s('text', { x: tx, y: height - 8, class: 'tick', 'text-anchor': 'middle', text: `${Number(tick.toPrecision(6))} ${unit.name}` }));
  }
  // One <path> per stage and kind (tens of thousands of events stay cheap);
  // the tooltip finds the event under the pointer from its position.
  let budget = MAX_EVENTS;
  const rows = stages.map((stage, row) => {
    const y = M.top + row * ROW;
    svg.append(s('text', { x: M.left - 6, y: y + ROW / 2 + 4, class: 'tick', 'text-anchor': 'end', text: `stage ${stage.stage}` }));
    const phase = phases(stage.events);
    if (phase) {
      for (const [name, [a, b]] of Object.entries(phase)) {
        if (b > a) svg.append(s('rect', { x: x(a), y: y + 1, width: Math.max(1, x(b) - x(a)), height: ROW - 2, class: `phase phase-${name}`, dataset: { phase: name, stage: String(stage.stage) } }));
      }
    }
    const events = stage.events.slice(0, Math.max(0, budget));
    budget -= events.length;
    const paths = new Map();
    for (const e of events) {
      const x0 = x(e.start_s);
      const w = Math.max(0.5, x(e.end_s) - x0);
      const [top, tall] = THIN.has(e.kind) ? [y + ROW - 7, 4] : [y + 3, ROW - 6];
      paths.set(e.kind, `${paths.get(e.kind) ?? ''}M${x0.toFixed(2)} ${top}h${w.toFixed(2)}v${tall}h${(-w).toFixed(2)}z`);
    }
    for (const [kind, d] of paths) svg.append(s('path', { d, class: `ev ${css.get(kind)}`, dataset: { kind, stage: String(stage.stage) } }));
    return { stage, events };
  });
  const at = (event) => {
    const box = svg.getBoundingClientRect();
    const scale = width / box.width;
    const px = (event.clientX - box.left) * scale;
    const py = (event.clientY - box.top) * scale - M.top;
    const row = rows[Math.floor(py / ROW)];
    if (!row || px < M.left) return null;
    const t = ((px - M.left) / plotW) * end;
    const slack = (2 * scale * end) / plotW;  // two pixels, for thin events
    const under = (e) => e.start_s - slack <= t && t <= e.end_s + slack;
    // The band at the row's foot names a transfer, the rest of the row a pass.
    const band = py - Math.floor(py / ROW) * ROW >= ROW - 8;
    const hit = row.events.find((e) => under(e) && THIN.has(e.kind) === band) ?? row.events.find(under);
    if (!hit) return null;
    const u = secondsUnit(hit.end_s);
    return [
      `Stage ${row.stage.stage}: ${labelOf(hit.kind)}${hit.micro_batch >= 0 ? `, micro-batch ${hit.micro_batch}` : ''}${hit.chunk > 0 ? `, chunk ${hit.chunk}` : ''}`,
      `${formatSecondsIn(hit.start_s, u)} to ${formatSecondsIn(hit.end_s, u)} (${formatSecondsIn(hit.end_s - hit.start_s, secondsUnit(hit.end_s - hit.start_s))})`,
    ];
  };
  svg.addEventListener('pointermove', (event) => {
    const lines = at(event);
    if (lines) showTooltip(event.clientX, event.clientY, lines);
    else hideTooltip();
  });
  svg.addEventListener('pointerleave', hideTooltip);
  container.replaceChildren(svg);
}

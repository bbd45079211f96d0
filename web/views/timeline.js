// The pipeline timeline: one row per stage, a bar per forward, backward,
// recompute or communication event (result.timeline). Hidden when absent.
import { h, s } from '../lib/dom.js';
import { formatSeconds, formatTick } from '../lib/format.js';
import { hideTooltip, showTooltip } from './tooltip.js';
import { chartWidth, niceTicks, onResize } from '../lib/axis.js';

// Event kinds the core reports; anything else is drawn as 'other'.
const KINDS = {
  forward: 'forward', backward: 'backward', recompute: 'recompute', send: 'send (PP)', recv: 'recv (PP)',
  comm: 'comm', dp_comm: 'DP comm', optimizer: 'optimizer', other: 'other',
};
const MAX_EVENTS = 200000;
const ROW = 22;
const M = { top: 8, right: 10, bottom: 26, left: 56 };

export function mount(root, store) {
  const chart = h('div', { class: 'chart chart-scroll', id: 'timeline-chart' });
  const note = h('p', { class: 'note' });
  const legend = h('ul', { class: 'legend' });
  root.append(chart, legend, note);
  const render = () => {
    const timeline = store.get().result?.timeline;
    const stages = readStages(timeline);
    const omitted = timeline?.included === false;
    root.hidden = !timeline || (stages.length === 0 && !omitted);
    if (root.hidden) return;
    const count = stages.reduce((n, st) => n + st.events.length, 0);
    note.textContent = omitted ? 'The core leaves the timeline out for this many pipeline passes.'
      : count > MAX_EVENTS ? `Showing the first ${MAX_EVENTS} of ${count} events.` : '';
    chart.hidden = stages.length === 0;
    const kinds = new Set(stages.flatMap((st) => st.events.map((e) => e.kind)));
    legend.replaceChildren(...Object.entries(KINDS).filter(([k]) => kinds.has(k))
      .map(([k, label]) => h('li', {}, h('span', { class: `swatch k-${k}` }), label)));
    if (stages.length && draw(chart, stages) && !note.textContent) note.textContent = 'Scroll sideways to see the whole step.';
  };
  // Drawn after the verdict and the other charts are on screen (it is the
  // heaviest view and the least urgent); a newer result replaces a pending draw.
  let scheduled = 0;
  const later = () => {
    clearTimeout(scheduled);
    scheduled = setTimeout(render, 0);
  };
  onResize(chart, later);
  store.subscribe((state, previous) => { if (state.result !== previous.result) later(); });
}

// Events as objects, whether the core writes objects or arrays named by
// timeline.columns (["kind", "micro_batch", "chunk", "start_s", "end_s"]).
function readStages(timeline) {
  const columns = Array.isArray(timeline?.columns) ? timeline.columns : null;
  return (timeline?.stages ?? []).map((stage, i) => ({
    stage: stage.stage ?? i,
    events: (stage.events ?? []).map((e) => {
      const event = Array.isArray(e) && columns ? Object.fromEntries(columns.map((c, k) => [c, e[k]])) : e;
      return { ...event, kind: event.kind in KINDS ? event.kind : 'other' };
    }).filter((e) => Number.isFinite(e.start_s) && Number.isFinite(e.end_s)),
  }));
}

// Wide enough that every forward/backward pass is a few pixels wide; the
// chart then scrolls sideways (up to MAX_WIDTH pixels).
const MIN_PASS_PX = 5;
const MAX_WIDTH = 16000;

function draw(container, stages) {
  const end = stages.reduce((m, st) => st.events.reduce((n, e) => Math.max(n, e.end_s), m), 1e-9);
  const passes = stages.flatMap((st) => st.events.filter((e) => e.kind === 'forward' || e.kind === 'backward'));
  const shortest = passes.reduce((m, e) => Math.min(m, e.end_s - e.start_s), Infinity);
  const fit = chartWidth(container) - M.left - M.right;
  const plotW = Math.round(Math.min(MAX_WIDTH, Math.max(fit, Number.isFinite(shortest) && shortest > 0 ? (MIN_PASS_PX * end) / shortest : 0)));
  const width = plotW + M.left + M.right;
  const height = M.top + M.bottom + ROW * stages.length;
  const x = (t) => M.left + (t / end) * plotW;
  const svg = s('svg', { viewBox: `0 0 ${width} ${height}`, width, height, role: 'img', 'aria-label': 'Pipeline timeline', class: 'timeline-svg' });
  const unit = end >= 2 ? 1 : 1e-3;  // ticks in seconds or milliseconds
  for (const tick of niceTicks(end / unit, Math.max(2, Math.floor(width / 110)))) {
    const tx = x(tick * unit);
    svg.append(s('line', { x1: tx, x2: tx, y1: M.top, y2: height - M.bottom, class: 'grid-line' }),
      s('text', { x: tx, y: height - 8, class: 'tick', 'text-anchor': 'middle', text: formatTick(tick, unit === 1 ? 's' : 'ms') }));
  }
  // One <path> per stage and kind (tens of thousands of events stay cheap);
  // the tooltip finds the event under the pointer from its position.
  let budget = MAX_EVENTS;
  const rows = stages.map((stage, row) => {
    const y = M.top + row * ROW;
    svg.append(s('text', { x: M.left - 6, y: y + ROW / 2 + 4, class: 'tick', 'text-anchor': 'end', text: `stage ${stage.stage}` }));
    const events = stage.events.slice(0, Math.max(0, budget));
    budget -= events.length;
    const paths = new Map();
    for (const e of events) {
      const x0 = x(e.start_s);
      const w = Math.max(0.5, x(e.end_s) - x0);
      paths.set(e.kind, `${paths.get(e.kind) ?? ''}M${x0.toFixed(2)} ${y + 3}h${w.toFixed(2)}v${ROW - 6}h${(-w).toFixed(2)}z`);
    }
    for (const [kind, d] of paths) svg.append(s('path', { d, class: `ev k-${kind}`, dataset: { kind, stage: String(stage.stage) } }));
    return { stage, events };
  });
  const at = (event) => {
    const box = svg.getBoundingClientRect();
    const scale = width / box.width;
    const px = (event.clientX - box.left) * scale;
    const row = rows[Math.floor(((event.clientY - box.top) * scale - M.top) / ROW)];
    if (!row || px < M.left) return null;
    const t = ((px - M.left) / plotW) * end;
    const slack = (2 * scale * end) / plotW;  // two pixels, for thin events
    const hit = row.events.find((e) => e.start_s - slack <= t && t <= e.end_s + slack);
    if (!hit) return null;
    return [
      `Stage ${row.stage.stage}: ${KINDS[hit.kind]}${hit.micro_batch >= 0 ? `, micro-batch ${hit.micro_batch}` : ''}${hit.chunk > 0 ? `, chunk ${hit.chunk}` : ''}`,
      `${formatSeconds(hit.start_s)} to ${formatSeconds(hit.end_s)} (${formatSeconds(hit.end_s - hit.start_s)})`,
    ];
  };
  svg.addEventListener('pointermove', (event) => {
    const lines = at(event);
    if (lines) showTooltip(event.clientX, event.clientY, lines);
    else hideTooltip();
  });
  svg.addEventListener('pointerleave', hideTooltip);
  container.replaceChildren(svg);
  return plotW > fit;  // wider than the panel: it scrolls
}

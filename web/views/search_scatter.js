// The Search tab's scatter: every plan that fits, peak memory per GPU
// against step time, the Pareto front (no plan is both smaller and faster)
// joined and highlighted, the top K ringed, the memory budget as a line.
// Hover (or focus and arrow keys) shows a plan's values; clicking a Pareto
// or top plan opens it in the calculator.
import { h, s } from '../lib/dom.js';
import { formatBytes, formatGiB, formatSeconds, formatTick, formatTokensPerS } from '../lib/format.js';
import { hideTooltip, showTooltip } from './tooltip.js';
import { chartWidth, niceTicks, onResize } from '../lib/axis.js';
import { planLabel, recomputeLabel } from './search_results.js';

const GiB = 1024 ** 3;
const HEIGHT = 300;
const M = { top: 14, right: 14, bottom: 40, left: 62 };
const MAX_POINTS = 20000;

// Ticks for a log axis that fall inside [low, high]: 1-2-5 steps, finer
// when the range spans less than two decades.
function logTicks(low, high) {
  const steps = high / low < 100 ? [1, 1.5, 2, 3, 5, 7] : [1, 2, 5];
  const ticks = [];
  for (let p = Math.floor(Math.log10(low)); p <= Math.ceil(Math.log10(high)); p += 1) {
    for (const m of steps) {
      const v = m * 10 ** p;
      if (v >= low && v <= high) ticks.push(v);
    }
  }
  return ticks;
}

export function mount(root, store, actions) {
  const chart = h('div', { class: 'chart', id: 'search-scatter' });
  const legend = h('ul', { class: 'legend' },
    h('li', {}, h('span', { class: 'dot' }), 'Plan that fits'),
    h('li', {}, h('span', { class: 'dot dot-pareto' }), 'Pareto front'),
    h('li', {}, h('span', { class: 'dot dot-top' }), 'Top K'),
    h('li', {}, h('span', { class: 'swatch s-capacity' }), 'Memory budget'));
  const note = h('p', { class: 'note', id: 'search-scatter-note' });
  root.append(chart, legend, note);

  const render = () => {
    const result = store.get().search.envelope?.ok ? store.get().search.envelope.result : null;
    const rows = result?.points?.rows ?? [];
    root.hidden = !result || rows.length === 0;
    if (root.hidden) return;
    draw(result);
  };

  function draw(result) {
    const rows = result.points.rows.slice(0, MAX_POINTS);
    note.textContent = result.points.rows.length > MAX_POINTS ? `Showing ${MAX_POINTS} of ${result.points.rows.length} plans.` : '';
    const entries = new Map();
    for (const p of result.pareto) entries.set(p.index, { ...p, pareto: true });
    for (const t of result.top) entries.set(t.index, { ...entries.get(t.index), ...t, top: true });
    const width = chartWidth(chart);
    const plotW = width - M.left - M.right;
    const plotH = HEIGHT - M.top - M.bottom;
    const budget = result.memory_budget_bytes;
    const maxBytes = Math.max(budget, ...rows.map((r) => r[1])) * 1.04;
    const times = rows.map((r) => r[2]).filter((t) => t > 0);
    let low = Math.min(...times);
    let high = Math.max(...times);
    const log = high / low > 3;  // a few slow plans would squash the rest
    if (!log) { low = Math.max(0, low - (high - low) * 0.08); high += (high - low) * 0.08 || high * 0.1; }
    else { low /= 1.1; high *= 1.1; }
    const x = (bytes) => M.left + (bytes / maxBytes) * plotW;
    const y = log
      ? (t) => M.top + plotH - ((Math.log(t) - Math.log(low)) / (Math.log(high) - Math.log(low))) * plotH
      : (t) => M.top + plotH - ((t - low) / (high - low)) * plotH;
    const svg = s('svg', { viewBox: `0 0 ${width} ${HEIGHT}`, width, height: HEIGHT, role: 'img', class: 'scatter-svg',
      'aria-label': 'Plans that fit: peak memory per GPU against step time' });
    const unit = high >= 2 ? 1 : 1e-3;
    const yTicks = log ? logTicks(low, high) : niceTicks(high / unit, 5).map((v) => v * unit).filter((v) => v >= low);
    for (const t of yTicks) {
      svg.append(s('line', { x1: M.left, x2: width - M.right, y1: y(t), y2: y(t), class: 'grid-line' }),
        s('text', { x: M.left - 6, y: y(t) + 4, class: 'tick', 'text-anchor': 'end', text: formatTick(t / unit, unit === 1 ? 's' : 'ms') }));
    }
    for (const g of niceTicks(maxBytes / GiB, Math.max(2, Math.floor(plotW / 80)))) {
      svg.append(s('line', { x1: x(g * GiB), x2: x(g * GiB), y1: M.top, y2: M.top + plotH, class: 'grid-line' }),
        s('text', { x: x(g * GiB), y: HEIGHT - M.bottom + 16, class: 'tick', 'text-anchor': 'middle', text: formatGiB(g * GiB) }));
    }
    svg.append(s('text', { x: M.left + plotW / 2, y: HEIGHT - 6, class: 'axis-label', 'text-anchor': 'middle', text: 'Peak memory per GPU' }),
      s('text', { x: 12, y: M.top + plotH / 2, class: 'axis-label', 'text-anchor': 'middle', transform: `rotate(-90 12 ${M.top + plotH / 2})`, text: `Step time${log ? ' (log)' : ''}` }));
    svg.append(s('line', { x1: x(budget), x2: x(budget), y1: M.top, y2: M.top + plotH, class: 'capacity-line' }));
    // All plans as one path of tiny squares (thousands stay cheap).
    let d = '';
    for (const r of rows) d += `M${(x(r[1]) - 1.6).toFixed(1)} ${(y(r[2]) - 1.6).toFixed(1)}h3.2v3.2h-3.2z`;
    svg.append(s('path', { d, class: 'pt' }));
    const front = result.pareto.map((p) => [x(p.metrics.peak_bytes), y(p.metrics.iteration_s)]);
    if (front.length > 1) svg.append(s('polyline', { points: front.map(([a, b]) => `${a.toFixed(1)},${b.toFixed(1)}`).join(' '), class: 'pareto-line' }));
    const marks = [...entries.values()].map((e) => {
      const mark = s('circle', {
        cx: x(e.metrics.peak_bytes), cy: y(e.metrics.iteration_s), r: e.top ? 5 : 4,
        class: `pt-mark${e.pareto ? ' pt-pareto' : ''}${e.top ? ' pt-top' : ''}`, dataset: { index: String(e.index), rank: e.rank ? String(e.rank) : '' },
      });
      svg.append(mark);
      return { e, mark };
    });
    const lines = (e, r) => {
      const metrics = e?.metrics ?? { peak_bytes: r[1], iteration_s: r[2], tokens_per_s_per_gpu: r[3] };
      const title = e ? `${e.rank ? `#${e.rank} ` : ''}${e.pareto ? 'Pareto ' : ''}${planLabel(e.config.training)}` : 'Plan';
      return [title, ...(e ? [`recompute ${recomputeLabel(e.config.training.recompute)}, ZeRO ${e.config.training.zero_stage}`] : []),
        `Peak memory ${formatBytes(metrics.peak_bytes)}`, `Step ${formatSeconds(metrics.iteration_s)}`,
        `${formatTokensPerS(metrics.tokens_per_s_per_gpu)} per GPU`, ...(e ? ['Click to open in the calculator'] : [])];
    };
    const nearest = (event) => {
      const box = svg.getBoundingClientRect();
      const scale = width / box.width;
      const px = (event.clientX - box.left) * scale;
      const py = (event.clientY - box.top) * scale;
      let best = null;
      let bestD = 10 * scale;
      for (const { e } of marks) {
        const dd = Math.hypot(x(e.metrics.peak_bytes) - px, y(e.metrics.iteration_s) - py);
        if (dd < bestD + 2) { best = { e }; bestD = dd - 2; }
      }
      if (best) return best;
      for (const r of rows) {
        const dd = Math.hypot(x(r[1]) - px, y(r[2]) - py);
        if (dd < bestD) { best = { r }; bestD = dd; }
      }
      return best;
    };
    svg.addEventListener('pointermove', (event) => {
      const hit = nearest(event);
      if (hit) showTooltip(event.clientX, event.clientY, lines(hit.e, hit.r));
      else hideTooltip();
      svg.style.cursor = hit?.e ? 'pointer' : 'default';
    });
    svg.addEventListener('pointerleave', hideTooltip);
    svg.addEventListener('click', (event) => {
      const hit = nearest(event);
      if (hit?.e) actions.loadConfig(hit.e.config);
    });
    chart.replaceChildren(svg);
  }

  onResize(chart, render);
  store.subscribe((state, previous) => { if (state.search !== previous.search) render(); });
  render();
}

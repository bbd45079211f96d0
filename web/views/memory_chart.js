// Memory per GPU for each pipeline stage: stacked SVG bars of the core's
// byte counts, the HBM capacity as a line, hover values, and the exact
// numbers in a table underneath.
import { h, s } from '../lib/dom.js';
import { formatBytes, formatGiB } from '../lib/format.js';
import { attachTooltip } from './tooltip.js';
import { chartWidth, niceTicks, onResize } from '../lib/axis.js';

export const MEMORY_SERIES = [
  { key: 'parameters_bytes', label: 'Parameters', css: 'parameters' },
  { key: 'gradients_bytes', label: 'Gradients', css: 'gradients' },
  { key: 'optimizer_bytes', label: 'Optimizer states', css: 'optimizer' },
  { key: 'buffers_bytes', label: 'Buffers', css: 'buffers' },
  { key: 'activations_bytes', label: 'Activations', css: 'activations' },
  { key: 'transient_bytes', label: 'Transient (peak op)', css: 'transient' },
];
const GiB = 1024 ** 3;
const HEIGHT = 260;
const M = { top: 18, right: 12, bottom: 30, left: 64 };

export function mount(root, store) {
  const chart = h('div', { class: 'chart', id: 'memory-chart' });
  const legend = h('ul', { class: 'legend' },
    MEMORY_SERIES.map((series) => h('li', {}, h('span', { class: `swatch s-${series.css}` }), series.label)),
    h('li', {}, h('span', { class: 'swatch s-reserve' }), 'Allocator reserve'),
    h('li', {}, h('span', { class: 'swatch s-capacity' }), 'HBM capacity'));
  const tableBox = h('div', { class: 'table-scroll' });
  const details = h('details', { class: 'numbers' }, h('summary', { text: 'Numbers per stage' }), tableBox);
  const empty = h('p', { class: 'note', text: 'No result yet: the configuration has problems (see above).' });
  root.append(empty, chart, legend, details);

  const render = () => {
    const state = store.get();
    empty.hidden = Boolean(state.result) || state.status === 'loading';
    legend.hidden = !state.result;
    details.hidden = !state.result;
    if (!state.result) return;
    draw(chart, state.result.memory);
    tableBox.replaceChildren(table(state.result.memory));
  };
  onResize(chart, render);
  store.subscribe((state, previous) => {
    if (state.result !== previous.result || state.errors !== previous.errors || state.localErrors !== previous.localErrors || state.status !== previous.status) render();
  });
}

function draw(container, memory) {
  const stages = memory.stages ?? [];
  const width = chartWidth(container);
  const plotW = width - M.left - M.right;
  const plotH = HEIGHT - M.top - M.bottom;
  const top = Math.max(memory.capacity_bytes, ...stages.map((st) => Math.max(st.reserved_bytes, st.peak_bytes))) * 1.08;
  const y = (bytes) => M.top + plotH - (bytes / top) * plotH;
  const svg = s('svg', { viewBox: `0 0 ${width} ${HEIGHT}`, width, height: HEIGHT, role: 'img', 'aria-label': 'Memory per GPU by pipeline stage', class: 'memory-svg' });

  for (const tick of niceTicks(top / GiB)) {
    const ty = y(tick * GiB);
    svg.append(s('line', { x1: M.left, x2: width - M.right, y1: ty, y2: ty, class: 'grid-line' }),
      s('text', { x: M.left - 6, y: ty + 4, class: 'tick', 'text-anchor': 'end', text: formatGiB(tick * GiB) }));
  }
  const band = plotW / Math.max(1, stages.length);
  const barW = Math.max(2, Math.min(band * 0.7, 90));
  const labelEvery = Math.ceil(stages.length / Math.max(1, Math.floor(plotW / 42)));
  stages.forEach((stage, i) => {
    const x = M.left + band * i + (band - barW) / 2;
    const group = s('g', { class: 'bar', tabindex: '0', dataset: { stage: String(stage.stage) } });
    let base = 0;
    for (const series of MEMORY_SERIES) {
      const bytes = stage[series.key] ?? 0;
      if (bytes <= 0) continue;
      group.append(s('rect', { x, width: barW, y: y(base + bytes), height: Math.max(0.5, y(base) - y(base + bytes)), class: `seg s-${series.css}`, dataset: { series: series.key } },
        s('title', { text: `${series.label}: ${formatBytes(bytes)}` })));
      base += bytes;
    }
    if (stage.reserved_bytes > base) {
      group.append(s('rect', { x, width: barW, y: y(stage.reserved_bytes), height: y(base) - y(stage.reserved_bytes), class: 'seg s-reserve' },
        s('title', { text: `Reserved: ${formatBytes(stage.reserved_bytes)}` })));
    }
    const oom = stage.peak_bytes > memory.capacity_bytes;
    if (i % labelEvery === 0) {
      svg.append(s('text', { x: x + barW / 2, y: HEIGHT - M.bottom + 16, class: `tick${oom ? ' oom' : ''}`, 'text-anchor': 'middle', text: stages.length > 8 ? String(stage.stage) : `stage ${stage.stage}` }));
    }
    attachTooltip(group, () => [
      `Stage ${stage.stage}${stage.layers_per_chunk ? ` (${stage.layers_per_chunk.join('+')} layers)` : ''}${oom ? ': out of memory' : ''}`,
      ...MEMORY_SERIES.map((series) => `${series.label}: ${formatBytes(stage[series.key] ?? 0)}`),
      `Peak: ${formatBytes(stage.peak_bytes)}`,
      `Reserved: ${formatBytes(stage.reserved_bytes)}`,
    ]);
    svg.append(group);
  });
  const cy = y(memory.capacity_bytes);
  svg.append(s('line', { x1: M.left, x2: width - M.right, y1: cy, y2: cy, class: 'capacity-line' }),
    s('text', { x: width - M.right, y: cy - 5, class: 'capacity-label', 'text-anchor': 'end', text: `HBM ${formatGiB(memory.capacity_bytes)}` }));
  container.replaceChildren(svg);
}

function table(memory) {
  const stages = memory.stages ?? [];
  const rows = [...MEMORY_SERIES, { key: 'peak_bytes', label: 'Peak' }, { key: 'reserved_bytes', label: 'Reserved' }];
  return h('table', { class: 'numbers-table', id: 'memory-table' },
    h('thead', {}, h('tr', {}, h('th', { scope: 'col', text: 'Per GPU' }), stages.map((st) => h('th', { scope: 'col', text: `stage ${st.stage}` })))),
    h('tbody', {}, rows.map((row) => h('tr', { dataset: { key: row.key } },
      h('th', { scope: 'row', text: row.label }),
      stages.map((st) => h('td', { dataset: { bytes: String(st[row.key] ?? 0) }, title: `${st[row.key] ?? 0} bytes`, text: formatBytes(st[row.key] ?? 0) }))))));
}

// Memory per GPU for each pipeline stage: stacked SVG bars of the core's
// byte counts (hatched per part, labelled when there is room), the HBM
// capacity and, with the core's verdict, the usable capacity and its tight
// band; hover or focus values; the exact numbers in a table underneath, one
// unit for the whole view.
import { h, s } from '../lib/dom.js';
import { bytesUnit, formatBytesIn } from '../lib/format.js';
import { hatchDefs, hatchRect, swatch } from '../lib/patterns.js';
import { verdictOf } from '../state/verdict.js';
import { attachTooltip } from './tooltip.js';
import { chartWidth, niceTicks, onResize } from '../lib/axis.js';
import { isStale, markStale } from './stale.js';

export const MEMORY_SERIES = [
  { key: 'parameters_bytes', label: 'Parameters', css: 'parameters', short: 'params' },
  { key: 'gradients_bytes', label: 'Gradients', css: 'gradients', short: 'grads' },
  { key: 'optimizer_bytes', label: 'Optimizer states', css: 'optimizer', short: 'optim' },
  { key: 'buffers_bytes', label: 'Buffers', css: 'buffers', short: 'buf' },
  { key: 'activations_bytes', label: 'Activations', css: 'activations', short: 'act' },
  { key: 'transient_bytes', label: 'Transient (peak op)', css: 'transient', short: 'trans' },
];
const HEIGHT = 260;
const M = { top: 18, right: 12, bottom: 30, left: 64 };

export function mount(root, store, actions) {
  const chart = h('div', { class: 'chart', id: 'memory-chart' });
  const legend = h('ul', { class: 'legend', id: 'memory-legend' });
  const tableBox = h('div', { class: 'table-scroll' });
  const details = h('details', { class: 'numbers', id: 'memory-numbers' }, h('summary', { text: 'Numbers per stage (click one for its formula)' }), tableBox);
  const empty = h('p', { class: 'note', text: 'No result yet: the configuration has problems (see above).' });
  root.append(empty, chart, legend, details);

  const render = () => {
    const state = store.get();
    empty.hidden = Boolean(state.result) || state.status === 'loading';
    legend.hidden = !state.result;
    details.hidden = !state.result;
    markStale(root, Boolean(state.result) && isStale(state));
    if (!state.result) return;
    const memory = { ...state.result.memory, explained: (state.result.explanations ?? []).map((x) => x.part) };
    const verdict = verdictOf(state.result);
    const used = new Set(MEMORY_SERIES.filter((m) => (memory.stages ?? []).some((st) => (st[m.key] ?? 0) > 0)).map((m) => m.key));
    draw(chart, memory, verdict);
    legend.replaceChildren(
      ...MEMORY_SERIES.map((series) => h('li', { class: used.has(series.key) ? '' : 'zero', dataset: { key: series.key } },
        swatch(`s-${series.css}`, series.css), series.label, used.has(series.key) ? '' : ' (none)')),
      h('li', {}, swatch('s-reserve', 'reserve'), 'Allocator reserve'),
      h('li', {}, h('span', { class: 'swatch s-capacity' }), 'HBM capacity'),
      ...(verdict.core ? [h('li', {}, h('span', { class: 'swatch s-usable' }), 'Usable (tight band below it)')] : []));
    tableBox.replaceChildren(table(memory, used));
  };

  function table(memory, used) {
    const stages = memory.stages ?? [];
    const unit = bytesUnit(Math.max(0, ...stages.map((st) => Math.max(st.reserved_bytes ?? 0, st.peak_bytes))));
    const rows = [...MEMORY_SERIES, { key: 'peak_bytes', label: 'Peak' }, { key: 'reserved_bytes', label: 'Reserved' },
      ...(stages.some((st) => Number.isFinite(st.device_bytes)) ? [{ key: 'outside_allocator_bytes', label: 'Outside the allocator' }, { key: 'device_bytes', label: 'Device total' }] : [])];
    const explained = new Set((memory.explained ?? []));
    return h('table', { class: 'numbers-table', id: 'memory-table', dataset: { unit: unit.name } },
      h('caption', { class: 'table-unit', text: `per GPU, in ${unit.name}` }),
      h('thead', {}, h('tr', {}, h('th', { scope: 'col', text: 'Per GPU' }), stages.map((st) => h('th', { scope: 'col', text: `stage ${st.stage}` })))),
      h('tbody', {}, rows.map((row) => h('tr', { dataset: { key: row.key }, class: row.key.endsWith('bytes') && MEMORY_SERIES.includes(row) && !used.has(row.key) ? 'zero' : '' },
        h('th', { scope: 'row', text: row.label }),
        stages.map((st) => {
          const pointer = `/memory/stages/${st.stage}/${row.key}`;
          const can = explained.has(pointer);
          return h('td', { dataset: { bytes: String(st[row.key] ?? 0), ...(can ? { explain: pointer } : {}) }, class: can ? 'explainable' : '',
            tabindex: can ? '0' : undefined, role: can ? 'button' : undefined,
            title: `${st[row.key] ?? 0} bytes${can ? ': click for the formula and its source' : ''}`, text: formatBytesIn(st[row.key] ?? 0, unit) });
        })))));
  }

  onResize(chart, render);
  store.subscribe((state, previous) => {
    if (state.result !== previous.result || state.errors !== previous.errors || state.localErrors !== previous.localErrors || state.status !== previous.status) render();
  });
}

function draw(container, memory, verdict) {
  const stages = memory.stages ?? [];
  const width = chartWidth(container);
  const plotW = width - M.left - M.right;
  const plotH = HEIGHT - M.top - M.bottom;
  const top = Math.max(memory.capacity_bytes, verdict.usable ?? 0, ...stages.map((st) => Math.max(st.reserved_bytes ?? 0, st.peak_bytes))) * 1.08;
  const unit = bytesUnit(top);
  const y = (bytes) => M.top + plotH - (bytes / top) * plotH;
  const svg = s('svg', { viewBox: `0 0 ${width} ${HEIGHT}`, width, height: HEIGHT, role: 'img', 'aria-label': `Memory per GPU by pipeline stage, in ${unit.name}`, class: 'memory-svg' });
  svg.append(hatchDefs('mh'));
  for (const tick of niceTicks(top / unit.size)) {
    const ty = y(tick * unit.size);
    svg.append(s('line', { x1: M.left, x2: width - M.right, y1: ty, y2: ty, class: 'grid-line' }),
      s('text', { x: M.left - 6, y: ty + 4, class: 'tick', 'text-anchor': 'end', text: `${Number(tick.toPrecision(6))} ${unit.name}` }));
  }
  // The tight band: fits, but inside the reserve the verdict asks for.
  if (verdict.core && verdict.headroom > 0) {
    const bandTop = y(verdict.usable);
    const bandBottom = y(verdict.usable * (1 - verdict.headroom));
    svg.append(s('rect', { x: M.left, width: plotW, y: bandTop, height: Math.max(1, bandBottom - bandTop), class: 'tight-band' }));
  }
  const band = plotW / Math.max(1, stages.length);
  const barW = Math.max(2, Math.min(band * 0.7, 90));
  const labelEvery = Math.ceil(stages.length / Math.max(1, Math.floor(plotW / 42)));
  stages.forEach((stage, i) => {
    const x = M.left + band * i + (band - barW) / 2;
    const oom = stage.peak_bytes > (verdict.core ? verdict.usable : memory.capacity_bytes);
    const group = s('g', { class: 'bar', tabindex: '0', role: 'img', dataset: { stage: String(stage.stage) },
      'aria-label': `Stage ${stage.stage}: peak ${formatBytesIn(stage.peak_bytes, unit)}${oom ? ', out of memory' : ''}` });
    let base = 0;
    for (const series of MEMORY_SERIES) {
      const bytes = stage[series.key] ?? 0;
      if (bytes <= 0) continue;
      const box = { x, width: barW, y: y(base + bytes), height: Math.max(0.5, y(base) - y(base + bytes)) };
      group.append(s('rect', { ...box, class: `seg s-${series.css}`, dataset: { series: series.key, ...(memory.explained?.length ? { explain: `/memory/stages/${stage.stage}/${series.key}` } : {}) } },
        s('title', { text: `${series.label}: ${formatBytesIn(bytes, unit)}` })));
      const hatch = hatchRect('mh', series.css, box);
      if (hatch) group.append(hatch);
      if (box.height >= 13 && barW >= 34) {
        group.append(s('text', { x: x + barW / 2, y: box.y + box.height / 2 + 4, class: 'seg-label', 'text-anchor': 'middle', text: series.short }));
      }
      base += bytes;
    }
    if ((stage.reserved_bytes ?? 0) > base) {
      const box = { x, width: barW, y: y(stage.reserved_bytes), height: y(base) - y(stage.reserved_bytes) };
      group.append(s('rect', { ...box, class: 'seg s-reserve' }, s('title', { text: `Reserved: ${formatBytesIn(stage.reserved_bytes, unit)}` })),
        hatchRect('mh', 'reserve', box));
    }
    const total = Math.max(base, stage.reserved_bytes ?? 0);
    group.append(s('rect', { x: x - 3, width: barW + 6, y: y(total) - 3, height: y(0) - y(total) + 6, class: 'focus-ring', rx: 3 }));
    if (i % labelEvery === 0) {
      svg.append(s('text', { x: x + barW / 2, y: HEIGHT - M.bottom + 16, class: `tick${oom ? ' oom' : ''}`, 'text-anchor': 'middle', text: stages.length > 8 ? String(stage.stage) : `stage ${stage.stage}` }));
    }
    attachTooltip(group, () => [
      `Stage ${stage.stage}${stage.layers_per_chunk ? ` (${stage.layers_per_chunk.join('+')} layers)` : ''}${oom ? ': out of memory' : ''}`,
      ...MEMORY_SERIES.filter((series) => (stage[series.key] ?? 0) > 0).map((series) => `${series.label}: ${formatBytesIn(stage[series.key], unit)}`),
      `Peak: ${formatBytesIn(stage.peak_bytes, unit)}`,
      `Reserved: ${formatBytesIn(stage.reserved_bytes, unit)}`,
    ]);
    svg.append(group);
  });
  const cy = y(memory.capacity_bytes);
  svg.append(s('line', { x1: M.left, x2: width - M.right, y1: cy, y2: cy, class: 'capacity-line' }),
    s('text', { x: width - M.right, y: cy - 5, class: 'capacity-label', 'text-anchor': 'end', text: `HBM ${formatBytesIn(memory.capacity_bytes, unit)}` }));
  if (verdict.core && Math.abs(verdict.usable - memory.capacity_bytes) > 1) {
    const uy = y(verdict.usable);
    svg.append(s('line', { x1: M.left, x2: width - M.right, y1: uy, y2: uy, class: 'usable-line' }),
      s('text', { x: M.left + 4, y: uy - 5, class: 'usable-label', text: `usable ${formatBytesIn(verdict.usable, unit)}` }));
  }
  container.replaceChildren(svg);
}

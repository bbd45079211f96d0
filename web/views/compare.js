// The Compare tab: up to four pinned configs side by side: memory per GPU
// (the peak stage's parts), the step time breakdown, throughput, and the
// choices that differ; each number of #2..#4 also as its change against #1.
// Pins can be named (the name travels in the link). The pins are in the URL
// (c1=…c4=), so one link shares them all; their estimates come from
// engine/runs.js (pinResults).
import { h, s } from '../lib/dom.js';
import { bytesUnit, clip, formatBytes, formatBytesIn, formatCount, formatGiB, formatPercent, formatSeconds, formatSecondsIn, formatStep, formatTflops, formatTick, formatTokensPerS, secondsUnit } from '../lib/format.js';
import { MEMORY_SERIES } from './memory_chart.js';
import { TIME_PARTS } from './time_breakdown.js';
import { attachTooltip } from './tooltip.js';
import { chartWidth, niceTicks, onResize } from '../lib/axis.js';
import { recomputeLabel } from './search_results.js';
import { toConfig } from '../state/config.js';
import { pinName, MAX_PIN_NAME } from '../state/url.js';
import { verdictOf } from '../state/verdict.js';

// "+12.3 %" / "−4.1 %" / "same": the change of `value` against #1's.
export function deltaText(value, reference) {
  if (!Number.isFinite(value) || !Number.isFinite(reference) || reference === 0) return '';
  // Rounded to 1e-9 first: 90 vs 100 is -0.09999999999999998 in binary.
  const change = Math.round((value / reference - 1) * 1e9) / 1e9;
  if (Math.abs(change) < 0.0005) return 'same as #1';
  return `${change > 0 ? '+' : '−'}${formatPercent(Math.abs(change))} vs #1`;
}

const pinLabel = (pin, i) => (pin?.name ? `#${i + 1} ${pin.name}` : `#${i + 1}`);

const BAR = 26;
const M = { top: 6, right: 70, bottom: 26, left: 34 };  // right: room for the totals

// A preset's label (with its number of changes), or the shape of a custom
// model or system.
function label(catalog, spec) {
  const named = (kind, list, custom) => {
    const changes = Object.keys(spec[kind].over).filter((k) => k !== 'num_gpus').length;
    const preset = list.find((p) => p.id === spec[kind].preset);
    if (!preset) return custom;
    return `${preset.label ?? preset.id}${changes ? ` (${changes} ${changes === 1 ? 'change' : 'changes'})` : ''}`;
  };
  const m = spec.model.over;
  const g = spec.system.over;
  return {
    model: named('model', catalog.models, `custom: ${m.num_layers ?? '?'} layers, hidden ${m.hidden_size ?? '?'}${m.moe ? `, ${m['moe.num_experts'] ?? '?'} experts` : ''}`),
    system: named('system', catalog.systems, `custom: ${g['gpu.hbm_capacity_gib'] ?? '?'} GiB, ${g['gpu.peak_tflops.bf16'] ?? '?'} TFLOP/s`),
  };
}

export function mount(root, store, actions) {
  const pinCurrent = h('button', { type: 'button', class: 'primary', id: 'compare-pin', text: 'Pin the calculator’s config', onclick: () => actions.pinCurrent() });
  const intro = h('p', { class: 'note', id: 'compare-intro' });
  const memory = h('div', { class: 'chart', id: 'compare-memory' });
  const time = h('div', { class: 'chart', id: 'compare-time' });
  const tableBox = h('div', { class: 'table-scroll' });
  const charts = h('div', { class: 'compare-charts' },
    h('section', { class: 'panel' }, h('h2', { text: 'Memory per GPU (peak stage)' }), memory,
      h('ul', { class: 'legend' }, MEMORY_SERIES.map((m) => h('li', {}, h('span', { class: `swatch s-${m.css}` }), m.label)))),
    h('section', { class: 'panel' }, h('h2', { text: 'Step time' }), time,
      h('ul', { class: 'legend' }, TIME_PARTS.map((p) => h('li', {}, h('span', { class: `swatch t-${p.css}` }), p.label)))));
  root.replaceChildren(
    h('section', { class: 'panel compare-head' }, h('h2', { text: 'Compare pinned configurations' }), intro, pinCurrent),
    charts, h('section', { class: 'panel' }, h('h2', { text: 'Side by side' }), tableBox));

  const render = () => {
    const state = store.get();
    const { pins, pinResults, catalog } = state;
    if (!catalog) return;
    pinCurrent.disabled = pins.length >= 4 || !state.spec;
    intro.textContent = pins.length === 0
      ? 'Pin up to four configurations (here, from the calculator’s toolbar, or from the Search results) to see them side by side. The link holds every pinned config.'
      : `${pins.length} of 4 pinned. The link holds them all.`;
    charts.hidden = pins.length === 0;
    tableBox.parentElement.hidden = pins.length === 0;
    if (pins.length === 0) return;
    const results = pins.map((_, i) => (pinResults[i]?.ok ? pinResults[i].result : null));
    drawBars(memory, results, (r) => {
      const stage = r.memory.stages?.[r.memory.peak_stage] ?? r.memory.stages?.[0] ?? {};
      return MEMORY_SERIES.map((m) => ({ value: stage[m.key] ?? 0, css: `s-${m.css}`, label: m.label }));
    }, (v) => formatBytes(v), (max) => niceTicks(max / 1024 ** 3, 4).map((t) => [t * 1024 ** 3, formatGiB(t * 1024 ** 3)]),
    (r) => r.memory.capacity_bytes);
    drawBars(time, results, (r) => (r.time ? TIME_PARTS.map((p) => ({ value: r.time.breakdown?.[p.key] ?? 0, css: `t-${p.css}`, label: p.label })) : []),
      (v) => formatSeconds(v), (max) => {
        const unit = max >= 2 ? 1 : 1e-3;
        return niceTicks(max / unit, 4).map((t) => [t * unit, formatTick(t, unit === 1 ? 's' : 'ms')]);
      });
    tableBox.replaceChildren(table(state, results));
  };

  function table(state, results) {
    const { pins, pinResults, catalog } = state;
    const configs = pins.map((pin) => toConfig(pin));
    // Rows whose cells differ are marked (when more than one config is pinned).
    const row = (name, cell, key) => {
      const cells = configs.map((c, i) => cell(c, results[i], i));
      const texts = cells.map((c) => (typeof c === 'string' ? c : c.dataset?.value ?? c.textContent));
      const differs = configs.length > 1 && new Set(texts).size > 1;
      return h('tr', { dataset: { row: key ?? name }, class: differs ? 'differs' : '' }, h('th', { scope: 'row', text: name }),
        cells.map((c) => h('td', {}, c)));
    };
    const usedParts = TIME_PARTS.filter((p) => results.some((r) => (r?.time?.breakdown?.[p.key] ?? 0) > 0));
    // A number with its change against #1 (for #2..#4).
    const value = (text, raw, i, reference) => h('span', { dataset: { value: String(raw ?? '') } }, text,
      i > 0 && reference !== undefined && deltaText(raw, reference)
        ? h('span', { class: 'delta', dataset: { delta: String(raw / reference - 1) }, text: ` (${deltaText(raw, reference)})` }) : '');
    const first = results[0];
    const peakUnit = bytesUnit(Math.max(0, ...results.map((r) => r?.memory.peak_bytes ?? 0)));
    const partUnit = secondsUnit(Math.max(0, ...results.flatMap((r) => usedParts.map((p) => r?.time?.breakdown?.[p.key] ?? 0))));
    const training = (key, def) => (c) => String(c.training[key] ?? def ?? '–');
    return h('table', { class: 'numbers-table compare-table', id: 'compare-table' },
      h('thead', {}, h('tr', {}, h('th', { scope: 'col', text: '' }), pins.map((pin, i) => h('th', { scope: 'col' },
        h('span', { class: 'pin-number', text: `#${i + 1}` }), ' ',
        h('input', { type: 'text', class: 'pin-name', id: `pin-name-${i}`, value: pin.name ?? '', placeholder: 'name', maxlength: String(MAX_PIN_NAME),
          'aria-label': `Name of pinned config #${i + 1}`, spellcheck: 'false', onchange: (event) => actions.renamePin(i, pinName(event.target.value)) }), ' ',
        h('button', { type: 'button', class: 'small', text: 'Open', title: 'Open in the calculator', dataset: { pin: String(i) }, onclick: () => actions.openPin(i) }), ' ',
        h('button', { type: 'button', class: 'small unpin', text: 'Unpin', dataset: { pin: String(i) }, onclick: () => actions.unpin(i) }))))),
      h('tbody', {},
        row('Model', (c, r, i) => label(catalog, pins[i]).model, 'model'),
        row('System', (c, r, i) => `${label(catalog, pins[i]).system} × ${c.system.num_gpus ?? '?'}`, 'system'),
        row('Parallelism', (c) => ['tp', 'pp', 'vpp', 'cp', 'ep', 'etp', 'dp'].filter((k) => c.training[k] !== undefined && (k === 'tp' || c.training[k] !== 1))
          .map((k) => `${k}${c.training[k]}`).join(' ') || 'none', 'parallel'),
        row('Batch', (c) => `seq ${c.training.seq_len}, mbs ${c.training.micro_batch_size}, gbs ${c.training.global_batch_size ?? `${c.training.num_micro_batches} micro-batches`}`, 'batch'),
        row('Recompute', (c) => recomputeLabel(c.training.recompute), 'recompute'),
        row('ZeRO', training('zero_stage', 1), 'zero'),
        row('Verdict', (c, r, i) => (r ? { fits: 'fits', tight: 'tight', oom: 'out of memory' }[verdictOf(r).status]
          : pinResults[i] === null || pinResults[i] === undefined ? 'computing…'
            : clip(`invalid: ${(pinResults[i].errors ?? []).map((e) => `${e.path}: ${e.message}`).join('; ')}`, 200)), 'verdict'),
        row('Peak memory', (c, r, i) => (r ? value(formatBytesIn(r.memory.peak_bytes, peakUnit), r.memory.peak_bytes, i, first?.memory.peak_bytes) : '–'), 'peak'),
        row('HBM', (c, r) => (r ? formatBytesIn(r.memory.capacity_bytes, peakUnit) : '–'), 'capacity'),
        row('Step time', (c, r, i) => (r?.time ? value(formatStep(r.time.iteration_s), r.time.iteration_s, i, first?.time?.iteration_s) : '–'), 'step'),
        ...usedParts.map((p) => row(`· ${p.label}`, (c, r, i) => (r?.time ? value(formatSecondsIn(r.time.breakdown?.[p.key] ?? 0, partUnit), r.time.breakdown?.[p.key] ?? 0, i, first?.time?.breakdown?.[p.key]) : '–'), p.key)),
        row('Tokens/s', (c, r, i) => (r?.throughput ? value(formatTokensPerS(r.throughput.tokens_per_s), r.throughput.tokens_per_s, i, first?.throughput?.tokens_per_s) : '–'), 'tokens'),
        row('Tokens/s per GPU', (c, r, i) => (r?.throughput ? value(formatTokensPerS(r.throughput.tokens_per_s_per_gpu), r.throughput.tokens_per_s_per_gpu, i, first?.throughput?.tokens_per_s_per_gpu) : '–'), 'tokens-gpu'),
        row('Model TFLOP/s per GPU', (c, r) => (r?.throughput ? formatTflops(r.throughput.model_tflops_per_gpu) : '–'), 'tflops'),
        row('MFU', (c, r, i) => (r?.throughput ? value(formatPercent(r.throughput.mfu), r.throughput.mfu, i, first?.throughput?.mfu) : '–'), 'mfu'),
        row('GPU-hours per 1T tokens', (c, r, i) => (r?.throughput ? value(formatCount(r.throughput.gpu_hours_per_trillion_tokens, 'GPU·h'), r.throughput.gpu_hours_per_trillion_tokens, i, first?.throughput?.gpu_hours_per_trillion_tokens) : '–'), 'gpu-hours')));
  }

  // One horizontal stacked bar per pin, on a shared scale.
  function drawBars(container, results, parts, format, ticks, limit) {
    const width = chartWidth(container);
    const rows = results.map((r) => (r ? parts(r) : []));
    const totals = rows.map((p) => p.reduce((sum, part) => sum + Math.max(0, part.value), 0));
    const limits = results.map((r) => (r && limit ? limit(r) : 0));
    const max = Math.max(1e-12, ...totals, ...limits) * 1.04;
    const height = M.top + M.bottom + results.length * (BAR + 8);
    const plotW = width - M.left - M.right;
    const x = (v) => M.left + (v / max) * plotW;
    const svg = s('svg', { viewBox: `0 0 ${width} ${height}`, width, height, role: 'img', class: 'compare-svg', 'aria-label': container.id });
    for (const [v, text] of ticks(max)) {
      svg.append(s('line', { x1: x(v), x2: x(v), y1: M.top, y2: height - M.bottom, class: 'grid-line' }),
        s('text', { x: x(v), y: height - 8, class: 'tick', 'text-anchor': 'middle', text }));
    }
    rows.forEach((row, i) => {
      const y = M.top + i * (BAR + 8);
      svg.append(s('text', { x: M.left - 8, y: y + BAR / 2 + 4, class: 'tick', 'text-anchor': 'end', text: `#${i + 1}` },
        s('title', { text: pinLabel(store.get().pins[i], i) })));
      let at = 0;
      for (const part of row) {
        if (part.value <= 0) continue;
        const rect = s('rect', { x: x(at), y, width: Math.max(0.5, x(at + part.value) - x(at)), height: BAR, class: `seg ${part.css}` });
        attachTooltip(rect, () => [`${pinLabel(store.get().pins[i], i)}: ${part.label}`, format(part.value)]);
        svg.append(rect);
        at += part.value;
      }
      if (limits[i]) svg.append(s('line', { x1: x(limits[i]), x2: x(limits[i]), y1: y - 3, y2: y + BAR + 3, class: 'capacity-line' }));
      if (row.length) svg.append(s('text', { x: x(at) + 6, y: y + BAR / 2 + 4, class: 'bar-total', text: format(totals[i]) }));
    });
    container.replaceChildren(svg);
  }

  onResize(memory, render);
  store.subscribe((state, previous) => {
    if (state.pins !== previous.pins || state.pinResults !== previous.pinResults || state.catalog !== previous.catalog) render();
  });
  render();
}

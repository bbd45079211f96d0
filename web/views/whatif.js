// The What-if tab: for the calculator's current plan, the step time change
// when each system figure is scaled by 0.5x..4x: a tornado chart (one bar per
// figure from its worst to its best factor, the most sensitive on top) and
// the table of every factor; a shortcut re-runs the Search with one figure
// scaled. The run itself is actions.runWhatif (engine/runs.js).
import { h, s } from '../lib/dom.js';
import { clip, formatPercent, formatSeconds, formatStep } from '../lib/format.js';
import { figureLabel } from '../state/fields.js';
import { hideTooltip, showTooltip } from './tooltip.js';
import { chartWidth, onResize } from '../lib/axis.js';


// Step time change of a point against the baseline: -0.25 is 25 % faster.
const change = (point, baseline) => point.iteration_s / baseline.iteration_s - 1;

function formatChange(value) {
  if (!Number.isFinite(value)) return '–';
  if (Math.abs(value) < 0.0005) return '0 %';
  return `${value > 0 ? '+' : '−'}${formatPercent(Math.abs(value))}`;
}

// Axis labels: whole percents ("+75 %", "−50 %") unless the step is finer.
function formatTickChange(value, step) {
  if (Math.abs(value) < 1e-9) return '0 %';
  const digits = step >= 0.01 ? 0 : 1;
  return `${value > 0 ? '+' : '−'}${(Math.abs(value) * 100).toFixed(digits)} %`;
}

export function mount(root, store, actions) {
  const title = h('h2', { id: 'whatif-title', text: 'What bounds this plan: step time when one system figure changes' });
  const intro = h('p', { class: 'note', id: 'whatif-intro' });
  const errors = h('ul', { class: 'form-errors', id: 'whatif-errors', hidden: true });
  const headline = h('p', { class: 'headline', id: 'whatif-headline' });
  const chart = h('div', { class: 'chart', id: 'whatif-chart' });
  const legend = h('ul', { class: 'legend', id: 'whatif-legend' });
  const tableBox = h('div', { class: 'table-scroll' });
  const figureSelect = h('select', { id: 'whatif-figure' });
  const factorSelect = h('select', { id: 'whatif-factor' });
  const research = h('button', { type: 'button', class: 'primary', id: 'whatif-research', text: 'Search again with this system',
    onclick: () => actions.searchScaled(figureSelect.value, Number(factorSelect.value)) });
  const shortcut = h('div', { class: 'whatif-research', id: 'whatif-shortcut' },
    h('label', { for: 'whatif-figure', text: 'Re-search the best plan with ' }), figureSelect,
    h('label', { for: 'whatif-factor', class: 'visually-hidden', text: 'scaled by' }), factorSelect, research);
  const chartPanel = h('section', { class: 'panel', id: 'whatif-panel', 'aria-labelledby': 'whatif-title' },
    title, intro, errors, headline, chart, legend);
  const tablePanel = h('section', { class: 'panel', 'aria-label': 'What-if table' },
    h('h2', { text: 'Step time change by factor' }), tableBox, shortcut);
  root.replaceChildren(chartPanel, tablePanel);

  let lastResult = null;
  const render = () => {
    const state = store.get();
    const w = state.whatif;
    const envelope = w.envelope;
    chartPanel.classList.toggle('stale', w.status === 'running');
    errors.hidden = !(envelope && !envelope.ok);
    errors.replaceChildren(...(envelope && !envelope.ok ? envelope.errors ?? [] : []).slice(0, 12)
      .map((e) => h('li', { text: clip(`${e.path || 'config'}: ${e.message}`, 300) })));
    const result = envelope?.ok ? envelope.result : null;
    intro.textContent = result ? 'Each bar scales one figure of the system between its factors, the others fixed: how far left the step time can fall, how far right it can rise. The longest bars bound this plan. Latencies help when they shrink (factors below 1).'
      : w.status === 'running' ? 'Computing…' : envelope ? 'Fix the configuration in the calculator first.' : '';
    for (const el of [headline, chart, legend, tablePanel]) el.hidden = !result;
    if (!result) return;
    const most = result.figures.find((f) => f.figure === result.most_sensitive);
    headline.replaceChildren('Baseline step ', h('strong', { text: formatStep(result.baseline.iteration_s) }), '. Most sensitive: ',
      h('strong', { id: 'whatif-most', dataset: { figure: result.most_sensitive }, text: figureLabel(result.most_sensitive) }),
      most ? ` (${most.smaller_is_better ? 'half' : 'twice'} as good: ${formatChange(1 / most.speedup_when_twice_as_good - 1)} step time)` : '');
    draw(result);
    legend.replaceChildren(h('li', {}, h('span', { class: 'swatch tornado-faster' }), 'faster (factor helps)'),
      h('li', {}, h('span', { class: 'swatch tornado-slower' }), 'slower (factor hurts)'));
    tableBox.replaceChildren(table(result));
    if (lastResult !== result) fillShortcut(result);
    lastResult = result;
  };

  function fillShortcut(result) {
    figureSelect.replaceChildren(...result.figures.map((f) => h('option', { value: f.figure, text: figureLabel(f.figure) })));
    figureSelect.value = result.most_sensitive;
    const fill = () => {
      const figure = result.figures.find((f) => f.figure === figureSelect.value);
      factorSelect.replaceChildren(...result.factors.filter((x) => x !== 1).map((x) => h('option', { value: String(x), text: `× ${x}` })));
      const better = figure?.smaller_is_better ? 0.5 : 2;
      if (result.factors.includes(better)) factorSelect.value = String(better);
    };
    figureSelect.onchange = fill;
    fill();
  }

  function table(result) {
    const base = result.baseline;
    return h('table', { class: 'numbers-table whatif-table', id: 'whatif-table' },
      h('thead', {}, h('tr', {}, h('th', { scope: 'col', text: 'Figure' }), result.factors.map((x) => h('th', { scope: 'col', text: `× ${x}` })),
        h('th', { scope: 'col', text: 'Twice as good' }))),
      h('tbody', {}, result.figures.map((f) => h('tr', { class: f.figure === result.most_sensitive ? 'most' : '', dataset: { figure: f.figure } },
        h('th', { scope: 'row', text: figureLabel(f.figure) }),
        f.points.map((p) => h('td', { class: p.fits ? '' : 'oom', dataset: { seconds: String(p.iteration_s) }, title: `${formatSeconds(p.iteration_s)}${p.fits ? '' : ', out of memory'}`,
          text: `${formatChange(change(p, base))}${p.fits ? '' : ' OOM'}` })),
        h('td', { text: `${Number(f.speedup_when_twice_as_good).toFixed(3)}×` })))));
  }

  // Tornado: per figure, a bar from the change at its worst factor to the
  // change at its best one (faster to the left of zero), sorted by range.
  function draw(result) {
    const width = chartWidth(chart);
    const base = result.baseline;
    const rows = result.figures.map((f, i) => {
      const changes = f.points.map((p) => ({ p, c: change(p, base) })).filter((x) => Number.isFinite(x.c));
      const lo = changes.reduce((m, x) => (x.c < m.c ? x : m), { c: 0, p: null });
      const hi = changes.reduce((m, x) => (x.c > m.c ? x : m), { c: 0, p: null });
      return { f, i, lo, hi, range: hi.c - lo.c };
    }).sort((a, b) => b.range - a.range);
    // On a phone the figure names take 40% and the bars the rest, without value
    // labels (the table below has every value); wider, room beside the plot for the
    // labels at the bars' ends ("×4 −53.3 %"): on the left between the figure names
    // and the plot, so they never overlap.
    const narrow = width < 600;
    const label = narrow ? Math.min(150, width * 0.4) : Math.min(190, Math.max(110, width * 0.28));
    const valueLabel = narrow ? 8 : 72;
    const m = { top: 8, right: valueLabel, bottom: 36, left: label + valueLabel };
    const rowH = 26;
    const height = m.top + m.bottom + rows.length * rowH;
    const plotW = width - m.left - m.right;
    let left = Math.min(-0.05, ...rows.map((r) => r.lo.c));
    let right = Math.max(0.05, ...rows.map((r) => r.hi.c));
    const pad = (right - left) * 0.04;
    left -= pad;
    right += pad;
    const x = (v) => m.left + ((v - left) / (right - left)) * plotW;
    const svg = s('svg', { viewBox: `0 0 ${width} ${height}`, width, height, role: 'img', class: 'whatif-svg',
      'aria-label': 'Step time change when each system figure is scaled, most sensitive first' });
    const span = right - left;
    const ticks = Math.max(2, Math.min(7, Math.floor(plotW / 48)));  // a tick label is ~40 px wide
    const step = [0.05, 0.1, 0.2, 0.25, 0.5, 1, 2, 5].find((st) => span / st <= ticks) ?? 10;
    for (let v = Math.ceil(left / step) * step; v <= right; v += step) {
      svg.append(s('line', { x1: x(v), x2: x(v), y1: m.top, y2: height - m.bottom, class: Math.abs(v) < 1e-9 ? 'zero-line' : 'grid-line' }),
        s('text', { x: x(v), y: height - m.bottom + 14, class: 'tick', 'text-anchor': 'middle', text: formatTickChange(v, step) }));
    }
    svg.append(s('text', { x: m.left + plotW / 2, y: height - 6, class: 'axis-label', 'text-anchor': 'middle', text: '← faster    step time change    slower →' }));
    rows.forEach((r, k) => {
      const y = m.top + k * rowH;
      const most = r.f.figure === result.most_sensitive;
      const g = s('g', { class: `tornado-row${most ? ' most' : ''}`, dataset: { figure: r.f.figure, rank: String(k) }, tabindex: '0', role: 'img',
        'aria-label': `${figureLabel(r.f.figure)}: ${formatChange(r.lo.c)} to ${formatChange(r.hi.c)}` });
      g.append(s('text', { x: label - 8, y: y + rowH / 2 + 4, class: `tick tornado-label${most ? ' most' : ''}`, 'text-anchor': 'end', text: figureLabel(r.f.figure) }));
      const bar = (a, b, cls, point) => {
        if (b <= a) return;
        const rect = s('rect', { x: x(a), width: Math.max(1, x(b) - x(a)), y: y + 4, height: rowH - 8, class: `tornado-bar ${cls}`, dataset: { factor: String(point?.factor ?? '') } });
        g.append(rect);
      };
      bar(r.lo.c, Math.min(0, r.hi.c), 'faster', r.lo.p);
      bar(Math.max(0, r.lo.c), r.hi.c, 'slower', r.hi.p);
      if (r.lo.p && !narrow) g.append(s('text', { x: x(r.lo.c) - 4, y: y + rowH / 2 + 4, class: 'tick', 'text-anchor': 'end', text: `×${r.lo.p.factor} ${formatChange(r.lo.c)}` }));
      if (r.hi.p && !narrow) g.append(s('text', { x: x(r.hi.c) + 4, y: y + rowH / 2 + 4, class: 'tick', text: `×${r.hi.p.factor} ${formatChange(r.hi.c)}` }));
      g.addEventListener('pointermove', (event) => showTooltip(event.clientX, event.clientY, [figureLabel(r.f.figure),
        ...r.f.points.map((p) => `× ${p.factor}: ${formatSeconds(p.iteration_s)} (${formatChange(change(p, base))})${p.fits ? '' : ', out of memory'}`)]));
      g.addEventListener('pointerleave', hideTooltip);
      svg.append(g);
    });
    chart.replaceChildren(svg);
  }

  onResize(chart, render);
  store.subscribe((state, previous) => { if (state.whatif !== previous.whatif) render(); });
  render();
}

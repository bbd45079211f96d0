// The What-if tab: for the calculator's current plan, the step time change
// when each system figure is scaled by 0.5x..4x (chart and table), the most
// sensitive figure highlighted, and a shortcut that re-runs the Search with
// one figure scaled. The run itself is actions.runWhatif (engine/runs.js).
import { h, s } from '../lib/dom.js';
import { clip, formatPercent, formatSeconds } from '../lib/format.js';
import { figureLabel } from '../state/fields.js';
import { hideTooltip, showTooltip } from './tooltip.js';
import { chartWidth, onResize } from '../lib/axis.js';

const HEIGHT = 300;
const M = { top: 14, right: 16, bottom: 40, left: 70 };

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
    intro.textContent = result ? 'Each line scales one figure of the system, the others fixed; lower is faster. Latencies help when they shrink (factors below 1).'
      : w.status === 'running' ? 'Computing…' : envelope ? 'Fix the configuration in the calculator first.' : '';
    for (const el of [headline, chart, legend, tablePanel]) el.hidden = !result;
    if (!result) return;
    const most = result.figures.find((f) => f.figure === result.most_sensitive);
    headline.replaceChildren('Baseline step ', h('strong', { text: formatSeconds(result.baseline.iteration_s) }), '. Most sensitive: ',
      h('strong', { id: 'whatif-most', dataset: { figure: result.most_sensitive }, text: figureLabel(result.most_sensitive) }),
      most ? ` (${most.smaller_is_better ? 'half' : 'twice'} as good: ${formatChange(1 / most.speedup_when_twice_as_good - 1)} step time)` : '');
    draw(result);
    legend.replaceChildren(...result.figures.map((f, i) => h('li', { class: f.figure === result.most_sensitive ? 'most' : '' },
      h('span', { class: `swatch f-${i}` }), figureLabel(f.figure))));
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

  function draw(result) {
    const width = chartWidth(chart);
    const plotW = width - M.left - M.right;
    const plotH = HEIGHT - M.top - M.bottom;
    const factors = result.factors;
    const base = result.baseline;
    const lo = Math.log2(Math.min(...factors));
    const hi = Math.log2(Math.max(...factors));
    const changes = result.figures.flatMap((f) => f.points.map((p) => change(p, base))).filter(Number.isFinite);
    let top = Math.max(0.05, ...changes);
    let bottom = Math.min(-0.05, ...changes);
    const pad = (top - bottom) * 0.06;
    top += pad;
    bottom -= pad;
    const x = (factor) => M.left + ((Math.log2(factor) - lo) / Math.max(1e-9, hi - lo)) * plotW;
    const y = (v) => M.top + ((top - v) / (top - bottom)) * plotH;
    const svg = s('svg', { viewBox: `0 0 ${width} ${HEIGHT}`, width, height: HEIGHT, role: 'img', class: 'whatif-svg',
      'aria-label': 'Step time change when each system figure is scaled' });
    const span = top - bottom;
    const step = [0.05, 0.1, 0.2, 0.25, 0.5, 1, 2, 5].find((st) => span / st <= 7) ?? 10;
    for (let v = Math.ceil(bottom / step) * step; v <= top; v += step) {
      const yv = y(v);
      svg.append(s('line', { x1: M.left, x2: width - M.right, y1: yv, y2: yv, class: Math.abs(v) < 1e-9 ? 'zero-line' : 'grid-line' }),
        s('text', { x: M.left - 6, y: yv + 4, class: 'tick', 'text-anchor': 'end', text: formatTickChange(v, step) }));
    }
    for (const factor of factors) {
      svg.append(s('line', { x1: x(factor), x2: x(factor), y1: M.top, y2: M.top + plotH, class: 'grid-line' }),
        s('text', { x: x(factor), y: HEIGHT - M.bottom + 16, class: 'tick', 'text-anchor': 'middle', text: `×${factor}` }));
    }
    svg.append(s('text', { x: M.left + plotW / 2, y: HEIGHT - 6, class: 'axis-label', 'text-anchor': 'middle', text: 'Factor applied to the figure' }),
      s('text', { x: 12, y: M.top + plotH / 2, class: 'axis-label', 'text-anchor': 'middle', transform: `rotate(-90 12 ${M.top + plotH / 2})`, text: 'Step time change' }));
    // The most sensitive figure is drawn last, on top.
    const order = result.figures.map((f, i) => [f, i]).sort((a, b) => (a[0].figure === result.most_sensitive) - (b[0].figure === result.most_sensitive));
    for (const [f, i] of order) {
      const most = f.figure === result.most_sensitive;
      const points = f.points.filter((p) => Number.isFinite(change(p, base)));
      svg.append(s('polyline', { class: `wf-line f-${i}${most ? ' most' : ''}`, dataset: { figure: f.figure },
        points: points.map((p) => `${x(p.factor).toFixed(1)},${y(change(p, base)).toFixed(1)}`).join(' ') }));
      for (const p of points) {
        svg.append(s('circle', { cx: x(p.factor), cy: y(change(p, base)), r: most ? 4 : 3, class: `wf-pt f-${i}${p.fits ? '' : ' oom'}` }));
      }
    }
    svg.addEventListener('pointermove', (event) => {
      const box = svg.getBoundingClientRect();
      const scale = width / box.width;
      const px = (event.clientX - box.left) * scale;
      const py = (event.clientY - box.top) * scale;
      let best = null;
      let bestD = 14 * scale;
      for (const f of result.figures) {
        for (const p of f.points) {
          const d = Math.hypot(x(p.factor) - px, y(change(p, base)) - py);
          if (d < bestD) { best = { f, p }; bestD = d; }
        }
      }
      if (!best) { hideTooltip(); return; }
      showTooltip(event.clientX, event.clientY, [`${figureLabel(best.f.figure)} × ${best.p.factor}`,
        `Step ${formatSeconds(best.p.iteration_s)} (${formatChange(change(best.p, base))})`, best.p.fits ? 'Fits' : 'Out of memory']);
    });
    svg.addEventListener('pointerleave', hideTooltip);
    chart.replaceChildren(svg);
  }

  onResize(chart, render);
  store.subscribe((state, previous) => { if (state.whatif !== previous.whatif) render(); });
  render();
}

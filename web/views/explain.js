// Explain a number: a click (or Enter) on anything marked data-explain="<JSON
// pointer>" opens the core's explanation of that number (result.explanations:
// its formula, the formula with this plan's values, each term and the source).
// The page formats the core's values and re-derives nothing.
import { h } from '../lib/dom.js';
import { bytesUnit, formatBytesIn, formatSecondsIn, secondsUnit } from '../lib/format.js';

const PART_LABELS = {
  parameters_bytes: 'Parameters', gradients_bytes: 'Gradients', optimizer_bytes: 'Optimizer states', buffers_bytes: 'Buffers',
  activations_bytes: 'Activations', transient_bytes: 'Transient (peak op)', peak_bytes: 'Peak allocated', reserved_bytes: 'Reserved',
  outside_allocator_bytes: 'Outside the allocator', device_bytes: 'Device total',
  forward_s: 'Forward', backward_s: 'Backward', recompute_s: 'Recompute', host_overhead_s: 'Host overhead',
  tp_comm_exposed_s: 'TP comm (exposed)', cp_comm_exposed_s: 'CP comm (exposed)', ep_comm_exposed_s: 'EP comm (exposed)',
  pp_comm_exposed_s: 'PP comm (exposed)', bubble_s: 'Pipeline bubble', stage_imbalance_s: 'Stage imbalance',
  straggler_s: 'Straggler', dp_comm_exposed_s: 'DP comm (exposed)', optimizer_s: 'Optimizer step',
};

export function partLabel(pointer) {
  const keys = pointer.split('/');
  const key = keys[keys.length - 1];
  const label = PART_LABELS[key] ?? key.replace(/_(bytes|s)$/, '').replace(/_/g, ' ');
  const stage = /^\/memory\/stages\/(\d+)\//.exec(pointer);
  if (stage) return `${label}, stage ${stage[1]}`;
  return pointer.startsWith('/time/breakdown/') ? `${label} (critical stage)` : label;
}

// A term's value in its unit, to five significant digits: a difference of two
// large terms (the bubble's T - W) stays legible.
const precise = (value, unit) => `${Number((value / unit.size).toPrecision(5))} ${unit.name}`;
export function formatTerm(value, unit) {
  if (unit === 'bytes') return precise(value, bytesUnit(value));
  if (unit === 's') return precise(value, secondsUnit(value));
  // Large counts as 1.57e9, not "1.57 B": beside bytes/param a "B" reads as bytes.
  if (unit === 'count') return Math.abs(value) < 1e6 ? String(Number(value.toPrecision(6))) : value.toExponential(2).replace('e+', 'e');
  if (unit === 'fraction') return String(Number(value.toPrecision(6)));
  return `${Number(value.toPrecision(6))} ${unit}`;
}

// The number clicked, as the page shows it elsewhere.
const formatPart = (value, pointer) => (pointer.endsWith('_bytes') ? formatBytesIn(value, bytesUnit(value))
  : pointer.endsWith('_s') ? formatSecondsIn(value, secondsUnit(value)) : String(value));

// The formula with each symbol replaced by its value ("m * F" -> "64 × 12.3 ms").
export function substitute(formula, terms) {
  const bySymbol = new Map(terms.map((t) => [t.symbol, t]));
  return formula.replace(/[A-Za-z_][A-Za-z0-9_]*/g, (name) => {
    const t = bySymbol.get(name);
    return t ? formatTerm(t.value, t.unit) : name;
  }).replace(/ \* /g, ' × ');
}

export function explanationOf(result, pointer) {
  return (result?.explanations ?? []).find((x) => x.part === pointer) ?? null;
}

export function mount(root, store) {
  const title = h('h2', { id: 'explain-title' });
  const close = h('button', { type: 'button', id: 'explain-close', text: 'Close', onclick: () => dialog.close() });
  const body = h('div', { id: 'explain-body' });
  const dialog = h('dialog', { class: 'dialog explain-dialog', id: 'explain-dialog', 'aria-labelledby': 'explain-title' },
    h('div', { class: 'dialog-body' }, h('div', { class: 'dialog-head' }, title, close), body));
  root.append(dialog);

  const open = (pointer) => {
    const x = explanationOf(store.get().result, pointer);
    title.textContent = partLabel(pointer);
    if (!x) {
      body.replaceChildren(h('p', { class: 'note', text: 'The core gave no explanation for this number.' }));
    } else {
      const name = title.textContent.split(',')[0].split(' (')[0];
      body.replaceChildren(
        h('p', { class: 'explain-value' }, h('strong', { text: formatPart(x.value, pointer) }), h('span', { class: 'note', text: ` (${x.value})` })),
        h('p', { class: 'explain-formula' }, `${name} = `, h('code', { id: 'explain-formula', text: x.formula.replace(/ \* /g, ' × ') })),
        h('p', { class: 'explain-formula' }, '= ', h('code', { id: 'explain-values', text: substitute(x.formula, x.terms) })),
        h('table', { class: 'numbers-table explain-terms', id: 'explain-terms' },
          h('thead', {}, h('tr', {}, h('th', { scope: 'col', class: 'text', text: 'Term' }), h('th', { scope: 'col', text: 'Value' }),
            h('th', { scope: 'col', class: 'text', text: 'What it is' }))),
          h('tbody', {}, x.terms.map((t) => h('tr', { dataset: { symbol: t.symbol, value: String(t.value) } },
            h('td', { class: 'text' }, h('code', { text: t.symbol })),
            h('td', { text: formatTerm(t.value, t.unit) }),
            h('td', { class: 'text', text: t.meaning }))))),
        h('p', { class: 'explain-source' }, h('strong', { text: 'Source: ' }), h('span', { id: 'explain-source', text: x.source })));
    }
    dialog.dataset.part = pointer;
    if (!dialog.open) dialog.showModal();
  };
  const target = (event) => event.target instanceof Element ? event.target.closest('[data-explain]') : null;
  document.addEventListener('click', (event) => {
    const element = target(event);
    if (element && !dialog.contains(element)) open(element.dataset.explain);
  });
  document.addEventListener('keydown', (event) => {
    const element = (event.key === 'Enter' || event.key === ' ') ? target(event) : null;
    if (element && !dialog.contains(element)) {
      event.preventDefault();
      open(element.dataset.explain);
    }
  });
  store.subscribe((state, previous) => {
    // A new result: an open explanation follows it (or says it has none).
    if (state.result !== previous.result && dialog.open && state.result) open(dialog.dataset.part);
  });
  return { open };
}

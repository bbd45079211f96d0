// Ops of the critical stage: per op its FLOPs, bytes, time, efficiency and
// where the efficiency came from (result.time.ops: measured table, shape
// model, microbenchmark, fitted or assumed), and per op of the peak stage
// what it saves for backward and needs transiently (result.memory.ops).
// Columns the core adds later are shown under their own names; a click on a
// column header sorts by it. Hidden while the core reports neither.
import { h } from '../lib/dom.js';
import { bytesUnit, formatBytesIn, formatCount, formatPercent, formatSecondsIn, secondsUnit } from '../lib/format.js';
import { isStale, markStale } from './stale.js';

const MAX_ROWS = 400;
const LABELS = {
  name: 'Op', kind: 'Kind', count: 'Count', flops: 'FLOPs', bytes: 'HBM bytes', kernels: 'Kernels', time_s: 'Time',
  efficiency: 'Efficiency', efficiency_source: 'Efficiency from', block: 'Block', op: 'Op', saved_bytes: 'Saved for backward',
  forward_transient_bytes: 'Transient (forward)', backward_transient_bytes: 'Transient (backward)',
};

// Column order: what the op is, then its time and what set it, then counts;
// the core's JSON objects list their keys alphabetically, so the order is
// the page's. Columns not named here follow, in the order they come.
const ORDER = ['block', 'name', 'op', 'kind', 'count', 'time_s', 'flops', 'bytes', 'efficiency', 'efficiency_source',
  'kernels', 'saved_bytes', 'forward_transient_bytes', 'backward_transient_bytes'];
const rank = (key) => { const i = ORDER.indexOf(key); return i < 0 ? ORDER.length : i; };

// Rows as objects, from [{...}] or {columns, rows: [[...]]}.
export function readRows(table) {
  if (Array.isArray(table)) return table.filter((row) => row && typeof row === 'object' && !Array.isArray(row));
  const columns = Array.isArray(table?.columns) ? table.columns : null;
  if (!columns || !Array.isArray(table.rows)) return [];
  return table.rows.filter(Array.isArray).map((row) => Object.fromEntries(columns.map((c, i) => [c, row[i]])));
}

function formatter(key, rows) {
  const max = Math.max(0, ...rows.map((r) => (Number.isFinite(r[key]) ? Math.abs(r[key]) : 0)));
  if (key.endsWith('_bytes') || key === 'bytes') { const unit = bytesUnit(max); return [(v) => formatBytesIn(v, unit), unit.name]; }
  if (key.endsWith('_s')) { const unit = secondsUnit(max); return [(v) => formatSecondsIn(v, unit), unit.name]; }
  if (key === 'efficiency') return [(v) => formatPercent(v), '%'];
  if (key === 'flops') return [(v) => formatCount(v), ''];
  return [(v) => String(v), ''];
}

// Sorting: a click on a column's header sorts by it (numbers largest first,
// text A-Z), a second click reverses; kept per table across results.
const sortBy = new Map();

function sorted(rows, sort) {
  if (!sort) return rows;
  const { key, dir } = sort;
  return [...rows].sort((a, b) => {
    const x = a[key], y = b[key];
    const c = typeof x === 'number' && typeof y === 'number' ? x - y : String(x ?? '').localeCompare(String(y ?? ''));
    return dir === 'ascending' ? c : -c;
  });
}

function table(id, caption, rows, redraw) {
  // Array.prototype.sort is stable: unknown columns keep the order they come in.
  const keys = [...new Set(rows.flatMap((r) => Object.keys(r)))].sort((a, b) => rank(a) - rank(b));
  const formats = Object.fromEntries(keys.map((k) => [k, formatter(k, rows)]));
  const numeric = (k) => rows.some((r) => typeof r[k] === 'number');
  const sort = sortBy.get(id);
  const onSort = (k) => {
    const current = sortBy.get(id);
    const first = numeric(k) ? 'descending' : 'ascending';
    const dir = current?.key === k ? (current.dir === 'ascending' ? 'descending' : 'ascending') : first;
    sortBy.set(id, { key: k, dir });
    redraw();
    document.querySelector(`#${id} th[data-key="${k}"] button`)?.focus();
  };
  return h('table', { class: 'numbers-table ops-table', id },
    h('caption', { class: 'table-unit', text: `${caption}; click a column to sort` }),
    h('thead', {}, h('tr', {}, keys.map((k) => h('th', { scope: 'col', class: numeric(k) ? '' : 'text', dataset: { key: k },
      'aria-sort': sort?.key === k ? sort.dir : undefined },
    h('button', { type: 'button', onclick: () => onSort(k),
      text: `${LABELS[k] ?? k.replace(/_/g, ' ')}${formats[k][1] && formats[k][1] !== '%' ? ` (${formats[k][1]})` : ''}` }))))),
    h('tbody', {}, sorted(rows, sort).slice(0, MAX_ROWS).map((row) => h('tr', {}, keys.map((k) => {
      const value = row[k];
      if (typeof value !== 'number') return h('td', { class: 'text', text: value === undefined || value === null ? '' : String(value) });
      return h('td', { dataset: { value: String(value) }, text: formats[k][0](value).replace(/ (TiB|GiB|MiB|s|ms|µs)$/, '') });
    })))));
}

export function mount(root, store) {
  const body = h('div', { class: 'table-scroll' });
  const note = h('p', { class: 'note', id: 'ops-note' });
  root.append(note, body);
  const render = () => {
    const state = store.get();
    const result = state.result;
    const timeRows = readRows(result?.time?.ops);
    const memoryRows = readRows(result?.memory?.ops);
    root.hidden = timeRows.length === 0 && memoryRows.length === 0;
    if (root.hidden) return;
    markStale(root, isStale(state));
    const critical = result.time?.critical_stage ?? 0;
    const memoryStage = result.memory.ops?.stage ?? result.memory.peak_stage;
    body.replaceChildren(
      timeRows.length ? table('ops-time', `Time per op, one micro-batch of stage ${critical} (the critical stage)`, timeRows, render) : '',
      memoryRows.length ? table('ops-memory', `Memory per op, one micro-batch of stage ${memoryStage} (the peak stage)`, memoryRows, render) : '');
    const rows = Math.max(timeRows.length, memoryRows.length);
    note.textContent = rows > MAX_ROWS ? `Showing the first ${MAX_ROWS} of ${rows} ops.` : '';
  };
  store.subscribe((state, previous) => {
    if (state.result === previous.result && state.errors === previous.errors && state.localErrors === previous.localErrors) return;
    render();
  });
}

// The Search tab's results: the counts (with the reasons plans were
// rejected) and the ranked table of the top plans. Clicking a row loads
// that plan into the calculator (actions.loadConfig); "Pin" keeps it for
// Compare.
import { h } from '../lib/dom.js';
import { bytesUnit, clip, formatBytesIn, formatPercent, formatSecondsIn, secondsUnit } from '../lib/format.js';

// A plan's choices, for the table and for labels elsewhere.
export function planLabel(training) {
  const t = training ?? {};
  const parts = [`tp${t.tp ?? 1}`, `pp${t.pp ?? 1}`];
  if ((t.vpp ?? 1) > 1) parts.push(`vpp${t.vpp}`);
  if ((t.cp ?? 1) > 1) parts.push(`cp${t.cp}`);
  if ((t.ep ?? 1) > 1) parts.push(`ep${t.ep}`);
  if (t.dp) parts.push(`dp${t.dp}`);
  parts.push(`mbs${t.micro_batch_size ?? 1}`);
  return parts.join(' ');
}

export function recomputeLabel(recompute) {
  const r = recompute ?? {};
  if (!r.granularity || r.granularity === 'none') return 'none';
  if (r.granularity === 'selective') return `selective${r.modules ? ` (${r.modules.join(', ')})` : ''}`;
  return `full ${r.method ?? 'uniform'} ${r.num_layers ?? 1}`;
}

const OBJECTIVES = { step_time: 'step time', tokens_per_s_per_gpu: 'tokens/s per GPU', time_to_train: 'time to train', gpu_hours: 'GPU-hours' };

// Counts as whole numbers with separators: 10,720.
const count = (n) => Number(n).toLocaleString('en-US');

const COUNT_ROWS = [
  ['considered', 'Combinations considered'],
  ['invalid', 'Invalid (rejected by the config rules)', 'invalid_by_reason'],
  ['candidates', 'Valid candidates'],
  ['pruned', 'Pruned (weights and optimizer alone do not fit)', 'pruned_by_reason'],
  ['evaluated', 'Estimated'],
  ['infeasible', 'Out of memory', 'infeasible_by_reason'],
  ['feasible', 'Fit (allocated + outside-allocator memory)'],
  ['timed', 'Pipelines simulated'],
  ['rejected_by_replay', 'Out of memory once the allocator is replayed'],
];

export function mount(root, store, actions) {
  const heading = h('h2', { id: 'search-results-title', text: 'Ranked plans' });
  const summary = h('p', { class: 'note', id: 'search-summary' });
  const errors = h('ul', { class: 'form-errors', id: 'search-errors', hidden: true });
  const tableBox = h('div', { class: 'table-scroll' });
  const counts = h('div', { id: 'search-counts' });
  root.replaceChildren(heading, errors, summary, tableBox, counts);

  const render = (state) => {
    const search = state.search;
    const envelope = search.envelope;
    errors.hidden = !(envelope && !envelope.ok);
    errors.replaceChildren(...(envelope && !envelope.ok ? envelope.errors ?? [] : []).slice(0, 20)
      .map((e) => h('li', { text: clip(`${e.path || 'search'}: ${e.message}`, 300) })));
    const result = envelope?.ok ? envelope.result : null;
    root.classList.toggle('stale', search.status === 'running');
    if (!result) {
      summary.textContent = search.status === 'running' ? 'Searching…' : 'Run a search to rank the plans that fit.';
      tableBox.replaceChildren();
      counts.replaceChildren();
      return;
    }
    const c = result.counts;
    summary.textContent = c.considered === 0 ? 'No combination of the allowed degrees multiplies to the GPU count.'
      : result.top.length ? `The ${result.top.length} best of ${count(c.feasible)} plans that fit, by ${OBJECTIVES[result.objective] ?? result.objective}. Click a row to open it in the calculator.`
      : `No plan fits (${count(c.candidates)} valid candidates; see the reasons below).`;
    tableBox.replaceChildren(...(result.top.length ? [table(result, state.pins.length, search.document)] : []));
    counts.replaceChildren(countsList(c));
  };

  // document: the search document run (a GPU-count list or range shows the
  // GPUs column even when every ranked plan has the same count).
  function table(result, pinned, document) {
    const gpuRange = document?.num_gpus !== null && typeof document?.num_gpus === 'object';
    const multipleGpus = gpuRange || new Set(result.top.map((row) => row.config.system.num_gpus)).size > 1;
    const moe = result.top.some((row) => (row.config.training.ep ?? 1) > 1 || (row.config.training.etp ?? 1) > 1);
    const spVaries = new Set(result.top.map((row) => row.config.training.sequence_parallel)).size > 1;
    // One unit per column (the largest value's), so that rows compare at a glance.
    const stepUnit = secondsUnit(Math.max(...result.top.map((row) => row.metrics.iteration_s)));
    const peakUnit = bytesUnit(Math.max(...result.top.map((row) => row.metrics.peak_bytes)));
    const cols = [
      ['#', (row) => String(row.rank)],
      ...(multipleGpus ? [['GPUs', (row) => String(row.config.system.num_gpus)]] : []),
      ['TP', (row) => String(row.config.training.tp)],
      ['PP', (row) => String(row.config.training.pp)],
      ['VPP', (row) => String(row.config.training.vpp)],
      ['CP', (row) => String(row.config.training.cp)],
      ...(moe ? [['EP', (row) => String(row.config.training.ep)], ['ETP', (row) => String(row.config.training.etp)]] : []),
      ['DP', (row) => String(row.config.training.dp)],
      ['MBS', (row) => String(row.config.training.micro_batch_size)],
      ...(spVaries ? [['SP', (row) => (row.config.training.sequence_parallel ? 'on' : 'off')]] : []),
      ['Recompute', (row) => recomputeLabel(row.config.training.recompute)],
      ['ZeRO', (row) => String(row.config.training.zero_stage)],
      ['Step', (row) => formatSecondsIn(row.metrics.iteration_s, stepUnit)],
      ['Tok/s per GPU', (row) => count(Math.round(row.metrics.tokens_per_s_per_gpu))],
      ['MFU', (row) => formatPercent(row.metrics.mfu)],
      ['Peak', (row) => formatBytesIn(row.metrics.peak_bytes, peakUnit)],
    ];
    return h('table', { class: 'numbers-table search-table', id: 'search-table' },
      h('thead', {}, h('tr', {}, cols.map(([label]) => h('th', { scope: 'col', text: label })), h('th', { scope: 'col', text: '' }))),
      h('tbody', {}, result.top.map((row) => {
        const load = () => actions.loadConfig(row.config);
        const tr = h('tr', {
          class: 'plan-row', tabindex: '0', dataset: { rank: String(row.rank), seconds: String(row.metrics.iteration_s), peak: String(row.metrics.peak_bytes) },
          title: `Open this plan in the calculator (peak memory ${formatPercent(row.metrics.memory_fraction)} of HBM)`, onclick: load,
          onkeydown: (event) => { if (event.key === 'Enter' || event.key === ' ') { event.preventDefault(); load(); } },
        }, cols.map(([, cell]) => h('td', { text: cell(row) })),
        h('td', {}, h('button', {
          type: 'button', class: 'small pin-row', text: 'Pin', disabled: pinned >= 4, title: 'Pin for Compare',
          onclick: (event) => { event.stopPropagation(); actions.pinConfig(row.config); },
        })));
        return tr;
      })));
  }

  function countsList(c) {
    const items = COUNT_ROWS.filter(([key]) => Number.isFinite(c[key])).map(([key, label, reasons]) => {
      const byReason = reasons && c[reasons] ? Object.entries(c[reasons]).sort((a, b) => b[1] - a[1]) : [];
      return h('li', { dataset: { count: key } }, h('span', { class: 'count-value', text: count(c[key]) }), ` ${label}`,
        byReason.length ? h('ul', { class: 'reasons-list' }, byReason.slice(0, 8).map(([reason, n]) => h('li', { text: `${count(n)}: ${clip(reason, 160)}` }))) : null);
    });
    return h('details', { class: 'numbers', open: true }, h('summary', { text: 'Candidates considered, pruned and rejected' }),
      h('ul', { class: 'counts-list' }, items));
  }

  store.subscribe((state, previous) => {
    if (state.search !== previous.search || state.pins.length !== previous.pins.length) render(state);
  });
  render(store.get());
}

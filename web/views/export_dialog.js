// The Export dialog: the current plan as Megatron-LM flags (with a copy
// button), as trainsim JSON (as given, or canonical with every default
// written), its results as JSON and CSV, one step as a Perfetto trace, the search's ranked plans as JSON
// and CSV, and every chart on the page as SVG or PNG. A plan that does not fit
// (or is invalid) is flagged at the top: its flags would not train.
import { h } from '../lib/dom.js';
import { clip } from '../lib/format.js';
import { toConfig } from '../state/config.js';
import { saveBlob, saveText } from '../lib/download.js';
import { pngBlob, svgText } from '../lib/chart_export.js';
import { recomputeLabel } from './search_results.js';
import { bytesUnit, formatBytesIn } from '../lib/format.js';
import { verdictOf } from '../state/verdict.js';
import { isStale } from './stale.js';

// Charts the page can draw, by the id of the element that holds the SVG.
const CHARTS = [
  ['memory-chart', 'Memory per GPU', 'memory'],
  ['time', 'Step time breakdown', 'step-time'],
  ['timeline-chart', 'Pipeline timeline', 'timeline'],
  ['search-scatter', 'Search: memory vs step time', 'search-scatter'],
  ['whatif-chart', 'What-if sensitivity', 'whatif'],
  ['compare-memory', 'Compare: memory', 'compare-memory'],
  ['compare-time', 'Compare: step time', 'compare-time'],
];

function csvCell(value) {
  const text = String(value ?? '');
  return /[",\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

// The ranked plans of a search, one CSV row each.
export function searchCsv(result) {
  const head = ['rank', 'num_gpus', 'tp', 'pp', 'vpp', 'cp', 'ep', 'etp', 'dp', 'micro_batch_size', 'sequence_parallel', 'recompute',
    'zero_stage', 'iteration_s', 'tokens_per_s_per_gpu', 'mfu', 'peak_bytes', 'memory_fraction'];
  const rows = result.top.map((row) => {
    const t = row.config.training;
    return [row.rank, row.config.system.num_gpus, t.tp, t.pp, t.vpp, t.cp, t.ep, t.etp, t.dp, t.micro_batch_size, t.sequence_parallel,
      recomputeLabel(t.recompute), t.zero_stage, row.metrics.iteration_s, row.metrics.tokens_per_s_per_gpu, row.metrics.mfu,
      row.metrics.peak_bytes, row.metrics.memory_fraction];
  });
  return `${[head, ...rows].map((r) => r.map(csvCell).join(',')).join('\n')}\n`;
}

export function mount(root, store, actions) {
  const megatronText = h('textarea', { id: 'export-megatron-text', rows: '7', readonly: true, spellcheck: 'false', 'aria-label': 'Megatron-LM command' });
  const megatronNotes = h('ul', { class: 'notes', id: 'export-megatron-notes' });
  const megatronErrors = h('ul', { class: 'form-errors', id: 'export-megatron-errors', hidden: true });
  const status = h('span', { class: 'toolbar-status', id: 'export-status', role: 'status' });
  const say = (text) => { status.textContent = text; };
  const copy = h('button', { type: 'button', id: 'export-megatron-copy', text: 'Copy flags', onclick: async () => {
    try {
      await navigator.clipboard.writeText(megatronText.value);
      say('Flags copied');
    } catch {
      megatronText.select();
      say('Copy the selected text');
    }
  } });
  const button = (id, text, onclick) => h('button', { type: 'button', id, text, onclick: () => run(onclick) });
  async function run(task) {
    try {
      await task();
    } catch (error) {
      say(`Failed: ${error.message}`);
    }
  }
  const config = () => toConfig(store.get().spec);
  const download = h('div', { class: 'export-buttons' },
    button('export-config-json', 'Config (JSON)', () => saveText(`${JSON.stringify(config(), null, 2)}\n`, 'trainsim-config.json', 'application/json')),
    button('export-canonical-json', 'Canonical config (JSON, every default)', async () => {
      const envelope = await actions.engine('export_config', JSON.stringify(config()));
      if (!envelope.ok) throw new Error(envelope.errors?.[0]?.message ?? 'invalid config');
      saveText(`${JSON.stringify(envelope.result.config, null, 2)}\n`, 'trainsim-config-canonical.json', 'application/json');
    }),
    button('export-result-json', 'Result (JSON)', () => {
      const state = store.get();
      if (!state.result) throw new Error('no result to export');
      saveText(`${JSON.stringify({ config: config(), result: state.result }, null, 2)}\n`, 'trainsim-result.json', 'application/json');
    }),
    button('export-result-csv', 'Result (CSV)', async () => {
      const envelope = await actions.engine('export_csv', JSON.stringify(config()));
      if (!envelope.ok) throw new Error(envelope.errors?.[0]?.message ?? 'invalid config');
      saveText(envelope.result.csv, 'trainsim-result.csv', 'text/csv');
    }),
    // One step as a Chrome Trace Event / Perfetto JSON (the core's 'trace' op, tools module).
    button('export-trace', 'Download trace (Perfetto JSON)', async () => {
      const envelope = await actions.engine('trace', JSON.stringify(config()));
      if (!envelope.ok) throw new Error(envelope.errors?.[0]?.message ?? 'invalid config');
      saveText(`${JSON.stringify(envelope.result)}\n`, 'trainsim-trace.json', 'application/json');
    }));
  const warning = h('div', { class: 'outcome bad', id: 'export-warning', role: 'alert', hidden: true });
  const searchButtons = h('div', { class: 'export-buttons', id: 'export-search' },
    button('export-search-json', 'Search result (JSON)', () => {
      const envelope = store.get().search.envelope;
      saveText(`${JSON.stringify({ search: store.get().search.document, result: envelope.result }, null, 2)}\n`, 'trainsim-search.json', 'application/json');
    }),
    button('export-search-csv', 'Ranked plans (CSV)', () => saveText(searchCsv(store.get().search.envelope.result), 'trainsim-search.csv', 'text/csv')));
  const searchSection = h('section', {}, h('h3', { text: 'Search results' }), searchButtons);
  const charts = h('div', { class: 'export-charts', id: 'export-charts' });
  const close = h('button', { type: 'button', id: 'export-close', text: 'Close', onclick: () => dialog.close() });
  const dialog = h('dialog', { class: 'dialog', id: 'export-dialog', 'aria-label': 'Export' },
    h('div', { class: 'dialog-body' },
      h('div', { class: 'dialog-head' }, h('h2', { text: 'Export' }), close),
      warning,
      h('section', {}, h('h3', { text: 'Megatron-LM flags for this plan' }), megatronErrors, megatronText,
        h('div', { class: 'dialog-actions' }, copy, status), megatronNotes),
      h('section', {}, h('h3', { text: 'Config and results' }), download),
      searchSection,
      h('section', {}, h('h3', { text: 'Charts' }), charts)));
  root.append(dialog);

  async function fillMegatron() {
    megatronText.value = '…';
    let envelope;
    try {
      envelope = await actions.engine('export_megatron', JSON.stringify(config()));
    } catch (error) {
      envelope = { ok: false, errors: [{ path: '', message: error.message }] };
    }
    megatronErrors.hidden = envelope.ok;
    megatronErrors.replaceChildren(...(envelope.ok ? [] : envelope.errors ?? []).slice(0, 12).map((e) => h('li', { text: clip(`${e.path || 'config'}: ${e.message}`, 300) })));
    megatronText.value = envelope.ok ? envelope.result.command : '';
    copy.disabled = !envelope.ok;
    megatronNotes.replaceChildren(...(envelope.ok ? envelope.result.notes ?? [] : []).map((n) => h('li', { text: clip(String(n), 400) })));
  }

  function fillCharts() {
    const found = CHARTS.map(([id, label, file]) => [document.getElementById(id)?.querySelector('svg'), label, file]).filter(([svg]) => svg);
    charts.replaceChildren(...found.map(([svg, label, file]) => h('div', { class: 'export-chart' }, h('span', { text: label }),
      button(`export-svg-${file}`, 'SVG', () => saveText(svgText(svg), `trainsim-${file}.svg`, 'image/svg+xml')),
      button(`export-png-${file}`, 'PNG', async () => saveBlob(await pngBlob(svg), `trainsim-${file}.png`)))));
    if (!found.length) charts.replaceChildren(h('p', { class: 'note', text: 'No chart is drawn yet.' }));
  }

  // A plan that would not train: out of memory, or not a valid config.
  function fillWarning() {
    const state = store.get();
    let text = '';
    if (isStale(state)) {
      text = 'The configuration has problems: the flags and files below are for what the page could read, and the results are the last valid ones.';
    } else if (state.result) {
      const v = verdictOf(state.result);
      const unit = bytesUnit(Math.max(v.device, v.usable));
      if (v.status === 'oom') text = `This plan does not fit: stage ${v.stage} needs ${formatBytesIn(v.device, unit)} per GPU, ${formatBytesIn(v.usable, unit)} ${v.core ? 'usable' : 'available'}. Launched as exported, it would run out of memory.`;
      else if (v.status === 'tight') text = `This plan is tight: ${formatBytesIn(v.margin, unit)} to spare per GPU; fragmentation or a framework change could run it out of memory.`;
    }
    warning.textContent = text;
    warning.hidden = !text;
  }

  function open() {
    say('');
    fillWarning();
    searchSection.hidden = !store.get().search.envelope?.ok;
    fillCharts();
    fillMegatron();
    if (!dialog.open) dialog.showModal();
  }
  return { open };
}


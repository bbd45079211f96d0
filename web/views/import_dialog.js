// The Import dialog: paste or upload a Megatron-LM command line or launch
// script (the whole config), a Hugging Face config.json (the model; the
// training and system stay), SimuMax model/strategy/system JSON, or a
// trainsim config. The core's importers do the reading (engine.run); the
// dialog shows their notes, and their errors by path. A good import goes
// straight into the calculator.
import { h } from '../lib/dom.js';
import { clip } from '../lib/format.js';
import { toConfig } from '../state/config.js';

const KINDS = [
  { id: 'megatron', label: 'Megatron-LM', hint: 'A pretrain_gpt.py command line or a launch script with its flags.' },
  { id: 'hf', label: 'Hugging Face', hint: 'A model’s config.json; it replaces the model, the training plan and system stay.' },
  { id: 'simumax', label: 'SimuMax', hint: 'SimuMax model, strategy and (optional) system JSON files.' },
  { id: 'json', label: 'trainsim JSON', hint: 'A trainsim config document (as Export writes it): upload the file or paste it.' },
];

export function mount(root, store, actions) {
  const area = (id, label, placeholder) => {
    const text = h('textarea', { id, rows: '8', spellcheck: 'false', placeholder, 'aria-label': label });
    const file = h('input', { type: 'file', id: `${id}-file`, 'aria-label': `${label}: upload a file` });
    file.addEventListener('change', async () => {
      const chosen = file.files?.[0];
      file.value = '';
      if (!chosen) return;
      text.value = await chosen.text();
      if (kind === 'json') form.requestSubmit();  // a trainsim config file imports at once
    });
    return { text, file, box: h('div', { class: 'import-area' }, h('div', { class: 'import-label' }, h('span', { text: label }), file), text) };
  };
  const megatron = area('import-megatron-text', 'Command line or script', 'torchrun … pretrain_gpt.py --num-layers 80 --hidden-size 8192 …');
  const systemSelect = h('select', { id: 'import-megatron-system' });
  const hf = area('import-hf-text', 'config.json', '{"model_type": "llama", "hidden_size": 4096, …}');
  const simModel = area('import-simumax-model', 'Model JSON', '{…}');
  const simStrategy = area('import-simumax-strategy', 'Strategy JSON', '{…}');
  const simSystem = area('import-simumax-system', 'System JSON (optional)', '{…}');
  const json = area('import-json-text', 'trainsim config', '{"model": "llama3-8b", "training": {…}, "system": "h100-sxm-80gb"}');
  const panes = {
    megatron: [megatron.box, h('div', { class: 'field inline' }, h('label', { for: 'import-megatron-system', text: 'System (the flags do not name one)' }), systemSelect)],
    hf: [hf.box],
    simumax: [simModel.box, simStrategy.box, simSystem.box],
    json: [json.box],
  };
  let kind = 'megatron';
  const tabButtons = KINDS.map((k) => h('button', { type: 'button', role: 'tab', id: `import-kind-${k.id}`, text: k.label, onclick: () => choose(k.id) }));
  const hint = h('p', { class: 'note', id: 'import-hint' });
  const paneBox = h('div', { class: 'import-pane' });
  const outcome = h('div', { class: 'import-outcome', id: 'import-outcome', role: 'status' });
  const run = h('button', { type: 'submit', class: 'primary', id: 'import-run', text: 'Import' });
  const close = h('button', { type: 'button', id: 'import-close', text: 'Close', onclick: () => dialog.close() });
  const form = h('form', { method: 'dialog', class: 'dialog-body', novalidate: true },
    h('div', { class: 'dialog-head' }, h('h2', { text: 'Import' }), close),
    h('div', { class: 'segmented', role: 'tablist', 'aria-label': 'What to import' }, tabButtons),
    hint, paneBox, h('div', { class: 'dialog-actions' }, run), outcome);
  const dialog = h('dialog', { class: 'dialog', id: 'import-dialog', 'aria-label': 'Import' }, form);
  root.append(dialog);

  function choose(id) {
    kind = id;
    tabButtons.forEach((b, i) => b.setAttribute('aria-selected', String(KINDS[i].id === id)));
    hint.textContent = KINDS.find((k) => k.id === id).hint;
    paneBox.replaceChildren(...panes[id]);
    outcome.replaceChildren();
  }

  function show(title, items, cls) {
    return h('div', { class: `outcome ${cls}` }, h('p', { class: 'outcome-title', text: title }),
      items.length ? h('ul', {}, items.slice(0, 40).map((text) => h('li', { text: clip(text, 400) }))) : null);
  }

  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    run.disabled = true;
    outcome.replaceChildren(h('p', { class: 'note', text: 'Reading…' }));
    try {
      outcome.replaceChildren(...await importNow());
    } catch (error) {
      outcome.replaceChildren(show(`The engine failed: ${error.message}`, [], 'bad'));
    } finally {
      run.disabled = false;
    }
  });

  async function importNow() {
    const state = store.get();
    let envelope;
    let document;
    const source = KINDS.find((k) => k.id === kind).label;
    if (kind === 'json') {
      try {
        document = JSON.parse(json.text.value);
      } catch (error) {
        return [show('It is not JSON.', [String(error.message)], 'bad')];
      }
      envelope = { ok: true, result: { config: document, notes: [] } };
    } else if (kind === 'megatron') {
      envelope = await actions.engine('import_megatron', JSON.stringify({ args: megatron.text.value, system: systemSelect.value }));
    } else if (kind === 'hf') {
      envelope = await actions.engine('import_hf', hf.text.value);
      if (envelope.ok) {
        const current = toConfig(state.spec);
        envelope.result.config = { model: envelope.result.model, training: current.training, system: current.system };
      }
    } else {
      envelope = await actions.engine('import_simumax', JSON.stringify({ model: simModel.text.value, strategy: simStrategy.text.value, system: simSystem.text.value }));
    }
    if (!envelope.ok) {
      const errors = (envelope.errors ?? []).map((e) => `${e.path || '(document)'}: ${e.message}`);
      return [show(`Not imported: ${errors.length} ${errors.length === 1 ? 'problem' : 'problems'}.`, errors, 'bad')];
    }
    const ignored = actions.applyConfig(envelope.result.config, source);
    const out = [show(`Imported from ${source}: the calculator shows it now.`, [], 'good')];
    const notes = (envelope.result.notes ?? []).map(String);
    if (notes.length) out.push(show('Notes from the importer:', notes, 'notes'));
    if (ignored.length) out.push(show('Not shown in the page (ignored):', ignored, 'bad'));
    return out;
  }

  function open(which = kind) {
    const state = store.get();
    systemSelect.replaceChildren(...state.catalog.systems.map((p) => h('option', { value: p.id, text: p.label || p.id })));
    const known = state.catalog.systems.some((p) => p.id === state.spec.system.preset);
    systemSelect.value = known ? state.spec.system.preset : state.catalog.systems[0]?.id ?? '';
    choose(which);
    if (!dialog.open) dialog.showModal();
  }
  return { open };
}

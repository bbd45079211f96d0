// The Import dialog: a Hugging Face model id (its config.json fetched from
// the Hub on an explicit click) or a pasted config.json (the model; the
// training and system stay), a Megatron-LM command line or launch script
// (the whole config), SimuMax model/strategy/system JSON, or a trainsim
// config file. The core's importers do the reading (engine.run). Values an
// importer needs and did not find are asked for here; its notes stay on
// the page as a banner after the dialog closes; a model equal to a preset
// selects that preset; an import that lands out of memory offers the search.
import { h } from '../lib/dom.js';
import { clip } from '../lib/format.js';
import { fetchHubConfig, modelIdProblem } from '../lib/hf_hub.js';
import { toConfig } from '../state/config.js';
import { matchingPreset } from '../state/preset_match.js';
import { verdictOf } from '../state/verdict.js';

const KINDS = [
  { id: 'hf', label: 'Hugging Face', hint: 'A model id (fetched from huggingface.co when you click Fetch) or a pasted config.json; it replaces the model, the training plan and system stay.' },
  { id: 'megatron', label: 'Megatron-LM', hint: 'A pretrain_gpt.py command line or a launch script with its flags.' },
  { id: 'simumax', label: 'SimuMax', hint: 'SimuMax model, strategy and (optional) system JSON files.' },
  { id: 'json', label: 'trainsim JSON', hint: 'A trainsim config document (as Export writes it): upload the file or paste it.' },
];
// Errors that name a value the importer needs: asked for in the dialog.
const MISSING = /^missing required (flag|key)/;

export function mount(root, store, actions) {
  const area = (id, label, placeholder) => {
    const text = h('textarea', { id, rows: '8', spellcheck: 'false', placeholder, 'aria-label': label });
    const file = h('input', { type: 'file', id: `${id}-file`, 'aria-label': `${label}: upload a file` });
    file.addEventListener('change', async () => {
      const chosen = file.files?.[0];
      file.value = '';
      if (!chosen) return;
      text.value = await chosen.text();
      if (kind === 'json') form.requestSubmit();
    });
    return { text, file, box: h('div', { class: 'import-area' }, h('div', { class: 'import-label' }, h('span', { text: label }), file), text) };
  };
  const megatron = area('import-megatron-text', 'Command line or script', 'torchrun … pretrain_gpt.py --num-layers 80 --hidden-size 8192 …');
  const systemSelect = h('select', { id: 'import-megatron-system' });
  const hf = area('import-hf-text', 'config.json', '{"model_type": "llama", "hidden_size": 4096, …}');
  const hubId = h('input', { type: 'text', id: 'import-hf-id', spellcheck: 'false', placeholder: 'Qwen/Qwen3-32B', 'aria-describedby': 'import-hf-status' });
  const hubStatus = h('p', { class: 'note', id: 'import-hf-status', role: 'status' });
  const fetchButton = h('button', { type: 'button', id: 'import-hf-fetch', text: 'Fetch config.json', onclick: () => fetchFromHub() });
  const hub = h('div', { class: 'hub-row' }, h('label', { for: 'import-hf-id', text: 'Model id on huggingface.co' }), h('div', { class: 'hub-input' }, hubId, fetchButton), hubStatus);
  const simModel = area('import-simumax-model', 'Model JSON', '{…}');
  const simStrategy = area('import-simumax-strategy', 'Strategy JSON', '{…}');
  const simSystem = area('import-simumax-system', 'System JSON (optional)', '{…}');
  const json = area('import-json-text', 'trainsim config', '{"model": "llama3-8b", "training": {…}, "system": "h100-sxm-80gb"}');
  const panes = {
    megatron: [megatron.box, h('div', { class: 'field inline' }, h('label', { for: 'import-megatron-system', text: 'System (the flags do not name one)' }), systemSelect)],
    hf: [hub, hf.box],
    simumax: [simModel.box, simStrategy.box, simSystem.box],
    json: [json.box],
  };
  let kind = 'hf';
  const tabButtons = KINDS.map((k) => h('button', { type: 'button', role: 'tab', id: `import-kind-${k.id}`, text: k.label, onclick: () => choose(k.id) }));
  const hint = h('p', { class: 'note', id: 'import-hint' });
  const paneBox = h('div', { class: 'import-pane' });
  const missingBox = h('fieldset', { class: 'import-missing', id: 'import-missing', hidden: true });
  const outcome = h('div', { class: 'import-outcome', id: 'import-outcome', role: 'status' });
  const run = h('button', { type: 'submit', class: 'primary', id: 'import-run', text: 'Import' });
  const close = h('button', { type: 'button', id: 'import-close', text: 'Close', onclick: () => dialog.close() });
  const form = h('form', { method: 'dialog', class: 'dialog-body', novalidate: true },
    h('div', { class: 'dialog-head' }, h('h2', { text: 'Import' }), close),
    h('div', { class: 'segmented', role: 'tablist', 'aria-label': 'What to import' }, tabButtons),
    hint, paneBox, missingBox, h('div', { class: 'dialog-actions' }, run), outcome);
  const dialog = h('dialog', { class: 'dialog', id: 'import-dialog', 'aria-label': 'Import' }, form);
  root.append(dialog);

  function choose(id) {
    kind = id;
    tabButtons.forEach((b, i) => b.setAttribute('aria-selected', String(KINDS[i].id === id)));
    hint.textContent = KINDS.find((k) => k.id === id).hint;
    paneBox.replaceChildren(...panes[id]);
    outcome.replaceChildren();
    missingBox.hidden = true;
    missingBox.replaceChildren();
  }

  function show(title, items, cls) {
    return h('div', { class: `outcome ${cls}` }, h('p', { class: 'outcome-title', text: title }),
      items.length ? h('ul', {}, items.slice(0, 40).map((text) => h('li', { text: clip(text, 400) }))) : null);
  }

  async function fetchFromHub() {
    const id = hubId.value.trim();
    const problem = modelIdProblem(id);
    hubId.setAttribute('aria-invalid', String(Boolean(problem)));
    if (problem) { hubStatus.textContent = problem; return; }
    fetchButton.disabled = true;
    hubStatus.textContent = `Fetching ${id}'s config.json from huggingface.co…`;
    const answer = await fetchHubConfig(id);
    fetchButton.disabled = false;
    hubStatus.textContent = answer.ok ? `Fetched ${id}'s config.json.` : answer.message;
    hubStatus.dataset.state = answer.ok ? 'ok' : 'bad';
    if (!answer.ok) return;
    hf.text.value = answer.text;
    form.requestSubmit();
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

  // Values typed into the "missing" inputs, added to the text before importing.
  function withMissing() {
    const given = [...missingBox.querySelectorAll('input')].filter((i) => i.value.trim() !== '')
      .map((i) => [i.dataset.name, i.value.trim()]);
    if (!given.length) return;
    if (kind === 'megatron') {
      megatron.text.value = `${megatron.text.value.trimEnd()} ${given.map(([flag, v]) => `${flag} ${v}`).join(' ')}`;
    } else if (kind === 'hf') {
      try {
        const document = JSON.parse(hf.text.value);
        for (const [key, v] of given) document[key] = Number.isFinite(Number(v)) ? Number(v) : v;
        hf.text.value = JSON.stringify(document, null, 2);
      } catch { /* the importer names the JSON error */ }
    }
  }

  function askMissing(errors) {
    const wanted = errors.filter((e) => MISSING.test(String(e.message)) && /^\/(args|hf)\//.test(String(e.path)));
    missingBox.hidden = wanted.length === 0;
    missingBox.replaceChildren(h('legend', { text: 'Values the import needs (they are added to the text above):' }),
      ...wanted.map((e, i) => {
        const name = String(e.path).replace(/^\/(args|hf)\//, '');
        const id = `import-missing-${i}`;
        return h('div', { class: 'field' }, h('label', { for: id, text: `${name}${/\(/.test(e.message) ? ` ${String(e.message).replace(MISSING, '').trim()}` : ''}` }),
          h('input', { type: 'text', id, dataset: { name }, spellcheck: 'false', inputmode: 'decimal' }));
      }));
    if (wanted.length) run.textContent = 'Import with these values';
  }

  async function importNow() {
    const state = store.get();
    withMissing();
    run.textContent = 'Import';
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
      askMissing(envelope.errors ?? []);
      const errors = (envelope.errors ?? []).map((e) => `${e.path || '(document)'}: ${e.message}`);
      return [show(`Not imported: ${errors.length} ${errors.length === 1 ? 'problem' : 'problems'}.`, errors, 'bad')];
    }
    missingBox.hidden = true;
    missingBox.replaceChildren();
    const config = envelope.result.config;
    const notes = (envelope.result.notes ?? []).map(String);
    const preset = await matchingPreset(actions.engine, config?.model);
    if (preset && state.catalog.models.some((m) => m.id === preset.id)) {
      config.model = preset.id;
      notes.unshift(`The model equals the preset "${preset.label}": the preset is selected.`);
    }
    const estimated = actions.whenEstimated();
    const ignored = actions.applyConfig(config, source, notes);
    const out = [show(`Imported from ${source}: the calculator shows it now.`, [], 'good')];
    if (notes.length) out.push(show('Notes from the importer (they stay on the page):', notes, 'notes'));
    if (ignored.length) out.push(show('Not shown in the page (ignored):', ignored, 'bad'));
    const after = await estimated;
    if (after?.result && !after.errors.length && verdictOf(after.result).status === 'oom') {
      out.push(h('div', { class: 'outcome bad', id: 'import-oom' }, h('p', { class: 'outcome-title', text: 'This plan runs out of memory.' }),
        h('button', { type: 'button', class: 'primary', id: 'import-find-plan', text: 'Find a plan that fits', onclick: () => { dialog.close(); actions.findPlan(); } })));
    }
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

// Header actions: copy the link, export and import the config document,
// open the Import and Export dialogs, pin the config for Compare.
import { h } from '../lib/dom.js';
import { fromConfig, toConfig } from '../state/config.js';
import { saveText } from '../lib/download.js';

export function mount(root, store, actions) {
  const status = h('span', { class: 'toolbar-status', role: 'status' });
  const linkText = h('input', { type: 'text', class: 'link-text', readonly: true, hidden: true, 'aria-label': 'Link to this configuration' });
  let statusTimer = 0;
  const say = (text) => {
    status.textContent = text;
    clearTimeout(statusTimer);
    statusTimer = setTimeout(() => { status.textContent = ''; }, 2500);
  };

  const copy = h('button', { type: 'button', id: 'copy-link', text: 'Copy link' });
  copy.addEventListener('click', async () => {
    try {
      await navigator.clipboard.writeText(location.href);
      linkText.hidden = true;
      say('Link copied');
    } catch {
      linkText.value = location.href;
      linkText.hidden = false;
      linkText.select();
      say('Copy the selected link');
    }
  });

  const exportButton = h('button', { type: 'button', id: 'export-json', text: 'Export JSON' });
  exportButton.addEventListener('click', () => {
    saveText(`${JSON.stringify(toConfig(store.get().spec), null, 2)}\n`, 'trainsim-config.json', 'application/json');
  });
  const importDialog = h('button', { type: 'button', id: 'open-import', text: 'Import…', title: 'Megatron-LM, Hugging Face, SimuMax or trainsim config', onclick: () => actions.openImport() });
  const exportDialog = h('button', { type: 'button', id: 'open-export', text: 'Export…', title: 'Megatron-LM flags, results, charts', onclick: () => actions.openExport() });
  const pin = h('button', { type: 'button', id: 'pin-config', text: 'Pin', title: 'Pin this config for Compare (up to 4)', onclick: () => {
    if (actions.pinCurrent()) say(`Pinned (${store.get().pins.length} of 4)`);
    else say('Compare holds 4 configs: unpin one first');
  } });

  const file = h('input', { type: 'file', accept: '.json,application/json', id: 'import-file', class: 'visually-hidden', tabindex: '-1' });
  const importButton = h('button', { type: 'button', id: 'import-json', text: 'Import JSON', onclick: () => file.click() });
  file.addEventListener('change', async () => {
    const chosen = file.files?.[0];
    file.value = '';
    if (!chosen) return;
    await importText(await chosen.text(), chosen.name);
  });

  async function importText(text, name) {
    let document;
    try {
      document = JSON.parse(text);
    } catch (error) {
      store.set({ banner: { title: `Could not import ${name}: it is not JSON.`, items: [String(error.message)] } });
      return;
    }
    const { spec, ignored } = fromConfig(document, store.get().catalog);
    spec.tokens = store.get().spec.tokens;
    actions.setSpec(spec, { commit: true });
    store.set({ banner: ignored.length ? { title: `Imported ${name}; these parts were ignored:`, items: ignored } : null });
    say(`Imported ${name}`);
  }

  root.replaceChildren(copy, pin, importDialog, exportDialog, exportButton, importButton, file, status, linkText);
  store.subscribe((state, previous) => {
    if (state.pins !== previous.pins) pin.textContent = state.pins.length ? `Pin (${state.pins.length})` : 'Pin';
  });
  return { importText };
}

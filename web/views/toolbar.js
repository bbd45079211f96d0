// Header actions: copy the link, pin the config for Compare, and the Import
// and Export dialogs (every format, the config JSON included, lives there).
import { h } from '../lib/dom.js';

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

  const importDialog = h('button', { type: 'button', id: 'open-import', text: 'Import…', title: 'Hugging Face model id or config.json, Megatron-LM command line, SimuMax, or a trainsim config file', onclick: () => actions.openImport() });
  const exportDialog = h('button', { type: 'button', id: 'open-export', text: 'Export…', title: 'Config JSON, Megatron-LM flags, results, charts', onclick: () => actions.openExport() });
  const pin = h('button', { type: 'button', id: 'pin-config', text: 'Pin', title: 'Pin this config for Compare (up to 4)', onclick: () => {
    if (actions.pinCurrent()) say(`Pinned (${store.get().pins.length} of 4)`);
    else say('Compare holds 4 configs: unpin one first');
  } });

  root.replaceChildren(copy, pin, importDialog, exportDialog, status, linkText);
  store.subscribe((state, previous) => {
    if (state.pins !== previous.pins) pin.textContent = state.pins.length ? `Pin (${state.pins.length})` : 'Pin';
  });
}

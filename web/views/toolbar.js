// Header actions: copy the link, export and import the config document.
import { h } from '../dom.js';
import { fromConfig, toConfig } from '../config.js';

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
    const text = `${JSON.stringify(toConfig(store.get().spec), null, 2)}\n`;
    const url = URL.createObjectURL(new Blob([text], { type: 'application/json' }));
    const a = h('a', { href: url, download: 'trainsim-config.json' });
    document.body.append(a);
    a.click();
    a.remove();
    setTimeout(() => URL.revokeObjectURL(url), 1000);
  });

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

  root.replaceChildren(copy, exportButton, importButton, file, status, linkText);
  return { importText };
}

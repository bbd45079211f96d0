// The banner for links or files the page could only partly read: it lists
// what was ignored, and the page carries on with the rest.
import { h } from '../lib/dom.js';

const MAX_ITEMS = 12;

export function mount(root, store) {
  const title = h('p', { class: 'banner-title' });
  const list = h('ul', { class: 'banner-items' });
  const dismiss = h('button', { type: 'button', class: 'banner-close', text: 'Dismiss', onclick: () => store.set({ banner: null }) });
  root.replaceChildren(h('div', { class: 'banner-body' }, title, list), dismiss);
  store.subscribe((state, previous) => {
    if (state.banner === previous.banner) return;
    const banner = state.banner;
    root.hidden = !banner;
    if (!banner) return;
    root.dataset.kind = banner.kind ?? 'warn';
    title.textContent = banner.title;
    const items = banner.items.slice(0, MAX_ITEMS).map((text) => h('li', { text }));
    if (banner.items.length > MAX_ITEMS) items.push(h('li', { text: `and ${banner.items.length - MAX_ITEMS} more` }));
    list.replaceChildren(...items);
  });
}

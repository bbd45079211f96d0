// "Never wrong on screen": while the configuration has problems, every
// results panel still on screen shows the last valid result dimmed, under a
// label that says so. mount() marks the panels whenever the problems change.
import { h } from '../lib/dom.js';

export const STALE_TEXT = 'Last valid result: the current configuration has problems (see the verdict).';

// True while the form holds text it cannot read or the core rejected the config.
export function isStale(state) {
  return state.errors.length > 0 || Object.keys(state.localErrors).length > 0;
}

export function markStale(panel, stale) {
  panel.classList.toggle('stale', stale);
  panel.dataset.stale = String(stale);
  let badge = panel.querySelector(':scope > .stale-badge');
  if (stale && !badge) {
    badge = h('p', { class: 'stale-badge', text: STALE_TEXT });
    const title = panel.querySelector(':scope > h2');
    if (title) title.after(badge);
    else panel.prepend(badge);
  }
  if (badge) badge.hidden = !stale;
}

// Keeps `panels` (elements with an <h2> title) marked while the config is invalid.
export function mount(store, panels) {
  const render = (state) => {
    const stale = isStale(state);
    for (const panel of panels) markStale(panel, stale);
  };
  store.subscribe((state, previous) => {
    if (state.errors !== previous.errors || state.localErrors !== previous.localErrors) render(state);
  });
  render(store.get());
}

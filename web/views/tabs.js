// The tab bar: Calculator, Search, What-if, Compare. The open tab is part
// of the URL (view=…); each tab's panel is shown only while it is open.
import { h } from '../lib/dom.js';

export const TABS = [
  { view: 'calc', label: 'Calculator', panel: 'view-calc' },
  { view: 'search', label: 'Search', panel: 'view-search' },
  { view: 'whatif', label: 'What-if', panel: 'view-whatif' },
  { view: 'compare', label: 'Compare', panel: 'view-compare' },
];

export function mount(root, store, actions) {
  const buttons = TABS.map((tab) => h('button', {
    type: 'button', role: 'tab', id: `tab-${tab.view}`, 'aria-controls': tab.panel, dataset: { view: tab.view },
    onclick: () => actions.setView(tab.view),
  }, h('span', { text: tab.label }), h('span', { class: 'tab-count' })));
  // The tab list sits inside the <nav>, which stays a navigation landmark.
  const list = h('div', { class: 'tab-list', role: 'tablist', 'aria-label': 'Views' }, buttons);
  root.replaceChildren(list);
  list.addEventListener('keydown', (event) => {
    const i = buttons.indexOf(document.activeElement);
    if (i < 0 || (event.key !== 'ArrowRight' && event.key !== 'ArrowLeft')) return;
    const next = buttons[(i + (event.key === 'ArrowRight' ? 1 : buttons.length - 1)) % buttons.length];
    next.focus();
    next.click();
  });

  const render = (state) => {
    TABS.forEach((tab, i) => {
      const open = state.view === tab.view;
      buttons[i].setAttribute('aria-selected', String(open));
      buttons[i].tabIndex = open ? 0 : -1;
      const panel = document.getElementById(tab.panel);
      if (panel) panel.hidden = !open;
    });
    buttons[3].querySelector('.tab-count').textContent = state.pins.length ? ` (${state.pins.length})` : '';
    const running = state.search.status === 'running';
    buttons[1].querySelector('.tab-count').textContent = running ? ' …' : '';
  };
  store.subscribe((state, previous) => {
    if (state.view !== previous.view || state.pins !== previous.pins || state.search !== previous.search) render(state);
  });
  render(store.get());
}

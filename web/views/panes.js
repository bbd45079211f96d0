// Phones: a Results / Form switch, so the results are one tap away instead
// of below the whole form (wider screens show both side by side and hide the
// switch). The skip link jumps to the results on any screen.
let layout = null;

export function show(pane) {
  if (!layout) return;
  layout.dataset.pane = pane;
  for (const button of layout.querySelectorAll('.pane-switch button')) {
    button.setAttribute('aria-pressed', String(button.id === `pane-${pane}`));
  }
}

export function mount(root) {
  layout = root;
  document.getElementById('pane-results').addEventListener('click', () => show('results'));
  document.getElementById('pane-form').addEventListener('click', () => show('form'));
  // The skip link moves focus without touching the address (the hash holds the view).
  document.querySelector('.skip-link')?.addEventListener('click', (event) => {
    event.preventDefault();
    show('results');
    const results = document.getElementById('results');
    results.scrollIntoView({ block: 'start' });
    results.focus({ preventScroll: true });
  });
}

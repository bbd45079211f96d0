// The verdict (fits / out of memory / invalid) and the headline numbers.
import { h } from '../lib/dom.js';
import { formatBytes, formatCount, formatPercent, formatSeconds, formatTokensPerS } from '../lib/format.js';

export function mount(root, store) {
  const verdict = h('p', { class: 'verdict', id: 'verdict', dataset: { verdict: 'loading' }, text: 'Loading the engine…' });
  const facts = h('dl', { class: 'facts', id: 'facts' });
  const reasons = h('ul', { class: 'reasons', id: 'reasons' });
  const notes = h('ul', { class: 'notes', id: 'notes' });
  const problems = h('ul', { class: 'problems', id: 'problems' });
  const staleNote = h('p', { class: 'stale-badge', id: 'facts-stale', hidden: true, text: 'Last valid result (the numbers below are not for the current configuration):' });
  root.replaceChildren(verdict, problems, staleNote, facts, reasons, notes);

  const fact = (id, label, value, detail) => h('div', {},
    h('dt', { text: label }),
    h('dd', { id, dataset: { value: detail ?? '' } }, h('span', { class: 'value', text: value })));

  store.subscribe((state, previous) => {
    if (state.result === previous.result && state.errors === previous.errors && state.status === previous.status
        && state.localErrors === previous.localErrors) return;
    const errorCount = state.errors.length + Object.keys(state.localErrors).length;
    const result = state.result;
    if (state.status === 'failed') {
      set('failed', `The engine failed: ${state.failure ?? 'unknown error'}`);
    } else if (errorCount > 0) {
      set('invalid', `Invalid configuration: ${errorCount} ${errorCount === 1 ? 'problem' : 'problems'}`);
    } else if (!result) {
      set('loading', 'Loading the engine…');
    } else {
      const m = result.memory;
      set(result.fits ? 'fits' : 'oom', result.fits
        ? `Fits: ${formatBytes(m.peak_bytes)} peak of ${formatBytes(m.capacity_bytes)} per GPU`
        : `Out of memory: ${formatBytes(m.peak_bytes)} peak, ${formatBytes(m.capacity_bytes)} per GPU`);
    }
    problems.replaceChildren(...listProblems(state));
    // The numbers below belong to the last valid configuration: dimmed and labelled.
    staleNote.hidden = errorCount === 0 || !result;
    facts.classList.toggle('stale', errorCount > 0);
    if (!result) return;
    const m = result.memory;
    const rows = [
      fact('fact-peak', `Peak (stage ${m.peak_stage})`, formatBytes(m.peak_bytes), m.peak_bytes),
      fact('fact-reserved', 'Reserved (allocator)', formatBytes(m.reserved_bytes), m.reserved_bytes),
      fact('fact-params', 'Parameters', result.model.active_parameters !== result.model.parameters
        ? `${formatCount(result.model.parameters)} (${formatCount(result.model.active_parameters)} active)`
        : formatCount(result.model.parameters), result.model.parameters),
    ];
    if (result.time) rows.push(fact('fact-step', 'Step time', formatSeconds(result.time.iteration_s), result.time.iteration_s));
    if (result.throughput) {
      rows.push(fact('fact-tokens', 'Throughput', formatTokensPerS(result.throughput.tokens_per_s), result.throughput.tokens_per_s));
      rows.push(fact('fact-mfu', 'MFU', formatPercent(result.throughput.mfu), result.throughput.mfu));
    }
    facts.replaceChildren(...rows);
    reasons.replaceChildren(...(errorCount > 0 ? [] : result.reasons ?? []).map((text) => h('li', { text: String(text) })));
    notes.replaceChildren(...(result.notes ?? []).map((text) => h('li', { text: String(text) })));
  });

  // Each engine error, as a button that takes you to its field.
  function listProblems(state) {
    const local = Object.entries(state.localErrors).map(([path, message]) => ({ path, message }));
    return [...local, ...state.errors].slice(0, 8).map(({ path, message }) => {
      const target = fieldFor(String(path ?? ''));
      const label = `${path || 'config'}: ${message}`;
      if (!target) return h('li', { text: label });
      return h('li', {}, h('button', { type: 'button', class: 'link', text: label, onclick: () => {
        target.closest('details')?.setAttribute('open', '');
        target.scrollIntoView({ block: 'center' });
        target.querySelector('input, select')?.focus({ preventScroll: true });
      } }));
    });
  }

  function fieldFor(path) {
    for (let p = path; p; p = p.slice(0, p.lastIndexOf('/'))) {
      const found = [...document.querySelectorAll('.config [data-path]')].find((el) => el.dataset.path === p);
      if (found) return found;
    }
    return null;
  }

  function set(kind, text) {
    verdict.dataset.verdict = kind;
    verdict.textContent = text;
  }
}

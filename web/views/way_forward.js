// A way forward after an out-of-memory, tight or invalid plan: the core's
// suggestions (memory.suggestions: nearby plans it estimated, each with the
// config keys it changes) as one-click fixes, and "Find a plan that fits"
// (the Search tab with this model, system and GPU count).
import { h } from '../lib/dom.js';
import { bytesUnit, formatBytesIn, formatStep } from '../lib/format.js';
import { verdictOf } from '../state/verdict.js';
import { isStale } from './stale.js';

const MAX_SUGGESTIONS = 6;
const STATUS_TEXT = { fits: 'fits', tight: 'fits, tight', out_of_memory: 'still out of memory' };

export function mount(store, actions) {
  const title = h('p', { class: 'way-title', id: 'way-title' });
  const list = h('ul', { class: 'suggestions', id: 'suggestions' });
  const find = h('button', { type: 'button', class: 'primary', id: 'find-plan', text: 'Find a plan that fits',
    title: 'Open the Search tab with this model, system and GPU count, and run it', onclick: () => actions.findPlan() });
  const box = h('div', { class: 'way-forward', id: 'way-forward', hidden: true }, title, list, h('div', { class: 'way-actions' }, find));

  store.subscribe((state, previous) => {
    if (state.result === previous.result && state.errors === previous.errors && state.localErrors === previous.localErrors) return;
    if (isStale(state)) {
      box.hidden = false;
      title.textContent = 'Fix the field marked below, or let the search find a plan for this model on these GPUs.';
      list.replaceChildren();
      return;
    }
    const result = state.result;
    const v = result ? verdictOf(result) : null;
    box.hidden = !v || v.status === 'fits';
    if (box.hidden) return;
    const suggestions = (result.memory.suggestions ?? []).slice(0, MAX_SUGGESTIONS);
    title.textContent = v.status === 'oom'
      ? (suggestions.length ? 'Out of memory. Each change below was estimated by the core; one click applies it:' : 'Out of memory.')
      : (suggestions.length ? 'Tight. These changes leave more room:' : 'Tight: a small change could run out of memory.');
    list.replaceChildren(...suggestions.map((s, i) => item(s, i)));
  });

  function item(suggestion, i) {
    const unit = bytesUnit(Math.abs(suggestion.device_bytes ?? 0));
    const outcome = [STATUS_TEXT[suggestion.status] ?? suggestion.status];
    if (Number.isFinite(suggestion.margin_bytes)) outcome.push(`${formatBytesIn(suggestion.margin_bytes, unit)} to spare`);
    if (suggestion.iteration_s > 0) outcome.push(`step ${formatStep(suggestion.iteration_s)}`);
    const missing = actions.unknownKeys(suggestion.set ?? {});
    const button = h('button', { type: 'button', class: 'suggestion', dataset: { index: String(i) }, disabled: missing.length > 0,
      title: missing.length ? `This page cannot set ${missing.join(', ')} yet; change it in an exported config.` : 'Apply this change',
      onclick: () => actions.applySuggestion(suggestion.set ?? {}) },
    h('span', { class: 'suggestion-change', text: String(suggestion.change ?? '') }), ` — ${outcome.join(', ')}`);
    return h('li', {}, button);
  }
  return box;
}

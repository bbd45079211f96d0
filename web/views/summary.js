// The verdict (fits / tight / out of memory / invalid), the one-line plan
// summary next to it, the headline numbers, the peak stage's story
// (micro-batches in flight x activations each, the peak op, dense and expert
// parameters) and the way forward after an out-of-memory or invalid plan
// (views/way_forward.js).
import { h } from '../lib/dom.js';
import { bytesUnit, formatBytesIn, formatCount, formatPercent, formatStep, formatTokensPerS } from '../lib/format.js';
import { planSummary, verdictOf } from '../state/verdict.js';
import { isStale } from './stale.js';
import * as wayForward from './way_forward.js';

export function mount(root, store, actions) {
  const verdict = h('p', { class: 'verdict', id: 'verdict', dataset: { verdict: 'loading' }, text: 'Loading the engine…' });
  const plan = h('p', { class: 'plan-summary', id: 'plan-summary' });
  const problems = h('ul', { class: 'problems', id: 'problems' });
  const staleNote = h('p', { class: 'stale-badge', id: 'facts-stale', hidden: true, text: 'Last valid result (the numbers below are not for the current configuration):' });
  const facts = h('dl', { class: 'facts', id: 'facts' });
  const peakStory = h('p', { class: 'peak-story', id: 'peak-story' });
  const reasons = h('ul', { class: 'reasons', id: 'reasons' });
  const notes = h('ul', { class: 'notes', id: 'notes' });
  const forward = wayForward.mount(store, actions);
  root.replaceChildren(verdict, plan, problems, forward, staleNote, facts, peakStory, reasons, notes);

  const fact = (id, label, value, raw) => h('div', {},
    h('dt', { text: label }),
    h('dd', { id, dataset: { value: raw ?? '' } }, h('span', { class: 'value', text: value })));

  store.subscribe((state, previous) => {
    if (state.result === previous.result && state.errors === previous.errors && state.status === previous.status
        && state.localErrors === previous.localErrors && state.edited === previous.edited) return;
    const stale = isStale(state);
    const result = state.result;
    const errorCount = Object.keys(state.localErrors).length || state.errors.length;
    if (state.status === 'failed') {
      set('failed', `The engine failed: ${state.failure ?? 'unknown error'}`);
    } else if (stale) {
      set('invalid', `Invalid configuration: ${errorCount} ${errorCount === 1 ? 'problem' : 'problems'}`);
    } else if (!result) {
      set('loading', 'Loading the engine…');
    } else {
      const v = verdictOf(result);
      const unit = bytesUnit(Math.max(v.usable, v.device));
      const of = v.core ? `${formatBytesIn(v.usable, unit)} usable` : formatBytesIn(v.usable, unit);
      const text = {
        fits: `Fits: ${formatBytesIn(v.device, unit)} of ${of} per GPU`,
        tight: `Tight: ${formatBytesIn(v.device, unit)} of ${of} per GPU, ${formatBytesIn(v.margin, unit)} to spare (under the ${formatPercent(v.headroom)} reserve)`,
        oom: `Out of memory: stage ${v.stage} needs ${formatBytesIn(v.device, unit)}, ${of} per GPU`,
      }[v.status];
      set(v.status, text);
    }
    // The verdict and the problems stay at full strength; the numbers below are dimmed.
    problems.replaceChildren(...listProblems(state));
    staleNote.hidden = !stale || !result;
    facts.classList.toggle('stale', stale);
    peakStory.classList.toggle('stale', stale);
    if (!result) return;
    // The plan line describes the configuration the numbers belong to.
    if (!stale) plan.textContent = planSummary(state.spec, state.catalog).text;
    plan.classList.toggle('stale', stale);
    const m = result.memory;
    const unit = bytesUnit(Math.max(m.peak_bytes, m.reserved_bytes ?? 0));
    const rows = [
      fact('fact-peak', `Peak (stage ${m.peak_stage})`, formatBytesIn(m.peak_bytes, unit), m.peak_bytes),
      fact('fact-reserved', 'Reserved (allocator)', formatBytesIn(m.reserved_bytes, unit), m.reserved_bytes),
      fact('fact-params', 'Parameters', result.model.active_parameters !== result.model.parameters
        ? `${formatCount(result.model.parameters)} (${formatCount(result.model.active_parameters)} active)`
        : formatCount(result.model.parameters), result.model.parameters),
    ];
    if (result.time) rows.push(fact('fact-step', 'Step time', formatStep(result.time.iteration_s), result.time.iteration_s));
    if (result.throughput) {
      rows.push(fact('fact-tokens', 'Throughput', formatTokensPerS(result.throughput.tokens_per_s), result.throughput.tokens_per_s));
      rows.push(fact('fact-mfu', 'MFU', formatPercent(result.throughput.mfu), result.throughput.mfu));
    }
    facts.replaceChildren(...rows);
    peakStory.textContent = story(m);
    const v = verdictOf(result);
    reasons.replaceChildren(...(stale ? [] : v.reasons).map((text) => h('li', { text: String(text) })));
    notes.replaceChildren(...(result.notes ?? []).map((text) => h('li', { text: String(text) })));
  });

  // The peak stage: what fills its memory at the peak.
  function story(m) {
    const stage = m.stages?.find((st) => st.stage === m.peak_stage);
    if (!stage) return '';
    const unit = bytesUnit(stage.activations_bytes);
    const parts = [];
    if (stage.in_flight_micro_batches > 0 && stage.activations_per_micro_batch_bytes > 0) {
      parts.push(`${stage.in_flight_micro_batches} micro-batch${stage.in_flight_micro_batches === 1 ? '' : 'es'} in flight × ${formatBytesIn(stage.activations_per_micro_batch_bytes, unit)} of activations each`);
    }
    if (stage.peak_op) parts.push(`peak at ${stage.peak_op}`);
    const dense = stage.dense_parameters ?? 0;
    const expert = stage.expert_parameters ?? 0;
    if (dense + expert > 0) parts.push(`this GPU holds ${formatCount(dense)} dense${expert > 0 ? ` + ${formatCount(expert)} expert` : ''} parameters`);
    return parts.length ? `Stage ${stage.stage}: ${parts.join('; ')}.` : '';
  }

  // Each problem, as a button that takes you to its field; the edited
  // field's problems first (the root cause is usually there).
  function listProblems(state) {
    const local = Object.entries(state.localErrors).map(([path, message]) => ({ path, message }));
    const list = local.length ? local : [...state.errors];
    const edited = state.edited;
    const mine = (e) => Boolean(edited) && String(e.path ?? '') === edited;
    list.sort((a, b) => Number(mine(b)) - Number(mine(a)));
    return list.slice(0, 8).map(({ path, message }) => {
      const target = fieldFor(String(path ?? ''));
      const label = `${path || 'config'}: ${message}`;
      if (!target) return h('li', { text: label });
      return h('li', {}, h('button', { type: 'button', class: 'link', text: label, onclick: () => actions.focusField(target) }));
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
